"""PyMARL's GRU agent and its greedy action as pure JAX functions: what the jitted SMAX runner (smax_runner.py) acts
with, so a whole episode batch is one XLA program.

    agent_inputs(obs, last, A)   observation, one-hot last action, one-hot agent id (agent_inputs, nets/rnn_agent.py)
    agent_step(p, x_t, h)        fc1 → ReLU → GRU cell (torch.nn.GRUCell's gate order) → fc2, one step
                                 (RNNAgent.forward, nets/rnn_agent.py)
    greedy_actions(q, avail)     each agent's best available action (greedy_actions, operators.py)

Parameters are a dict keyed by RNNAgent's own parameter names (`fc1.weight`, `rnn.ih.weight`, …). Shared weights are
[out, in], per-agent weights [n, out, in]; masked (sparse) weights are zeros in the parameters, so every method acts
through the same program. Learning is torch alone (learner.py); these functions mirror the torch agent, and
tests/test_qmix_runner.py keeps them equal: step by step on the same parameters (test_jax_agent_equals_the_torch_agent)
and as whole greedy episodes of the jitted runner against the Python runner, which acts with RNNAgent.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

NEG = -1e9  # operators.py's stand-in for -inf on unavailable actions


def linear(x, w, b):
    """x [..., n, in] through shared (w [out, in]) or per-agent (w [n, out, in]) weights."""
    if w.ndim == 2:
        return x @ w.T + b
    return jnp.einsum("...ni,noi->...no", x, w) + b


def gru_cell(gi, gh, h):
    """torch.nn.GRUCell from the input and hidden projections gi = ih(x), gh = hh(h) (gates r, z, n)."""
    i_r, i_z, i_n = jnp.split(gi, 3, axis=-1)
    h_r, h_z, h_n = jnp.split(gh, 3, axis=-1)
    r, z = jax.nn.sigmoid(i_r + h_r), jax.nn.sigmoid(i_z + h_z)
    return (1.0 - z) * jnp.tanh(i_n + r * h_n) + z * h


def agent_step(p: dict, inputs, h):
    """One step of PyMARL's GRU agent: Q-values [..., n, A] and the next hidden state [..., n, H] (p keyed by
    RNNAgent's parameter names)."""
    x = jax.nn.relu(linear(inputs, p["fc1.weight"], p["fc1.bias"]))
    h = gru_cell(linear(x, p["rnn.ih.weight"], p["rnn.ih.bias"]), linear(h, p["rnn.hh.weight"], p["rnn.hh.bias"]), h)
    return linear(h, p["fc2.weight"], p["fc2.bias"]), h


def agent_inputs(obs, last_actions, n_actions: int):
    """nets.rnn_agent.agent_inputs: observation, one-hot last action (zeros for -1), one-hot agent id."""
    n = obs.shape[-2]
    onehot = jax.nn.one_hot(last_actions, n_actions, dtype=obs.dtype) * (last_actions >= 0)[..., None]
    ids = jnp.broadcast_to(jnp.eye(n, dtype=obs.dtype), obs.shape[:-1] + (n,))
    return jnp.concatenate([obs, onehot, ids], axis=-1)


def greedy_actions(q, avail):
    """operators.greedy_actions: each agent's best available action (the first of equal ones)."""
    return jnp.argmax(jnp.where(avail, q, NEG), axis=-1)
