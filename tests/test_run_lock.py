"""A run directory has one writer (issue 48): every `effmarl train` (one run, several runs in one process) locks each
of its run directories before any compute and holds the lock for the run's life; a second writer is refused at once
in one line naming the directory and the holder (pid, host, start time), exits non-zero and writes nothing, and the
first run's outputs equal a solo run's. The lock is the operating system's (flock), so a holder killed with SIGKILL
leaves nothing that stops the next run.

The holder is paused at a named write (`EFFMARL_FAULT_AT=<glob>:<n>:SIGSTOP`, src/effmarl/io.py): it stops itself
there, holding its lock, with a temporary file complete and not yet renamed, whatever the machine's speed; the test
waits for the stop (waitpid WUNTRACED), never for a time."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

import pandas as pd
import pytest
import yaml
from conftest import BIN
from test_disk_full import RANDOM
from test_harness_fault import CONFIG

MADDPG = {**CONFIG, "budget": {"episodes": 8}}  # test_harness_fault's run: a checkpoint every 2 episodes


def write_config(path, cfg, **changes):
    path.write_text(yaml.safe_dump({**cfg, **changes}))
    return path


def start(*runs, fault: str | None = None) -> subprocess.Popen:
    """`effmarl train --config C --out O …` for each (C, O) in `runs`, with `fault` armed (EFFMARL_FAULT_AT)."""
    env = {k: v for k, v in os.environ.items() if k not in ("EFFMARL_FAULT_AT", "EFFMARL_NO_PROGRESS")}
    if fault:
        env["EFFMARL_FAULT_AT"] = fault
    argv = [str(BIN / "effmarl"), "train"]
    for config, out in runs:
        argv += ["--config", str(config), "--out", str(out)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def paused(proc: subprocess.Popen) -> subprocess.Popen:
    """Wait until `proc` has stopped itself at its fault (SIGSTOP); it holds whatever it held there."""
    _, status = os.waitpid(proc.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), f"the holder did not stop at its fault (wait status {status})"
    return proc


def finish(proc: subprocess.Popen) -> str:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    return out


def snapshot(*dirs) -> dict:
    """Every file under `dirs` (hidden ones too), as relative path -> bytes."""
    return {str(p): p.read_bytes() for d in dirs if d.exists() for p in sorted(d.rglob("*")) if p.is_file()}


def refused(proc: subprocess.Popen, directory, holder: subprocess.Popen) -> str:
    _, err = proc.communicate(timeout=600)
    lines = err.strip().splitlines()
    assert proc.returncode != 0 and len(lines) == 1, (proc.returncode, err)
    (line,) = lines
    assert line.startswith(f"effmarl: {directory}: "), line
    assert f"pid {holder.pid}" in line and socket.gethostname() in line and "started 20" in line, line
    return line


def outputs(out) -> dict:
    """What a finished run wrote that two runs of one configuration share: metrics bit for bit, counters, the
    phase calls, the recorded configuration."""
    phases = pd.read_parquet(out / "phases.parquet")
    return {"metrics": pd.read_parquet(out / "metrics.parquet"),
            "counters": json.loads((out / "counters.json").read_text()),
            "phases": phases[["episode", "phase", "calls"]].sort_values(["episode", "phase"]).reset_index(drop=True),
            "config": json.loads((out / "provenance.json").read_text())["config"]}


def assert_same_run(a, b, resumed_from=None) -> None:
    """`a` equals the solo run `b`; `a` resumed from a checkpoint at episode `resumed_from` (None: trained through)."""
    pd.testing.assert_frame_equal(a["metrics"], b["metrics"], check_exact=True)
    pd.testing.assert_frame_equal(a["phases"], b["phases"])
    assert a["config"] == b["config"]
    assert a["counters"] == {**b["counters"], "resumed_from_episode": resumed_from}


@pytest.fixture(scope="module")
def solo(tmp_path_factory) -> dict:
    """The MADDPG run trained alone, undisturbed."""
    root = tmp_path_factory.mktemp("solo")
    config = write_config(root / "run.yaml", MADDPG)
    finish(start((config, root / "solo")))
    return outputs(root / "solo")


@pytest.mark.slow
@pytest.mark.parametrize("second", ["same configuration", "another configuration"])
def test_a_second_training_into_a_held_directory_is_refused_and_the_first_ends_as_a_solo_run(
        tmp_path, solo, second):
    config = write_config(tmp_path / "run.yaml", MADDPG)
    other = config if second == "same configuration" else \
        write_config(tmp_path / "other.yaml", MADDPG, seed=1, budget={"episodes": 6})
    out = tmp_path / "mixed"
    holder = paused(start((config, out), fault="state-*.pt:2:SIGSTOP"))  # one checkpoint committed, one in flight
    try:
        before = snapshot(tmp_path)
        refused(start((other, out)), out, holder)
        assert snapshot(tmp_path) == before  # nothing written, nothing removed (the holder's temporary file stays)
    finally:
        holder.send_signal(signal.SIGCONT)
    finish(holder)
    assert_same_run(outputs(out), solo)


@pytest.mark.slow
def test_a_holder_killed_with_sigkill_leaves_the_lock_to_the_next_run_which_resumes_to_the_solo_run(tmp_path, solo):
    config = write_config(tmp_path / "run.yaml", MADDPG)
    out = tmp_path / "run"
    holder = paused(start((config, out), fault="state-*.pt:2:SIGSTOP"))
    refused(start((config, out)), out, holder)
    holder.kill()
    holder.wait(timeout=60)
    # the next run takes the lock without help, and holds it: a fourth is refused while it runs
    successor = paused(start((config, out), fault="state-*.pt:1:SIGSTOP"))
    try:
        refused(start((config, out)), out, successor)
    finally:
        successor.send_signal(signal.SIGCONT)
    finish(successor)
    assert_same_run(outputs(out), solo, resumed_from=2)


def test_a_command_of_several_runs_is_refused_whole_when_one_directory_is_held(tmp_path):
    """`effmarl train` with several --config/--out (a seed group, an interleaved pair, runs one after another) locks
    every directory before any compute: one held directory refuses the whole command, and its other directories
    are not even created."""
    config = write_config(tmp_path / "run.yaml", RANDOM)
    held = tmp_path / "held"
    holder = paused(start((config, held), fault="metrics.parquet:1:SIGSTOP"))
    first = write_config(tmp_path / "first.yaml", RANDOM, budget={"episodes": 1})
    try:
        before = snapshot(tmp_path)
        refused(start((first, tmp_path / "fresh"), (config, held)), held, holder)
        assert snapshot(tmp_path) == before and not (tmp_path / "fresh").exists()
    finally:
        holder.send_signal(signal.SIGCONT)
    finish(holder)


HOLD = ("import sys; from effmarl.runs import locked\n"
        "with locked([sys.argv[1]]):\n"
        "    print('held', flush=True); sys.stdin.read()\n")


def test_a_lock_whose_holder_was_killed_is_taken_by_the_next_writer_and_a_clean_release_leaves_no_file(tmp_path):
    from effmarl.runs import RunDirBusy, locked

    out = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    assert holder.stdout.readline() == "held\n"
    with pytest.raises(RunDirBusy) as busy:
        with locked([out]):
            pass
    assert busy.value.source == str(out) and f"pid {holder.pid}" in busy.value.lines[0]
    holder.kill()
    holder.wait(timeout=60)
    with locked([out]):
        with locked([out]):  # the process holding a directory may enter it again (train_many, then train)
            pass
        other = subprocess.run([sys.executable, "-c", HOLD, str(out)], input="", capture_output=True, text=True)
        assert other.returncode == 1 and "RunDirBusy" in other.stderr and f"pid {os.getpid()}" in other.stderr
    assert list(tmp_path.iterdir()) == []  # released cleanly: no lock file left, and no directory was made


MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:41 / /home rw,relatime shared:20 - nfs4 server:/home rw,vers=4.2,hard,proto=tcp,local_lock=none,addr=10.0.0.1
41 22 0:42 / /scratch rw,relatime shared:21 - nfs server:/scratch rw,vers=3,nolock,local_lock=all,addr=10.0.0.2
42 22 0:43 / /scratch/fast rw,relatime shared:22 - xfs /dev/sdb1 rw
43 22 0:44 / /mnt/with\\040space rw,relatime shared:23 - nfs server:/x rw,vers=3,local_lock=flock,addr=10.0.0.3
"""


