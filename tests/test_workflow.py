"""The workflow and the repository as a whole: the smoke profile end to end, lint, dry runs, pins."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
import zipfile
from html import unescape
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ROOT, run_cli

PROFILES = sorted(p.name for p in (ROOT / "configs").glob("*.yaml"))

# Snakemake lints we waive, with the reason. Everything else `snakemake --lint` reports fails the test.
WAIVED_LINTS = {
    "Specify a conda environment or container for each rule.":
        "the whole workflow runs inside one pinned environment (the Docker image, or the venv/conda env built "
        "from requirements/lock.txt); per-rule environments would duplicate it",
}


@pytest.mark.slow
def test_smoke_workflow_produces_every_registered_output_with_provenance(smoke_workflow):
    figures = smoke_workflow["figures"]
    index = json.loads((figures / "index.json").read_text())
    assert index, "the smoke profile registered no figures or tables"
    for entry in index:
        for path in map(Path, entry["files"]):
            assert path.exists() and path.stat().st_size > 0, path
            if path.suffix == ".png":
                assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert entry["caption"], f"{entry['name']} has no caption"
        assert entry["commit"], f"{entry['name']} does not name the commit it was made at"
        if entry["kind"] == "figure":
            assert entry["source_runs"].startswith("runs: "), entry


@pytest.mark.slow
def test_smoke_runs_record_provenance_and_profile(smoke_workflow):
    runs = sorted(smoke_workflow["results"].glob("*/*/provenance.json"))
    assert runs
    for path in runs:
        prov = json.loads(path.read_text())
        assert prov["config"]["profile"] == "smoke"
        assert prov["config"]["study"] == path.parent.parent.name
        assert prov["git"]["commit"] and prov["config_hash"]
        assert yaml.safe_load((path.parent / "config.yaml").read_text()) == prov["config"]


@pytest.mark.slow
def test_smoke_study_tables_are_tidy_with_config_columns(smoke_workflow):
    summary = pd.read_parquet(smoke_workflow["results"] / "skeleton" / "metrics.summary.parquet")
    assert {"run_id", "git_commit", "cfg.env.n_agents", "cfg.seed", "episode", "team", "return"} <= set(summary)
    assert summary.groupby("run_id")["cfg.env.n_agents"].nunique().eq(1).all()


@pytest.mark.slow
def test_smoke_workflow_is_complete_after_one_run(smoke_workflow):
    assert "Nothing to be done" in smoke_workflow["rerun_dry"] or not re.search(r"\bjob\b", smoke_workflow["rerun_dry"])


def _jobs(dry_run_output: str) -> list[dict]:
    """The job blocks of a `snakemake -n -p` listing: rule name, its fields (output:, benchmark: ...) and shell."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \S+:\n)", dry_run_output):
        head = re.match(r"(?:local)?rule (\S+):\n", block)
        if head:
            fields = dict(re.findall(r"^    (\w+): (.*)$", block, flags=re.M))
            jobs.append({"rule": head.group(1), **fields, "text": block})
    return jobs


