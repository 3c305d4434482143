"""A full disk says so (issue 48): any write of a run that fails for lack of space — a checkpoint's payload or
manifest, a table, counters, provenance, a torch file, a figure — ends with the command line's one-line "no space
left on device" message naming the file, leaves no partial file in place of a good one, and the same command
resumes from the last complete checkpoint once space is back, to the run an uninterrupted command makes.

The disk fills at a named write: `EFFMARL_FAULT_AT=<glob>:<n>:ENOSPC` (src/effmarl/io.py) sends that write to a full
device (Linux's /dev/full), so every writer fails with its own error for a full disk (torch's
`unexpected pos` / `basic_ios::clear` RuntimeError without an errno, pyarrow's and matplotlib's OSError, Python's),
at the same point of the run on any machine."""

from __future__ import annotations

import errno
import json
import re
import subprocess
from pathlib import Path

import matplotlib
import pandas as pd
import pytest
import torch
import yaml
from test_harness_fault import CONFIG, start

from effmarl import io, safeload
from effmarl.checkpoints import MANIFEST, CheckpointStore

matplotlib.use("Agg")

MADDPG = {**CONFIG, "budget": {"episodes": 12}}  # test_harness_fault's run: a checkpoint every 2 episodes
RANDOM = {"study": "full", "algo": "random", "seed": 0, "env": {"backend": "mpe", "n_agents": 3},
          "budget": {"episodes": 2}}


def _figure(kind):
    import matplotlib.pyplot as plt

    fig = plt.figure()
    plt.plot([0, 1], [1, 0])
    return lambda tmp: fig.savefig(tmp, format=kind)


WRITERS = {  # name -> how a run writes it
    "small.pt": lambda tmp: torch.save({"w": torch.zeros(3)}, tmp),  # torch: basic_ios::clear
    "large.pt": lambda tmp: torch.save({"w": torch.zeros(100_000)}, tmp),  # torch: unexpected pos
    "table.parquet": lambda tmp: pd.DataFrame({"x": range(100)}).to_parquet(tmp, index=False),
    "notes.txt": lambda tmp: tmp.write_text("x" * 10),
    "figure.png": _figure("png"),
    "figure.pdf": _figure("pdf"),
}


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_every_writer_on_a_full_disk_raises_no_space_naming_the_file_and_keeps_the_good_one(tmp_path, monkeypatch,
                                                                                             name):
    target = tmp_path / name
    io.write_with(target, WRITERS[name])
    good = target.read_bytes()
    monkeypatch.setattr(io, "_FAULT", io._Fault(f"{name}:1:ENOSPC"))
    with pytest.raises(OSError) as raised:
        io.write_with(target, WRITERS[name])
    assert raised.value.errno == errno.ENOSPC and raised.value.filename == str(target)
    if name.endswith(".pt"):  # torch's own writer error, which carries no errno
        assert isinstance(raised.value.__cause__, RuntimeError)
    assert target.read_bytes() == good and [p.name for p in tmp_path.iterdir()] == [name]
    io.write_with(target, WRITERS[name])  # the fault was one write: the next one completes
    assert [p.name for p in tmp_path.iterdir()] == [name] and target.stat().st_size == len(good) > 0


