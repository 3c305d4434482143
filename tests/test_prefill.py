"""The one prefill of paper 1's sampling benchmarks (effmarl.profiling.prefill): both benchmarks fill the same
buffers from the same seed, and the rollout they share equals the mpe2 rollout `effmarl sampling-bench` once
stepped itself."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch

from effmarl.bench.paper1 import sampling as bench_sampling
from effmarl.profiling import prefill, sampling_bench
from effmarl.replay import make_storage


def mpe2_rollout(n_agents: int, steps: int, seed: int) -> list[tuple]:
    """The rollout `effmarl sampling-bench` wrote before the prefills were one (its `real_transitions`): mpe2
    itself, one action drawn per agent, boolean dones."""
    from effmarl.envs import make_env

    env = make_env({"backend": "mpe", "n_agents": n_agents, "num_obstacles": 2, "max_cycles": 25,
                    "scenario": "simple_tag"})
    rng = np.random.default_rng(seed)
    eye = [np.eye(a, dtype=np.float32) for a in env.spec.n_actions]
    out, episode, step = [], 0, env.reset(seed=seed)
    while len(out) < steps:
        actions = np.array([rng.integers(a) for a in env.spec.n_actions])
        nxt = env.step(actions[None])
        out.append(([o[0] for o in step.obs], [eye[i][a] for i, a in enumerate(actions)], nxt.rewards[0],
                    [o[0] for o in nxt.obs], np.full(n_agents, nxt.terminated[0])))
        step = nxt
        if nxt.done[0]:
            episode += 1
            step = env.reset(seed=seed + episode)
    env.close()
    return out


def contents(storage) -> dict[str, list[torch.Tensor]]:
    """Every stored transition, gathered in slot order."""
    return storage.gather(np.arange(len(storage))).fields()


def assert_same_contents(a, b) -> None:
    assert len(a) == len(b) and a.write_pos == b.write_pos
    for (name, left), right in zip(contents(a).items(), contents(b).values(), strict=True):
        for x, y in zip(left, right, strict=True):
            assert torch.equal(x, y), name


def test_the_shared_rollout_is_bit_identical_to_the_mpe2_rollout_sampling_bench_once_stepped():
    ours, spec = prefill.rollout(6, 130, seed=4)        # five 25-step episodes and a part: the reset seeds count
    theirs = mpe2_rollout(6, 130, seed=4)
    assert spec.n_actions == [5] * 6
    for t, (x, y) in enumerate(zip(ours, theirs, strict=True)):
        for field, (u, v) in enumerate(zip(x, y, strict=True)):
            for p, q in zip(u if field in (0, 1, 3) else [u], v if field in (0, 1, 3) else [v], strict=True):
                assert np.array_equal(p, q), (t, field)
    assert any(float(x[2].sum()) != 0.0 for x in ours)  # the predators catch the prey at least once


def test_a_longer_rollout_fills_the_same_buffer_as_one_of_exactly_the_fill():
    long, spec = prefill.rollout(3, 80, seed=1)
    short, _ = prefill.rollout(3, 50, seed=1)
    buffers = []
    for transitions in (long, short):
        storage = make_storage({"storage": "contiguous", "buffer_size": 50, "backend": "torch"}, spec.obs_dims,
                               spec.n_actions)
        prefill.fill(storage, transitions, 50)
        buffers.append(storage)
    assert_same_contents(*buffers)


def test_a_fill_longer_than_the_rollout_replays_it_with_fresh_arrays():
    transitions, spec = prefill.rollout(3, 10, seed=2)
    storage = make_storage({"storage": "reference", "buffer_size": 25, "backend": "torch"}, spec.obs_dims,
                           spec.n_actions)
    prefill.fill(storage, transitions, 25)
    got = contents(storage)
    for i in range(3):
        torch.testing.assert_close(got["obs"][i][20:], got["obs"][i][:5], rtol=0, atol=0)   # slot j = j mod 10
    assert storage.buffers[0]._storage[0][0] is not storage.buffers[0]._storage[10][0]     # own arrays


def test_both_sampling_benchmarks_fill_identical_buffers_from_one_seed(monkeypatch):
    filled: dict[str, list] = {"sampling_bench": [], "bench_paper1": []}

    def recording(into):
        def fill(storage, transitions, n):
            prefill.fill(storage, transitions, n)
            into.append(storage)
        return fill

    monkeypatch.setattr(sampling_bench, "fill", recording(filled["sampling_bench"]))
    monkeypatch.setattr(bench_sampling, "fill", recording(filled["bench_paper1"]))
    common = {"fill": 120, "seed": 3, "device": "cpu", "k": 4, "batch": 8, "rounds": 1}
    sampling_bench.measure(3, SimpleNamespace(**common, real_steps=prefill.DISTINCT, capacity=120))
    bench_sampling.measure_sampling(3, SimpleNamespace(**common))
    assert [type(s).__name__ for s in filled["sampling_bench"]] == ["ReferenceStorage", "ContiguousStorage"]
    assert [type(s).__name__ for s in filled["bench_paper1"]] == ["ReferenceStorage", "ContiguousStorage"]
    for ours, theirs in zip(filled["sampling_bench"], filled["bench_paper1"], strict=True):
        assert len(ours) == 120
        assert_same_contents(ours, theirs)
