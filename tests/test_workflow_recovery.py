"""After a crash or a power loss, the README's recovery works as written: a few jobs of the smoke profile are killed
as a whole (SIGKILL to Snakemake's process group, its running jobs with it, as a power loss or a closed terminal
does) while a training run writes its last output, so that some of its outputs exist and Snakemake has them marked
incomplete (the state in which the same command used to stop with IncompleteFilesException); then the README's
recovery commands, read from the README, finish the workflow, and its outputs equal the uninterrupted smoke run's
(conftest's smoke_workflow): the non-timing table byte for byte, every run's metrics value for value.

The kill lands at a named write (EFFMARL_FAULT_AT, src/effmarl/io.py): the first training run to write its
provenance.json (written last, after metrics and phases) signals its whole process group, so the point is the
same on any machine, however slow."""

from __future__ import annotations

import base64
import os
import re
import shlex
import signal
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from conftest import BIN, ROOT

# metrics columns that are times: they differ between any two runs, interrupted or not
TIMING = re.compile(r"(^|_)(time|times|seconds|wall|cpu|sec|s)($|_)|_ms$|_s$")


def readme_recovery() -> tuple[list[str], list[str]]:
    """The "After a crash or power loss" item of the everyday tasks (docs/running.md, where the README sends a reader):
    the same command again, and the extra step it names for a
    run that still holds Snakemake's lock (`snakemake --unlock`), as word lists."""
    text = (ROOT / "docs" / "running.md").read_text()
    item = re.search(r"^- \*\*After a crash or power loss\*\*(.*?)(?=^- \*\*|^#)", text, re.S | re.M)
    assert item, "docs/running.md has no 'After a crash or power loss' item"
    commands = [shlex.split(span) for span in re.findall(r"`(snakemake[^`]*)`", item.group(1))]
    unlock = [c for c in commands if "--unlock" in c]
    again = [c for c in commands if "--unlock" not in c]
    assert len(unlock) == 1 and again, f"the recovery names {commands}: expected the same command and one --unlock"
    assert "LockException" in item.group(1), "the recovery does not say when the --unlock step is needed"
    return again[0], unlock[0]


def _incomplete(work: Path) -> list[str]:
    """The outputs Snakemake has marked incomplete in `work` (a job's markers exist from its start to its end)."""
    folder = work / ".snakemake" / "incomplete"
    names = [p.name for p in folder.iterdir()] if folder.is_dir() else []
    return [base64.b64decode(name + "=" * (-len(name) % 4)).decode(errors="replace") for name in names]


def _metrics(path: Path) -> pd.DataFrame:
    frame = pd.read_parquet(path)
    return frame[[c for c in frame.columns if not TIMING.search(c)]].reset_index(drop=True)


def test_the_readme_recovery_names_the_same_command_and_the_unlock_step():
    again, unlock = readme_recovery()
    assert again[:2] == ["snakemake", "--cores"] and unlock == ["snakemake", "--unlock"]


@pytest.mark.slow
def test_a_workflow_killed_as_a_whole_mid_job_finishes_with_the_readme_recovery_and_makes_the_same_outputs(
        smoke_workflow, tmp_path):
    again, unlock = readme_recovery()
    work = tmp_path / "work"
    results, figures = work / "results", work / "figures"
    # the user's command: the README's (`snakemake --cores ...`) with this test's profile, folders and targets
    options = ["--snakefile", str(ROOT / "Snakefile"), "--directory", str(work),
               "--configfile", str(ROOT / "configs/smoke.yaml"),
               "--config", f"results_dir={results}", f"figures_dir={figures}"]
    targets = [str(figures / "skeleton/tables/random_returns.csv"),
               str(results / "paper1_ksweep/metrics.summary.parquet")]
    command = [str(BIN / "snakemake"), *again[1:], *targets, *options]  # --config takes every word after it
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}

    # the first training run to write provenance.json kills Snakemake and every job with it, mid-write
    fault = {**env, "EFFMARL_FAULT_AT": "provenance.json:1:SIGKILL:group"}
    first = subprocess.run(command, env=fault, capture_output=True, text=True, timeout=900, start_new_session=True)
    assert first.returncode == -signal.SIGKILL, f"the workflow was not killed: {first.stderr[-2000:]}"
    cut_off = _incomplete(work)
    assert any((work / path).exists() for path in cut_off), f"no output of a cut-off job exists: {cut_off}"

    def run(words):
        return subprocess.run(words, env=env, capture_output=True, text=True, timeout=900)

    env.pop("EFFMARL_FAULT_AT", None)
    proc = run(command)  # the same command again
    if proc.returncode != 0:  # the README's one extra step, for the lock the killed run still holds
        assert "LockException" in proc.stderr + proc.stdout, proc.stderr[-3000:]
        unlocked = run([str(BIN / "snakemake"), *unlock[1:], *targets, *options])
        assert unlocked.returncode == 0, unlocked.stderr[-3000:]
        proc = run(command)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not _incomplete(work)

    reference = smoke_workflow
    table = "skeleton/tables/random_returns.csv"
    assert (figures / table).read_bytes() == (reference["figures"] / table).read_bytes()
    runs = sorted(results.glob("*/*/metrics.parquet"))
    assert {p.parent.parent.name for p in runs} == {"skeleton", "paper1_ksweep"} and len(runs) == 4
    for path in runs:
        pd.testing.assert_frame_equal(_metrics(path), _metrics(reference["results"] / path.relative_to(results)))


@pytest.mark.parametrize("mode", ["--unlock", "--summary"])
def test_commands_that_schedule_no_job_parse_the_workflow_without_cores(mode, tmp_path):
    """`snakemake --unlock` (the recovery's extra step) and `--summary` give no --cores: the timing jobs' thread
    request (every core) must not make Snakemake refuse to parse the workflow."""
    proc = subprocess.run([str(BIN / "snakemake"), mode, "--snakefile", str(ROOT / "Snakefile"), "--directory",
                           str(tmp_path), "--configfile", str(ROOT / "configs/smoke.yaml")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
