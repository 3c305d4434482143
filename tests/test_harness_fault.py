"""Fault test: a short MADDPG run SIGKILLed at random moments (some while a checkpoint is being written) and
once SIGTERMed, resumed each time by running the same command again, ends bitwise equal to an uninterrupted
run, with the same phase rows, and leaves no temporary file behind."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time

import pandas as pd
import pytest
import yaml
from conftest import BIN

CONFIG = {"study": "fault", "algo": "maddpg", "seed": 3, "env": {"backend": "mpe", "n_agents": 3},
          "budget": {"episodes": 60},
          "offpolicy": {"batch_size": 32, "warmup": 50, "update_every": 5, "checkpoint_every": 2, "hidden": [16, 16]},
          "replay": {"buffer_size": 2000, "storage": "reference"}}
RANDOM_KILLS, KILLS_IN_WRITES = 5, 3


def start(config, out) -> subprocess.Popen:
    return subprocess.Popen([str(BIN / "effmarl"), "train", "--config", str(config), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def temporaries(out) -> list[str]:
    found = []
    for d in (out, out / "checkpoint"):
        if d.is_dir():
            found += [p.name for p in d.iterdir() if p.name.endswith(".tmp")]
    return found


def kill_in_a_write(proc, out, limit: float = 60.0) -> bool:
    """SIGKILL the moment a temporary file of an atomic write appears; False if the run ended first."""
    end = time.monotonic() + limit
    while proc.poll() is None and time.monotonic() < end:
        if temporaries(out):
            proc.kill()
            proc.wait()
            return True
        time.sleep(0.0005)
    return False


def progress(out) -> int:
    try:
        return json.loads((out / "checkpoint" / "checkpoint.json").read_text())["progress"]
    except (FileNotFoundError, ValueError):
        return 0


def phase_counts(out) -> pd.DataFrame:
    phases = pd.read_parquet(out / "phases.parquet")
    return phases[["episode", "phase", "calls"]].sort_values(["episode", "phase"]).reset_index(drop=True)


@pytest.mark.slow
def test_killed_and_resumed_run_equals_the_uninterrupted_one(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    whole, faulted = tmp_path / "whole", tmp_path / "faulted"
    proc = start(config, whole)
    assert proc.wait(timeout=600) == 0, proc.stderr.read()

    rng = random.Random(14)  # the kill schedule is reproducible; the moments it lands on are the machine's
    kills = {"random": 0, "in_write": 0, "sigterm": 0}
    plan = ["random"] * RANDOM_KILLS + ["in_write"] * KILLS_IN_WRITES
    rng.shuffle(plan)
    plan.insert(len(plan) // 2, "sigterm")
    for kind in plan:
        before = progress(faulted)
        proc = start(config, faulted)
        if kind == "random":  # a random moment: 0-2 checkpoints into this attempt, then 0-0.5 s more
            target = before + 2 * rng.randint(0, 2)
            while proc.poll() is None and progress(faulted) < target:
                time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.5))
            if proc.poll() is None:
                proc.kill()
                proc.wait()
                kills["random"] += 1
        elif kind == "in_write":
            kills["in_write"] += kill_in_a_write(proc, faulted)
        else:  # SIGTERM once a checkpoint of this attempt is on disk: the run saves at its next episode and stops
            while proc.poll() is None and progress(faulted) <= before:
                time.sleep(0.01)
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 128 + signal.SIGTERM, err
            (line,) = err.strip().splitlines()
            assert "stopped by SIGTERM at" in line and "run the same command again to resume" in line
            kills["sigterm"] += 1
        assert proc.returncode != 0, "the run finished before its fault landed; raise the budget"
    if proc.returncode != 0:
        proc = start(config, faulted)
        assert proc.wait(timeout=600) == 0, proc.stderr.read()

    assert kills["random"] + kills["in_write"] >= 6 and kills["in_write"] >= 1 and kills["sigterm"] == 1, kills
    pd.testing.assert_frame_equal(pd.read_parquet(whole / "metrics.parquet"),
                                  pd.read_parquet(faulted / "metrics.parquet"), check_exact=True)
    pd.testing.assert_frame_equal(phase_counts(whole), phase_counts(faulted))
    a, b = (json.loads((d / "counters.json").read_text()) for d in (whole, faulted))
    assert b.pop("resumed_from_episode") is not None and a.pop("resumed_from_episode") is None and a == b
    assert temporaries(faulted) == []
    assert len(list((faulted / "checkpoint").iterdir())) == 2  # the manifest and the one payload it names
    assert os.path.exists(faulted / "provenance.json")
