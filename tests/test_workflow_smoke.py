"""The workflow end to end: the smoke profile run once per test session (conftest's smoke_workflow) and read by
every test here: outputs with provenance, tidy study tables, nothing left to do on a re-run, every file declared,
the report. Apart from test_workflow.py so the dry runs and lints there run beside the workflow, not after it."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from html import unescape
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ROOT, run_cli


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
