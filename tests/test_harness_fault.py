"""Fault test: a short MADDPG run SIGKILLed inside atomic writes (of a checkpoint's payload, of its manifest, of
the final outputs) and once SIGTERMed, resumed each time by running the same command again, ends bitwise equal to
an uninterrupted run, with the same phase rows, and leaves no temporary file behind.

Each fault lands at a named write through `EFFMARL_FAULT_AT` (src/effmarl/io.py): the process signals itself once
that write's temporary file is complete and not yet renamed, so a fault lands at the same point of the run however
slow or loaded the machine. A kill between writes leaves what a kill in the next write leaves (the last committed
checkpoint; here also a temporary file), so the faults cover every state the disk can be left in."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pandas as pd
import pytest
import yaml
from conftest import BIN

CONFIG = {"study": "fault", "algo": "maddpg", "seed": 3, "env": {"backend": "mpe", "n_agents": 3},
          "budget": {"episodes": 60},
          "offpolicy": {"batch_size": 32, "warmup": 50, "update_every": 5, "checkpoint_every": 2, "hidden": [16, 16]},
          "replay": {"buffer_size": 2000, "storage": "reference"}}
# (EFFMARL_FAULT_AT, the progress the checkpoint holds after it): each attempt resumes from the last commit and
# counts its own writes; a checkpoint every 2 episodes, the payload (state-*.pt) written before the manifest
FAULTS = [("state-*.pt:3", 4),               # the 3rd payload half-committed: the 2nd checkpoint (episode 4) stays
          ("checkpoint.json:4", 10),         # payload of episode 12 renamed, its manifest not: a stray payload
          ("checkpoint.json:2:SIGTERM", 14),  # SIGTERM during a commit: that save completes, then the run stops
          ("state-*.pt:10", 32),
          ("metrics.parquet:1", 60),         # the budget's last checkpoint committed, the outputs not written
          ("provenance.json:1", 60)]         # every output but provenance.json, the mark of a finished run


def start(config, out, fault: str | None = None) -> subprocess.Popen:
    env = {**os.environ, "EFFMARL_FAULT_AT": fault} if fault else {k: v for k, v in os.environ.items()
                                                                  if k != "EFFMARL_FAULT_AT"}
    return subprocess.Popen([str(BIN / "effmarl"), "train", "--config", str(config), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def temporaries(out) -> list[str]:
    found = []
    for d in (out, out / "checkpoint"):
        if d.is_dir():
            found += [p.name for p in d.iterdir() if p.name.endswith(".tmp")]
    return found


def progress(out) -> int:
    try:
        return json.loads((out / "checkpoint" / "checkpoint.json").read_text())["progress"]
    except (FileNotFoundError, ValueError):
        return 0


def hit(config, out, fault: str, timeout: float = 900) -> tuple[int, str]:
    """Run the command with `fault` armed; return its exit status and stderr. A SIGKILL must land in the named
    write (its temporary file is left behind); a SIGTERM stops the run at its next safe point with exit 143; a full
    disk (ENOSPC) ends the command with exit 1 and the one line naming the file, leaving no temporary file."""
    proc = start(config, out, fault)
    _, err = proc.communicate(timeout=timeout)
    name, _, rest = fault.partition(":")
    if rest.endswith("ENOSPC"):
        assert proc.returncode == 1, (fault, proc.returncode, err)
        last = err.strip().splitlines()[-1]
        assert last.startswith(f"effmarl: {out}") and f"{name}: no space left on device" in last, (fault, last)
        assert temporaries(out) == [], (fault, temporaries(out))
    elif rest.endswith("SIGTERM"):
        assert proc.returncode == 128 + signal.SIGTERM, err
    else:
        assert proc.returncode == -signal.SIGKILL, (fault, proc.returncode, err)
        prefix = "." + name.split("*")[0]
        assert any(t.startswith(prefix) for t in temporaries(out)), (fault, temporaries(out))
    return proc.returncode, err


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

    for fault, committed in FAULTS:
        _, err = hit(config, faulted, fault)
        assert progress(faulted) == committed, (fault, progress(faulted))
        assert not (faulted / "provenance.json").exists()  # nothing half-written passes for a finished run
        if fault.endswith("SIGTERM"):
            (line,) = err.strip().splitlines()
            assert "stopped by SIGTERM at 14 episodes" in line and "run the same command again to resume" in line
    proc = start(config, faulted)
    assert proc.wait(timeout=600) == 0, proc.stderr.read()

    pd.testing.assert_frame_equal(pd.read_parquet(whole / "metrics.parquet"),
                                  pd.read_parquet(faulted / "metrics.parquet"), check_exact=True)
    pd.testing.assert_frame_equal(phase_counts(whole), phase_counts(faulted))
    a, b = (json.loads((d / "counters.json").read_text()) for d in (whole, faulted))
    assert b.pop("resumed_from_episode") == 60 and a.pop("resumed_from_episode") is None and a == b
    assert temporaries(faulted) == []
    assert len(list((faulted / "checkpoint").iterdir())) == 2  # the manifest and the one payload it names
    assert os.path.exists(faulted / "provenance.json")


def test_a_fault_spec_that_does_not_parse_stops_the_process_before_it_runs(tmp_path):
    """A misspelt EFFMARL_FAULT_AT must not leave a fault test running without its fault."""
    for spec in ("checkpoint.json", "checkpoint.json:0", "checkpoint.json:x", "checkpoint.json:1:SIGNOPE",
                 "checkpoint.json:1:ENOSPC:group"):
        proc = subprocess.run([str(BIN / "python"), "-c", "import effmarl.io"], capture_output=True, text=True,
                              env={**os.environ, "EFFMARL_FAULT_AT": spec})
        assert proc.returncode != 0 and f"EFFMARL_FAULT_AT={spec!r}" in proc.stderr, (spec, proc.stderr)


def test_the_named_write_of_a_matching_file_is_hit_and_no_other(tmp_path):
    """The 2nd write of a matching name is killed with its temporary file complete and unrenamed; the 1st write
    and writes of other names complete."""
    script = ("import sys; from pathlib import Path; from effmarl import io\n"
              "d = Path(sys.argv[1])\n"
              "io.write_text(d / 'other.json', 'o1')\n"
              "io.write_text(d / 'a.json', 'first')\n"
              "io.write_text(d / 'other.json', 'o2')\n"
              "io.write_text(d / 'a.json', 'second')\n"
              "io.write_text(d / 'after.json', 'never')\n")
    proc = subprocess.run([str(BIN / "python"), "-c", script, str(tmp_path)], capture_output=True, text=True,
                          env={**os.environ, "EFFMARL_FAULT_AT": "a.*:2"})
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert (tmp_path / "a.json").read_text() == "first" and (tmp_path / "other.json").read_text() == "o2"
    assert not (tmp_path / "after.json").exists()
    (tmp,) = temporaries(tmp_path)
    assert tmp.startswith(".a.json.") and (tmp_path / tmp).read_text() == "second"
