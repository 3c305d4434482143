"""Samplers: which replay slots a mini-batch reads. They know nothing of how transitions are stored.

A ring buffer of `capacity` slots holds `size` transitions; while it fills, the written slots are
0 … size−1 and `write_pos == size`; once full, `size == capacity` and every slot is written. Either way the
written (filled) region is the slots 0 … size−1, so indices are drawn in [0, size) and never reach an
unwritten slot.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Sampler(Protocol):
    def sample(self, size: int, write_pos: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        """`batch_size` int64 indices into the filled region [0, size)."""


def _check(size: int, batch_size: int) -> None:
    if size <= 0:
        raise ValueError("cannot sample from an empty replay buffer")
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")


class UniformSampler:
    """Independent uniform draws with replacement (openai/maddpg `make_index`)."""

    def sample(self, size: int, write_pos: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        _check(size, batch_size)
        return rng.integers(0, size, size=batch_size, dtype=np.int64)


class NeighborSampler:
    """Locality-aware neighbor sampling (paper 1; the exact rule is unpublished — our Decision).

    Draw ceil(B/k) anchors uniformly in [0, size); each contributes the k consecutive slots
    a, a+1, …, a+k−1 taken modulo `size` (wrap-around within the filled region). The concatenated windows
    are cut to exactly B indices, so when k does not divide B the last window is truncated.
    k = 1 is uniform sampling; k = B is one contiguous block.
    """

    def __init__(self, k: int):
        if k < 1:
            raise ValueError(f"replay.neighbor_k must be >= 1, got {k}")
        self.k = int(k)

    def sample(self, size: int, write_pos: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        _check(size, batch_size)
        n_anchors = -(-batch_size // self.k)
        anchors = rng.integers(0, size, size=n_anchors, dtype=np.int64)
        windows = (anchors[:, None] + np.arange(self.k, dtype=np.int64)[None, :]) % size
        return windows.reshape(-1)[:batch_size]


def make_sampler(replay_cfg: dict) -> Sampler:
    """The sampler named by the run config's `replay` section."""
    name = replay_cfg["sampler"]
    if name == "uniform":
        return UniformSampler()
    if name == "neighbor":
        return NeighborSampler(replay_cfg["neighbor_k"])
    raise ValueError(f"replay.sampler: {name!r} is not a known sampler")
