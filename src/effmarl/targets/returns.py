"""Bootstrapped targets on padded episode batches: one-step, n-step and λ-returns, and plain discounted returns.

Layout (PyMARL's): time is dimension 1.
- rewards    [B, T, ...]  reward of transition t
- terminated [B, T]       transition t ended the episode inside the task (no bootstrap after it)
- mask       [B, T]       transition t exists (False on padding, and after the episode's last step)
- values     [B, T+1, ...] bootstrap value of the state at t (t = T is the state after the last transition)

A time-out is not `terminated`: the episode's last transition then bootstraps from the value of the state it
reached, which is stored at index t+1 (PyMARL keeps that final observation). Outputs are [B, T, ...] and are
zero on padding. Trailing dimensions of rewards/values (e.g. per agent) broadcast against [B, T].
"""

from __future__ import annotations

import torch


def _b(x: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """x [B, T] as a float tensor broadcastable against like [B, T, ...]."""
    x = x.to(like.dtype)
    return x.reshape(*x.shape, *([1] * (like.dim() - x.dim())))


def _shift(x: torch.Tensor, k: int) -> torch.Tensor:
    """x[:, t + k] at position t, zero beyond the end."""
    if k == 0:
        return x
    out = torch.zeros_like(x)
    if k < x.shape[1]:
        out[:, : x.shape[1] - k] = x[:, k:]
    return out


def one_step(rewards, terminated, values, gamma: float) -> torch.Tensor:
    """r_t + γ (1 - d_t) V(s_{t+1})."""
    return rewards + gamma * (1 - _b(terminated, rewards)) * values[:, 1:]


def n_step(rewards, terminated, mask, values, gamma: float, n: int) -> torch.Tensor:
    """Σ_{k<m} γ^k r_{t+k} + γ^m (1 - d) V(s_{t+m}), m = min(n, steps left in the episode from t)."""
    if n < 1:
        raise ValueError(f"n_step: n must be >= 1, got {n}")
    steps = rewards.shape[1]
    vals = values[:, 1:]  # V(s_{t+1}) at position t
    mask_f, term_f = _b(mask, rewards), _b(terminated, rewards)
    out = torch.zeros_like(rewards)
    alive = mask_f.clone()  # transition t+k exists and nothing ended before it
    discount = 1.0
    for k in range(min(n, steps)):
        r_k, d_k, v_k = _shift(rewards, k), _shift(term_f, k), _shift(vals, k)
        next_exists = _shift(mask_f, k + 1)
        out = out + alive * discount * r_k
        stop = alive * (1.0 if k == n - 1 else torch.clamp(d_k + (1 - next_exists), max=1.0))
        out = out + stop * discount * gamma * (1 - d_k) * v_k
        alive = alive * (1 - d_k) * next_exists * (0.0 if k == n - 1 else 1.0)
        discount *= gamma
    return out * mask_f


def lambda_returns(rewards, terminated, mask, values, gamma: float, lam: float) -> torch.Tensor:
    """Forward-view λ-return, computed backwards:
    G_t = r_t + γ (1 - d_t) [(1 - λ) V(s_{t+1}) + λ G_{t+1}], with G_{t+1} = V(s_{t+1}) at the episode's end.

    λ = 0 gives one_step; λ = 1 gives the discounted return, bootstrapped only at a time-out.
    (PyMARL's build_td_lambda_targets equals this when every time-out happens at the last index T.)
    """
    steps = rewards.shape[1]
    mask_f, term_f = _b(mask, rewards), _b(terminated, rewards)
    out = torch.zeros_like(rewards)
    following = values[:, steps]
    for t in range(steps - 1, -1, -1):
        v_next = values[:, t + 1]
        if t + 1 < steps:
            following = torch.where(mask_f[:, t + 1] > 0, out[:, t + 1], v_next)
        else:
            following = v_next
        out[:, t] = (rewards[:, t] + gamma * (1 - term_f[:, t]) * ((1 - lam) * v_next + lam * following)) * mask_f[:, t]
    return out


def discounted_returns(rewards, mask, gamma: float) -> torch.Tensor:
    """Σ_k γ^k r_{t+k} to the end of the episode's data, no bootstrap (RES's Monte Carlo baseline)."""
    mask_f = _b(mask, rewards)
    out = torch.zeros_like(rewards)
    running = torch.zeros_like(rewards[:, 0])
    for t in range(rewards.shape[1] - 1, -1, -1):
        running = (rewards[:, t] + gamma * running) * mask_f[:, t]
        out[:, t] = running
    return out


def targets(kind: str, rewards, terminated, mask, values, gamma: float, n: int = 1, lam: float = 0.0):
    """Dispatch by name: one_step | n_step | td_lambda."""
    if kind == "one_step":
        return one_step(rewards, terminated, values, gamma) * _b(mask, rewards)
    if kind == "n_step":
        return n_step(rewards, terminated, mask, values, gamma, n)
    if kind == "td_lambda":
        return lambda_returns(rewards, terminated, mask, values, gamma, lam)
    raise ValueError(f"return kind {kind!r} is not known; allowed: 'one_step', 'n_step', 'td_lambda'")
