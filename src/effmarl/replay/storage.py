"""Storages: how transitions are laid out, and how a batch is gathered for given indices.

`reference`  — faithful to openai/maddpg (`maddpg/trainer/replay_buffer.py`): one buffer per agent, each a
               Python list of per-transition tuples (obs, act, rew, next_obs, done), a batch encoded by a
               Python loop over the indices. Deliberately slow: it is paper 1's baseline.
`contiguous` — struct-of-arrays, preallocated `[capacity, n_agents, …]` (observations padded to the widest
               agent), ring-buffer writes, one gather per field per batch; numpy or torch, CPU or CUDA.

Both write slot `write_pos` then advance it modulo capacity, so a given index names the same transition
in either storage, and both return a `Batch` of per-agent float32 torch tensors on the run's device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch


@dataclass
class Batch:
    """A mini-batch, per agent i: obs[i] [B, obs_dim_i], act[i] [B, n_actions_i] (one-hot),
    rew[i] [B], next_obs[i] [B, obs_dim_i], done[i] [B] (1.0 = terminated inside the task)."""

    obs: list[torch.Tensor]
    act: list[torch.Tensor]
    rew: list[torch.Tensor]
    next_obs: list[torch.Tensor]
    done: list[torch.Tensor]

    def fields(self) -> dict[str, list[torch.Tensor]]:
        return {"obs": self.obs, "act": self.act, "rew": self.rew, "next_obs": self.next_obs, "done": self.done}


@dataclass
class StackedBatch:
    """Mini-batches in the contiguous storage's own layout, one group per sampled batch: obs/next_obs
    `[G, B, N, D]` (zero-padded to the widest observation), act `[G, B, N, A]` (padded to the most actions),
    rew/done `[G, B, N]`. G = N for per-agent batches (group i is agent i's batch), G = 1 for a shared one.
    What the batched learners (effmarl.algos.batched) read."""

    obs: torch.Tensor
    act: torch.Tensor
    rew: torch.Tensor
    next_obs: torch.Tensor
    done: torch.Tensor

    @property
    def groups(self) -> int:
        return self.obs.shape[0]


def stack_batches(batches: list[Batch]) -> StackedBatch:
    """Per-agent-list `Batch`es (as the reference storage returns them) in the stacked, padded layout."""
    def pad(per_agent: list[torch.Tensor]) -> torch.Tensor:
        width = max(t.shape[-1] for t in per_agent)
        out = per_agent[0].new_zeros(per_agent[0].shape[0], len(per_agent), width)
        for i, t in enumerate(per_agent):
            out[:, i, : t.shape[-1]] = t
        return out

    return StackedBatch(obs=torch.stack([pad(b.obs) for b in batches]),
                        act=torch.stack([pad(b.act) for b in batches]),
                        rew=torch.stack([torch.stack(b.rew, -1) for b in batches]),
                        next_obs=torch.stack([pad(b.next_obs) for b in batches]),
                        done=torch.stack([torch.stack(b.done, -1) for b in batches]))


class Storage(Protocol):
    capacity: int
    write_pos: int

    def __len__(self) -> int: ...

    def add(self, obs: list[np.ndarray], act: list[np.ndarray], rew: np.ndarray,
            next_obs: list[np.ndarray], done: np.ndarray) -> None:
        """Store one joint transition: per-agent obs/act/next_obs arrays, rew and done [n_agents]."""

    def add_batch(self, obs: list[np.ndarray], act: list[np.ndarray], rew: np.ndarray,
                  next_obs: list[np.ndarray], done: np.ndarray) -> None:
        """Store E joint transitions (one per environment copy): per-agent obs/act/next_obs `[E, ·]`, rew and
        done `[E, n_agents]`; copy j lands where the j-th of E `add` calls in copy order would put it."""

    def gather(self, indices: np.ndarray) -> Batch: ...

    def gather_stacked(self, indices: np.ndarray) -> StackedBatch:
        """indices `[G, B]` -> G batches in the stacked layout."""

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> None: ...


class ReplayBuffer:
    """openai/maddpg's ReplayBuffer, kept line for line where it matters: a list of tuples, ring writes,
    `_encode_sample` building the batch with a Python loop."""

    def __init__(self, size: int):
        self._storage: list[tuple] = []
        self._maxsize = int(size)
        self._next_idx = 0

    def __len__(self) -> int:
        return len(self._storage)

    def add(self, obs_t, action, reward, obs_tp1, done) -> None:
        data = (obs_t, action, reward, obs_tp1, done)
        if self._next_idx >= len(self._storage):
            self._storage.append(data)
        else:
            self._storage[self._next_idx] = data
        self._next_idx = (self._next_idx + 1) % self._maxsize

    def _encode_sample(self, idxes):
        obses_t, actions, rewards, obses_tp1, dones = [], [], [], [], []
        for i in idxes:
            data = self._storage[i]
            obs_t, action, reward, obs_tp1, done = data
            obses_t.append(np.asarray(obs_t))      # the original's np.array(x, copy=False)
            actions.append(np.asarray(action))
            rewards.append(reward)
            obses_tp1.append(np.asarray(obs_tp1))
            dones.append(done)
        return np.array(obses_t), np.array(actions), np.array(rewards), np.array(obses_tp1), np.array(dones)

    def sample_index(self, idxes):
        return self._encode_sample(idxes)


class ReferenceStorage:
    """One `ReplayBuffer` per agent; a batch is gathered from every agent's buffer in turn."""

    def __init__(self, capacity: int, obs_dims: list[int], n_actions: list[int], device: str = "cpu"):
        self.capacity = int(capacity)
        self.device = torch.device(device)
        self.buffers = [ReplayBuffer(capacity) for _ in obs_dims]

    def __len__(self) -> int:
        return len(self.buffers[0])

    @property
    def write_pos(self) -> int:
        return self.buffers[0]._next_idx

    def add(self, obs, act, rew, next_obs, done) -> None:
        # as train.py's `agent.experience(obs_n[i], action_n[i], rew_n[i], new_obs_n[i], done_n[i], ...)`
        for i, buffer in enumerate(self.buffers):
            buffer.add(obs[i], act[i], float(rew[i]), next_obs[i], float(done[i]))

    def add_batch(self, obs, act, rew, next_obs, done) -> None:
        for j in range(len(rew)):
            self.add([o[j] for o in obs], [a[j] for a in act], rew[j], [o[j] for o in next_obs], done[j])

    def _tensor(self, array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32)).to(self.device)

    def gather(self, indices: np.ndarray) -> Batch:
        index = indices.tolist()  # the original draws a Python list of ints
        fields: list[list[torch.Tensor]] = [[], [], [], [], []]
        for buffer in self.buffers:
            for out, array in zip(fields, buffer.sample_index(index), strict=True):
                out.append(self._tensor(array))
        return Batch(*fields)

    def gather_stacked(self, indices: np.ndarray) -> StackedBatch:
        return stack_batches([self.gather(row) for row in indices])

    def state_dict(self) -> dict:
        return {"kind": "reference", "buffers": [(b._storage, b._next_idx) for b in self.buffers]}

    def load_state_dict(self, state: dict) -> None:
        if state["kind"] != "reference":
            raise ValueError(f"checkpoint holds a {state['kind']!r} storage, the run uses 'reference'")
        for buffer, (items, next_idx) in zip(self.buffers, state["buffers"], strict=True):
            buffer._storage, buffer._next_idx = list(items), next_idx


