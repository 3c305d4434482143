"""Paper 1's end-to-end timing robust to what the workflow cannot control (issue 34): phase rows carry process CPU
time beside wall time, and a neighbor/uniform pair trains interleaved in one process (`effmarl train --interleave`,
train.train_many(..., interleave=True)), each run writing exactly what it writes trained alone."""

from __future__ import annotations

import copy
import math

import pandas as pd
import pytest

from effmarl.config import ConfigError, validate
from effmarl.profiling import phases as phases_module
from effmarl.profiling.phases import PhaseTimer

# 25-step episodes; updates from the 50th transition on, one round per 10 steps: episodes 2 and 3 update
RUN = {"study": "t", "seed": 5, "env": {"backend": "mpe", "n_agents": 3}, "budget": {"episodes": 4},
       "offpolicy": {"batch_size": 32, "warmup": 50, "update_every": 10, "checkpoint_every": 2, "hidden": [16, 16]},
       "replay": {"buffer_size": 200, "storage": "contiguous"}}
TIMES = ["seconds", "cpu_seconds"]


def run_cfg(algo: str = "maddpg", sampler: str = "uniform", **changes) -> dict:
    cfg = copy.deepcopy({**RUN, "algo": algo})
    cfg["replay"]["sampler"] = sampler
    if sampler == "neighbor":
        cfg["replay"]["neighbor_k"] = 4
    for key, value in changes.items():
        cfg[key] = value
    return validate(cfg, part="run")


class FakeClocks:
    """perf_counter and process_time that advance by given steps per read, so a phase's times are known exactly."""

    def __init__(self, wall_steps, cpu_steps):
        self.wall, self.cpu = 0.0, 0.0
        self.wall_steps, self.cpu_steps = iter(wall_steps), iter(cpu_steps)

    def perf_counter(self):
        self.wall += next(self.wall_steps)
        return self.wall

    def process_time(self):
        self.cpu += next(self.cpu_steps)
        return self.cpu


def test_each_phase_row_carries_its_process_cpu_seconds_beside_its_wall_seconds(monkeypatch):
    # reads alternate start, end: phase a takes 2 s wall / 0.5 s CPU then 3 s / 1.5 s; phase b 4 s / 4 s
    clocks = FakeClocks([0, 2, 0, 3, 0, 4], [0, 0.5, 0, 1.5, 0, 4])
    monkeypatch.setattr(phases_module.time, "perf_counter", clocks.perf_counter)
    monkeypatch.setattr(phases_module.time, "process_time", clocks.process_time)
    timer = PhaseTimer()
    for name in ("a", "a", "b"):
        with timer.phase(name):
            pass
    rows = timer.snapshot(episode=7)
    assert rows == [{"episode": 7, "phase": "a", "seconds": 5.0, "cpu_seconds": 2.0, "calls": 2},
                    {"episode": 7, "phase": "b", "seconds": 4.0, "cpu_seconds": 4.0, "calls": 1}]
    assert timer.snapshot() == []  # a snapshot resets both clocks' sums


def test_since_measures_cpu_seconds_from_a_mark_and_an_older_mark_gives_nan(monkeypatch):
    clocks = FakeClocks([0, 2, 0, 3], [0, 1, 0, 0.25])
    monkeypatch.setattr(phases_module.time, "perf_counter", clocks.perf_counter)
    monkeypatch.setattr(phases_module.time, "process_time", clocks.process_time)
    timer = PhaseTimer()
    with timer.phase("a"):
        pass
    mark = timer.mark()
    assert mark == {"a": (2.0, 1, 1.0)}
    with timer.phase("a"):
        pass
    assert timer.since(mark, env_steps=9) == [{"env_steps": 9, "phase": "a", "seconds": 3.0, "cpu_seconds": 0.25,
                                               "calls": 1}]
    (row,) = timer.since({"a": (2.0, 1)})  # the (seconds, calls) form of an older mark
    assert (row["seconds"], row["calls"]) == (3.0, 1) and math.isnan(row["cpu_seconds"])


