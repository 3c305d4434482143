"""Episode replay buffer, PyMARL layout: whole episodes, padded to a fixed length, in contiguous tensors.

Fields ("scheme") of one episode of at most T steps:
    obs        [T+1, n_agents, obs_dim] float32   observation at t (t = T: the state after the last step)
    state      [T+1, state_dim]         float32
    avail      [T+1, n_agents, n_act]   bool      available actions at t
    actions    [T+1, n_agents]          int64     action taken at t (index T unused)
    reward     [T]                      float32   team reward of transition t
    terminated [T]                      bool      transition t ended the battle (not a time-out)
    filled     [T]                      bool      transition t exists: the padding mask

The storage is a ring of `capacity` episodes on one device (CPU or GPU); `sample` draws episodes uniformly
without replacement (as PyMARL) and cuts the batch to the longest sampled episode.
"""

from __future__ import annotations

import torch

from effmarl.envs.base import EnvSpec


def episode_scheme(spec: EnvSpec, max_t: int | None = None) -> dict[str, tuple[tuple[int, ...], torch.dtype]]:
    """{field: (shape of one episode, dtype)} for episodes of at most max_t (default: the env's limit) steps."""
    t, n, a = max_t or spec.episode_limit, spec.n_agents, max(spec.n_actions)
    if len(set(spec.obs_dims)) != 1:
        raise ValueError("episode buffer: agents must share one observation size (pad them first)")
    return {
        "obs": ((t + 1, n, spec.obs_dims[0]), torch.float32),
        "state": ((t + 1, spec.state_dim), torch.float32),
        "avail": ((t + 1, n, a), torch.bool),
        "actions": ((t + 1, n), torch.int64),
        "reward": ((t,), torch.float32),
        "terminated": ((t,), torch.bool),
        "filled": ((t,), torch.bool),
    }


def empty_batch(scheme: dict, batch_size: int, device="cpu") -> dict[str, torch.Tensor]:
    """A zero-filled batch of `batch_size` episodes in the scheme's layout."""
    return {k: torch.zeros((batch_size, *shape), dtype=dtype, device=device) for k, (shape, dtype) in scheme.items()}


def cut(batch: dict[str, torch.Tensor], steps: int) -> dict[str, torch.Tensor]:
    """The first `steps` transitions of a batch (and steps + 1 states)."""
    full = batch["filled"].shape[1]
    return {k: v[:, : steps + (v.shape[1] - full)] for k, v in batch.items()}


def used_steps(batch: dict[str, torch.Tensor]) -> int:
    """Length of the longest episode in the batch."""
    lengths = batch["filled"].sum(dim=1)
    return max(int(lengths.max()), 1)


def state_counts(filled: torch.Tensor) -> torch.Tensor:
    """States per episode [B] from the padding mask [B, T]: an episode of L transitions has states 0..L (state L
    bootstraps its last target)."""
    return filled.sum(dim=1) + 1


def state_rows(filled: torch.Tensor) -> tuple[int, int]:
    """(states inside an episode, all states) of a batch cut to its longest episode: B × (T + 1) rows of agent
    input, of which the packed unroll computes the first number."""
    return int(state_counts(filled).sum()), filled.shape[0] * (filled.shape[1] + 1)


def pad_time(batch: dict[str, torch.Tensor], steps: int) -> dict[str, torch.Tensor]:
    """A batch zero-padded in time to `steps` transitions (padding: filled = False)."""
    extra = steps - batch["filled"].shape[1]
    if extra == 0:
        return batch
    return {k: torch.cat([v, v.new_zeros((v.shape[0], extra, *v.shape[2:]))], dim=1) for k, v in batch.items()}


def concat(first: dict[str, torch.Tensor], second: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Two batches as one, the shorter zero-padded in time to the longer (padding: filled = False)."""
    steps = max(first["filled"].shape[1], second["filled"].shape[1])
    a, b = pad_time(first, steps), pad_time(second, steps)
    return {k: torch.cat([a[k], b[k]], dim=0) for k in a}


class EpisodeBuffer:
    def __init__(self, scheme: dict, capacity: int, device="cpu"):
        self.scheme, self.capacity, self.device = scheme, capacity, torch.device(device)
        self.data = empty_batch(scheme, capacity, self.device)
        self.next_index = 0  # where the next episode goes
        self.size = 0        # episodes stored

    def __len__(self) -> int:
        return self.size

    def add(self, batch: dict[str, torch.Tensor]) -> None:
        """Store the episodes of `batch` ([b, ...] per field, b <= capacity), overwriting the oldest."""
        b = batch["filled"].shape[0]
        idx = (self.next_index + torch.arange(b)) % self.capacity
        idx = idx.to(self.device)
        for key, tensor in self.data.items():
            src = batch[key]
            if src.shape[1:] != tensor.shape[1:]:
                raise ValueError(f"episode buffer: field {key!r} has shape {tuple(src.shape[1:])} per episode, "
                                 f"expected {tuple(tensor.shape[1:])}")
            tensor[idx] = src.to(self.device)
        self.next_index = (self.next_index + b) % self.capacity
        self.size = min(self.size + b, self.capacity)

    def can_sample(self, batch_size: int) -> bool:
        return self.size >= batch_size

    def sample(self, batch_size: int, generator: torch.Generator | None = None,
               newest: int | None = None) -> dict[str, torch.Tensor]:
        """`batch_size` distinct stored episodes, uniformly, cut to the longest of them; with `newest`, only
        among the `newest` most recently added episodes (a smaller FIFO window over the same storage)."""
        window = self.size if newest is None else min(newest, self.size)
        if window < batch_size:
            raise ValueError(f"episode buffer holds {window} sampleable episodes, cannot sample {batch_size}")
        if window == self.size:
            idx = torch.randperm(self.size, generator=generator)[:batch_size]
        else:
            idx = self.recent_indices(window)[torch.randperm(window, generator=generator)[:batch_size]]
        return self.gather(idx)

    def recent_indices(self, window: int) -> torch.Tensor:
        """Storage indices of the `window` most recent episodes, oldest first."""
        window = min(window, self.size)
        return (self.next_index - window + torch.arange(window)) % self.capacity

    def gather(self, idx: torch.Tensor) -> dict[str, torch.Tensor]:
        """The episodes at storage indices idx, cut to the longest of them."""
        idx = idx.to(self.device)
        batch = {k: v.index_select(0, idx) for k, v in self.data.items()}
        return cut(batch, used_steps(batch))

    def state_dict(self) -> dict:
        """Stored episodes only (not the empty part of the ring), in storage order."""
        return {"data": {k: v[: self.size].cpu() for k, v in self.data.items()},
                "next_index": self.next_index, "size": self.size, "capacity": self.capacity}

    def load_state_dict(self, state: dict) -> None:
        if state["capacity"] != self.capacity:
            raise ValueError(f"episode buffer: checkpoint capacity {state['capacity']} != {self.capacity}")
        for key, tensor in self.data.items():
            tensor.zero_()
            tensor[: state["size"]] = state["data"][key].to(self.device)
        self.next_index, self.size = state["next_index"], state["size"]
