"""The suite's own rules (tests/conftest.py): a test that reads the smoke workflow must be marked slow, so the fast
loop (`-m "not slow"`) never builds it; the full suite starts the workflow first and reads it last."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

# a conftest that takes the suite's ordering hook and a smoke_workflow fixture that builds nothing
CONFTEST = f"""
import importlib.util
import pytest

spec = importlib.util.spec_from_file_location("suite_conftest", {str(ROOT / "tests" / "conftest.py")!r})
suite = importlib.util.module_from_spec(spec)
spec.loader.exec_module(suite)
pytest_collection_modifyitems = suite.pytest_collection_modifyitems


@pytest.fixture
def smoke_workflow():
    return {{}}
"""
FILES = {"test_a_fast.py": "def test_fast():\n    pass\n",
         "test_b_training.py": "import pytest\n\n@pytest.mark.slow\ndef test_training():\n    pass\n",
         "test_c_workflow.py": "import pytest\n\n@pytest.mark.slow\ndef test_reads(smoke_workflow):\n    pass\n",
         "test_d_workflow.py": "import pytest\n\n@pytest.fixture\ndef table(smoke_workflow):\n    return 1\n\n"
                               "@pytest.mark.slow\ndef test_reads_through_a_fixture(table):\n    pass\n"}


def collect(directory, *args: str) -> subprocess.CompletedProcess:
    (directory / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow\n")  # not the repository's addopts
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "-c", str(directory / "pytest.ini"), "--rootdir", str(directory),
                           str(directory), *args], capture_output=True, text=True, cwd=directory, timeout=300)


def collected(proc) -> list[str]:
    return [line.split("::")[-1] for line in proc.stdout.splitlines() if "::" in line]


def write(directory, files: dict[str, str]) -> None:
    (directory / "conftest.py").write_text(CONFTEST)
    for name, text in files.items():
        (directory / name).write_text(text)


def test_the_workflow_comes_first_the_slow_files_next_and_the_other_workflow_readers_last(tmp_path):
    write(tmp_path, FILES)
    proc = collect(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert collected(proc) == ["test_reads", "test_training", "test_fast", "test_reads_through_a_fixture"]


def test_the_fast_loop_selects_no_test_that_reads_the_workflow(tmp_path):
    write(tmp_path, FILES)
    proc = collect(tmp_path, "-m", "not slow")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert collected(proc) == ["test_fast"]


def test_a_workflow_reader_without_the_slow_marker_stops_the_collection(tmp_path):
    write(tmp_path, {**FILES, "test_e_unmarked.py": "def test_forgot(smoke_workflow):\n    pass\n"})
    for args in ((), ("-m", "not slow")):
        proc = collect(tmp_path, *args)
        assert proc.returncode == 4, proc.stdout + proc.stderr  # pytest's usage error
        assert "must be marked slow: test_e_unmarked.py::test_forgot" in proc.stdout + proc.stderr
