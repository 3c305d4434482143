"""`effmarl costs`: a finished workflow run's cost summed from its jobs' Snakemake benchmark files."""

from __future__ import annotations

import json

import pandas as pd

from effmarl.analysis import costs
from effmarl.cli import main

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(path, s, rss, cpu):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{s}\t0:00:{int(s):02d}\t{rss}\t0\t0\t0\t0\t0\t0\t{cpu}\n")


def _run(tmp_path):
    results, figures = tmp_path / "results", tmp_path / "figures"
    _bench(results / "paper1" / "a" / "train.benchmark.tsv", 10.0, 500, 9.0)
    _bench(results / "paper1" / "b" / "train.benchmark.tsv", 30.0, 800, 29.0)
    _bench(results / "mast_ref" / "benchmarks" / "batch_mast_ref_3.tsv", 20.0, 1500, 19.0)
    _bench(results / "paper1" / "benchmarks" / "metrics.summary.tsv", 1.0, 200, 1.0)
    _bench(results / "paper1_micro" / "benchmarks" / "counters.tsv", 40.0, 900, 70.0)
    _bench(figures / "paper1" / "benchmarks" / "claims.table.tsv", 2.0, 300, 2.0)
    _bench(figures / "bench" / "logs" / "bench_sparse.benchmark.tsv", 5.0, 400, 5.0)
    (results / "paper1" / "a" / "notes.tsv").write_text("a\tb\n1\t2\n")  # not a benchmark: ignored
    return results, figures


def test_jobs_are_summed_by_kind_by_hand(tmp_path):
    results, figures = _run(tmp_path)
    table = costs.summary(costs.collect(results, figures)).set_index("kind")
    assert table.loc["training: paper1", "jobs"] == 2 and table.loc["training: paper1", "job_s"] == 40.0
    assert table.loc["training: paper1", "longest_s"] == 30.0 and table.loc["training: paper1", "peak_rss_mb"] == 800
    assert table.loc["training: mast_ref", "job_s"] == 20.0  # several runs in one process
    assert table.loc["paper 1 micro: counters", "job_s"] == 40.0
    assert table.loc["study tables (aggregate)", "job_s"] == 1.0 and table.loc["tables", "job_s"] == 2.0
    assert table.loc["benchmark: bench_sparse", "job_s"] == 5.0
    assert table.loc["all jobs", "jobs"] == 7 and table.loc["all jobs", "job_s"] == 108.0
    assert table.loc["all jobs", "peak_rss_mb"] == 1500
    assert abs(table.drop("all jobs")["share_pct"].sum() - 100.0) < 1e-9


def test_command_writes_tables_with_the_wall_time_and_refuses_a_directory_without_runs(tmp_path, capsys):
    results, figures = _run(tmp_path)
    out = tmp_path / "costs"
    assert main(["costs", "--results", str(results), "--figures", str(figures), "--wall-s", "90",
                 "--out", str(out)]) == 0
    md = out.with_suffix(".md").read_text()
    assert "Wall time of the whole run: 1.5 min (90 s)" in md and "1.8 job-minutes" in md
    assert len(pd.read_csv(out.with_suffix(".csv"))) == 7
    assert len(json.loads(out.with_suffix(".provenance.json").read_text())["inputs"]) == 7
    empty = tmp_path / "empty"
    empty.mkdir()
    capsys.readouterr()
    assert main(["costs", "--results", str(empty), "--figures", str(tmp_path / "nope"), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"effmarl: effmarl costs: --figures {tmp_path / 'nope'}: not a directory"


def test_the_figure_index_names_and_captions_a_costs_table(tmp_path):
    """The published index listed a costs table as "## costs `mast/costs_figures` (None)" with an empty caption:
    its sidecar had no name or caption. It now says what the table is and carries the run's note."""
    from effmarl.analysis.index import write_index

    results, figures = _run(tmp_path)
    out = tmp_path / "pub" / "mast" / "costs"
    out.parent.mkdir(parents=True)
    assert main(["costs", "--results", str(results), "--figures", str(figures), "--note", "default, 2 cores",
                 "--out", str(out)]) == 0
    index = write_index([str(out.with_suffix(".csv")), str(out.with_suffix(".md"))], tmp_path / "pub" / "index")
    md = index[0].read_text()
    heading = next(line for line in md.splitlines() if line.startswith("## "))
    assert heading == "## costs `mast/costs` (costs)"
    caption = md.split(heading)[1].strip().splitlines()[0]
    assert caption.startswith("What the workflow run cost") and caption.endswith("default, 2 cores")
