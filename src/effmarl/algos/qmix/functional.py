"""The QMIX family as pure JAX functions: the GRU agent (acting and learning), the mixers, the target operators, the
returns and the training loss — so one update's loss and gradient compile into one XLA program (compiled.py).

    agent_step(p, x_t, h)        fc1 → ReLU → GRU cell (torch.nn.GRUCell's gate order) → fc2, one step
    agent_unroll(p, x)           Q [B, T+1, n, A]: agent_step carried over time (lax.scan)
    mixer(net, p, q, s)          QMIX's hypernetwork mixer / OW-QMIX's feed-forward central mixer
    operator values V(s_t)       double-Q max · OW-QMIX's central Q* · RES's softmax over one-agent deviations ·
                                 the mixer over each agent's Soft Mellowmax / mellowmax / softmax / max
    returns                      one-step, n-step, λ (reverse scan), discounted
    loss(online, target, batch)  the learner's loss and statistics (learner.py's `Learner.loss`, line for line)

Parameters are dicts keyed by the torch modules' own parameter names (`agent.fc1.weight`, `mixer.hyper_w_1.0.weight`,
…): the functions walk the torch module tree of the learner they were built for (only its structure, never its
values), so no name or layer list is written here twice. Shared weights are [out, in], per-agent weights
[n, out, in]; masked (sparse) weights are zeros in the parameters, so every method runs the same program.

Every function here equals its torch counterpart (nets/, operators.py, targets/) on the same inputs up to float32
rounding (tests/test_qmix_compiled.py). Padding: Q-values past an episode's last state are computed from the zero
padding instead of being zeroed as the packed torch unroll does; nothing reads them outside the loss mask.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from torch import nn

from effmarl.variants import variant

NEG = -1e9  # operators.py's stand-in for -inf on unavailable actions


# ---- networks -------------------------------------------------------------------------------------------------
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


def agent_unroll(p: dict, inputs):
    """Q-values [B, T, n, A] of inputs [B, T, n, in], the GRU carried over time from zeros. fc1, the input
    projection and fc2 run once over all steps; only the hidden projection runs per step."""
    x = jax.nn.relu(linear(inputs, p["fc1.weight"], p["fc1.bias"]))
    gi = jnp.moveaxis(linear(x, p["rnn.ih.weight"], p["rnn.ih.bias"]), 1, 0)  # [T, B, n, 3H]
    w, b = p["rnn.hh.weight"], p["rnn.hh.bias"]

    def step(h, gi_t):
        h = gru_cell(gi_t, linear(h, w, b), h)
        return h, h

    h0 = jnp.zeros(gi.shape[1:-1] + (w.shape[-1],), gi.dtype)
    _, hs = jax.lax.scan(step, h0, gi)
    return jnp.moveaxis(linear(hs, p["fc2.weight"], p["fc2.bias"]), 0, 1)


def sub(params: dict, prefix: str) -> dict:
    """The entries of `params` under `prefix` ("agent."), keyed relative to it."""
    return {k[len(prefix):]: v for k, v in params.items() if k.startswith(prefix)}


def mlp(module: nn.Module, p: dict, x):
    """A torch nn.Linear, or nn.Sequential of Linear and ReLU, applied in JAX with parameters p keyed by its own
    names (module is read for its structure only)."""
    if isinstance(module, nn.Linear):
        return x @ p["weight"].T + p["bias"]
    for i, layer in enumerate(module):
        x = jax.nn.relu(x) if isinstance(layer, nn.ReLU) else mlp(layer, sub(p, f"{i}."), x)
    return x


def qmix_mix_many(mixer: nn.Module, p: dict, agent_qs, states):
    """nets.mixers.QMixer.forward_many: k joint values per state, agent_qs [..., k, n], states [..., S] -> [..., k]."""
    n, e = mixer.n_agents, mixer.embed_dim
    lead = agent_qs.shape[:-1]
    qs = agent_qs.reshape(-1, agent_qs.shape[-2], n)
    s = states.reshape(-1, mixer.state_dim)
    w1 = jnp.abs(mlp(mixer.hyper_w_1, sub(p, "hyper_w_1."), s)).reshape(-1, n, e)
    b1 = mlp(mixer.hyper_b_1, sub(p, "hyper_b_1."), s).reshape(-1, 1, e)
    hidden = jax.nn.elu(qs @ w1 + b1)
    w_final = jnp.abs(mlp(mixer.hyper_w_final, sub(p, "hyper_w_final."), s)).reshape(-1, e, 1)
    v = mlp(mixer.V, sub(p, "V."), s).reshape(-1, 1, 1)
    return (hidden @ w_final + v).reshape(lead)


def mix(mixer: nn.Module, p: dict, agent_qs, states):
    """Joint values [...] of agent values [..., n] and states [..., S] through QMixer or CentralFFMixer."""
    if hasattr(mixer, "hyper_w_1"):
        return qmix_mix_many(mixer, p, agent_qs[..., None, :], states)[..., 0]
    lead = agent_qs.shape[:-1]
    s = states.reshape(-1, mixer.state_dim)
    x = jnp.concatenate([s, agent_qs.reshape(-1, mixer.n_agents)], axis=1)
    return (mlp(mixer.net, sub(p, "net."), x) + mlp(mixer.V, sub(p, "V."), s)).reshape(lead)


def agent_inputs(obs, last_actions, n_actions: int):
    """nets.rnn_agent.agent_inputs: observation, one-hot last action (zeros for -1), one-hot agent id."""
    n = obs.shape[-2]
    onehot = jax.nn.one_hot(last_actions, n_actions, dtype=obs.dtype) * (last_actions >= 0)[..., None]
    ids = jnp.broadcast_to(jnp.eye(n, dtype=obs.dtype), obs.shape[:-1] + (n,))
    return jnp.concatenate([obs, onehot, ids], axis=-1)


def greedy_actions(q, avail):
    """operators.greedy_actions: each agent's best available action (the first of equal ones)."""
    return jnp.argmax(jnp.where(avail, q, NEG), axis=-1)


