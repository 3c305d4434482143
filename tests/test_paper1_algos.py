"""Paper 1 algorithms: MADDPG and MASAC on the phase-timed off-policy loop."""

from __future__ import annotations

import copy
import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd
import pytest

from effmarl import checkpoints
from effmarl.config import ConfigError, offpolicy_checks, validate
from effmarl.train import train

PHASES = {"action_selection", "env_step", "buffer_add", "sampling", "target_q", "q_loss", "p_loss",
          "target_update", "update_all_trainers"}


def tiny(algo: str, **replay) -> dict:
    """A few seconds: 3 agents, 6 episodes, updates from the 3rd episode on."""
    return validate({"study": "test", "algo": algo, "seed": 7, "env": {"backend": "mpe", "n_agents": 3},
                     "budget": {"episodes": 6},
                     "offpolicy": {"batch_size": 32, "warmup": 50, "update_every": 10, "checkpoint_every": 0,
                                   "hidden": [16, 16]},
                     "masac": {"autotune": algo == "masac"},
                     "replay": {"buffer_size": 120, **replay}}, part="run")


def metrics(path) -> pd.DataFrame:
    return pd.read_parquet(path / "metrics.parquet")


@pytest.mark.parametrize("algo", ["maddpg", "masac"])
def test_run_writes_metrics_and_all_phases(tmp_path, algo):
    cfg = tiny(algo, storage="reference", sampler="neighbor", neighbor_k=5)
    train(cfg, tmp_path)
    m = metrics(tmp_path)
    assert len(m) == 6 * 3 and set(m.team) == {"predator", "prey"}
    assert m.update_rounds.max() > 0 and m.env_steps.max() == 6 * 25
    phases = pd.read_parquet(tmp_path / "phases.parquet")
    assert PHASES <= set(phases.phase)
    calls = phases.groupby("phase")["calls"].sum()
    rounds = calls["update_all_trainers"]
    # per_agent batch mode: every agent samples its own batch in every round
    assert calls["sampling"] == calls["q_loss"] == 3 * rounds == 3 * m.update_rounds.max()
    assert (tmp_path / "provenance.json").exists() and (tmp_path / "counters.json").exists()


@pytest.mark.parametrize("algo", ["maddpg", "masac"])
def test_same_seed_same_results_and_storages_agree(tmp_path, algo):
    """Same seed -> identical metrics; and since both storages return identical batches for the same indices,
    the reference and contiguous storages train identically too."""
    runs = [("a", {"storage": "reference"}), ("b", {"storage": "reference"}), ("c", {"storage": "contiguous"}),
            ("d", {"storage": "contiguous", "backend": "numpy"})]
    results = {}
    for name, replay in runs:
        train(tiny(algo, **replay), tmp_path / name)
        results[name] = metrics(tmp_path / name)
    for name in "bcd":
        pd.testing.assert_frame_equal(results["a"], results[name])


def test_shared_batch_mode_samples_once_per_round(tmp_path):
    train(tiny("maddpg", storage="contiguous", batch_mode="shared"), tmp_path)
    calls = pd.read_parquet(tmp_path / "phases.parquet").groupby("phase")["calls"].sum()
    assert calls["sampling"] == calls["update_all_trainers"] and calls["q_loss"] == 3 * calls["sampling"]


def test_train_teams_updates_only_those_agents(tmp_path):
    cfg = tiny("masac", storage="contiguous")
    cfg["offpolicy"]["train_teams"] = ["predator"]
    train(cfg, tmp_path)
    calls = pd.read_parquet(tmp_path / "phases.parquet").groupby("phase")["calls"].sum()
    assert calls["q_loss"] == calls["sampling"] == 2 * calls["update_all_trainers"]  # 2 predators of 3 agents