def non_timing(path) -> dict[str, pd.DataFrame]:
    """A run's outputs without its times: metrics, phases without seconds/cpu_seconds, counters."""
    phases = pd.read_parquet(path / "phases.parquet")
    return {"metrics": pd.read_parquet(path / "metrics.parquet"),
            "phases": phases.drop(columns=TIMES).sort_values(["episode", "phase"]).reset_index(drop=True),
            "counters": pd.read_json(path / "counters.json", typ="series")}


def assert_same_outputs(a, b, counters: bool = True) -> None:
    one, other = non_timing(a), non_timing(b)
    pd.testing.assert_frame_equal(one["metrics"], other["metrics"])
    pd.testing.assert_frame_equal(one["phases"], other["phases"])
    if counters:
        pd.testing.assert_series_equal(one["counters"], other["counters"])


@pytest.mark.slow
def test_a_run_resumes_from_a_checkpoint_whose_phase_rows_predate_cpu_seconds(tmp_path):
    from effmarl import harness
    from effmarl.checkpoints import CheckpointStore, resume_key
    from effmarl.train import train

    cfg = run_cfg()
    train(copy.deepcopy(cfg), str(tmp_path / "straight"))
    train(validate({**copy.deepcopy(cfg), "budget": {"episodes": 2}}, part="run"), str(tmp_path / "resumed"))
    # the checkpoint at episode 2 rewritten as an effmarl before cpu_seconds wrote it: phase rows without the column
    store = CheckpointStore(tmp_path / "resumed" / "checkpoint")
    manifest = store.read_manifest()
    state = store.read_payload(manifest)
    state["phases"] = [{k: v for k, v in row.items() if k != "cpu_seconds"} for row in state["phases"]]
    store.save(state, resume_key(cfg), manifest["progress"], "episodes")
    assert all("cpu_seconds" not in row for row in store.read_payload(store.read_manifest())["phases"])
    harness.seed_everything(0)  # nothing carried over from the process's earlier runs
    train(copy.deepcopy(cfg), str(tmp_path / "resumed"))
    assert_same_outputs(tmp_path / "resumed", tmp_path / "straight", counters=False)
    assert non_timing(tmp_path / "resumed")["counters"]["resumed_from_episode"] == 2
    phases = pd.read_parquet(tmp_path / "resumed" / "phases.parquet")
    assert phases.loc[phases.episode < 2, "cpu_seconds"].isna().all()  # unknown for the old rows
    later = phases[(phases.episode >= 2) & (phases.phase != "checkpoint")]
    assert later["cpu_seconds"].notna().all() and (later["cpu_seconds"] >= 0).all()


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["maddpg", "masac"])
def test_each_run_of_an_interleaved_pair_writes_what_it_writes_trained_alone(tmp_path, monkeypatch, algo):
    from effmarl.algos import offpolicy
    from effmarl.train import train, train_many

    uniform, neighbor = run_cfg(algo, "uniform"), run_cfg(algo, "neighbor")
    steps = []
    step = offpolicy.Trainer.step

    def recorded(self):
        steps.append(self.cfg["replay"]["sampler"])
        step(self)

    monkeypatch.setattr(offpolicy.Trainer, "step", recorded)
    dirs = train_many(copy.deepcopy([neighbor, uniform]), [str(tmp_path / "n"), str(tmp_path / "u")],
                      interleave=True)
    assert [d.path.name for d in dirs] == ["n", "u"]
    # uniform first, one episode each in turn, the order reversed every round: u n n u u n n u
    assert steps == ["uniform", "neighbor", "neighbor", "uniform"] * 2
    train(copy.deepcopy(uniform), str(tmp_path / "u_alone"))
    train(copy.deepcopy(neighbor), str(tmp_path / "n_alone"))
    for name in ("u", "n"):
        assert (tmp_path / name / "provenance.json").is_file()
        assert_same_outputs(tmp_path / name, tmp_path / f"{name}_alone")
        phases = pd.read_parquet(tmp_path / name / "phases.parquet")
        assert phases.loc[phases.phase != "checkpoint", "cpu_seconds"].notna().all()
    assert not non_timing(tmp_path / "u")["metrics"].equals(non_timing(tmp_path / "n")["metrics"])  # they differ


