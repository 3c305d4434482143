"""A GRU's hidden-to-hidden recurrence over a whole sequence, with a hand-written backward (per-agent weights).

    gru_sequence(gi, h0, weight_hh, bias_hh) -> hs
      gi        [g, T, M, 3h]  input projections ih(x_t) of every step, gate order r, z, n (torch's)
      h0        [g, M, h]      initial hidden state
      weight_hh [g, 3h, h], bias_hh [g, 3h]   one hidden-to-hidden layer per group g (per agent)
      hs        [g, T, M, h]   the hidden state after every step

torch.nn.GRUCell's equations, step by step:
    gh = h W_hhᵀ + b_hh;  r, z = σ(gi_rz + gh_rz);  n = tanh(gi_n + r ⊙ gh_n);  h' = (1 − z) ⊙ n + z ⊙ h

Why: the per-agent GRU unroll of the QMIX-family learner is ~16-60 steps of tiny products ([3, 32, 64] ×
[3, 64, 192]); through autograd every step records ~15 nodes and its backward runs ~30 more, each one dispatch
and one small allocation, and the weight gradient is accumulated step by step. Here the forward runs without a
graph (saving σ, n and h − n into preallocated [g, T, M, ·] buffers, and gh_n), and the backward walks the steps
once with ~9 ops per step; the weight and bias gradients are then one batched product over all T·M rows.

Same function and gradient as the autograd form (tests/test_learner_fast.py); the values differ only at float
rounding: h' is computed as n + z ⊙ (h − n), the bias is added inside the product (baddbmm), and the weight
gradient sums over all steps in one product instead of step by step.

Not usable under torch.func.vmap (it writes into preallocated buffers); the GPU lockstep path (cells with
`fused = False`) keeps the autograd form.
"""

from __future__ import annotations

import torch


def _forward(gi: torch.Tensor, h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    """hs, and what the backward needs: gh_n of every step (a list of [g,M,h]), σ(r, z) [g,T,M,2h], n and
    h_{t-1} − n [g,T,M,h]."""
    g, steps, m, three_h = gi.shape
    hid = three_h // 3
    hs, rz, n, h_minus_n = (gi.new_empty(g, steps, m, width) for width in (hid, 2 * hid, hid, hid))
    w_t, b = weight.transpose(1, 2).contiguous(), bias.unsqueeze(1)  # a contiguous Wᵀ: faster small products
    gh_n = []
    # per-step views made once (one unbind each instead of several indexing ops per step)
    steps_of = [gi[..., :2 * hid], gi[..., 2 * hid:], rz, rz[..., :hid], rz[..., hid:], n, h_minus_n, hs]
    for gi_rz, gi_n, rz_t, r, z, n_t, h_minus_n_t, h_next in zip(*(x.unbind(1) for x in steps_of), strict=True):
        gh = torch.baddbmm(b, h, w_t)
        gh_n.append(gh[..., 2 * hid:])
        torch.sigmoid(gi_rz + gh[..., :2 * hid], out=rz_t)
        torch.tanh(torch.addcmul(gi_n, r, gh_n[-1]), out=n_t)
        torch.sub(h, n_t, out=h_minus_n_t)
        h = torch.addcmul(n_t, z, h_minus_n_t, out=h_next)
    return hs, gh_n, rz, n, h_minus_n


class _GRUSequence(torch.autograd.Function):
    @staticmethod
    def forward(ctx, gi, h0, weight, bias):
        hs, gh_n, rz, n, h_minus_n = _forward(gi, h0, weight, bias)
        ctx.save_for_backward(h0, weight, hs, rz, n, h_minus_n)
        ctx.gh_n = gh_n  # intermediates of this function alone (no other op can modify them)
        return hs

    @staticmethod
    def backward(ctx, d_hs):
        h0, weight, hs, rz, n, h_minus_n = ctx.saved_tensors
        g, steps, m, hid = hs.shape
        # every factor that does not depend on the incoming gradient, for all steps at once
        z = rz[..., hid:]
        d_rz_factor = rz * (1 - rz)                    # σ'
        d_n_factor = (1 - z) * (1 - n * n)             # ∂h'/∂n · tanh'
        d_gh = hs.new_empty(g, steps, m, 3 * hid)      # gradient of gh = h W_hhᵀ + b_hh
        d_n_pre = hs.new_empty(g, steps, m, hid)       # gradient of gi_n (the rest of gi's equals gh's)
        d_r_z = hs.new_empty(g, m, 2 * hid)
        d_r, d_z = d_r_z[..., :hid], d_r_z[..., hid:]
        steps_of = [d_hs, d_n_factor, d_n_pre, h_minus_n, d_rz_factor, d_gh, d_gh[..., :2 * hid], d_gh[..., 2 * hid:],
                    rz[..., :hid], z]
        carry = None                                   # gradient reaching h_t from step t + 1
        for gh_n, (d_h_t, d_n_factor_t, d_n_pre_t, h_minus_n_t, d_rz_factor_t, d_gh_t, d_gh_rz, d_gh_n, r, z_t) in \
                zip(reversed(ctx.gh_n), reversed(list(zip(*(x.unbind(1) for x in steps_of), strict=True))),
                    strict=True):
            dh = d_h_t if carry is None else d_h_t + carry
            torch.mul(dh, d_n_factor_t, out=d_n_pre_t)
            torch.mul(d_n_pre_t, gh_n, out=d_r)
            torch.mul(dh, h_minus_n_t, out=d_z)
            torch.mul(d_r_z, d_rz_factor_t, out=d_gh_rz)
            torch.mul(d_n_pre_t, r, out=d_gh_n)
            carry = torch.baddbmm(dh * z_t, d_gh_t, weight)
        d_gi = torch.cat([d_gh[..., :2 * hid], d_n_pre], dim=-1)
        h_prev = torch.cat([h0.unsqueeze(1), hs[:, :-1]], dim=1).reshape(g, steps * m, hid)
        flat = d_gh.reshape(g, steps * m, 3 * hid)
        d_weight = torch.bmm(flat.transpose(1, 2), h_prev) if ctx.needs_input_grad[2] else None
        d_bias = flat.sum(1) if ctx.needs_input_grad[3] else None
        return d_gi, carry if ctx.needs_input_grad[1] else None, d_weight, d_bias


def gru_sequence(gi: torch.Tensor, h0: torch.Tensor, weight_hh: torch.Tensor, bias_hh: torch.Tensor) -> torch.Tensor:
    """Hidden states [g, T, M, h] of the recurrence (see the module docstring); a graph-free forward when no
    gradient is needed (the target networks)."""
    if torch.is_grad_enabled() and any(x.requires_grad for x in (gi, h0, weight_hh, bias_hh)):
        return _GRUSequence.apply(gi, h0, weight_hh, bias_hh)
    return _forward(gi, h0, weight_hh, bias_hh)[0]