class ContiguousStorage:
    """Preallocated struct-of-arrays ring buffer: obs/next_obs [C, N, max obs_dim], act [C, N, max n_actions],
    rew/done [C, N]; `backend` "torch" (on `device`) or "numpy" (host memory)."""

    def __init__(self, capacity: int, obs_dims: list[int], n_actions: list[int], device: str = "cpu",
                 backend: str = "torch"):
        if backend not in ("torch", "numpy"):
            raise ValueError(f"replay.backend: {backend!r}; allowed: 'torch', 'numpy'")
        self.capacity = int(capacity)
        self.obs_dims, self.n_actions = list(obs_dims), list(n_actions)
        self.backend, self.device = backend, torch.device(device)
        n = len(obs_dims)
        shapes = {"obs": (capacity, n, max(obs_dims)), "act": (capacity, n, max(n_actions)),
                  "rew": (capacity, n), "next_obs": (capacity, n, max(obs_dims)), "done": (capacity, n)}
        # np.zeros maps lazily-zeroed pages and torch.empty does not touch memory: a 1e6-slot buffer costs
        # memory only as it fills
        if backend == "numpy":
            self.data = {k: np.zeros(s, np.float32) for k, s in shapes.items()}
        else:
            self.data = {k: torch.empty(s, dtype=torch.float32, device=self.device) for k, s in shapes.items()}
        self.size = 0
        self.write_pos = 0
        self._out: dict[int, dict[str, torch.Tensor]] = {}   # gather_stacked's output buffers, by row count

    def __len__(self) -> int:
        return self.size

    def _padded(self, per_agent: list[np.ndarray], width: int) -> np.ndarray:
        out = np.zeros((len(per_agent), width), np.float32)
        for i, row in enumerate(per_agent):
            out[i, : len(row)] = row
        return out

    def add(self, obs, act, rew, next_obs, done) -> None:
        row = {"obs": self._padded(obs, max(self.obs_dims)), "act": self._padded(act, max(self.n_actions)),
               "rew": np.asarray(rew, np.float32), "next_obs": self._padded(next_obs, max(self.obs_dims)),
               "done": np.asarray(done, np.float32)}
        for key, value in row.items():
            self.data[key][self.write_pos] = value if self.backend == "numpy" else torch.from_numpy(value)
        self.write_pos = (self.write_pos + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def add_batch(self, obs, act, rew, next_obs, done) -> None:
        e = len(rew)
        if e > self.capacity:
            raise ValueError(f"add_batch: {e} transitions exceed the capacity {self.capacity}")

        def padded(per_agent: list[np.ndarray], width: int) -> np.ndarray:
            out = np.zeros((e, len(per_agent), width), np.float32)
            for i, rows in enumerate(per_agent):
                out[:, i, : rows.shape[-1]] = rows
            return out

        rows = {"obs": padded(obs, max(self.obs_dims)), "act": padded(act, max(self.n_actions)),
                "rew": np.asarray(rew, np.float32), "next_obs": padded(next_obs, max(self.obs_dims)),
                "done": np.asarray(done, np.float32)}
        first = min(e, self.capacity - self.write_pos)       # rows before the ring wraps, then the rest at 0
        for key, value in rows.items():
            value = value if self.backend == "numpy" else torch.from_numpy(value)
            self.data[key][self.write_pos: self.write_pos + first] = value[:first]
            self.data[key][: e - first] = value[first:]
        self.write_pos = (self.write_pos + e) % self.capacity
        self.size = min(self.size + e, self.capacity)

    def _take(self, indices: np.ndarray) -> dict[str, torch.Tensor]:
        if self.backend == "numpy":
            return {k: torch.from_numpy(np.take(v, indices, axis=0)).to(self.device) for k, v in self.data.items()}
        index = torch.from_numpy(indices).to(self.device)
        return {k: v.index_select(0, index) for k, v in self.data.items()}

    def gather(self, indices: np.ndarray) -> Batch:
        g = self._take(np.asarray(indices, np.int64))
        agents = range(len(self.obs_dims))
        return Batch(obs=[g["obs"][:, i, : self.obs_dims[i]] for i in agents],
                     act=[g["act"][:, i, : self.n_actions[i]] for i in agents],
                     rew=[g["rew"][:, i] for i in agents],
                     next_obs=[g["next_obs"][:, i, : self.obs_dims[i]] for i in agents],
                     done=[g["done"][:, i] for i in agents])

    def gather_stacked(self, indices: np.ndarray) -> StackedBatch:
        """One gather per field for all G·B indices; on the torch backend into output buffers kept per row
        count (the last two), so a batch is valid until the next `gather_stacked` of the same size."""
        indices = np.asarray(indices, np.int64)
        g, b = indices.shape
        flat = indices.reshape(-1)
        if self.backend == "numpy":
            out = {k: torch.from_numpy(np.take(v, flat, axis=0)).to(self.device) for k, v in self.data.items()}
        else:
            index = torch.from_numpy(flat).to(self.device)
            if g * b not in self._out:
                if len(self._out) >= 2:              # a training run uses one shape; a benchmark alternates two
                    self._out.pop(next(iter(self._out)))
                self._out[g * b] = {k: v.new_empty((g * b, *v.shape[1:])) for k, v in self.data.items()}
            out = {k: torch.index_select(v, 0, index, out=self._out[g * b][k]) for k, v in self.data.items()}
        return StackedBatch(**{k: v.view(g, b, *v.shape[1:]) for k, v in out.items()})

    def state_dict(self) -> dict:
        filled = {k: (v[: self.size].copy() if self.backend == "numpy" else v[: self.size].cpu().numpy())
                  for k, v in self.data.items()}
        return {"kind": "contiguous", "size": self.size, "write_pos": self.write_pos, "data": filled}

    def load_state_dict(self, state: dict) -> None:
        if state["kind"] != "contiguous":
            raise ValueError(f"checkpoint holds a {state['kind']!r} storage, the run uses 'contiguous'")
        self.size, self.write_pos = state["size"], state["write_pos"]
        for key, value in state["data"].items():
            self.data[key][: self.size] = value if self.backend == "numpy" else torch.from_numpy(value)


def make_storage(replay_cfg: dict, obs_dims: list[int], n_actions: list[int], device: str = "cpu") -> Storage:
    """The storage named by the run config's `replay` section."""
    kind, capacity = replay_cfg["storage"], replay_cfg["buffer_size"]
    if kind == "reference":
        return ReferenceStorage(capacity, obs_dims, n_actions, device)
    if kind == "contiguous":
        return ContiguousStorage(capacity, obs_dims, n_actions, device, backend=replay_cfg["backend"])
    raise ValueError(f"replay.storage: {kind!r} is not a known storage")


def sample_indices(storage: Storage, sampler, rng: np.random.Generator, batch_size: int, groups: int) -> np.ndarray:
    """`[groups, batch_size]` indices: `groups` draws in turn, as `groups` sequential agent updates draw them."""
    return np.stack([sampler.sample(len(storage), storage.write_pos, batch_size, rng) for _ in range(groups)])


def sampling_round(storage: Storage, sampler, rng: np.random.Generator, batch_size: int, groups: int,
                   layout: str = "batches", gather=None):
    """The sampling phase of one update round — the one copy training, `effmarl sampling-bench`,
    `effmarl bench paper1` and the counters all call: draw `groups` batches of indices (N for per-agent
    batches, 1 for a shared batch) and gather them. `layout`: "batches" -> a list of per-agent-list `Batch`es
    (the sequential learners), "stacked" -> one `StackedBatch` (the batched learners). `gather(storage,
    indices)` replaces the storage's own per-batch gather (the counters' numpy-only gather)."""
    indices = sample_indices(storage, sampler, rng, batch_size, groups)
    if layout == "stacked":
        return storage.gather_stacked(indices)
    if layout != "batches":
        raise ValueError(f"layout: {layout!r}; allowed: 'batches', 'stacked'")
    if gather is None:
        return [storage.gather(row) for row in indices]
    return [gather(storage, row) for row in indices]
