"""MAST's dual replay buffer, written over any episode buffer with add(batch) / sample(n, rng) / __len__.

Every episode batch goes into a large FIFO buffer B1 and a small one B2 (capacities 50:1 by default), so B2
always holds the most recent episodes. A draw of n episodes takes n1 = round(n·b1/(b1 + b2)) from B1 and the
rest from B2 (b1:b2 = 3:1 by default; 24 + 8 at batch 32) and concatenates the two along the first dimension.

The two parts are joined by `concat(first, second)`; the default handles torch tensors, numpy arrays, and
mappings / tuples / lists / dataclasses of them, and any batch type with a classmethod `cat(list_of_batches)`.
Pass your own concat for anything else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch


def concat_batches(first: Any, second: Any) -> Any:
    if torch.is_tensor(first):
        return torch.cat([first, second], dim=0)
    if isinstance(first, np.ndarray):
        return np.concatenate([first, second], axis=0)
    if isinstance(first, Mapping):
        return type(first)({k: concat_batches(first[k], second[k]) for k in first})
    if isinstance(first, tuple | list):
        return type(first)(concat_batches(a, b) for a, b in zip(first, second, strict=True))
    if dataclasses.is_dataclass(first) and not isinstance(first, type):
        return dataclasses.replace(first, **{f.name: concat_batches(getattr(first, f.name), getattr(second, f.name))
                                             for f in dataclasses.fields(first) if f.init})
    if hasattr(type(first), "cat"):
        return type(first).cat([first, second])
    raise TypeError(f"cannot concatenate batches of type {type(first).__name__}; pass concat= to DualReplay")


class DualReplay:
    def __init__(self, large, small, split: tuple[int, int] = (3, 1),
                 concat: Callable[[Any, Any], Any] = concat_batches):
        if min(split) < 0 or sum(split) <= 0:
            raise ValueError(f"split must be two non-negative integers, not both 0, got {split}")
        self.large, self.small, self.split, self.concat = large, small, tuple(split), concat

    @classmethod
    def build(cls, make_buffer: Callable[[int], Any], capacity: int, ratio: int = 50,
              split: tuple[int, int] = (3, 1), **kwargs) -> DualReplay:
        """B1 = make_buffer(capacity), B2 = make_buffer(max(1, capacity // ratio))."""
        return cls(make_buffer(capacity), make_buffer(max(1, capacity // ratio)), split, **kwargs)

    def sizes(self, n: int) -> tuple[int, int]:
        n1 = round(n * self.split[0] / sum(self.split))
        return n1, n - n1

    def add(self, episode_batch) -> None:
        self.large.add(episode_batch)
        self.small.add(episode_batch)

    def __len__(self) -> int:
        return len(self.large)

    def can_sample(self, n: int) -> bool:
        n1, n2 = self.sizes(n)
        return len(self.large) >= n1 and len(self.small) >= n2

    def sample(self, n: int, rng):
        n1, n2 = self.sizes(n)
        if n2 == 0:
            return self.large.sample(n1, rng)
        if n1 == 0:
            return self.small.sample(n2, rng)
        return self.concat(self.large.sample(n1, rng), self.small.sample(n2, rng))

    def state_dict(self) -> dict:
        return {"large": self.large.state_dict(), "small": self.small.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.large.load_state_dict(state["large"])
        self.small.load_state_dict(state["small"])
