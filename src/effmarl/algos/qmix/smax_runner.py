"""The SMAX episode runner: every seed's whole episode batch — env copies, GRU agents, ε-greedy, the episode
buffer — as one jitted JAX program (jit(vmap over seeds(while_loop over time(vmap over copies)))).

Per seed s and copy j the env key is PRNGKey(env_seed_s + j), as SMAXEnv.reset(seed=env_seed_s) does, so the
episodes equal the Python runner's wherever the actions do (tested greedily, tests/test_qmix_runner.py). The
agents' torch parameters enter through DLPack and the episode batch leaves the same way (no copy on the CPU).
ε-greedy draws come from PRNGKey(env_seed_s) folded with a constant: a function of the round, so a resumed run
draws what an uninterrupted one would. The loop stops as soon as every copy of every seed has ended.

The agent is functional.agent_step, the JAX mirror of PyMARL's RNNAgent (fc1 → ReLU → GRU cell → fc2,
torch.nn.GRUCell's gate order; kept equal to nets/rnn_agent.py by tests/test_qmix_runner.py), for shared weights
[out, in] and per-agent weights [n_agents, out, in] alike, its parameters named by the torch module; masked
(sparse) weights are zeros in the parameters, so every method runs through the same program. Greedy actions:
functional.greedy_actions.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from effmarl.envs import make_env
from effmarl.nets.rnn_agent import RNNAgent
from effmarl.profiling.phases import PhaseTimer
from effmarl.replay.episode import episode_scheme

EXPLORE_SALT = 0x5EED


def agent_parameter_names() -> tuple[str, ...]:
    """The agent's parameter names as the torch module defines them (shared and per-agent layers name them alike)."""
    return tuple(name for name, _ in RNNAgent(1, 1, 1).named_parameters())


@functools.cache
def build_rollout(reset_one, step_one, n: int, limit: int, n_actions: int):
    """jit(vmap over seeds) of one seed's episode batch: (params, copy_seeds [E], env_seed, epsilon) -> episode
    arrays; one function for every number of copies E (jit compiles once per shape). Built once per env
    configuration per process (reset_one / step_one come from envs/smax.py's cached `functions`), so every runner
    of that configuration — the next group of runs of `effmarl train` included — reuses the traced and compiled
    programs of the shapes it has seen."""
    import jax
    import jax.numpy as jnp

    from effmarl.algos.qmix.functional import agent_inputs, agent_step, greedy_actions

    def rollout(params, copy_seeds, env_seed, epsilon):
        keys, state, done, (obs, world, avail) = jax.vmap(reset_one)(jax.vmap(jax.random.PRNGKey)(copy_seeds))
        explore = jax.random.fold_in(jax.random.PRNGKey(env_seed), EXPLORE_SALT)
        hidden = params["rnn.hh.weight"].shape[-1]
        e = copy_seeds.shape[0]
        buf = {"obs": jnp.zeros((e, limit + 1, n, obs.shape[-1]), jnp.float32),
               "state": jnp.zeros((e, limit + 1, world.shape[-1]), jnp.float32),
               "avail": jnp.zeros((e, limit + 1, n, n_actions), jnp.bool_),
               "actions": jnp.zeros((e, limit + 1, n), jnp.int32),
               "reward": jnp.zeros((e, limit), jnp.float32),
               "terminated": jnp.zeros((e, limit), jnp.bool_),
               "filled": jnp.zeros((e, limit), jnp.bool_)}

        def put(array, t, value, rows):
            old = array[:, t]
            mask = rows.reshape(rows.shape + (1,) * (old.ndim - 1))
            return array.at[:, t].set(jnp.where(mask, value, old))

        def body(carry):
            t, keys, state, done, obs, world, avail, h, last, buf, returns, won, explore = carry
            active = ~done
            buf = {**buf, "obs": put(buf["obs"], t, obs, active), "state": put(buf["state"], t, world, active),
                   "avail": put(buf["avail"], t, avail, active)}
            q, h = agent_step(params, agent_inputs(obs, last, n_actions), h)
            explore, k_random, k_coin = jax.random.split(explore, 3)
            greedy = greedy_actions(q, avail)
            random = jax.random.categorical(k_random, jnp.where(avail, 0.0, -jnp.inf), axis=-1)
            actions = jnp.where(jax.random.uniform(k_coin, greedy.shape) < epsilon, random, greedy).astype(jnp.int32)
            keys, state, done, (obs, world, avail, reward, terminated, _, won_t) = jax.vmap(step_one)(
                keys, state, done, actions)
            buf = {**buf, "actions": put(buf["actions"], t, actions, active),
                   "reward": buf["reward"].at[:, t].set(jnp.where(active, reward, 0.0)),
                   "terminated": buf["terminated"].at[:, t].set(active & terminated),
                   "filled": buf["filled"].at[:, t].set(active),
                   "obs": put(buf["obs"], t + 1, obs, active), "state": put(buf["state"], t + 1, world, active),
                   "avail": put(buf["avail"], t + 1, avail, active)}
            returns = returns + jnp.where(active, reward, 0.0)
            return (t + 1, keys, state, done, obs, world, avail, h, actions, buf, returns, won | (active & won_t),
                    explore)

        def cond(carry):
            return (carry[0] < limit) & jnp.any(~carry[3])

        carry = (jnp.int32(0), keys, state, done, obs, world, avail, jnp.zeros((e, n, hidden), jnp.float32),
                 jnp.full((e, n), -1, jnp.int32), buf, jnp.zeros(e, jnp.float32), jnp.zeros(e, jnp.bool_), explore)
        out = jax.lax.while_loop(cond, body, carry)
        return out[9], out[10], out[11]

    return jax.jit(jax.vmap(rollout))


