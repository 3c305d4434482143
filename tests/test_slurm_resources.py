"""Cluster resources derived from each run's config (effmarl.resources): hand-computed values, the sizes the
model assumes checked against the real environments and storages, and the profiles' requests."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from functools import cache

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from effmarl import resources, step_costs
from effmarl.config import validate
from effmarl.scenarios import SCENARIOS
from effmarl.studies import expand_all, load_profile


@cache
def _expanded(profile: str) -> dict[str, dict[str, dict]]:
    return expand_all(load_profile(ROOT / "configs" / profile))


def _runs(profile: str) -> list[dict]:
    return [run for runs in _expanded(profile).values() for run in runs.values()]


def _paper1(n=3, storage="contiguous", episodes=60000, **off) -> dict:
    return {"study": "t", "algo": "maddpg", "seed": 0, "device": "cpu",
            "env": {"backend": "mpe", "scenario": "simple_tag", "n_agents": n, "max_cycles": 25},
            "budget": {"episodes": episodes}, "offpolicy": {"warmup": 25600, "update_every": 100, "batch_size": 1024,
                                                            "checkpoint_every": 0, **off},
            "replay": {"storage": storage, "buffer_size": 1_000_000}}


def _priced(monkeypatch, **prices) -> None:
    """Run the resources model on these prices instead of the measured table's."""
    costs = dataclasses.replace(step_costs.measured(), **prices)
    monkeypatch.setattr(step_costs, "measured", lambda: costs)


def test_runtime_hand_computed(monkeypatch):
    _priced(monkeypatch, offpolicy={key: {3: (0.001, 0.05)} for key in (("maddpg", "reference"),
                                                                         ("maddpg", "contiguous"))})
    cfg = _paper1(episodes=100_000, warmup=5000)
    # 2.5 M steps x 1 ms + (2.5 M - 5 000) // 100 = 24 950 rounds x 50 ms = 3 747.5 s; x 1.5 = 93.7 min -> 94 + 5
    assert resources.runtime_min(cfg) == 99
    assert resources.runtime_min(_paper1(episodes=10)) == resources.MIN_RUNTIME_MIN


def test_memory_hand_computed_for_the_contiguous_storage():
    # 1e6 stored (60 000 episodes x 25 steps > buffer), 3 agents, obs 14, 5 actions: 1e6 x 3 x 4 x (28 + 5 + 2) B
    # = 400.5 MiB; + 500 MB base = 900.5; x 1.25 = 1 125.6 -> 1 200 MB
    assert resources.memory_mb(_paper1()) == 1200
    # a short run stores only what it has seen: 40 x 25 transitions
    assert resources.memory_mb(_paper1(episodes=40)) == resources.MIN_MEM_MB


def test_reference_storage_checkpoints_cost_three_times_the_storage():
    plain = resources.offpolicy_replay_bytes(_paper1(storage="reference"))
    saved = resources.offpolicy_replay_bytes(_paper1(storage="reference", checkpoint_every=2000))
    assert saved == 3 * plain
    contiguous = _paper1(storage="contiguous")
    assert resources.offpolicy_replay_bytes(contiguous) == resources.offpolicy_replay_bytes(
        _paper1(storage="contiguous", checkpoint_every=2000))


def test_gpu_only_when_the_config_selects_cuda():
    cfg = _paper1()
    assert resources.for_run(cfg)["gpu"] == 0
    assert resources.for_run({**cfg, "device": "auto"})["gpu"] == 0
    assert resources.for_run({**cfg, "device": "cuda"})["gpu"] == 1


@pytest.mark.parametrize("n", [3, 12, 48])
def test_mpe_observation_size_is_the_real_environments(n):
    from effmarl.envs import make_env

    env = {"backend": "mpe", "scenario": "simple_tag", "n_agents": n, "max_cycles": 25}
    spec = make_env(env).spec
    assert spec.obs_dims == SCENARIOS["simple_tag"].obs_dims(n, 2)  # the scenario's model, agent by agent
    assert max(spec.obs_dims) == resources.mpe_obs_dim(env)
    assert set(spec.n_actions) == {SCENARIOS["simple_tag"].n_actions}


def test_smax_map_table_and_episode_bytes_are_the_real_buffers():
    from effmarl.envs import make_env
    from effmarl.replay.episode import EpisodeBuffer, episode_scheme

    for name, (n, obs, actions, state, limit) in resources.SMAX_MAPS.items():
        spec = make_env({"backend": "smax", "map": name}).spec
        assert (spec.n_agents, max(spec.obs_dims), max(spec.n_actions), spec.state_dim, spec.episode_limit) == \
            (n, obs, actions, state, limit), name
        buffer = EpisodeBuffer(episode_scheme(spec), capacity=2)
        assert sum(t.nbytes for t in buffer.data.values()) == 2 * resources.episode_bytes(name), name