def test_nfs_mounts_whose_locks_stay_on_this_host_are_named_and_others_are_not():
    from effmarl.runs import local_only_locks

    def reason(path):
        return local_only_locks(path, MOUNTINFO)

    assert reason("/home/me/results/s/r") is None  # NFS with the server's locks: trusted
    assert reason("/data/results/s/r") is None and reason("/scratch/fast/r") is None
    assert "nfs mount /scratch" in reason("/scratch/me/results/s/r") and "local_lock=all" in reason("/scratch")
    assert "local_lock=flock" in reason("/mnt/with space/r")
    assert reason("/scratchpad/r") is None  # a prefix of the name is not the mount


def test_a_file_system_that_cannot_lock_lets_the_run_go_on_with_a_one_line_warning(tmp_path, monkeypatch, capsys):
    """NFS without a lock daemon answers flock with ENOLCK: the run is not stopped for it, and says it is unguarded."""
    import errno

    from effmarl import runs

    def no_locks(fd, operation):
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(runs.fcntl, "flock", no_locks)
    with runs.locked([tmp_path / "run"]):
        pass
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"effmarl: {tmp_path / 'run'}: warning: ") and "ENOLCK" in line
    assert "a second writer into it would not be refused" in line
    assert list(tmp_path.iterdir()) == []
