"""Shared fixtures: the repository root, and one smoke-profile workflow run per test session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # the venv running the tests: its effmarl and snakemake
# The profiles: every configs/*.yaml but the study catalogue they select from (configs/studies.yaml).
PROFILES = sorted(p.name for p in (ROOT / "configs").glob("*.yaml") if p.name != "studies.yaml")


def run_cli(*args: str, check: bool = False, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    """Run a console script of this environment (effmarl, snakemake, ruff, ...)."""
    cmd = [str(BIN / args[0]), *args[1:]]
    return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=timeout, **kwargs)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def smoke_workflow(tmp_path_factory, worker_id) -> dict:
    """Run the whole workflow on configs/smoke.yaml into a temporary directory (once per test session, also when
    pytest-xdist runs the suite in several workers: the first worker to need it runs it under a file lock in the
    workers' shared temporary root, the others wait for it and read where it is).

    Returns the directories, the workflow's log and a dry re-run's output.
    """
    if worker_id == "master":
        return _run_smoke_workflow(tmp_path_factory.mktemp("smoke_workflow"))
    shared = tmp_path_factory.getbasetemp().parent
    record = shared / "smoke_workflow.json"
    with FileLock(str(record) + ".lock"):
        if not record.is_file():
            result = _run_smoke_workflow(shared / "smoke_workflow")
            record.write_text(json.dumps({k: str(v) for k, v in result.items()}))
    saved = json.loads(record.read_text())
    return {k: Path(v) if k in ("work", "results", "figures") else v for k, v in saved.items()}


def _run_smoke_workflow(work: Path) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    results, figures = work / "results", work / "figures"
    common = ["--snakefile", str(ROOT / "Snakefile"), "--directory", str(work),
              "--configfile", str(ROOT / "configs/smoke.yaml"),
              "--config", f"results_dir={results}", f"figures_dir={figures}"]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    # the greedy scheduler: Snakemake's default (ilp) solves an integer program each time more jobs are ready than
    # cores, which for the smoke profile's ~200 short jobs cost ~90 CPU-s of the ~770 (6:03 vs 6:45 wall
    # alone on 2 cores); the workflow has no temporary files or priorities for the ILP to weigh
    proc = run_cli("snakemake", *common, "--cores", "2", "--scheduler", "greedy", env=env, timeout=1500)
    if proc.returncode != 0:  # every test that needs the workflow fails with this message
        pytest.fail(f"smoke workflow failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")
    again = run_cli("snakemake", *common, "-n", "--quiet", "all", env=env)
    return {"work": work, "results": results, "figures": figures, "log": proc.stderr,
            "rerun_dry": again.stdout + again.stderr}


def needs_workflow(item) -> bool:
    return "smoke_workflow" in getattr(item, "fixturenames", ())


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: a workflow test without the marker is refused, not run
def pytest_collection_modifyitems(config, items):
    """Order the suite by the `slow` marker, so that the full suite's wall time is the smoke workflow's.

    Every test that reads the smoke workflow must be marked `slow` (the fast loop, `-m "not slow"`, must never
    build it): one that is not stops the collection. The tests of the first file that needs the workflow are
    collected first, so that (with pytest-xdist's per-file distribution) one worker builds it while the others
    run the files that do not need it, the slow ones (training runs) first; the other files that need it come
    last, so no worker waits on it while work is left. pytest-xdist hands out files in this order only with
    --no-loadscope-reorder (pyproject's addopts): without it the workflow started minutes late, behind the
    larger files. Under `-m "not slow"` no selected test needs the workflow; the files holding slow tests still
    lead (their other tests are the longer ones)."""
    unmarked = [item.nodeid for item in items if needs_workflow(item) and item.get_closest_marker("slow") is None]
    if unmarked:
        raise pytest.UsageError("tests that read the smoke workflow must be marked slow: " + ", ".join(unmarked))
    needs = {item.path for item in items if needs_workflow(item)}
    first_file = next((item.path for item in items if item.path in needs), None)
    slow_files = {item.path for item in items if item.get_closest_marker("slow") is not None}
    first = [item for item in items if item.path == first_file]
    rest = [item for item in items if item.path != first_file]
    free = [item for item in rest if item.path not in needs]
    items[:] = (first + [i for i in free if i.path in slow_files] + [i for i in free if i.path not in slow_files]
                + [i for i in rest if i.path in needs])
