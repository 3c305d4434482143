"""Shared fixtures: the repository root, and one smoke-profile workflow run per test session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # the venv running the tests: its effmarl and snakemake


def run_cli(*args: str, check: bool = False, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    """Run a console script of this environment (effmarl, snakemake, ruff, ...)."""
    cmd = [str(BIN / args[0]), *args[1:]]
    return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=timeout, **kwargs)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def smoke_workflow(tmp_path_factory) -> dict:
    """Run the whole workflow on configs/smoke.yaml into a temporary directory (once per session).

    Returns the directories and the list of final outputs Snakemake reports for `rule all`.
    """
    work = tmp_path_factory.mktemp("smoke_workflow")
    results, figures = work / "results", work / "figures"
    common = ["--snakefile", str(ROOT / "Snakefile"), "--directory", str(work),
              "--configfile", str(ROOT / "configs/smoke.yaml"),
              "--config", f"results_dir={results}", f"figures_dir={figures}"]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    proc = run_cli("snakemake", *common, "--cores", "2", env=env, timeout=1500)
    if proc.returncode != 0:
        pytest.fail(f"smoke workflow failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")
    again = run_cli("snakemake", *common, "-n", "--quiet", "all", env=env)
    return {"work": work, "results": results, "figures": figures, "log": proc.stderr,
            "rerun_dry": again.stdout + again.stderr}