@pytest.mark.parametrize("algo,storage", [("maddpg", "reference"), ("masac", "contiguous")])
def test_resumed_run_equals_uninterrupted(tmp_path, monkeypatch, algo, storage):
    cfg = tiny(algo, storage=storage)
    cfg["offpolicy"]["checkpoint_every"] = 2
    train(copy.deepcopy(cfg), tmp_path / "whole")

    saves = {"n": 0}
    real_save = checkpoints.CheckpointStore.save

    def crash_after_second_save(self, *args):
        real_save(self, *args)
        saves["n"] += 1
        if saves["n"] == 2:
            raise KeyboardInterrupt("simulated crash after episode 4's checkpoint")

    monkeypatch.setattr(checkpoints.CheckpointStore, "save", crash_after_second_save)
    with pytest.raises(KeyboardInterrupt):
        train(copy.deepcopy(cfg), tmp_path / "crashed")
    monkeypatch.setattr(checkpoints.CheckpointStore, "save", real_save)
    # a fresh process would re-seed torch/numpy from the config before resuming; so does train()
    train(copy.deepcopy(cfg), tmp_path / "crashed")
    assert json.loads((tmp_path / "crashed" / "counters.json").read_text())["resumed_from_episode"] == 4
    pd.testing.assert_frame_equal(metrics(tmp_path / "whole"), metrics(tmp_path / "crashed"))


def test_checkpoint_of_another_config_is_refused(tmp_path):
    cfg = tiny("maddpg")
    cfg["offpolicy"]["checkpoint_every"] = 3
    train(copy.deepcopy(cfg), tmp_path)
    cfg["offpolicy"]["lr"] = 0.5
    with pytest.raises(ConfigError, match="different configuration"):
        train(cfg, tmp_path)


def test_cross_field_checks_name_the_field():
    cfg = tiny("maddpg")
    cfg["offpolicy"]["batch_size"] = 500
    with pytest.raises(ConfigError, match="offpolicy.batch_size"):
        offpolicy_checks(cfg)
    with pytest.raises(ConfigError, match="replay.neighbor_k"):  # validate runs the cross-field checks too
        tiny("maddpg", sampler="neighbor", neighbor_k=64)
    with pytest.raises(ConfigError, match="replay.storage"):
        validate({"study": "x", "algo": "maddpg", "seed": 0, "env": {"backend": "mpe"},
                  "replay": {"storage": "fast"}}, part="run")


def test_defaults_are_the_original_maddpg_values():
    cfg = validate({"study": "x", "algo": "masac", "seed": 0, "env": {"backend": "mpe"}}, part="run")
    assert cfg["offpolicy"] == {"lr": 0.01, "gamma": 0.95, "batch_size": 1024, "hidden": [64, 64],
                                "update_every": 100, "warmup": 25600, "tau": 0.01, "grad_clip": 0.5,
                                "actor_reg": 0.001, "train_teams": ["predator", "prey"],
                                "checkpoint_every": 1000, "learner": "sequential"}
    assert cfg["masac"]["alpha"] == 0.05 and cfg["masac"]["autotune"] is False
    assert cfg["replay"]["storage"] == "reference" and cfg["replay"]["buffer_size"] == 1_000_000
    assert cfg["replay"]["batch_mode"] == "per_agent" and cfg["replay"]["sampler"] == "uniform"


def learning_config(algo: str, copies: int = 1) -> dict:
    """A fast-learning small run on the fast loop (batched learner, shared batch, vectorised predator-prey with
    `copies` environment copies; 3 agents, predators and prey both learning, as in paper 1): lr 1e-3 and an update
    round of batch 256 every 4 transitions after 500, instead of the original lr 1e-2 / batch 1024 every 100 steps
    after 25 600, which needs thousands of episodes (docs/paper1.md lists what was tried)."""
    return validate({"study": "test", "algo": algo, "seed": 0,
                     "env": {"backend": "mpe_vec", "n_agents": 3, "num_envs": copies},
                     "budget": {"episodes": LEARN_EPISODES},
                     "offpolicy": {"lr": 1e-3, "batch_size": 256, "warmup": 500, "update_every": 4,
                                   "checkpoint_every": 0, "learner": "batched"},
                     "replay": {"storage": "contiguous", "batch_mode": "shared", "buffer_size": 100_000}},
                     part="run")


