"""Sparse inference forms of a trained (masked) Linear layer, for measuring real speed (benchmarks/).

- CSRLinear: the weight as a torch sparse CSR matrix; y = (W_csr @ xᵀ)ᵀ + b via torch.sparse.mm.
- CompactLinear: structural compaction: drop inputs no active weight reads (all-zero columns) and outputs no
  active weight writes (all-zero rows, whose value is just the bias), then a dense matmul on what is left.
  With unstructured masks at 90 % sparsity few whole rows or columns die, so this mostly measures the cost of
  the gather/scatter; it pays off only for masks that concentrate on few units.
Both compute the same function as the masked dense layer (tests check this).
"""

from __future__ import annotations

import warnings

import torch
from torch import nn


class CSRLinear(nn.Module):
    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None):
        super().__init__()
        with warnings.catch_warnings():  # "sparse CSR support is in beta" on every conversion
            warnings.simplefilter("ignore", UserWarning)
            self.weight = weight.detach().to_sparse_csr()
        self.bias = None if bias is None else bias.detach().clone()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.sparse.mm(self.weight, x.t()).t()
        return y if self.bias is None else y + self.bias

    @property
    def nnz(self) -> int:
        return int(self.weight.values().numel())


class CompactLinear(nn.Module):
    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None):
        super().__init__()
        w = weight.detach()
        live = w != 0
        self.out_features, self.in_features = w.shape
        self.rows = live.any(dim=1).nonzero().flatten()
        self.cols = live.any(dim=0).nonzero().flatten()
        self.weight = w[self.rows][:, self.cols].contiguous()
        self.bias = torch.zeros(w.shape[0], dtype=w.dtype) if bias is None else bias.detach().clone()
        self.bias_live = self.bias[self.rows].contiguous()
        self.all_rows = self.rows.numel() == self.out_features
        self.all_cols = self.cols.numel() == w.shape[1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xs = x if self.all_cols else x.index_select(1, self.cols)
        ys = torch.addmm(self.bias_live, xs, self.weight.t())
        if self.all_rows:
            return ys
        y = self.bias.expand(x.shape[0], -1).clone()
        y[:, self.rows] = ys
        return y

    @property
    def kept_fraction(self) -> float:
        """Share of the dense matrix that survives compaction (live rows × live columns)."""
        return self.weight.numel() / (self.out_features * self.in_features)