# ---- per-agent operators (targets/mellowmax.py) -----------------------------------------------------------------
def _prepare(q, avail):
    empty = ~avail.any(-1)
    return jnp.where(empty[..., None], 0.0, q), avail | empty[..., None], empty


def _lse(x, avail):
    return jax.nn.logsumexp(jnp.where(avail, x, -jnp.inf), axis=-1)


def agent_value(settings: dict):
    """operators.agent_value: each agent's value over its available actions, (Q [..., A], avail) -> [...]."""
    name = settings.get("operator", "soft_mellowmax")

    def value(q, avail):
        q, avail, empty = _prepare(q, avail)
        if name == "soft_mellowmax":
            a, w = settings["alpha"], settings["omega"]
            v = (_lse((a + w) * q, avail) - _lse(a * q, avail)) / w
        elif name == "mellowmax":
            w = settings["omega"]
            v = (_lse(w * q, avail) - jnp.log(avail.sum(-1).astype(q.dtype))) / w
        elif name == "softmax":
            v = (jax.nn.softmax(jnp.where(avail, settings["beta"] * q, -jnp.inf), axis=-1) * q).sum(-1)
        elif name == "max":
            v = jnp.where(avail, q, -jnp.inf).max(-1)
        else:
            raise ValueError(f"mellowmax.operator: unknown operator {name!r}")
        return jnp.where(empty, 0.0, v)

    return value


# ---- returns (targets/returns.py), time is axis 1 ---------------------------------------------------------------
def _shift(x, k: int):
    """x[:, t + k] at position t, zero beyond the end."""
    if k == 0:
        return x
    pad = jnp.zeros((x.shape[0], min(k, x.shape[1])) + x.shape[2:], x.dtype)
    return jnp.concatenate([x[:, k:], pad], axis=1)


def n_step(r, d, m, v, gamma: float, n: int):
    vals, out, alive, discount = v[:, 1:], jnp.zeros_like(r), m, 1.0
    for k in range(min(n, r.shape[1])):
        r_k, d_k, v_k, next_exists = _shift(r, k), _shift(d, k), _shift(vals, k), _shift(m, k + 1)
        out = out + alive * discount * r_k
        stop = alive * (1.0 if k == n - 1 else jnp.minimum(d_k + (1 - next_exists), 1.0))
        out = out + stop * discount * gamma * (1 - d_k) * v_k
        alive = alive * (1 - d_k) * next_exists * (0.0 if k == n - 1 else 1.0)
        discount *= gamma
    return out * m


def lambda_returns(r, d, m, v, gamma: float, lam: float):
    """G_t = r_t + γ(1 − d_t)[(1 − λ)V(s_{t+1}) + λ G_{t+1}], G_{t+1} = V(s_{t+1}) at the episode's end."""
    def step(carry, x):
        g_next, m_next = carry
        r_t, d_t, m_t, v_next = x
        g = (r_t + gamma * (1 - d_t) * ((1 - lam) * v_next + lam * jnp.where(m_next > 0, g_next, v_next))) * m_t
        return (g, m_t), g

    xs = tuple(jnp.moveaxis(a, 1, 0) for a in (r, d, m, v[:, 1:]))
    _, out = jax.lax.scan(step, (jnp.zeros_like(r[:, 0]), jnp.zeros_like(m[:, 0])), xs, reverse=True)
    return jnp.moveaxis(out, 0, 1)


def discounted_returns(r, m, gamma: float):
    def step(running, x):
        running = (x[0] + gamma * running) * x[1]
        return running, running

    _, out = jax.lax.scan(step, jnp.zeros_like(r[:, 0]), (r.T, m.T), reverse=True)
    return out.T


def returns(kind: tuple, r, d, m, v, gamma: float):
    """targets.returns.targets for kind = (one_step | n_step | td_lambda, n, λ); d, m as floats."""
    name, n, lam = kind
    if name == "one_step":
        return (r + gamma * (1 - d) * v[:, 1:]) * m
    if name == "n_step":
        return n_step(r, d, m, v, gamma, n)
    if name == "td_lambda":
        return lambda_returns(r, d, m, v, gamma, lam)
    raise ValueError(f"return kind {name!r} is not known; allowed: 'one_step', 'n_step', 'td_lambda'")