def effmarl_train(config, out, fault: str | None = None) -> subprocess.CompletedProcess:
    """`effmarl train --config config --out out` with `fault` armed, run to its end."""
    proc = start(config, out, fault)
    stdout, stderr = proc.communicate(timeout=900)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def no_space_line(proc, out: Path, pattern: str) -> Path:
    """The command's one line on a full disk; returns the file it names (in `out`, matching `pattern`)."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1, (proc.returncode, proc.stderr)
    found = re.fullmatch(r"effmarl: (\S+): no space left on device \(the disk is full\); free space and run the "
                         r"command again.*", lines[0])
    assert found, lines[0]
    named = Path(found.group(1))
    assert named.parent in (out, out / "checkpoint") and re.fullmatch(pattern.replace("*", ".*"), named.name), named
    return named


def files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def assert_complete(out: Path) -> int:
    """Every file in the run directory is complete (no temporary file; each table, JSON and torch file reads back;
    the checkpoint is its manifest and the one payload whose sha256 it records); returns the checkpoint's progress."""
    for name in files(out):
        path = out / name
        assert not name.endswith(".tmp"), name
        if path.suffix == ".parquet":
            pd.read_parquet(path)
        elif path.suffix == ".json":
            json.loads(path.read_text())
        elif path.suffix == ".pt":
            safeload.load_torch(path)
    store = CheckpointStore(out / "checkpoint")
    manifest = store.read_manifest()
    assert sorted(p.name for p in store.dir.iterdir()) == sorted([MANIFEST, manifest["file"]])
    payload = store.dir / manifest["file"]
    assert store.check(manifest["resume_key"], "budget.episodes", 10**9)["file"] == payload.name
    return manifest["progress"]


def test_a_full_disk_at_a_table_of_a_run_says_so_in_one_line_and_the_same_command_finishes_it(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(RANDOM))
    whole, out = tmp_path / "whole", tmp_path / "run"
    assert effmarl_train(config, whole).returncode == 0
    proc = effmarl_train(config, out, "phases.parquet:1:ENOSPC")
    assert no_space_line(proc, out, "phases.parquet") == out / "phases.parquet"
    assert sorted(files(out)) == ["metrics.parquet"]  # the tables before it, complete; no provenance
    assert effmarl_train(config, out).returncode == 0
    pd.testing.assert_frame_equal(pd.read_parquet(out / "metrics.parquet"), pd.read_parquet(whole / "metrics.parquet"),
                                  check_exact=True)


# (EFFMARL_FAULT_AT, the checkpoint's progress after it). Each attempt resumes from the last commit and counts its own
# writes; a checkpoint every 2 episodes (payload state-*.pt, then the manifest checkpoint.json, the commit), then the
# outputs metrics, phases, counters and provenance (last, the mark of a finished run).
FAULTS = [("state-*.pt:2:ENOSPC", 2),       # torch's writer fails on the 2nd payload: the 1st checkpoint stays
          ("checkpoint.json:2:ENOSPC", 4),  # the 2nd commit fails: its payload is removed, the 1st stays
          ("state-*.pt:4:ENOSPC", 10),
          ("phases.parquet:1:ENOSPC", 12),  # the budget's checkpoint committed, metrics written
          ("metrics.parquet:1:ENOSPC", 12),  # a good metrics.parquet is there: it must stay as it was
          ("counters.json:1:ENOSPC", 12),
          ("provenance.json:1:ENOSPC", 12)]


@pytest.mark.slow
def test_a_full_disk_at_each_write_of_a_run_says_so_keeps_what_was_complete_and_resumes_to_the_uninterrupted_run(
        tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(MADDPG))
    whole, out = tmp_path / "whole", tmp_path / "full"
    assert effmarl_train(config, whole).returncode == 0

    for fault, committed in FAULTS:
        before = files(out) if out.exists() else {}
        proc = effmarl_train(config, out, fault)
        named = no_space_line(proc, out, fault.split(":")[0])
        if named.parent == out:  # an output: absent, or the good file it would have replaced, unchanged
            assert files(out).get(named.name) == before.get(named.name), fault
        assert assert_complete(out) == committed, fault
        assert not (out / "provenance.json").exists()

    assert effmarl_train(config, out).returncode == 0
    pd.testing.assert_frame_equal(pd.read_parquet(whole / "metrics.parquet"), pd.read_parquet(out / "metrics.parquet"),
                                  check_exact=True)
    a, b = (json.loads((d / "counters.json").read_text()) for d in (whole, out))
    assert b.pop("resumed_from_episode") == 12 and a.pop("resumed_from_episode") is None and a == b
    phases = [pd.read_parquet(d / "phases.parquet")[["episode", "phase", "calls"]]
              .sort_values(["episode", "phase"]).reset_index(drop=True) for d in (whole, out)]
    pd.testing.assert_frame_equal(*phases)
