"""A GRU's hidden-to-hidden recurrence over a whole sequence, with a hand-written backward (per-agent weights).

    gru_sequence(gi, h0, weight_hh, bias_hh) -> hs                      every row runs every step
      gi        [g, T, M, 3h]  input projections ih(x_t) of every step, gate order r, z, n (torch's)
      h0        [g, M, h]      initial hidden state
      weight_hh [g, 3h, h], bias_hh [g, 3h]   one hidden-to-hidden layer per group g (per agent)
      hs        [g, T, M, h]   the hidden state after every step
    gru_packed(gi, h0, weight_hh, bias_hh, counts) -> hs                  rows end at different steps
      counts    [b_0, ..., b_{T-1}], non-increasing: rows 0 .. b_t - 1 are alive at step t (sequences sorted
                longest first, as torch's PackedSequence)
      gi, hs    [g, R, ·] with R = Σ b_t: step t's rows stored after those of steps 0 .. t-1

torch.nn.GRUCell's equations, step by step:
    gh = h W_hhᵀ + b_hh;  r, z = σ(gi_rz + gh_rz);  n = tanh(gi_n + r ⊙ gh_n);  h' = (1 − z) ⊙ n + z ⊙ h

Why: the per-agent GRU unroll of the QMIX-family learner is ~16-60 steps of tiny products ([3, 32, 64] ×
[3, 64, 192]); through autograd every step records ~15 nodes and its backward runs ~30 more, each one dispatch
and one small allocation, and the weight gradient is accumulated step by step. Here the forward runs without a
graph (saving σ, n and h − n into preallocated [g, R, ·] buffers, and gh_n), and the backward walks the steps
once with ~9 ops per step; the weight and bias gradients are then one batched product over all R rows. The
packed form skips the padding of a batch of episodes of different lengths (cut to the longest, a batch of SMAX 3m
episodes is ~25–40 % padding): a row that has ended does no work in later steps.

Same function and gradient as the autograd form (tests/test_learner_fast.py); the values differ only at float
rounding: h' is computed as n + z ⊙ (h − n), the bias is added inside the product (baddbmm), and the weight
gradient sums over all steps in one product instead of step by step.

Not usable under torch.func.vmap (it writes into preallocated buffers); the GPU lockstep path (cells with
`fused = False`) keeps the autograd form.
"""

from __future__ import annotations

import itertools

import torch


def _spans(counts: list[int]) -> list[tuple[int, int]]:
    """(first row, rows) of every step in the packed layout."""
    starts = itertools.accumulate(counts[:-1], initial=0)
    return list(zip(starts, counts, strict=True))


def _forward(gi: torch.Tensor, h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, counts: list[int]):
    """hs, and what the backward needs: gh_n of every step (a list of [g, b_t, h]), σ(r, z) [g, R, 2h], n and
    h_{t-1} − n [g, R, h]."""
    g, rows, three_h = gi.shape
    hid = three_h // 3
    hs, rz, n, h_minus_n = (gi.new_empty(g, rows, width) for width in (hid, 2 * hid, hid, hid))
    w_t, b = weight.transpose(1, 2).contiguous(), bias.unsqueeze(1)  # a contiguous Wᵀ: faster small products
    gh_n = []
    for start, alive in _spans(counts):
        step = slice(start, start + alive)
        h = h[:, :alive]  # the rows still alive are a prefix (longest first)
        gh = torch.baddbmm(b, h, w_t)
        gh_n.append(gh[..., 2 * hid:])
        rz_t = rz[:, step]
        torch.sigmoid(gi[:, step, :2 * hid] + gh[..., :2 * hid], out=rz_t)
        torch.tanh(torch.addcmul(gi[:, step, 2 * hid:], rz_t[..., :hid], gh_n[-1]), out=n[:, step])
        torch.sub(h, n[:, step], out=h_minus_n[:, step])
        h = torch.addcmul(n[:, step], rz_t[..., hid:], h_minus_n[:, step], out=hs[:, step])
    return hs, gh_n, rz, n, h_minus_n


