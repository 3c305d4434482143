"""Multi-layer perceptrons and the Gumbel-softmax helpers of discrete-action actor-critic (MADDPG, MASAC).

Initialisation follows openai/maddpg's `tf.contrib.layers.fully_connected`: Xavier-uniform weights, zero
biases, ReLU between layers, a linear output.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    def __init__(self, in_dim: int, out_dim: int, hidden: Sequence[int] = (64, 64)):
        super().__init__()
        dims = [in_dim, *hidden, out_dim]
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(dims[:-1], dims[1:], strict=True)):
            linear = nn.Linear(a, b)
            nn.init.xavier_uniform_(linear.weight)
            nn.init.zeros_(linear.bias)
            layers.append(linear)
            if i < len(dims) - 2:
                layers.append(nn.ReLU())
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def gumbel_softmax(logits: torch.Tensor, hard: bool = True, temperature: float = 1.0) -> torch.Tensor:
    """A Gumbel-softmax sample of the categorical distribution softmax(logits), drawn with torch's global
    RNG (so checkpoints that save it replay exactly). hard=True returns the one-hot of the sampled action in
    the forward pass with the soft sample's gradient (straight-through)."""
    return F.gumbel_softmax(logits, tau=temperature, hard=hard, dim=-1)


def soft_update(target: nn.Module, source: nn.Module, tau: float) -> None:
    """Polyak averaging, target <- (1 - tau) target + tau source (openai/maddpg `make_update_exp`)."""
    with torch.no_grad():
        torch._foreach_lerp_(list(target.parameters()), list(source.parameters()), tau)


def clip_grads_per_tensor(params: Iterable[torch.Tensor], max_norm: float) -> None:
    """openai/maddpg `minimize_and_clip`: clip every parameter's gradient to norm `max_norm` separately
    (tf.clip_by_norm per variable), not the joint norm."""
    grads = [p.grad for p in params if p.grad is not None]
    if grads:
        # t * clip / max(|t|, clip) for every tensor at once, without a host sync on a GPU
        norms = torch.stack(torch._foreach_norm(grads))
        torch._foreach_mul_(grads, list((max_norm / torch.clamp(norms, min=max_norm)).unbind()))
