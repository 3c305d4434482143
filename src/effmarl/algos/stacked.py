"""Stacked parameters for the batched paper-1 learners: N agents' MLPs as one set of `[N, in, out]` tensors.

`StackedMLP` holds N MLPs of one shape as stacked weights and runs all N in one batched matmul per layer:
x `[N, B, in]` -> `[N, B, out]` (`torch.baddbmm`). It is built *from* N ordinary `effmarl.nets.mlp.MLP`
modules (`StackedMLP.from_modules`), so a batched learner constructed with the same seed starts from exactly
the parameters the per-agent (sequential) learner would have, and an equivalence test can compare the two.

Inputs of different widths (MPE prey observe 2 numbers fewer than predators; the critic's joint input is the
concatenation of those) are handled by *padding*: the stacked weight has zero rows at the padded input
positions (`row_index` maps a module's input rows into the padded input). A padded input is exactly 0, so
those rows get exactly zero gradient, Adam leaves them at zero, and the outputs equal the unpadded module's.

The learners read `effmarl.replay.StackedBatch`es (the contiguous storage's own layout, `[G, B, N, …]`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from effmarl.nets.mlp import MLP


class StackedMLP(nn.Module):
    """N MLPs with the same layer widths as `[N, in, out]` weights and `[N, 1, out]` biases, ReLU between."""

    def __init__(self, weights: list[torch.Tensor], biases: list[torch.Tensor]):
        super().__init__()
        self.weights = nn.ParameterList([nn.Parameter(w) for w in weights])
        self.biases = nn.ParameterList([nn.Parameter(b) for b in biases])

    @classmethod
    def from_modules(cls, modules: Sequence[MLP], row_index: Sequence[Sequence[int]] | None = None,
                     in_width: int | None = None) -> StackedMLP:
        """Stack `modules`; module i's first-layer input row r goes to padded row `row_index[i][r]`."""
        linears = [[m for m in mod.net if isinstance(m, nn.Linear)] for mod in modules]
        weights, biases = [], []
        for layer in range(len(linears[0])):
            ws = [lin[layer].weight.detach().t() for lin in linears]      # [in, out] each
            if layer == 0 and row_index is not None:
                padded = []
                for w, rows in zip(ws, row_index, strict=True):
                    p = w.new_zeros(in_width, w.shape[1])
                    p[torch.as_tensor(list(rows), device=w.device)] = w
                    padded.append(p)
                ws = padded
            weights.append(torch.stack(ws).clone())
            biases.append(torch.stack([lin[layer].bias.detach()[None] for lin in linears]).clone())
        return cls(weights, biases)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rest(torch.baddbmm(self.biases[0], x, self.weights[0]))

    def rest(self, pre: torch.Tensor) -> torch.Tensor:
        """The network after its first layer's pre-activation `pre` `[N, B, hidden]`."""
        x = pre
        for w, b in zip(self.weights[1:], self.biases[1:], strict=True):
            x = torch.baddbmm(b, torch.relu(x), w)
        return x

    def agent_module(self, agent: int, row_index: Sequence[int] | None = None) -> dict[str, torch.Tensor]:
        """Agent i's parameters in `MLP.state_dict()` form (first-layer padding rows removed)."""
        state, linear = {}, 0
        for layer, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            wi = w[agent]
            if layer == 0 and row_index is not None:
                wi = wi[torch.as_tensor(list(row_index), device=wi.device)]
            state[f"net.{linear}.weight"] = wi.t().detach().clone()
            state[f"net.{linear}.bias"] = b[agent, 0].detach().clone()
            linear += 2
        return state


def clip_grads_per_agent(params: Sequence[torch.Tensor], max_norm: float) -> None:
    """openai/maddpg's per-variable clip on stacked parameters: every agent's slice of every parameter is
    clipped to norm `max_norm` on its own (what the per-agent learner does tensor by tensor)."""
    for p in params:
        if p.grad is None:
            continue
        g = p.grad
        norms = g.reshape(g.shape[0], -1).norm(dim=1)
        g.mul_((max_norm / torch.clamp(norms, min=max_norm)).view(-1, *([1] * (g.dim() - 1))))


def soft_update_stacked(target: nn.Module, source: nn.Module, tau: float) -> None:
    with torch.no_grad():
        torch._foreach_lerp_(list(target.parameters()), list(source.parameters()), tau)


def joint_rows(obs_dims: Sequence[int], n_actions: int) -> list[int]:
    """Where each input of the per-agent critic (cat of all unpadded obs, then all actions) sits in the stacked
    critic's padded input (cat of the `[N, D]` obs block and the `[N, A]` action block, flattened)."""
    width, n = max(obs_dims), len(obs_dims)
    rows = [i * width + r for i, d in enumerate(obs_dims) for r in range(d)]
    return rows + [n * width + i * n_actions + r for i in range(n) for r in range(n_actions)]


def agent_rows(obs_dim: int) -> list[int]:
    return list(range(obs_dim))


def diagonal_groups(x: torch.Tensor, groups: int) -> torch.Tensor:
    """`[G, B, N, ...]` -> `[N, B, ...]`: agent i's entry of group i (per-agent batches, G = N) or of the one
    shared group (G = 1)."""
    if groups == 1:
        return x[0].transpose(0, 1)
    n = x.shape[2]
    idx = torch.arange(n, device=x.device)
    return x[idx, :, idx]


def pad_obs(obs: list[np.ndarray], width: int) -> np.ndarray:
    """Per-agent observations `[E, D_i]` (E environment copies) -> `[N, E, width]`, zero-padded."""
    out = np.zeros((len(obs), len(obs[0]), width), np.float32)
    for i, o in enumerate(obs):
        out[i, :, : o.shape[-1]] = o
    return out