def test_contiguous_bytes_are_the_real_storage_arrays():
    from effmarl.replay.storage import ContiguousStorage

    cfg = _paper1(n=6, episodes=40)  # 1 000 transitions stored
    obs = resources.mpe_obs_dim({"n_agents": 6})
    storage = ContiguousStorage(1000, [obs - 2] * 4 + [obs] * 2, [5] * 6, backend="numpy")
    assert sum(a.nbytes for a in storage.data.values()) == resources.offpolicy_replay_bytes(cfg)


def _object_bytes(storage) -> int:
    """Bytes held by a reference storage: list slots, tuples, floats, numpy array objects and the data of the
    arrays they view (each object counted once, as consecutive transitions share observation arrays)."""
    seen, total = set(), 0
    for buffer in storage.buffers:
        total += 8 * len(buffer._storage)
        for item in buffer._storage:
            for obj in (item, *item, *(getattr(x, "base", None) for x in item)):
                if obj is not None and id(obj) not in seen:
                    seen.add(id(obj))
                    total += sys.getsizeof(obj)
    return total


def test_reference_storage_model_bounds_the_measured_python_objects():
    """Fill a reference storage from the real environment as the training loop does (observation rows of the
    step's arrays, shared between consecutive transitions; one-hot actions from torch) and count its objects."""
    import torch

    from effmarl.envs import make_env
    from effmarl.replay.storage import ReferenceStorage

    n, steps = 6, 500
    env = make_env({"backend": "mpe", "scenario": "simple_tag", "n_agents": n, "max_cycles": 25})
    storage = ReferenceStorage(steps, env.spec.obs_dims, env.spec.n_actions)
    rng = np.random.default_rng(0)
    obs = [o[0] for o in env.reset(seed=0).obs]
    for t in range(steps):
        actions = rng.integers(0, 5, size=n)
        onehots = [torch.nn.functional.one_hot(torch.tensor(a), 5).float().numpy() for a in actions]
        step = env.step(actions[None, :])
        next_obs = [o[0] for o in step.obs]
        storage.add(obs, onehots, step.rewards[0], next_obs, np.full(n, step.terminated[0]))
        obs = next_obs if not step.done[0] else [o[0] for o in env.reset(seed=t).obs]
    measured = _object_bytes(storage)
    model = resources.offpolicy_replay_bytes(_paper1(n=n, storage="reference", episodes=steps // 25))
    assert measured <= model <= 3 * measured, (measured, model)


def _step_cost_points() -> dict[str, dict]:
    """The configurations benchmarks/step_cost.py measures, by point name."""
    spec = importlib.util.spec_from_file_location("step_cost", ROOT / "benchmarks" / "step_cost.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {module.point_name(i, cfg): cfg for i, cfg in enumerate(module.points())}


def test_qmix_runtime_hand_computed(monkeypatch):
    _priced(monkeypatch, act_s={"3m": 0.0002}, update_s={"3m": 0.02}, episode_len={"3m": 20.0}, per_agent_factor=1.0,
            sparse_factor=1.0)
    monkeypatch.setattr(resources, "QMIX_EVAL_EPISODE_S", 0.06)  # 60 steps (3m's limit) x 1 ms
    monkeypatch.setattr(resources, "QMIX_EVAL_COMPILE_S", 0.0)
    cfg = {"algo": "qmix", "env": {"backend": "smax", "map": "3m"}, "budget": {"env_steps": 800_000},
           "qmix": {"num_envs": 8, "updates_per_round": 8, "eval_every": 10_000, "eval_episodes": 32}}
    # 800 000 / (8 x 20) = 5 000 rounds x 8 = 40 000 updates x 20 ms = 800 s; acting 800 000 x 0.2 ms = 160 s;
    # 81 evaluations x 32 episodes x 60 steps (3m's limit) x 1 ms = 155.52 s: 1 115.52 s x 1.5 = 27.9 min -> 28 + 5
    assert resources.qmix_updates(cfg) == pytest.approx(40_000)
    assert resources.runtime_min(cfg) == 33
    # 4 copies, 4 updates per round: as many updates, acting twice the measured per-step cost: 1 275.52 s -> 32 + 5
    cfg["qmix"] |= {"num_envs": 4, "updates_per_round": 4}
    assert resources.runtime_min(cfg) == 37
    # 2 updates per round of 8: a quarter of the updates
    cfg["qmix"] |= {"num_envs": 8, "updates_per_round": 2}
    assert resources.qmix_updates(cfg) == pytest.approx(10_000)


def test_qmix_estimate_matches_the_measured_default_table1_runs():
    """The default run that prices QMIX jobs (published/default/mast/prices.csv: 21 QMIX runs on SMAX 3m, whole jobs
    alone on the machine, 250 000 steps at one update per episode, 3 seeds per process) measured each job: a run's
    estimate before the safety factor is within 0.6-2x of each study's job seconds per run, and a process's request
    covers the study's longest job."""
    costs = pd.read_csv(ROOT / "published" / "default" / "mast" / "prices.csv").set_index("kind")
    for study in ("mast_dense", "mast_sweep", "mast_table1"):
        row = costs.loc[f"training: {study}"]
        runs = list(_expanded("default.yaml")[study].values())
        estimate = resources.qmix_seconds(runs[0])
        assert 0.6 <= estimate / (row.job_s / row.runs) <= 2.0, (study, estimate, row.job_s / row.runs)
        process = runs[:round(row.runs / row.jobs)]
        assert resources.for_process(process)["runtime"] * 60 >= row.longest_s, (study, row.longest_s)


def test_memory_requests_cover_the_measured_peaks():
    table = pd.read_csv(ROOT / "benchmarks" / "results" / "step_cost.csv")
    points = _step_cost_points()
    for row in table.itertuples():
        cfg = validate({"study": "step_cost", **points[row.point]}, part="run")
        assert resources.memory_mb(cfg) >= row.maxrss_mb, (row.point, resources.memory_mb(cfg), row.maxrss_mb)


def test_smoke_and_default_runs_fit_the_ci_node():
    for profile in ("smoke.yaml", "default.yaml"):
        for run in _runs(profile):
            need = resources.for_run(run)
            assert need["mem_mb"] <= 4000 and need["gpu"] == 0, (profile, run["study"], need)
    assert all(resources.for_run(run)["runtime"] <= 60 for run in _runs("smoke.yaml"))


def test_a_process_of_several_runs_needs_its_largest_lockstep_group_and_every_runs_runtime():
    a, b = _paper1(n=3, episodes=100_000), _paper1(n=12, episodes=100_000)
    ra, rb = resources.for_run(a), resources.for_run(b)
    # a and its second seed train stacked (memory adds up), then b alone: max(2 x a, b); runtimes add up
    need = resources.for_process([a, {**a, "seed": 1}, b])
    assert need == {"mem_mb": max(2 * ra["mem_mb"], rb["mem_mb"]), "runtime": 2 * ra["runtime"] + rb["runtime"],
                    "gpu": 0}
    assert resources.for_process([a, b])["mem_mb"] == max(ra["mem_mb"], rb["mem_mb"])


def test_every_job_of_the_smoke_and_default_profiles_fits_the_ci_node():
    """A SLURM job asking for more memory than the node has is refused at submission (the smoke workflow's
    15-run Table 1 batch once asked for 15 x 1 900 MB on a 24 GB node). CI's node: 2 cores, >= 8 GB."""
    from effmarl.groups import process_groups

    for profile in ("smoke.yaml", "default.yaml"):
        expanded = _expanded(profile)
        groups = process_groups(load_profile(ROOT / "configs" / profile), expanded)
        for name, (study, ids) in groups.items():
            need = resources.for_process([expanded[study][rid] for rid in ids], interleaved=name.startswith("pairs_"))
            assert need["mem_mb"] <= 8000 and need["gpu"] == 0, (profile, name, need)


def test_paper_requests_grow_with_agents_and_fit_a_large_node():
    runs = [r for r in _runs("paper.yaml") if r["study"] == "paper1"]
    for storage in ("reference", "contiguous"):
        need = {r["env"]["n_agents"]: resources.for_run(r) for r in runs
                if r["replay"]["storage"] == storage and r["algo"] == "maddpg"}
        ns = sorted(need)
        assert all(need[a]["mem_mb"] <= need[b]["mem_mb"] and need[a]["runtime"] <= need[b]["runtime"]
                   for a, b in zip(ns, ns[1:], strict=False)), need
    assert max(resources.for_run(r)["mem_mb"] for r in _runs("paper.yaml")) <= 512_000


def test_profile_table_counts_every_run_once():
    expanded = _expanded("paper.yaml")
    rows = resources.profile_table(expanded)
    assert sum(r["runs"] for r in rows) == sum(len(runs) for runs in expanded.values())


def test_cli_rejects_a_missing_profile_in_one_line(capsys, tmp_path):
    assert resources.main([str(tmp_path / "missing.yaml")]) == 1
    err = capsys.readouterr().err.strip()
    assert "missing.yaml" in err and "\n" not in err
