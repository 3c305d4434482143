"""RLx2's dynamic-capacity replay buffer, adapted to episode data (our reading; docs/mast.md).

RLx2 (Tan et al., ICLR 2023) keeps the buffer's samples close to the current policy: it measures the policy
distance between the current policy and the actions stored with the oldest samples, and when that distance exceeds
a threshold the oldest samples are discarded; otherwise the capacity keeps growing. Here, over an EpisodeBuffer:
the capacity is a sampling *window* over the newest episodes of the storage (FIFO semantics without moving
data); `adjust(distance)` shrinks the window by `shrink` episodes when distance > threshold and grows it by `grow`
(up to `maximum`) otherwise. The learner measures the distance on `oldest(k)` (the k oldest episodes in the window)
as the fraction of agent-steps whose stored action differs from the current greedy action.
"""

from __future__ import annotations

import torch


class DynamicWindow:
    def __init__(self, buffer, initial: int, maximum: int, threshold: float, shrink: int, grow: int, minimum: int = 1):
        self.buffer, self.window, self.maximum = buffer, min(initial, maximum), maximum
        self.threshold, self.shrink, self.grow, self.minimum = threshold, shrink, grow, minimum

    def __len__(self) -> int:
        return min(self.window, len(self.buffer))

    def add(self, batch) -> None:
        self.buffer.add(batch)

    def can_sample(self, n: int) -> bool:
        return len(self) >= n

    def sample(self, n: int, generator: torch.Generator | None = None):
        return self.buffer.sample(n, generator, newest=self.window)

    def oldest(self, k: int):
        """The k oldest episodes that can currently be sampled."""
        return self.buffer.gather(self.buffer.recent_indices(len(self))[:k])

    def adjust(self, distance: float) -> None:
        if distance > self.threshold:
            self.window = max(self.minimum, len(self) - self.shrink)
        else:
            self.window = min(self.maximum, self.window + self.grow)

    def state_dict(self) -> dict:
        return {"buffer": self.buffer.state_dict(), "window": self.window}

    def load_state_dict(self, state: dict) -> None:
        self.buffer.load_state_dict(state["buffer"])
        self.window = state["window"]
