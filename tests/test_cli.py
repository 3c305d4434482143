"""The effmarl command line: clear errors before compute, a real run, env-info."""

from __future__ import annotations

import errno
import json
import os
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_env_info_text_lists_each_counter_source():
    proc = run_cli("effmarl", "env-info")
    assert proc.returncode == 0
    for source in ("perf:", "cachegrind:", "torch_profiler:", "ncu:"):
        assert source in proc.stdout


@pytest.mark.parametrize("marker", [None, "effmarl 0.1.0, commit abc123", ""])
def test_env_info_says_whether_it_runs_in_this_projects_image_from_the_dockerfiles_marker(
        tmp_path, monkeypatch, capsys, marker):
    """Any container (/.dockerenv, ...) is `container: yes`; only the marker file the Dockerfile writes makes
    `project image: yes`, naming what the marker says."""
    from effmarl import provenance
    from effmarl.cli import main
    from effmarl.profiling import tools

    path = tmp_path / "effmarl-image"
    if marker is not None:
        path.write_text(marker + "\n")
    monkeypatch.setattr(provenance, "IMAGE_MARKER", path)
    monkeypatch.setattr(tools, "probe_all", lambda: {})  # the counter probes are tested above
    assert main(["env-info"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("project image:"))
    if marker is None:
        assert line == f"project image: no (no {path}, which this project's Dockerfile writes)"
        assert provenance.environment()["project_image"] is None
    elif marker:
        assert line == "project image: yes (effmarl 0.1.0, commit abc123)"
        assert provenance.environment()["project_image"] == "effmarl 0.1.0, commit abc123"
    else:
        assert line == f"project image: yes (unnamed ({path} is empty))"


def test_the_dockerfile_writes_the_image_marker_env_info_reads(repo_root):
    from effmarl.provenance import IMAGE_MARKER

    dockerfile = (repo_root / "Dockerfile").read_text()
    assert f"> {IMAGE_MARKER}" in dockerfile and "${GIT_COMMIT}" in dockerfile


@pytest.mark.slow
def test_validate_command_counts_runs_of_each_profile(repo_root):
    files = sorted((repo_root / "configs").glob("*.yaml"))
    proc = run_cli("effmarl", "validate", *(str(p) for p in files))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("valid profile") == len(files) - 1  # all but the catalogue
    assert "studies.yaml: valid study catalogue" in proc.stdout  # every study as declared, expanded together


# ---------------------------------------------------------------- bad input anywhere -> one line (issue 14)
def one_line_error(capsys, argv: list[str], expected: str, code: int = 2) -> str:
    """main() returns (no traceback escapes), with exit status `code` and one stderr line naming the problem."""
    from effmarl.cli import main

    assert main(argv) == code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("effmarl: ") and "Traceback" not in err, err
    assert expected in lines[0], lines[0]
    return lines[0]


MADDPG_YAML = "study: t\nalgo: maddpg\nseed: 0\nenv: {backend: mpe}\n"
QMIX_YAML = "study: t\nalgo: qmix\nseed: 0\nenv: {backend: smax}\nbudget: {env_steps: 100}\n"
BAD_RUNS = {
    "float_integer": (MADDPG_YAML + "offpolicy: {batch_size: 32.0}\n",
                      "field 'offpolicy.batch_size': must be an integer, got 32.0 (float)"),
    "seed_2_32": (MADDPG_YAML.replace("seed: 0", "seed: 4294967296"), "field 'seed': 4294967296 is above"),
    "huge_buffer": (MADDPG_YAML + "replay: {buffer_size: 1000000000000}\n", "field 'replay.buffer_size'"),
    "huge_hidden": (MADDPG_YAML + "offpolicy: {hidden: [100000000]}\n", "field 'offpolicy.hidden.0'"),
    "nan_lr": (MADDPG_YAML + "offpolicy: {lr: .nan}\n", "field 'offpolicy.lr': must be a finite number, got nan"),
    "inf_lr": (MADDPG_YAML + "offpolicy: {lr: .inf}\n", "field 'offpolicy.lr': must be a finite number, got inf"),
    "lr_1e6": (MADDPG_YAML + "offpolicy: {lr: 1.0e+6}\n", "field 'offpolicy.lr': 1000000.0 is above the upper bound"),
    "nan_gamma": (MADDPG_YAML + "offpolicy: {gamma: .nan}\n", "field 'offpolicy.gamma': must be a finite number"),
    "nan_epsilon": (QMIX_YAML + "qmix: {epsilon_finish: .nan}\n", "field 'qmix.epsilon_finish'"),
    "nan_sparsity": (QMIX_YAML + "sparse: {method: mast, sparsity: .nan}\nqmix: {shared_params: false}\n",
                     "field 'sparse.sparsity': must be a finite number"),
    "duplicate_key": (MADDPG_YAML + "seed: 1\n", "duplicate key 'seed'"),
    "cross_field": (MADDPG_YAML + "offpolicy: {batch_size: 64, warmup: 10}\nreplay: {buffer_size: 32}\n",
                    "field 'offpolicy.batch_size': 64 exceeds replay.buffer_size 32"),
}


@pytest.mark.parametrize("name", sorted(BAD_RUNS))
def test_bad_run_config_is_one_line_for_train_and_validate_and_nothing_is_created(tmp_path, capsys, name):
    text, expected = BAD_RUNS[name]
    path = tmp_path / "run.yaml"
    path.write_text(text)
    out = tmp_path / "out"
    one_line_error(capsys, ["train", "--config", str(path), "--out", str(out)], expected)
    assert not out.exists()
    one_line_error(capsys, ["validate", "--run", str(path)], expected)  # the same checks, cross-field too


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this host has a GPU")
@pytest.mark.parametrize("text", [MADDPG_YAML, QMIX_YAML])
def test_cuda_without_gpu_is_one_line_for_both_stacks_before_anything_is_created(tmp_path, capsys, text):
    path = tmp_path / "run.yaml"
    path.write_text(text + "device: cuda\n")
    one_line_error(capsys, ["train", "--config", str(path), "--out", str(tmp_path / "o")],
                   "field 'device': 'cuda' requested but torch sees no CUDA GPU")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("make", "expected"), [
    (lambda p: p.mkdir(), "is a directory"),
    (lambda p: p.write_bytes(bytes(range(256))), "not a text file"),
    (lambda p: p.write_text("study: t\n1: a\nb: 2\nalgo: random\nseed: 0\nenv: {backend: mpe}\n"),
     "unknown key(s) 'b', 1"),
])
def test_validate_run_unreadable_or_odd_files_are_one_line(tmp_path, capsys, make, expected):
    path = tmp_path / "run.yaml"
    make(path)
    one_line_error(capsys, ["validate", "--run", str(path)], expected)