class _GRUPacked(torch.autograd.Function):
    @staticmethod
    def forward(ctx, gi, h0, weight, bias, counts):
        hs, gh_n, rz, n, h_minus_n = _forward(gi, h0, weight, bias, counts)
        ctx.save_for_backward(h0, weight, hs, rz, n, h_minus_n)
        ctx.gh_n, ctx.counts = gh_n, counts  # intermediates of this function alone (no other op can modify them)
        return hs

    @staticmethod
    def backward(ctx, d_hs):
        h0, weight, hs, rz, n, h_minus_n = ctx.saved_tensors
        g, rows, hid = hs.shape
        spans = _spans(ctx.counts)
        # every factor that does not depend on the incoming gradient, for all steps at once
        z = rz[..., hid:]
        d_rz_factor = rz * (1 - rz)                    # σ'
        d_n_factor = (1 - z) * (1 - n * n)             # ∂h'/∂n · tanh'
        d_gh = hs.new_empty(g, rows, 3 * hid)          # gradient of gh = h W_hhᵀ + b_hh
        d_n_pre = hs.new_empty(g, rows, hid)           # gradient of gi_n (the rest of gi's equals gh's)
        d_r_z = hs.new_empty(g, h0.shape[1], 2 * hid)
        carry = None                                   # gradient reaching h_t from step t + 1
        for (start, alive), gh_n in zip(reversed(spans), reversed(ctx.gh_n), strict=True):
            step = slice(start, start + alive)
            dh = d_hs[:, step]
            if carry is not None:
                if carry.shape[1] == alive:
                    dh = dh + carry
                else:  # rows that ended at step t + 1 get no gradient from it
                    dh = dh.clone()
                    dh[:, :carry.shape[1]] += carry
            d_r, d_z = d_r_z[:, :alive, :hid], d_r_z[:, :alive, hid:]
            torch.mul(dh, d_n_factor[:, step], out=d_n_pre[:, step])
            torch.mul(d_n_pre[:, step], gh_n, out=d_r)
            torch.mul(dh, h_minus_n[:, step], out=d_z)
            torch.mul(d_r_z[:, :alive], d_rz_factor[:, step], out=d_gh[:, step, :2 * hid])
            torch.mul(d_n_pre[:, step], rz[:, step, :hid], out=d_gh[:, step, 2 * hid:])
            carry = torch.baddbmm(dh * z[:, step], d_gh[:, step], weight)
        d_gi = torch.cat([d_gh[..., :2 * hid], d_n_pre], dim=-1)
        # h_{t-1} of every row of step t: h0's rows for step 0, then each step's hidden states, cut to the next
        # step's alive rows
        h_prev = torch.cat([h0[:, :spans[0][1]]] + [hs[:, start:start + nxt] for (start, _), (_, nxt)
                                                     in zip(spans[:-1], spans[1:], strict=True)], dim=1)
        d_weight = torch.bmm(d_gh.transpose(1, 2), h_prev) if ctx.needs_input_grad[2] else None
        d_bias = d_gh.sum(1) if ctx.needs_input_grad[3] else None
        d_h0 = None
        if ctx.needs_input_grad[1]:
            d_h0 = carry if carry.shape[1] == h0.shape[1] else torch.cat(
                [carry, carry.new_zeros(g, h0.shape[1] - carry.shape[1], hid)], dim=1)
        return d_gi, d_h0, d_weight, d_bias, None


def gru_packed(gi: torch.Tensor, h0: torch.Tensor, weight_hh: torch.Tensor, bias_hh: torch.Tensor,
               counts: list[int]) -> torch.Tensor:
    """Hidden states [g, R, h] of the packed recurrence (see the module docstring); a graph-free forward when no
    gradient is needed (the target networks)."""
    if any(later > earlier for earlier, later in itertools.pairwise(counts)) or not counts or counts[0] > h0.shape[1]:
        raise ValueError(f"gru_packed: counts must be non-increasing and at most {h0.shape[1]}, got {counts}")
    counts = [c for c in counts if c > 0]
    if sum(counts) != gi.shape[1]:
        raise ValueError(f"gru_packed: gi has {gi.shape[1]} rows, the counts sum to {sum(counts)}")
    if torch.is_grad_enabled() and any(x.requires_grad for x in (gi, h0, weight_hh, bias_hh)):
        return _GRUPacked.apply(gi, h0, weight_hh, bias_hh, counts)
    return _forward(gi, h0, weight_hh, bias_hh, counts)[0]


def gru_sequence(gi: torch.Tensor, h0: torch.Tensor, weight_hh: torch.Tensor, bias_hh: torch.Tensor) -> torch.Tensor:
    """Hidden states [g, T, M, h] of the recurrence with every row alive at every step."""
    g, steps, m, three_h = gi.shape
    hs = gru_packed(gi.reshape(g, steps * m, three_h), h0, weight_hh, bias_hh, [m] * steps)
    return hs.view(g, steps, m, -1)
