"""The effmarl command line: clear errors before compute, a real run, env-info."""

from __future__ import annotations

import json
import shutil
import subprocess

import pandas as pd
import pytest
import yaml
from conftest import run_cli

BAD_CONFIGS = {
    "unknown_algo.yaml": ({"study": "x", "algo": "dqn", "seed": 0, "env": {"backend": "mpe"}}, "field 'algo'"),
    "bad_agents.yaml": ({"study": "x", "algo": "random", "seed": 0, "env": {"backend": "mpe", "n_agents": 5}},
                        "field 'env.n_agents'"),
    "unknown_key.yaml": ({"study": "x", "algo": "random", "seed": 0, "env": {"backend": "mpe"}, "lr": 1},
                         "unknown key(s) 'lr'"),
    "no_env.yaml": ({"study": "x", "algo": "random", "seed": 0}, "field 'env': required but missing"),
    "not_a_mapping.yaml": ([1, 2, 3], "must be a mapping"),
}


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_train_rejects_bad_config_with_one_line_and_no_traceback(tmp_path, name):
    content, expected = BAD_CONFIGS[name]
    path = tmp_path / name
    path.write_text(yaml.safe_dump(content))
    out = tmp_path / "run"
    proc = run_cli("effmarl", "train", "--config", str(path), "--out", str(out))
    assert proc.returncode == 2
    assert expected in proc.stderr
    assert "Traceback" not in proc.stderr
    assert all(line.startswith(f"effmarl: {path}: ") for line in proc.stderr.strip().splitlines())
    assert not out.exists()  # nothing was started


def test_train_writes_tables_and_provenance(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"study": "x", "algo": "random", "seed": 3,
                                    "env": {"backend": "mpe", "n_agents": 3}, "budget": {"episodes": 2}}))
    out = tmp_path / "run"
    proc = run_cli("effmarl", "train", "--config", str(path), "--out", str(out), "--set", "seed=4")
    assert proc.returncode == 0, proc.stderr
    metrics = pd.read_parquet(out / "metrics.parquet")
    assert sorted(metrics["episode"].unique()) == [0, 1]
    assert set(metrics["team"]) == {"predator", "prey"}
    phases = pd.read_parquet(out / "phases.parquet")
    assert set(phases["phase"]) == {"action_selection", "env_step"}
    assert (phases["calls"] == 25).all()  # one call per step of a 25-step episode
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["seed"] == 4 and prov["config"]["seed"] == 4  # --set applied and recorded


def test_set_override_is_validated(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"study": "x", "algo": "random", "seed": 0, "env": {"backend": "mpe"}}))
    proc = run_cli("effmarl", "train", "--config", str(path), "--out", str(tmp_path / "o"), "--set", "seed=-2")
    assert proc.returncode == 2 and "field 'seed'" in proc.stderr


def test_env_info_json_reports_counter_sources_honestly():
    proc = run_cli("effmarl", "env-info", "--json")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["packages"]["effmarl"] and info["python"].startswith("3.")
    counters = info["counters"]
    for source in ("perf", "cachegrind", "torch_profiler", "ncu"):
        assert isinstance(counters[source]["available"], bool)
        assert counters[source]["available"] or counters[source]["reason"]
    # perf is "usable" only if this host really counts hardware instructions
    if shutil.which("perf"):
        stat = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", "true"], capture_output=True, text=True)
        really_counts = stat.returncode == 0 and "<not" not in stat.stderr
        assert counters["perf"]["available"] == really_counts
    else:
        assert not counters["perf"]["available"]
    assert counters["cachegrind"]["available"] == (shutil.which("valgrind") is not None)


def test_env_info_text_lists_each_counter_source():
    proc = run_cli("effmarl", "env-info")
    assert proc.returncode == 0
    for source in ("perf:", "cachegrind:", "torch_profiler:", "ncu:"):
        assert source in proc.stdout


def test_validate_command_counts_runs_of_each_profile(repo_root):
    proc = run_cli("effmarl", "validate", *(str(p) for p in sorted((repo_root / "configs").glob("*.yaml"))))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("valid profile") == 3