def test_interleave_refuses_runs_that_do_not_form_uniform_neighbor_pairs(tmp_path):
    from effmarl.groups import sampler_pairs
    from effmarl.train import train_many

    u, n = run_cfg(), run_cfg(sampler="neighbor")
    assert sampler_pairs([n, u, run_cfg(seed=6), run_cfg(sampler="neighbor", seed=6)]) == [[1, 0], [2, 3]]
    with pytest.raises(ConfigError) as err:
        sampler_pairs([u, n, run_cfg(seed=6)])
    assert err.value.lines == ["field 'replay.sampler': runs 3 (seed 6) have samplers ['uniform']; an interleaved pair "
                               "is one uniform and one neighbor run equal in every other field"]
    with pytest.raises(ConfigError, match="runs 1, 2 .* samplers \\['uniform', 'uniform'\\]"):
        sampler_pairs([u, copy.deepcopy(u)])
    with pytest.raises(ConfigError) as err:  # a pair differs in the sampler alone
        sampler_pairs([u, run_cfg(sampler="neighbor", threads=2)])
    assert [line.split(" have ")[0] for line in err.value.lines] == ["field 'replay.sampler': runs 1 (seed 5)",
                                                                     "field 'replay.sampler': runs 2 (seed 5)"]
    qmix = validate({"study": "t", "algo": "qmix", "seed": 1, "env": {"backend": "smax", "map": "3m"},
                     "budget": {"env_steps": 90}}, part="run")
    with pytest.raises(ConfigError, match="field 'algo': 'qmix' has no replay sampler to pair"):
        train_many([qmix, copy.deepcopy(qmix)], [str(tmp_path / "a"), str(tmp_path / "b")], interleave=True)
    assert not (tmp_path / "a").exists()


@pytest.mark.slow
def test_a_stop_during_an_interleaved_pair_saves_both_runs_and_the_same_command_resumes_them(tmp_path, monkeypatch):
    import signal

    from effmarl.algos import offpolicy
    from effmarl.harness import Interrupted
    from effmarl.train import train, train_many

    uniform, neighbor = run_cfg("maddpg", "uniform"), run_cfg("maddpg", "neighbor")
    outs = [str(tmp_path / "u"), str(tmp_path / "n")]
    step, calls = offpolicy.Trainer.step, []

    def stopped_at_the_third(self):  # SIGINT arrives during the third episode round (neighbor's second)
        calls.append(self.cfg["replay"]["sampler"])
        if len(calls) == 3:
            self.run.process.signals.signum = signal.SIGINT
        step(self)

    monkeypatch.setattr(offpolicy.Trainer, "step", stopped_at_the_third)
    with pytest.raises(Interrupted, match="at 1 episodes; run state saved in .*; at 2 episodes; run state saved in"):
        train_many(copy.deepcopy([uniform, neighbor]), outs, interleave=True)
    assert not (tmp_path / "u" / "provenance.json").exists()
    monkeypatch.setattr(offpolicy.Trainer, "step", step)
    train_many(copy.deepcopy([uniform, neighbor]), outs, interleave=True)
    train(copy.deepcopy(uniform), str(tmp_path / "u_alone"))
    train(copy.deepcopy(neighbor), str(tmp_path / "n_alone"))
    for name, resumed_from in (("u", 1), ("n", 2)):
        assert_same_outputs(tmp_path / name, tmp_path / f"{name}_alone", counters=False)
        assert non_timing(tmp_path / name)["counters"]["resumed_from_episode"] == resumed_from


