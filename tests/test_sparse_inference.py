"""Sparse inference forms compute the same function as the masked dense layer; the dual replay buffer's split."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from effmarl.replay.dual import DualReplay
from effmarl.sparse import SparseTopology
from effmarl.sparse.inference import CompactLinear, CSRLinear


def test_csr_and_compact_equal_masked_dense():
    torch.manual_seed(0)
    lin = nn.Linear(24, 16)
    SparseTopology(lin, 0.9, seed=1)
    with torch.no_grad():
        lin.weight[3] = 0.0  # a dead output row: its value is just the bias
        lin.weight[:, 5] = 0.0  # a dead input column
    x = torch.randn(10, 24)
    ref = lin(x)
    csr, compact = CSRLinear(lin.weight, lin.bias), CompactLinear(lin.weight, lin.bias)
    torch.testing.assert_close(csr(x), ref)
    torch.testing.assert_close(compact(x), ref)
    assert csr.nnz == int((lin.weight != 0).sum())
    assert compact.rows.numel() <= 15 and compact.cols.numel() <= 23 and compact.kept_fraction < 1.0


class FIFO:
    """A minimal episode buffer: add(batch [k, ...]) / sample(n, rng) / __len__."""

    def __init__(self, capacity):
        self.capacity, self.data = capacity, np.zeros((0, 2))

    def add(self, batch):
        self.data = np.concatenate([self.data, batch])[-self.capacity:]

    def __len__(self):
        return len(self.data)

    def sample(self, n, rng):
        return self.data[rng.choice(len(self.data), n, replace=False)]


def test_dual_replay_split_and_recency():
    dual = DualReplay.build(FIFO, capacity=100, ratio=50)  # B2 holds the 2 newest episodes
    assert dual.small.capacity == 2 and dual.sizes(32) == (24, 8) and dual.sizes(8) == (6, 2)
    for i in range(40):
        dual.add(np.array([[i, i]], dtype=float))
    assert len(dual) == 40 and dual.can_sample(8) and not dual.can_sample(12)
    batch = dual.sample(8, np.random.default_rng(0))
    assert batch.shape == (8, 2) and set(batch[6:, 0]) == {38.0, 39.0}
    assert DualReplay(FIFO(10), FIFO(1), split=(1, 0)).sizes(5) == (5, 0)
    with pytest.raises(TypeError, match="concat"):
        DualReplay(FIFO(1), FIFO(1)).concat(object(), object())
    merged = DualReplay(FIFO(1), FIFO(1)).concat({"a": torch.ones(2, 3)}, {"a": torch.zeros(1, 3)})
    assert merged["a"].shape == (3, 3)
