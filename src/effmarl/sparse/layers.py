"""Stacked per-agent layers: one weight tensor [n_agents, out, in] holds every agent's own network.

Inputs are laid out agent-major, x: [n_agents, batch, in], so one batched matmul (baddbmm) evaluates all agents'
networks at once. With these layers each agent has its own parameters (no parameter sharing), which is what
MAST's per-agent masks need: a SparseTopology ranks all agents' weights of one layer together under one budget,
so every agent ends with its own mask and the split of connections between agents is learned.

Initialisation matches torch.nn.Linear / nn.GRUCell per agent (uniform ±1/sqrt(fan_in), ±1/sqrt(hidden)).
"""

from __future__ import annotations

import math

import torch
from torch import nn


class AgentLinear(nn.Module):
    """n_agents independent Linear layers: y[a] = x[a] @ weight[a].T + bias[a]; x [n_agents, batch, in]."""

    def __init__(self, n_agents: int, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        self.n_agents, self.in_features, self.out_features = n_agents, in_features, out_features
        self.weight = nn.Parameter(torch.empty(n_agents, out_features, in_features))
        self.bias = nn.Parameter(torch.empty(n_agents, out_features)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.in_features)
        nn.init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        wt = self.weight.transpose(1, 2)
        if self.bias is None:
            return torch.bmm(x, wt)
        return torch.baddbmm(self.bias.unsqueeze(1), x, wt)

    @classmethod
    def from_linears(cls, linears: list[nn.Linear]) -> AgentLinear:
        """Stack n ordinary Linear layers (one per agent) into one AgentLinear with the same weights."""
        first = linears[0]
        layer = cls(len(linears), first.in_features, first.out_features, bias=first.bias is not None)
        with torch.no_grad():
            layer.weight.copy_(torch.stack([lin.weight for lin in linears]))
            if layer.bias is not None:
                layer.bias.copy_(torch.stack([lin.bias for lin in linears]))
        return layer

    def extra_repr(self) -> str:
        return f"n_agents={self.n_agents}, in={self.in_features}, out={self.out_features}, bias={self.bias is not None}"


class AgentGRUCell(nn.Module):
    """n_agents independent GRU cells (torch.nn.GRUCell's equations and gate order r, z, n).

    x [n_agents, batch, in], h [n_agents, batch, hidden] -> new h [n_agents, batch, hidden].
    weight_ih [n_agents, 3·hidden, in] and weight_hh [n_agents, 3·hidden, hidden] are the two sparsifiable layers.
    """

    def __init__(self, n_agents: int, input_size: int, hidden_size: int, bias: bool = True):
        super().__init__()
        self.n_agents, self.input_size, self.hidden_size = n_agents, input_size, hidden_size
        self.weight_ih = nn.Parameter(torch.empty(n_agents, 3 * hidden_size, input_size))
        self.weight_hh = nn.Parameter(torch.empty(n_agents, 3 * hidden_size, hidden_size))
        if bias:
            self.bias_ih = nn.Parameter(torch.empty(n_agents, 3 * hidden_size))
            self.bias_hh = nn.Parameter(torch.empty(n_agents, 3 * hidden_size))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        if self.bias_ih is None:
            gi = torch.bmm(x, self.weight_ih.transpose(1, 2))
            gh = torch.bmm(h, self.weight_hh.transpose(1, 2))
        else:
            gi = torch.baddbmm(self.bias_ih.unsqueeze(1), x, self.weight_ih.transpose(1, 2))
            gh = torch.baddbmm(self.bias_hh.unsqueeze(1), h, self.weight_hh.transpose(1, 2))
        i_r, i_z, i_n = gi.chunk(3, dim=-1)
        h_r, h_z, h_n = gh.chunk(3, dim=-1)
        r = torch.sigmoid(i_r + h_r)
        z = torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        return (1.0 - z) * n + z * h

    @classmethod
    def from_cells(cls, cells: list[nn.GRUCell]) -> AgentGRUCell:
        """Stack n ordinary GRUCells (one per agent) into one AgentGRUCell with the same weights."""
        first = cells[0]
        layer = cls(len(cells), first.input_size, first.hidden_size, bias=first.bias)
        with torch.no_grad():
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                if getattr(layer, name) is not None:
                    getattr(layer, name).copy_(torch.stack([getattr(c, name) for c in cells]))
        return layer

    def extra_repr(self) -> str:
        return f"n_agents={self.n_agents}, input_size={self.input_size}, hidden_size={self.hidden_size}"
