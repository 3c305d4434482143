"""The SMAX episode runner (one jitted JAX program per episode batch) against the Python reference runner."""

import numpy as np
import pytest
import torch

from effmarl.algos.qmix.runner import PythonRunner
from effmarl.algos.qmix.smax_runner import SMAXRunner
from effmarl.nets.rnn_agent import RNNAgent, input_dim, linear_factory

ENV = {"backend": "smax", "map": "3m"}


def agents_for(spec, shared: bool, n_seeds: int):
    n, a = spec.n_agents, max(spec.n_actions)
    out = []
    for s in range(n_seeds):
        torch.manual_seed(s)
        agent = RNNAgent(input_dim(spec.obs_dims[0], a, n), a, 16, linear_factory(n, shared))
        with torch.no_grad():  # large weights: decisive greedy choices, so float noise cannot flip an argmax
            for p in agent.parameters():
                p.mul_(4.0)
        out.append(agent)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("shared", [True, False])
def test_greedy_episodes_equal_the_python_runner(shared):
    """Same agent parameters, same env seeds, ε = 0: the same episodes, field by field."""
    jax_runner = SMAXRunner(ENV, 3, 3, 2, "cpu")  # as many evaluation copies: one compilation serves both
    reference = PythonRunner(ENV, 3, 3, 2, "cpu")
    agents = agents_for(jax_runner.spec, shared, 2)
    seeds = [11, 12345]
    fast = jax_runner.collect(agents, seeds, [0.0, 0.0])
    slow = reference.collect(agents, seeds, [0.0, 0.0], [torch.Generator(), torch.Generator()])
    for (fb, fo), (sb, so) in zip(fast, slow, strict=True):
        assert fb.keys() == sb.keys()
        for key in sb:
            assert fb[key].dtype == sb[key].dtype and fb[key].shape == sb[key].shape, key
            torch.testing.assert_close(fb[key], sb[key], rtol=1e-5, atol=1e-5, msg=key)
        np.testing.assert_allclose(fo["return"], so["return"], rtol=1e-5)
        assert (fo["won"] == so["won"]).all() and (fo["length"] == so["length"]).all()
    assert sum(int(o["length"].sum()) for _, o in fast) > 6  # the episodes went somewhere
    evaluated = jax_runner.evaluate(agents, seeds)
    reference_eval = reference.evaluate(agents, seeds)
    for a, b in zip(evaluated, reference_eval, strict=True):
        assert (a["length"] == b["length"]).all() and (a["won"] == b["won"]).all()


@pytest.mark.slow
def test_exploration_follows_epsilon_and_never_picks_unavailable_actions():
    runner = SMAXRunner(ENV, 8, 8, 2, "cpu")
    agents = agents_for(runner.spec, False, 2)
    (greedy, _), (random, _) = runner.collect(agents, [5, 5], [0.0, 1.0])
    for batch in (greedy, random):
        filled = batch["filled"]
        taken = batch["avail"][:, :-1].gather(-1, batch["actions"][:, :-1].unsqueeze(-1)).squeeze(-1)
        assert taken[filled].all()  # every stored action was available
    # same env seeds, greedy vs uniform-random actions: the first step's actions differ somewhere
    assert not torch.equal(greedy["actions"][:, 0], random["actions"][:, 0])
    again, _ = runner.collect(agents, [5, 5], [0.0, 1.0])[1]
    assert torch.equal(again["actions"], random["actions"])  # draws are a function of the round's seed


@pytest.mark.parametrize("shared", [True, False])
def test_jax_agent_equals_the_torch_agent(shared):
    """The runner's JAX agent (algos/qmix/functional.py) on the torch agent's parameters: the same inputs, Q-values,
    hidden states and greedy actions as nets/rnn_agent.py and operators.greedy_actions, for three steps."""
    import jax.numpy as jnp

    from effmarl.algos.qmix import functional
    from effmarl.algos.qmix.operators import greedy_actions
    from effmarl.nets.rnn_agent import agent_inputs

    n, obs_dim, a = 3, 7, 5
    torch.manual_seed(0)
    agent = RNNAgent(input_dim(obs_dim, a, n), a, 16, linear_factory(n, shared))
    params = {k: jnp.asarray(v.detach().numpy()) for k, v in agent.named_parameters()}
    obs, last = torch.randn(3, 4, n, obs_dim), torch.randint(-1, a, (3, 4, n))
    avail = torch.rand(3, 4, n, a) > 0.3
    avail[..., 0] = True
    h, h_jax = agent.init_hidden(4, n), jnp.zeros((4, n, 16))
    for t in range(3):
        x = agent_inputs(obs[t], last[t], a)
        x_jax = functional.agent_inputs(jnp.asarray(obs[t].numpy()), jnp.asarray(last[t].numpy()), a)
        np.testing.assert_array_equal(np.asarray(x_jax), x.numpy())
        with torch.no_grad():
            q, h = agent(x, h)
        q_jax, h_jax = functional.agent_step(params, x_jax, h_jax)
        np.testing.assert_allclose(np.asarray(q_jax), q.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(h_jax), h.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(np.asarray(functional.greedy_actions(q_jax, jnp.asarray(avail[t].numpy()))),
                                      greedy_actions(q, avail[t]).numpy())
