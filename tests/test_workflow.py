"""The workflow and the repository as a whole: dry runs of every profile, lint, pins (the smoke profile end to end:
test_workflow_smoke.py)."""

from __future__ import annotations

import re
import tomllib

import pytest
import yaml
from conftest import PROFILES, ROOT, run_cli

from effmarl.analysis.figures import FIGURES
from effmarl.analysis.tables import TABLES

# Snakemake lints we waive, with the reason. Everything else `snakemake --lint` reports fails the test.
WAIVED_LINTS = {
    "Specify a conda environment or container for each rule.":
        "the whole workflow runs inside one pinned environment (the Docker image, or the venv/conda env built "
        "from requirements/lock.txt); per-rule environments would duplicate it",
}


def _jobs(dry_run_output: str) -> list[dict]:
    """The job blocks of a `snakemake -n -p` listing: rule name, its fields (output:, benchmark: ...) and shell."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \S+:\n)", dry_run_output):
        head = re.match(r"(?:local)?rule (\S+):\n", block)
        if head:
            fields = dict(re.findall(r"^    (\w+): (.*)$", block, flags=re.M))
            jobs.append({"rule": head.group(1), **fields, "text": block})
    return jobs


@pytest.mark.slow
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
        if job["rule"].startswith(("train_", "pairs_")):  # a run's own job or an interleaved pair's (paper1)
            for var in ("OMP_NUM_THREADS=1", "--xla_cpu_multi_thread_eigen=$([ 1 -gt 1 ]", "threads=1"):
                assert var in job["text"], (job["rule"], var)


@pytest.mark.slow
def test_aggregate_takes_every_run_table_as_an_input_so_a_missing_table_fails_at_dag_time(tmp_path):
    # the skeleton (random policy) writes no sparsity table: asking for its summary must fail before any job runs
    proc = run_cli("snakemake", "-n", "results/smoke/skeleton/sparsity.summary.parquet", "--snakefile",
                   str(ROOT / "Snakefile"), "--directory", str(tmp_path),
                   "--configfile", str(ROOT / "configs/smoke.yaml"))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "MissingInputException" in out and "skeleton/n_agents-3_seed-0/sparsity.parquet" in out



def test_report_captions_are_written_from_the_modules_that_make_the_outputs():
    """Each figure and table was described three times (module docstring, CAPTION, report .rst), and the .rst's
    'What it shows' had drifted from CAPTION. Every registered output's module now declares CAPTION, REPRODUCES and
    CLAIM, and its workflow/report/<kind>/<name>.rst is exactly what `python -m effmarl.analysis.report` writes
    from them (run it after changing one)."""
    from effmarl.analysis import report

    expected = report.captions()
    assert len(expected) == len(FIGURES) + len(TABLES)
    for path, text in expected.items():
        assert path.read_text() == text, f"{path.relative_to(ROOT)}: run python -m effmarl.analysis.report"
        for part in ("**What it shows.** ", "**Reproduces.** ", "**Claim it supports.** "):
            assert part in text and not text.split(part)[1].startswith("\n"), (path.name, part)
    assert {p.name for p in (ROOT / "workflow" / "report" / "figures").glob("*.rst")} == {f"{n}.rst" for n in FIGURES}
    assert {p.name for p in (ROOT / "workflow" / "report" / "tables").glob("*.rst")} == {f"{n}.rst" for n in TABLES}


@pytest.mark.slow
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
    assert {"table_mast_table1", "table_mast_claims", "bench_sparse"} <= rules["paper2_part"]
    # the default trains paper 2's seeds three to a process (runs_per_process): one rule per group
    assert any(r.startswith("batch_mast_table1_") for r in rules["paper2_part"])
    assert not {r for r in rules["paper2_part"] if "paper1" in r or r in ("train_offpolicy", "train_random")}


@pytest.mark.parametrize("profile", ["smoke.yaml", "extended.yaml"])
def test_slurm_workflow_profile_dry_runs(profile, tmp_path):
    """Through the SLURM profile: the smoke profile (CI's) and the extended one (a cluster's reason to exist), whose
    runs each get a SLURM request; with no default run of this commit beside it, the extended trains all of them."""
    proc = run_cli("snakemake", "-n", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
                   "--workflow-profile", str(ROOT / "workflow/profiles/slurm"),
                   "--configfile", str(ROOT / "configs" / profile))
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = [b for b in proc.stdout.split("\n\n") if re.search(r"^(local)?rule (train|batch)_", b.strip(), re.M)]
    assert jobs, proc.stdout[-3000:]
    # each training job asks SLURM for its time and memory (effmarl.resources), none runs on the submitting node
    assert all("runtime=" in b and "mem_mb=" in b and "localrule" not in b for b in jobs), jobs[0]


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