# ---- the loss ---------------------------------------------------------------------------------------------------
def _at(q, actions):
    return jnp.take_along_axis(q, actions[..., None], axis=-1)[..., 0]


def make_loss(learner):
    """loss(online, target, batch, kind) -> (loss, stats) of `learner`'s configuration (its algo, settings, target
    operator and network structure; never its parameter values). online / target: {torch parameter name without
    the "target." prefix: array}; batch: the episode batch with float masks and int32 actions."""
    entry, q, n_actions = variant(learner.algo), learner.q, learner.n_actions
    per_agent = agent_value(learner.mellowmax) if learner.mellowmax else None
    mixer, central_mixer = learner.mixer, getattr(learner, "central_mixer", None)

    def greedy(q_online, q_target, avail):
        return greedy_actions(q_online if q["double_q"] else q_target, avail)

    def values(online, target, inputs, q_online, q_target, avail, states):
        """V(s_t) [B, T+1] of the run's target operator (operators.py)."""
        if per_agent is not None or entry.operator == "ow_central":
            if entry.central:
                central = agent_unroll(sub(target, "central_agent."), inputs)
                qs = per_agent(central, avail) if per_agent else _at(central, greedy(q_online, q_target, avail))
                return mix(central_mixer, sub(target, "central_mixer."), qs, states)
            return mix(mixer, sub(target, "mixer."), per_agent(q_target, avail), states)
        best = greedy(q_online, q_target, avail)
        if entry.operator == "double_q_max":
            return mix(mixer, sub(target, "mixer."), _at(q_target, best), states)
        if entry.operator != "res_softmax":
            raise NotImplementedError(f"{learner.algo}: operator {entry.operator!r} has no JAX form in functional.py")
        n, m = q_online.shape[-2], q_online.shape[-1]  # RES: one-agent deviations from the greedy joint action
        eye = jnp.eye(n, dtype=bool).reshape(n, 1, n)

        def counterfactual(qs):  # [..., n, m] -> [..., n*m, n]
            return jnp.where(eye, qs[..., None], _at(qs, best)[..., None, None, :]).reshape(
                qs.shape[:-2] + (n * m, n))

        online_tot = qmix_mix_many(mixer, sub(online, "mixer."),
                                   counterfactual(jnp.where(avail, q_online, 0.0)), states)
        target_tot = qmix_mix_many(mixer, sub(target, "mixer."),
                                   counterfactual(jnp.where(avail, q_target, 0.0)), states)
        logits = jnp.where(avail.reshape(avail.shape[:-2] + (n * m,)), q["res_beta"] * online_tot, NEG)
        return (jax.nn.softmax(logits, axis=-1) * target_tot).sum(-1)

    def loss(online, target, batch, kind):
        actions, mask, states, rewards = batch["actions"], batch["filled"], batch["state"], batch["reward"]
        last = jnp.concatenate([jnp.full_like(actions[:, :1], -1), actions[:, :-1]], axis=1)
        inputs = agent_inputs(batch["obs"], last, n_actions)
        q_all = agent_unroll(sub(online, "agent."), inputs)                     # [B, T+1, n, A]
        q_tot = mix(mixer, sub(online, "mixer."), _at(q_all[:, :-1], actions[:, :-1]), states[:, :-1])
        q_target = agent_unroll(sub(target, "agent."), inputs)
        v = values(online, target, inputs, jax.lax.stop_gradient(q_all), q_target, batch["avail"], states)
        y = jax.lax.stop_gradient(returns(kind, rewards, batch["terminated"], mask, v, q["gamma"]))

        n_valid = jnp.maximum(mask.sum(), 1.0)
        td = jnp.where(mask > 0, q_tot - y, 0.0)
        stats = {}
        if "ow_weighting" in entry.losses:
            weights = jnp.where(td < 0, 1.0, q["ow_w"])
            central_q = agent_unroll(sub(online, "central_agent."), inputs)[:, :-1]
            central_tot = mix(central_mixer, sub(online, "central_mixer."), _at(central_q, actions[:, :-1]),
                              states[:, :-1])
            central_loss = (jnp.where(mask > 0, central_tot - y, 0.0) ** 2).sum() / n_valid
            total = (jax.lax.stop_gradient(weights) * td ** 2).sum() / n_valid + q["central_loss"] * central_loss
            stats.update(central_loss=central_loss, ow_weight_mean=(weights * mask).sum() / n_valid)
        else:
            total = (td ** 2).sum() / n_valid
        if "res_regulariser" in entry.losses:
            g = discounted_returns(rewards, mask, q["gamma"])
            reg = (jnp.where(mask > 0, q_tot - g, 0.0) ** 2).sum() / n_valid
            total = total + q["res_lambda"] * reg
            stats["res_regulariser"] = reg
        stats.update(td_error_abs=jnp.abs(td).sum() / n_valid, q_taken_mean=(q_tot * mask).sum() / n_valid,
                     target_mean=(y * mask).sum() / n_valid)
        return total, jax.lax.stop_gradient(stats)

    return loss