def test_every_compute_job_has_a_benchmark_and_training_limits_every_thread_pool(tmp_path):
    proc = run_cli("snakemake", "-n", "-p", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
                   "--configfile", str(ROOT / "configs/smoke.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = _jobs(proc.stdout + proc.stderr)
    assert {j["rule"] for j in jobs} >= {"train_offpolicy", "train_random", "train_qmix_dense", "aggregate",
                                        "paper1_counters", "paper1_sampling_bench", "figure_index"}
    for job in jobs:
        if job["rule"] in ("run_config", "run_config_selected", "all"):  # one YAML file in-process / the target
            continue
        assert job.get("benchmark"), f"rule {job['rule']} has no benchmark:"
        if job["rule"].startswith("train_"):
            for var in ("OMP_NUM_THREADS=1", "--xla_cpu_multi_thread_eigen=$([ 1 -gt 1 ]", "threads=1"):
                assert var in job["text"], (job["rule"], var)


def test_aggregate_takes_every_run_table_as_an_input_so_a_missing_table_fails_at_dag_time(tmp_path):
    # the skeleton (random policy) writes no sparsity table: asking for its summary must fail before any job runs
    proc = run_cli("snakemake", "-n", "results/smoke/skeleton/sparsity.summary.parquet", "--snakefile",
                   str(ROOT / "Snakefile"), "--directory", str(tmp_path),
                   "--configfile", str(ROOT / "configs/smoke.yaml"))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "MissingInputException" in out and "skeleton/n_agents-3_seed-0/sparsity.parquet" in out


def _declared(smoke_workflow) -> set[Path]:
    proc = run_cli("snakemake", "--summary", "--snakefile", str(ROOT / "Snakefile"),
                   "--directory", str(smoke_workflow["work"]), "--configfile", str(ROOT / "configs/smoke.yaml"),
                   "--config", f"results_dir={smoke_workflow['results']}", f"figures_dir={smoke_workflow['figures']}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {Path(line.split("\t")[0]) for line in proc.stdout.splitlines()[1:] if line.strip()}


@pytest.mark.slow
def test_smoke_workflow_declares_every_file_it_writes(smoke_workflow):
    declared = _declared(smoke_workflow)
    undeclared = []
    for root in (smoke_workflow["results"], smoke_workflow["figures"]):
        for path in root.rglob("*"):
            rel = path.relative_to(root).parts
            # logs and benchmarks are declared as log: / benchmark:; checkpoint/ is a killed run's resume state,
            # deliberately not an output (Snakemake deletes a job's outputs before running it)
            if path.is_dir() or path.suffix == ".log" or "logs" in rel or "benchmarks" in rel or \
                    path.name.endswith(".benchmark.tsv") or "checkpoint" in rel:
                continue
            if path not in declared:
                undeclared.append(str(path))
    assert not undeclared, undeclared[:20]


@pytest.mark.slow
def test_smoke_report_holds_every_figure_and_table_with_its_caption(smoke_workflow, tmp_path):
    report = tmp_path / "report.zip"  # the zip form holds the files themselves beside report.html
    proc = run_cli("snakemake", "--report", str(report), "--snakefile", str(ROOT / "Snakefile"),
                   "--directory", str(smoke_workflow["work"]), "--configfile", str(ROOT / "configs/smoke.yaml"),
                   "--config", f"results_dir={smoke_workflow['results']}", f"figures_dir={smoke_workflow['figures']}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    with zipfile.ZipFile(report) as archive:
        html = unescape(archive.read("report/report.html").decode())  # a caption's "> 90 %" is "&gt; 90 %" there
        held = {hashlib.sha256(archive.read(n)).hexdigest() for n in archive.namelist() if n.endswith((".png", ".csv"))}
    # figures and tables (benchmark tables are listed in the index but are not paper figures or tables)
    index = [e for e in json.loads((smoke_workflow["figures"] / "index.json").read_text())
             if e["kind"] in ("figure", "table")]
    shown = [Path(f) for entry in index for f in entry["files"] if f.endswith((".png", ".csv"))]
    assert len(shown) == len(index) == len(held)  # one PNG per figure, one CSV per table, nothing else
    for path in shown:
        assert hashlib.sha256(path.read_bytes()).hexdigest() in held, f"{path} is not in the report"
    for entry in index:
        kind = "figures" if entry["kind"] == "figure" else "tables"
        caption = (ROOT / "workflow" / "report" / kind / f"{entry['name']}.rst").read_text()
        claim = re.search(r"\*\*Claim it supports\.\*\* ([^\n]+)", caption).group(1)
        needle = claim.split(":")[0][:60]  # the report holds captions as JSON strings: non-ASCII as \uXXXX
        assert needle in html or json.dumps(needle)[1:-1] in html, f"caption of {entry['name']} is not in the report"
        assert f"effmarl {entry['kind']} {entry['name']}" in html


def test_every_registered_figure_and_table_has_a_caption_with_paper_and_claim():
    from effmarl.analysis.figures import FIGURES
    from effmarl.analysis.tables import TABLES

    for kind, names in (("figures", FIGURES), ("tables", TABLES)):
        for name in names:
            caption = (ROOT / "workflow" / "report" / kind / f"{name}.rst").read_text()
            for part in ("**What it shows.**", "**Reproduces.**", "**Claim it supports.**"):
                assert part in caption, f"{kind}/{name}.rst lacks {part}"


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_dry_runs(profile, tmp_path):
    proc = run_cli("snakemake", "-n", "--quiet", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
                   "--configfile", str(ROOT / "configs" / profile))
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_each_papers_half_of_the_default_profile_runs_only_its_own_jobs(tmp_path):
    """`snakemake paper1_part` / `paper2_part`: one paper's studies, figures, tables and bench sections."""
    rules = {}
    for part in ("paper1_part", "paper2_part"):
        proc = run_cli("snakemake", part, "-n", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
                       "--configfile", str(ROOT / "configs" / "default.yaml"), "--quiet", "rules")
        assert proc.returncode == 0, proc.stderr[-3000:]
        rules[part] = set(re.findall(r"^([a-z_0-9]+) +[0-9]+$", proc.stdout + proc.stderr, re.M)) - {"total", part}
    assert {"train_offpolicy", "paper1_counters", "bench_paper1", "table_paper1_claims"} <= rules["paper1_part"]
    assert not {r for r in rules["paper1_part"] if "mast" in r or "qmix" in r or r == "bench_sparse"}
    assert {"train_qmix_sparse", "table_mast_table1", "table_mast_claims", "bench_sparse"} <= rules["paper2_part"]
    assert not {r for r in rules["paper2_part"] if "paper1" in r or r in ("train_offpolicy", "train_random")}


def test_slurm_workflow_profile_dry_runs(tmp_path):
    proc = run_cli("snakemake", "-n", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
                   "--workflow-profile", str(ROOT / "workflow/profiles/slurm"),
                   "--configfile", str(ROOT / "configs/smoke.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "train" in proc.stdout


def test_default_profile_is_used_without_configfile(tmp_path):
    proc = run_cli("snakemake", "-n", "--snakefile", str(ROOT / "Snakefile"), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "results/default/" in proc.stdout + proc.stderr


def test_bad_profile_is_rejected_before_any_job(tmp_path):
    bad = yaml.safe_load((ROOT / "configs" / "smoke.yaml").read_text())
    bad["studies"]["skeleton"]["grid"]["env.n_agents"] = [4]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    proc = run_cli("snakemake", "-n", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
                   "--configfile", str(path))
    assert proc.returncode != 0
    assert "env.n_agents" in proc.stderr and "multiple of 3" in proc.stderr


def test_snakemake_lint_reports_only_waived_lints():
    proc = run_cli("snakemake", "--lint", "--snakefile", str(ROOT / "Snakefile"), cwd=ROOT)
    titles = set(re.findall(r"^\s+\* (.+?):?$", proc.stdout + proc.stderr, flags=re.M))
    assert titles <= set(WAIVED_LINTS), titles - set(WAIVED_LINTS)


def test_ruff_is_clean():
    proc = run_cli("ruff", "check", str(ROOT))
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_dockerfile_passes_hadolint_and_pins_its_base_by_digest():
    dockerfile = ROOT / "Dockerfile"
    proc = run_cli("hadolint", str(dockerfile))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = dockerfile.read_text()
    args = dict(re.findall(r"^ARG\s+(\w+)=(\S+)", text, flags=re.M))  # FROM ${BASE}: CI substitutes its base
    base = [re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image)
            for image in re.findall(r"^FROM\s+(\S+)", text, flags=re.M)]
    assert base and all(re.search(r"@sha256:[0-9a-f]{64}$", image) for image in base), base
    assert "requirements/lock.txt" in dockerfile.read_text()


def _lock() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements" / "lock.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.lower().replace("_", "-")] = version.strip()
    return pins


def test_pins_agree_between_pyproject_lock_and_environment_yml():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["dependencies"] + [d for ds in project["optional-dependencies"].values() for d in ds]
    lock = _lock()
    for requirement in declared:
        name, version = re.fullmatch(r"([A-Za-z0-9_.-]+)==([\w.+]+)", requirement).groups()
        key = name.lower().replace("_", "-")
        if key in lock:
            assert lock[key] == version, f"{name}: pyproject {version}, lock {lock[key]}"
    assert not any(re.match(r"smac\b", r) for r in declared), "PyPI 'smac' is SMAC3, not StarCraft"
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    deps = env["dependencies"]
    assert "python=3.11" in deps
    pip_lines = next(d for d in deps if isinstance(d, dict))["pip"]
    assert "--constraint requirements/lock.txt" in pip_lines