def test_an_interleaved_pair_job_needs_both_runs_memory_at_once_and_counts_as_its_studys_training(tmp_path):
    from pathlib import Path

    from effmarl import resources
    from effmarl.analysis.costs import _kind

    u, n = run_cfg(), run_cfg(sampler="neighbor")
    ru, rn = resources.for_run(u), resources.for_run(n)
    assert resources.for_process([u, n], interleaved=True) == {
        "mem_mb": ru["mem_mb"] + rn["mem_mb"], "runtime": ru["runtime"] + rn["runtime"], "gpu": 0}
    results = Path("/r/results")
    assert _kind(results / "paper1" / "benchmarks" / "pairs_paper1_3.tsv", results, Path("/r/figures")) == \
        "training: paper1"


def _rows(run: dict, wall: float, cpu: float | None) -> list[dict]:
    """One episode's leaf rows: env_step and sampling split a total of `wall` s (cpu s, or no cpu column) 1:3,
    plus the enclosing update_all_trainers (not a leaf: never added to the total)."""
    rows = [{**run, "episode": 1, "phase": phase, "seconds": wall * share, "calls": 1,
             **({} if cpu is None else {"cpu_seconds": cpu * share})}
            for phase, share in (("env_step", 0.25), ("sampling", 0.75))]
    return rows + [{**run, "episode": 1, "phase": "update_all_trainers", "seconds": wall, "calls": 1,
                    **({} if cpu is None else {"cpu_seconds": cpu})}]


def test_the_end_to_end_change_is_read_on_either_clock_and_a_run_without_cpu_seconds_pairs_on_wall_time_only():
    from effmarl.analysis.metrics.end_to_end import clock_totals, pair_changes

    def run(sampler, seed):
        return {"cfg.study": "paper1", "run_id": f"{sampler}-{seed}", "cfg.algo": "maddpg", "cfg.env.n_agents": 12,
                "cfg.replay.storage": "reference", "cfg.replay.sampler": sampler, "cfg.seed": seed}

    # seed 0: wall 20 s -> 30 s (+50 %) while CPU 10 s -> 8 s (-20 %): a neighbour's load on the neighbor run
    # seed 1: the uniform run's rows predate cpu_seconds (older checkpoint): its CPU change is unknown
    phases = pd.DataFrame(_rows(run("uniform", 0), 20.0, 10.0) + _rows(run("neighbor", 0), 30.0, 8.0)
                          + _rows(run("uniform", 1), 20.0, None) + _rows(run("neighbor", 1), 10.0, 5.0))
    wall = pair_changes(clock_totals(phases, "seconds")).set_index("cfg.seed")["change_%"]
    cpu = pair_changes(clock_totals(phases, "cpu_seconds")).set_index("cfg.seed")["change_%"]
    assert wall.to_dict() == pytest.approx({0: 50.0, 1: -50.0})
    assert cpu.to_dict() == pytest.approx({0: -20.0})  # seed 1 forms no pair on the CPU clock
    with pytest.raises(ValueError, match="clock: 'user' is not one of seconds, cpu_seconds"):
        clock_totals(phases, "user")


@pytest.mark.slow
def test_effmarl_train_interleave_trains_a_pair_from_the_command_line_and_refuses_a_lone_run(tmp_path):
    import yaml
    from conftest import run_cli

    args = []
    for sampler in ("uniform", "neighbor"):
        cfg = {**copy.deepcopy(RUN), "algo": "maddpg", "budget": {"episodes": 2}}
        cfg["replay"]["sampler"] = sampler
        (tmp_path / f"{sampler}.yaml").write_text(yaml.safe_dump(cfg))
        args += ["--config", str(tmp_path / f"{sampler}.yaml"), "--out", str(tmp_path / sampler)]
    proc = run_cli("effmarl", "train", "--interleave", *args)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for sampler in ("uniform", "neighbor"):
        assert (tmp_path / sampler / "provenance.json").is_file()
        assert pd.read_parquet(tmp_path / sampler / "metrics.parquet")["episode"].max() == 1
    lone = run_cli("effmarl", "train", "--interleave", *args[:4], "--set", "seed=9")
    assert lone.returncode == 2 and lone.stderr.strip().splitlines() == [
        "effmarl: effmarl train --interleave: field 'replay.sampler': runs 1 (seed 9) have samplers ['uniform']; an "
        "interleaved pair is one uniform and one neighbor run equal in every other field"]
