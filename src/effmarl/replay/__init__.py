"""Replay for off-policy learners: storages (how transitions are laid out) × samplers (which indices are
drawn), independent and swappable, TorchRL style.

    sampler.sample(size, write_pos, batch_size, rng) -> int64 indices
    storage.gather(indices) -> Batch (per-agent torch tensors)

The same indices give the same batch from every storage.
"""

from effmarl.replay.samplers import NeighborSampler, Sampler, UniformSampler, make_sampler
from effmarl.replay.storage import (
    Batch,
    ContiguousStorage,
    ReferenceStorage,
    StackedBatch,
    Storage,
    make_storage,
    sample_indices,
    sampling_round,
    stack_batches,
)

__all__ = [
    "Batch", "ContiguousStorage", "NeighborSampler", "ReferenceStorage", "Sampler", "Storage",
    "StackedBatch", "UniformSampler", "make_sampler", "make_storage", "sample_indices", "sampling_round",
    "stack_batches",
]
