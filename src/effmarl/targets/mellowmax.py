"""Soft Mellowmax and the operators it is compared with (the MAST paper's Fig. 16), over available actions.

All operators reduce the last dimension (actions) of q [..., n_actions] and take avail [..., n_actions] (bool,
True = available; None = all available). Unavailable actions are excluded exactly (-inf logits), not by a large
negative constant. Rows with no available action (padding after an episode ended) return 0, so the loss mask
can remove them without NaNs leaking through 0·NaN.

    soft_mellowmax  sm_ω(Q) = (1/ω)·log Σ_u softmax(αQ)_u·exp(ωQ_u)
                            = (1/ω)·[logsumexp_u((α + ω)Q_u) − logsumexp_u(αQ_u)]   (stable for any |Q|)
    mellowmax       mm_ω(Q) = (1/ω)·[logsumexp_u(ωQ_u) − log |avail|]
    softmax_op      Σ_u softmax(βQ)_u·Q_u   (the Boltzmann softmax operator)
    masked_max      max_u Q_u
Limits: sm and mm tend to max as ω → ∞; sm with α = 0 is mellowmax; α → ∞ gives max for any ω.
"""

from __future__ import annotations

import torch


def _prepare(q: torch.Tensor, avail: torch.Tensor | None):
    if avail is None:
        return q, None, None
    avail = avail.bool()
    empty = ~avail.any(dim=-1)
    # rows without any available action compute on all-zero, all-available inputs, then return 0
    avail = avail | empty.unsqueeze(-1)
    q = torch.where(empty.unsqueeze(-1), torch.zeros_like(q), q)
    return q, avail, empty


def _masked_lse(x: torch.Tensor, avail: torch.Tensor | None) -> torch.Tensor:
    if avail is not None:
        x = x.masked_fill(~avail, -torch.inf)
    return torch.logsumexp(x, dim=-1)


def _finish(value: torch.Tensor, empty: torch.Tensor | None) -> torch.Tensor:
    return value if empty is None else value.masked_fill(empty, 0.0)


def soft_mellowmax(q: torch.Tensor, avail: torch.Tensor | None = None, alpha: float = 1.0,
                   omega: float = 10.0) -> torch.Tensor:
    if alpha < 0 or omega <= 0:
        raise ValueError(f"soft_mellowmax needs alpha >= 0 and omega > 0, got alpha={alpha}, omega={omega}")
    q, avail, empty = _prepare(q, avail)
    value = (_masked_lse((alpha + omega) * q, avail) - _masked_lse(alpha * q, avail)) / omega
    return _finish(value, empty)


def mellowmax(q: torch.Tensor, avail: torch.Tensor | None = None, omega: float = 10.0) -> torch.Tensor:
    if omega <= 0:
        raise ValueError(f"mellowmax needs omega > 0, got {omega}")
    q, avail, empty = _prepare(q, avail)
    n = torch.full(q.shape[:-1], float(q.shape[-1]), dtype=q.dtype, device=q.device) if avail is None else (
        avail.sum(dim=-1).to(q.dtype))
    value = (_masked_lse(omega * q, avail) - torch.log(n)) / omega
    return _finish(value, empty)


def softmax_operator(q: torch.Tensor, avail: torch.Tensor | None = None, beta: float = 1.0) -> torch.Tensor:
    q, avail, empty = _prepare(q, avail)
    logits = beta * q if avail is None else (beta * q).masked_fill(~avail, -torch.inf)
    value = (torch.softmax(logits, dim=-1) * q).sum(dim=-1)
    return _finish(value, empty)


def masked_max(q: torch.Tensor, avail: torch.Tensor | None = None) -> torch.Tensor:
    q, avail, empty = _prepare(q, avail)
    value = (q if avail is None else q.masked_fill(~avail, -torch.inf)).max(dim=-1).values
    return _finish(value, empty)


OPERATORS = {"max": masked_max, "softmax": softmax_operator, "mellowmax": mellowmax, "soft_mellowmax": soft_mellowmax}