@pytest.mark.parametrize(("override", "expected"), [
    ("offpolicy.lr=[unclosed", "--set offpolicy.lr: not valid YAML"),
    ("seed.x=1", "field 'seed.x': 'seed' is not a mapping"),
    ("offpolicy.lr=.nan", "field 'offpolicy.lr': must be a finite number"),
])
def test_bad_set_value_is_one_line(tmp_path, capsys, override, expected):
    path = tmp_path / "run.yaml"
    path.write_text(MADDPG_YAML)
    one_line_error(capsys, ["train", "--config", str(path), "--out", str(tmp_path / "o"), "--set", override],
                   expected)
    assert not (tmp_path / "o").exists()


def test_out_that_is_a_file_or_below_a_file_is_one_line(tmp_path, capsys):
    path = tmp_path / "run.yaml"
    path.write_text("study: t\nalgo: random\nseed: 0\nenv: {backend: mpe}\nbudget: {episodes: 1}\n")
    (tmp_path / "file").write_text("x")
    one_line_error(capsys, ["train", "--config", str(path), "--out", str(tmp_path / "file")],
                   "--out is an existing file, not a directory")
    one_line_error(capsys, ["train", "--config", str(path), "--out", str(tmp_path / "file" / "run")],
                   "Not a directory", code=1)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_out_is_one_line(tmp_path, capsys):
    path = tmp_path / "run.yaml"
    path.write_text("study: t\nalgo: random\nseed: 0\nenv: {backend: mpe}\nbudget: {episodes: 1}\n")
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    one_line_error(capsys, ["train", "--config", str(path), "--out", str(ro / "run")], "Permission denied", code=1)


def test_a_full_disk_says_so(tmp_path, capsys, monkeypatch):
    from effmarl import io

    def full(path, writer):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(io, "write_with", full)
    table = tmp_path / "run" / "metrics.parquet"
    table.parent.mkdir()
    pd.DataFrame({"x": [1.0]}).to_parquet(table)
    (table.parent / "provenance.json").write_text(json.dumps({"git": {"commit": "c"}, "config": {"seed": 0}}))
    line = one_line_error(capsys, ["aggregate", str(table), "--out", str(tmp_path / "s.parquet")],
                          "no space left on device (the disk is full)", code=1)
    assert str(tmp_path / "s.parquet") in line


@pytest.mark.parametrize(("content", "expected"), [
    (None, "no such file"),
    (b"garbage", "not a readable parquet table"),
    (pd.DataFrame({"x": pd.Series([], dtype=float)}), "no finite data (0 rows)"),
    (pd.DataFrame({"x": [float("nan")] * 3, "name": ["a", "b", "c"]}), "no finite data (3 rows)"),
])
@pytest.mark.parametrize("command", ["figure", "table"])
def test_figures_and_tables_refuse_missing_corrupted_or_empty_inputs(tmp_path, capsys, content, expected, command):
    path = tmp_path / "summary.parquet"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        content.to_parquet(path)
    # paper1_phases takes one input (a bare path); paper1_claims names its three (role=path)
    name, inputs = (("paper1_phases", [str(path)]) if command == "figure" else
                    ("paper1_claims", [f"{role}={path}" for role in ("metrics", "phases", "bench")]))
    out = tmp_path / "fig"
    line = one_line_error(capsys, [command, name, *inputs, "--out", str(out)], expected)
    assert str(path) in line
    assert list(tmp_path.iterdir()) == ([path] if content is not None else [])  # nothing written