LEARN_EPISODES = 600
LAST = 300     # episodes compared at the end of the run: its second half
MARGIN = 5.0   # team return; one collision step is worth +10 to each of the 2 predators
MIN_T = 3.0    # Welch t statistic of (learned − random): the gap must also be well outside the noise
# One environment copy only. With E copies, learning is a result with a spread, not a property: over 5 seeds on an AMD
# EPYC, MADDPG at E = 4 cleared the margin in 4 of 5 runs and seed 0 on the CI's CPU did not (8.2 against 5.5), so
# it is measured with its interval in benchmarks/results/paper1_copies_learning.md, and what E copies must do
# (the same transitions and update rounds as one copy) is asserted in tests/test_paper1_env_copies.py.
LEARNING_CASES = [(algo, 1) for algo in ("maddpg", "masac")]


def predator_returns(run_dir, episodes: range) -> np.ndarray:
    """Predator team return (sum over predators) of each episode in `episodes`."""
    m = metrics(run_dir)
    sel = m[(m.team == "predator") & m.episode.isin(episodes)]
    return sel.groupby("episode")["return"].sum().to_numpy()


def welch_t(a: np.ndarray, b: np.ndarray) -> float:
    return float((a.mean() - b.mean()) / np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b)))


def _train_returns(cfg: dict, out, episodes: range) -> np.ndarray:
    train(cfg, out)
    return predator_returns(out, episodes)


def _dirname(name: str | tuple[str, int]) -> str:
    return name if isinstance(name, str) else f"{name[0]}-e{name[1]}"


@pytest.fixture(scope="module")
def learning_runs(tmp_path_factory) -> dict[str, np.ndarray]:
    """Predator returns of the random policy (all episodes) and of MADDPG and MASAC (the last LAST episodes), on
    the fast loop: the batched learner on the vectorised predator-prey. The runs are single-threaded, so two
    worker processes train them side by side on a 2-core machine (≈ 30-60 s each)."""
    jobs = {"random": (validate({"study": "test", "algo": "random", "seed": 0,
                                 "env": {"backend": "mpe_vec", "n_agents": 3},
                                 "budget": {"episodes": LEARN_EPISODES}}, part="run"), range(LEARN_EPISODES))}
    for algo, copies in LEARNING_CASES:
        jobs[algo, copies] = (learning_config(algo, copies), range(LEARN_EPISODES - LAST, LEARN_EPISODES))
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {name: pool.submit(_train_returns, cfg, tmp_path_factory.mktemp(_dirname(name)), episodes)
                   for name, (cfg, episodes) in jobs.items()}
        return {name: f.result() for name, f in futures.items()}


@pytest.mark.slow
@pytest.mark.parametrize(("algo", "copies"), LEARNING_CASES)
def test_predators_learn_above_random(algo, copies, learning_runs):
    """Each algorithm's predators learn to catch prey: over the second half of a 600-episode run their return is
    MARGIN above the random policy's and well outside its noise (Welch t > MIN_T).

    An empirical result (docs/running.md, Tests): seeded, but torch's kernels may round otherwise on another CPU
    and the run then takes another path. Measured on the project's 2-core AMD EPYC VM (commit 15e14ad, 2026-12-03):
    MADDPG 16.0 and MASAC 14.9 against the random policy's 5.5, i.e. 10.5 and 9.4 above it where 5.0 is asked,
    t 6.2 and 5.4 where 3.0 is asked. Over 5 seeds every E = 1 run clears the margin
    (benchmarks/results/paper1_copies_learning.md: MADDPG 15.2 [13.3, 17.3], MASAC 16.9 [13.7, 20.3] against 5.4).
    A failure on another CPU is first a result to measure (benchmarks/paper1_copies_learning.py over seeds), then
    a bug to look for.

    It runs the fast loop only: the sequential learner equals the batched one after an update round
    (test_paper1_batched.py) and the vectorised environment equals mpe2 step for step (test_mpe_vec_env.py), so a
    learner broken in either shows here or there; the paper-faithful loop learning as well took 4 more runs and
    5 minutes of the suite."""
    learned, floor = learning_runs[algo, copies], learning_runs["random"]
    t = welch_t(learned, floor)
    print(f"{algo}, {copies} env copies: predators {learned.mean():.1f} over the last {LAST} episodes, random policy "
          f"{floor.mean():.1f}, Welch t {t:.1f}")
    assert learned.mean() > floor.mean() + MARGIN and t > MIN_T, (learned.mean(), floor.mean(), t)
