"""Paper 1 replay: storages (reference, contiguous) × samplers (uniform, neighbor)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from effmarl.replay import ContiguousStorage, NeighborSampler, ReferenceStorage, UniformSampler, make_sampler

OBS_DIMS = [14, 14, 12]      # simple_tag with 3 agents: predators see one more agent velocity than prey
N_ACTIONS = [5, 5, 5]
CHI2_DF19_P001 = 43.82       # chi-square critical value, 19 degrees of freedom, p = 0.001


def random_transition(rng: np.random.Generator):
    obs = [rng.standard_normal(d).astype(np.float32) for d in OBS_DIMS]
    act = [np.eye(a, dtype=np.float32)[rng.integers(a)] for a in N_ACTIONS]
    rew = rng.standard_normal(len(OBS_DIMS)).astype(np.float32)
    next_obs = [rng.standard_normal(d).astype(np.float32) for d in OBS_DIMS]
    done = np.full(len(OBS_DIMS), rng.random() < 0.1)
    return obs, act, rew, next_obs, done


def filled_storages(capacity: int, n_added: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    storages = [ReferenceStorage(capacity, OBS_DIMS, N_ACTIONS),
                ContiguousStorage(capacity, OBS_DIMS, N_ACTIONS, backend="torch"),
                ContiguousStorage(capacity, OBS_DIMS, N_ACTIONS, backend="numpy")]
    for _ in range(n_added):
        transition = random_transition(rng)
        for s in storages:
            s.add(*transition)
    return storages


@pytest.mark.parametrize("n_added", [37, 50, 123])  # partly filled, exactly full, wrapped around twice
def test_same_indices_give_identical_batches(n_added):
    storages = filled_storages(capacity=50, n_added=n_added)
    size = len(storages[0])
    assert all(len(s) == size and s.write_pos == storages[0].write_pos for s in storages)
    rng = np.random.default_rng(1)
    for sampler in (UniformSampler(), NeighborSampler(4)):
        indices = sampler.sample(size, storages[0].write_pos, 30, rng)
        batches = [s.gather(indices) for s in storages]
        for other in batches[1:]:
            for name, per_agent in batches[0].fields().items():
                for i, ref in enumerate(per_agent):
                    got = other.fields()[name][i]
                    assert got.dtype == torch.float32 and ref.dtype == torch.float32
                    assert got.shape == ref.shape, (name, i)
                    assert torch.equal(got, ref), (name, i)


def test_storages_hold_what_was_written_last():
    capacity = 8
    rng = np.random.default_rng(2)
    transitions = [random_transition(rng) for _ in range(13)]
    ref = ReferenceStorage(capacity, OBS_DIMS, N_ACTIONS)
    con = ContiguousStorage(capacity, OBS_DIMS, N_ACTIONS)
    for t in transitions:
        ref.add(*t)
        con.add(*t)
    assert len(ref) == len(con) == capacity and ref.write_pos == con.write_pos == 13 % capacity
    # slot j holds the most recent transition written there: number 8 + j for j < 5, j for j >= 5
    batch = con.gather(np.arange(capacity))
    for slot in range(capacity):
        expected = transitions[slot + capacity if slot < 13 - capacity else slot]
        for i in range(len(OBS_DIMS)):
            assert np.array_equal(batch.obs[i][slot].numpy(), expected[0][i])
            assert np.array_equal(batch.next_obs[i][slot].numpy(), expected[3][i])


@pytest.mark.parametrize("storage_cls", [ReferenceStorage, ContiguousStorage])
def test_storage_state_roundtrip(storage_cls):
    storage = filled_storages(20, 27)[0 if storage_cls is ReferenceStorage else 1]
    restored = storage_cls(20, OBS_DIMS, N_ACTIONS)
    restored.load_state_dict(storage.state_dict())
    assert len(restored) == len(storage) and restored.write_pos == storage.write_pos
    idx = np.arange(len(storage))
    for a, b in zip(storage.gather(idx).fields().values(), restored.gather(idx).fields().values(), strict=True):
        assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("size,k,batch", [(100, 4, 32), (100, 7, 32), (10, 8, 50), (1000, 32, 1024),
                                          (5, 5, 12), (33, 1, 17)])
def test_neighbor_windows_are_contiguous_in_range_and_exact(size, k, batch):
    rng = np.random.default_rng(3)
    for _ in range(50):
        idx = NeighborSampler(k).sample(size, size % 7, batch, rng)
        assert idx.dtype == np.int64 and idx.shape == (batch,)
        assert idx.min() >= 0 and idx.max() < size, "never an unwritten slot"
        for start in range(0, batch, k):
            window = idx[start:start + k]
            assert len(window) == min(k, batch - start), "only the last window is truncated"
            assert np.array_equal(window, (window[0] + np.arange(len(window))) % size)


def test_neighbor_windows_wrap_within_the_filled_region():
    # a buffer of capacity 1000 holding 10 transitions: a window anchored at 8 is 8, 9, 0, 1, not 8…11
    class FixedAnchors:
        def integers(self, low, high, size, dtype):
            assert (low, high) == (0, 10)
            return np.full(size, 8, dtype=dtype)

    idx = NeighborSampler(4).sample(size=10, write_pos=10, batch_size=4, rng=FixedAnchors())
    assert idx.tolist() == [8, 9, 0, 1]


def _chi2(counts: np.ndarray) -> float:
    expected = counts.sum() / len(counts)
    return float(((counts - expected) ** 2 / expected).sum())


@pytest.mark.parametrize("sampler", [NeighborSampler(1), UniformSampler(), NeighborSampler(5)])
def test_slot_frequencies_are_uniform(sampler):
    """Every filled slot is equally likely (k = 1 is uniform; wrap-around keeps neighbor windows uniform
    per slot too)."""
    size = 20
    idx = sampler.sample(size, size, 40_000, np.random.default_rng(4))
    assert _chi2(np.bincount(idx, minlength=size)) < CHI2_DF19_P001


def test_neighbor_k1_draws_what_uniform_draws():
    a = NeighborSampler(1).sample(500, 0, 256, np.random.default_rng(5))
    b = UniformSampler().sample(500, 0, 256, np.random.default_rng(5))
    assert np.array_equal(a, b)


def test_sampler_rejects_empty_buffer_and_bad_k():
    with pytest.raises(ValueError, match="empty"):
        UniformSampler().sample(0, 0, 4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="neighbor_k"):
        NeighborSampler(0)
    assert isinstance(make_sampler({"sampler": "neighbor", "neighbor_k": 3}), NeighborSampler)


def test_sampling_round_draws_as_the_per_agent_loop_and_stacks_alike():
    """One sampling round = G draws in turn (what G sequential agent updates draw); every storage's stacked
    gather holds the same G batches, zero-padded to the widest observation."""
    from effmarl.replay import sampling_round, stack_batches

    storages = filled_storages(capacity=50, n_added=123)
    sampler = NeighborSampler(4)
    expected = [storages[0].gather(sampler.sample(50, storages[0].write_pos, 16, rng))
                for rng in [np.random.default_rng(9)] for _ in range(3)]
    got = sampling_round(storages[0], sampler, np.random.default_rng(9), 16, 3)
    for a, b in zip(expected, got, strict=True):
        for name, per_agent in a.fields().items():
            assert all(torch.equal(x, y) for x, y in zip(per_agent, b.fields()[name], strict=True)), name
    reference = stack_batches(expected)
    assert reference.obs.shape == (3, 16, 3, 14) and float(reference.obs[:, :, 2, 12:].abs().max()) == 0.0
    for storage in storages:
        stacked = sampling_round(storage, sampler, np.random.default_rng(9), 16, 3, layout="stacked")
        for name in ("obs", "act", "rew", "next_obs", "done"):
            assert torch.equal(getattr(stacked, name), getattr(reference, name)), (type(storage).__name__, name)
    with pytest.raises(ValueError, match="layout"):
        sampling_round(storages[0], sampler, np.random.default_rng(9), 16, 3, layout="columns")