def test_an_out_stem_with_a_dot_is_refused_not_silently_renamed(tmp_path, capsys):
    one_line_error(capsys, ["figure", "paper1_phases", "x.parquet", "--out", str(tmp_path / "name.v2")],
                   "--out must be a path without an extension; '.v2' would be replaced")
    assert list(tmp_path.iterdir()) == []


def test_aggregate_of_a_missing_result_file_is_one_line(tmp_path, capsys):
    one_line_error(capsys, ["aggregate", str(tmp_path / "run" / "metrics.parquet"), "--out",
                            str(tmp_path / "s.parquet")], "No such file or directory", code=1)


def test_debug_shows_the_traceback(tmp_path):
    proc = run_cli("effmarl", "--debug", "validate", "--run", str(tmp_path / "missing.yaml"))
    assert proc.returncode != 0 and "Traceback" in proc.stderr
    proc = run_cli("effmarl", "validate", "--run", str(tmp_path / "missing.yaml"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"effmarl: {tmp_path / 'missing.yaml'}: no such file"


PROFILE = ("profile: smoke\nresults_dir: r\nfigures_dir: f\nstudies:\n  paper1_ksweep:\n    base: {offpolicy: "
           "{batch_size: 32, warmup: 10}, replay: {buffer_size: 100}}\n    grid: {replay.neighbor_k: [1], seed: [0]}\n")
RUN = "studies.paper1_ksweep run neighbor_k-1_seed-0"


@pytest.mark.parametrize(("text", "expected"), [
    (PROFILE + "colour: red\npaper1_micro: {sampling_bench: {batch: 3.0}}\n",
     ["profile: field '(top level)': unknown key(s) 'colour'",
      "profile: field 'paper1_micro.sampling_bench.batch': must be an integer, got 3.0 (float)"]),
    (PROFILE.replace("warmup: 10}", "warmup: 10, lr: .nan}"),
     [f"{RUN}: field 'offpolicy.lr': must be a finite number, got nan"]),
    (PROFILE.replace("warmup: 10}", "warmup: 1000}"),
     [f"{RUN}: field 'offpolicy.warmup': 1000 exceeds replay.buffer_size 100"]),
    (PROFILE + "results_dir: again\n", ["duplicate key 'results_dir'"]),
    (PROFILE.replace("paper1_ksweep:", "paper1_kswep:"),
     ["profile: field 'studies.paper1_kswep': no such study in configs/studies.yaml; declared: skeleton, paper1,"]),
    (PROFILE.replace("seed: [0]}", "seed: [0], offpolicy.lr: [0.1]}"),
     ["profile: field 'studies.paper1_ksweep.grid.offpolicy.lr': paper1_ksweep does not vary 'offpolicy.lr'; its "
      "axes: env.n_agents, replay.neighbor_k, seed"]),
])
def test_snakemake_profile_errors_are_one_line_per_problem_not_the_schema(tmp_path, repo_root, text, expected):
    (tmp_path / "profile.yaml").write_text(text)
    proc = run_cli("snakemake", "-n", "--snakefile", str(repo_root / "Snakefile"), "--directory", str(tmp_path),
                   "--configfile", str(tmp_path / "profile.yaml"))
    assert proc.returncode != 0
    # Snakemake's own notice that it reads the project's default workflow profile (profiles/default) precedes any
    # output of the workflow; the errors are the lines after it
    lines = [line for line in proc.stderr.strip().splitlines()
             if not line.startswith("Using workflow specific profile")]
    assert len(lines) == len(expected), proc.stderr[-3000:]
    for line, want in zip(lines, expected, strict=True):
        assert want in line


def test_commands_that_need_no_torch_do_not_import_it(tmp_path):
    """Every figure, table, aggregation and run-config job of the workflow is its own process; torch's import
    (~1 s) in each of them once cost the smoke workflow minutes. The parser and the provenance record stay
    torch-free; a command that uses torch imports it itself."""
    import sys

    code = ("import sys; from effmarl.cli import build_parser; from effmarl import provenance; build_parser(); "
            "rec = provenance.record(); print('torch' in sys.modules, rec['hardware']['gpus'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "None"]
    code = "import torch; from effmarl import provenance; print(type(provenance.record()['hardware']['gpus']).__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "list"  # where torch is loaded, the GPUs it sees (empty on a CPU machine)


def test_figure_and_table_modules_import_neither_torch_nor_jax():
    """A figure or table job reads files and draws: importing a training stack's package there (the QMIX package's
    __init__ pulls in its learner, hence torch, for one constant of the budget schedules) cost each of the smoke
    workflow's ~40 figure and table jobs seconds of start-up."""
    import sys

    code = ("import sys, importlib; from effmarl.analysis.figures import FIGURES; from effmarl.analysis.tables import "
            "TABLES; [importlib.import_module(m) for m in [*FIGURES.values(), *TABLES.values()]]; "
            "print(sorted(k for k in ('torch', 'jax', 'jaxmarl', 'mpe2') if k in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