def _to_jax(tensor: torch.Tensor):
    import jax

    tensor = tensor.detach().contiguous()
    if tensor.device.type == "cpu" or jax.default_backend() != "cpu":
        try:
            return jax.dlpack.from_dlpack(tensor)
        except (RuntimeError, TypeError, ValueError, BufferError):
            pass
    return jax.numpy.asarray(tensor.cpu().numpy())


def _to_torch(array, device: torch.device) -> torch.Tensor:
    try:
        tensor = torch.from_dlpack(array)
    except (RuntimeError, TypeError, ValueError, BufferError):
        tensor = torch.from_numpy(np.asarray(array))
    return tensor.to(device)


class SMAXRunner:
    """Episode batches of S seeds on SMAX as one jitted JAX program per call (see the module docstring)."""

    def __init__(self, env_cfg: dict, num_envs: int, eval_episodes: int, n_seeds: int, device,
                 timer: PhaseTimer | None = None):
        probe = make_env(env_cfg, 1)
        self.spec, functions = probe.spec, probe.functions
        probe.close()
        self.scheme = episode_scheme(self.spec)
        self.device = torch.device(device)
        self.timer = timer or PhaseTimer(enabled=False)
        self.num_envs, self.eval_episodes = num_envs, eval_episodes
        _, _, reset_one, step_one = functions
        self._program = build_rollout(reset_one, step_one, self.spec.n_agents, self.spec.episode_limit,
                                      max(self.spec.n_actions))

    def _params(self, agents: list[RNNAgent]) -> dict:
        own = [dict(agent.named_parameters()) for agent in agents]
        return {name: _to_jax(torch.stack([p[name].detach() for p in own])) for name in agent_parameter_names()}

    def _run(self, copies: int, agents, env_seeds, epsilons) -> list[tuple[dict, dict]]:
        import jax.numpy as jnp

        seeds = np.asarray(env_seeds, np.uint64)
        copy_seeds = ((seeds[:, None] + np.arange(copies, dtype=np.uint64)) % 2**32).astype(np.uint32)
        buf, returns, won = self._program(self._params(agents), jnp.asarray(copy_seeds),
                                          jnp.asarray(seeds.astype(np.uint32)),
                                          jnp.asarray(np.asarray(epsilons, np.float32)))
        batch = {k: _to_torch(v, self.device) for k, v in buf.items()}
        batch["actions"] = batch["actions"].long()
        returns, won = np.asarray(returns, np.float64), np.asarray(won)
        lengths = batch["filled"].sum(-1).cpu().numpy()
        return [({k: v[s] for k, v in batch.items()}, {"return": returns[s], "won": won[s], "length": lengths[s]})
                for s in range(len(agents))]

    def collect(self, agents: list[RNNAgent], env_seeds: list[int], epsilons: list[float],
                generators=None) -> list[tuple[dict, dict]]:
        with self.timer.phase("acting"):
            return self._run(self.num_envs, agents, env_seeds, epsilons)

    def evaluate(self, agents: list[RNNAgent], env_seeds: list[int]) -> list[dict]:
        return [out for _, out in self._run(self.eval_episodes, agents, env_seeds, [0.0] * len(agents))]

    def close(self) -> None:
        pass
