"""The harness under the off-policy stack (MADDPG): corrupted checkpoints, a lowered budget, the divergence
guard and SIGINT, each through `effmarl train` or `train()` as a user would meet them."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time

import pytest
import torch
import yaml
from conftest import BIN, run_cli

from effmarl import harness
from effmarl.algos import maddpg
from effmarl.config import validate
from effmarl.train import train

RUN = {"study": "t", "algo": "maddpg", "seed": 5, "env": {"backend": "mpe", "n_agents": 3},
       "budget": {"episodes": 4},
       "offpolicy": {"batch_size": 32, "warmup": 50, "update_every": 10, "checkpoint_every": 2, "hidden": [16, 16]},
       "replay": {"buffer_size": 200, "storage": "contiguous"}}


@pytest.fixture(scope="module")
def finished_once(tmp_path_factory):
    """A finished 4-episode run whose checkpoint (at episode 4) is on disk."""
    base = tmp_path_factory.mktemp("finished")
    config = base / "run.yaml"
    config.write_text(yaml.safe_dump(RUN))
    proc = run_cli("effmarl", "train", "--config", str(config), "--out", str(base / "out"))
    assert proc.returncode == 0, proc.stderr
    return base


@pytest.fixture
def finished(finished_once, tmp_path):
    """A private copy of the finished run: (its config, its run directory)."""
    shutil.copytree(finished_once, tmp_path / "copy")
    return tmp_path / "copy" / "run.yaml", tmp_path / "copy" / "out"


def payload_of(out):
    return out / "checkpoint" / json.loads((out / "checkpoint" / "checkpoint.json").read_text())["file"]


def test_a_corrupted_checkpoint_is_refused_in_one_line_and_left_untouched(finished):
    config, out = finished
    payload = payload_of(out)
    data = bytearray(payload.read_bytes())
    mid = len(data) // 2
    data[mid:mid + 16] = bytes(b ^ 0x5A for b in data[mid:mid + 16])
    payload.write_bytes(bytes(data))
    metrics_before = (out / "metrics.parquet").read_bytes()
    proc = run_cli("effmarl", "train", "--config", str(config), "--out", str(out), "--set", "budget.episodes=6")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"effmarl: {payload}: corrupted checkpoint") and f"delete {out / 'checkpoint'}" in line
    assert payload.read_bytes() == bytes(data)  # not loaded into a run, not overwritten, not removed
    assert (out / "metrics.parquet").read_bytes() == metrics_before


def test_a_budget_below_the_checkpoint_is_refused(finished):
    config, out = finished
    proc = run_cli("effmarl", "train", "--config", str(config), "--out", str(out), "--set", "budget.episodes=2")
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert "checkpoint is at 4 episodes, past budget.episodes 2" in line


@pytest.mark.slow
def test_a_raised_budget_resumes_and_another_config_is_refused(finished):
    config, out = finished
    proc = run_cli("effmarl", "train", "--config", str(config), "--out", str(out), "--set", "budget.episodes=6")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "counters.json").read_text())["resumed_from_episode"] == 4
    proc = run_cli("effmarl", "train", "--config", str(config), "--out", str(out), "--set", "offpolicy.tau=0.5")
    assert proc.returncode == 2 and "fields offpolicy.tau differ" in proc.stderr


def test_divergence_stops_the_run_naming_phase_step_value_and_keeps_the_last_good_checkpoint(tmp_path, monkeypatch):
    cfg = validate(json.loads(json.dumps({**RUN, "budget": {"episodes": 6}})), part="run")
    cfg["offpolicy"]["checkpoint_every"] = 1
    real_update, calls = maddpg.MADDPG.update, {"n": 0}

    def poisoned(self, agent, batch, timer):
        real_update(self, agent, batch, timer)
        calls["n"] += 1
        if calls["n"] == 12:  # the 4th update round (3 agents, one every 10 steps from step 50): step 80, episode 3
            with torch.no_grad():
                self.critics[1].net[0].weight[0, 0] = float("nan")

    monkeypatch.setattr(maddpg.MADDPG, "update", poisoned)
    with pytest.raises(harness.Diverged) as err:
        train(cfg, tmp_path)
    msg = str(err.value)
    assert "diverged in phase update_all_trainers at step 80" in msg and "critics.1.net.0.weight holds nan" in msg
    manifest = json.loads((tmp_path / "checkpoint" / "checkpoint.json").read_text())
    assert manifest["progress"] == 3  # episodes 0-2 finished and saved; episode 3 (steps 75-99) never saved
    assert not (tmp_path / "metrics.parquet").exists() and not (tmp_path / "provenance.json").exists()
    monkeypatch.undo()
    resumed = torch.load(tmp_path / "checkpoint" / manifest["file"], weights_only=False)
    assert all(torch.isfinite(t).all() for t in resumed["learner"]["critics"][1].values())


def catches_sigterm(pid: int) -> bool:
    """Linux: SIGTERM is in the process's caught-signal mask (Python does not catch it by default)."""
    try:
        status = open(f"/proc/{pid}/status").read()
    except FileNotFoundError:
        return False
    mask = int(next(line for line in status.splitlines() if line.startswith("SigCgt:")).split()[1], 16)
    return bool(mask & (1 << (signal.SIGTERM - 1)))


@pytest.mark.slow
def test_sigint_checkpoints_at_the_next_episode_and_exits_130(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({**RUN, "budget": {"episodes": 400},
                                      "offpolicy": {**RUN["offpolicy"], "checkpoint_every": 0}}))
    out = tmp_path / "out"
    proc = subprocess.Popen([str(BIN / "effmarl"), "train", "--config", str(config), "--out", str(out)],
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not catches_sigterm(proc.pid) and time.monotonic() < deadline:  # the harness's handlers are installed
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    (line,) = err.strip().splitlines()
    assert "stopped by SIGINT at" in line and "Traceback" not in err
    progress = json.loads((out / "checkpoint" / "checkpoint.json").read_text())["progress"]
    assert 0 < progress < 400 and not (out / "provenance.json").exists()
