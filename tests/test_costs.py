"""`effmarl costs`: a finished workflow run's cost summed from its jobs' Snakemake benchmark files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT

from effmarl import resources
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


def test_a_training_kind_counts_its_finished_runs_not_its_jobs(tmp_path):
    """Three seeds in one process are one job and three runs; a run that has not written provenance.json is not
    counted; a kind without finished run directories counts one run per job."""
    results, figures = _run(tmp_path)
    for rid in ("seed-0", "seed-1", "seed-2"):
        (results / "mast_ref" / rid).mkdir(parents=True)
        (results / "mast_ref" / rid / "provenance.json").write_text("{}")
    (results / "mast_ref" / "seed-3").mkdir()  # started, not finished
    table = costs.summary(costs.collect(results, figures), costs.finished_runs(results)).set_index("kind")
    assert table.loc["training: mast_ref", "jobs"] == 1 and table.loc["training: mast_ref", "runs"] == 3
    assert table.loc["training: paper1", "runs"] == 2  # no provenance files here: one run per job
    assert table.loc["tables", "runs"] == 0 and table.loc["all jobs", "runs"] == 5


def test_a_copied_run_is_counted_apart_from_the_runs_its_study_trained(tmp_path):
    """A run copied from another that trained the same thing (effmarl.reuse) cost a copy, not training: its study's
    trained runs leave it out (the per-run price would fall), the copies have a kind of their own."""
    results, figures = _run(tmp_path)
    for rid, prov in (("seed-0", {}), ("seed-1", {"reused_from": {"run": "results/default/mast_ref/seed-1"}})):
        (results / "mast_ref" / rid).mkdir(parents=True)
        (results / "mast_ref" / rid / "provenance.json").write_text(json.dumps(prov))
    _bench(results / "mast_ref" / "seed-1" / "reuse.benchmark.tsv", 0.5, 100, 0.4)
    table = costs.summary(costs.collect(results, figures), costs.finished_runs(results)).set_index("kind")
    assert table.loc["training: mast_ref", "runs"] == 1
    assert table.loc[costs.COPIED, "runs"] == 1 and table.loc[costs.COPIED, "job_s"] == 0.5


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


# ---- `effmarl costs --estimate PROFILE`: the envelope before a run -------------------------------------------------

def test_a_list_schedule_starts_the_longest_path_first_and_respects_dependencies():
    from effmarl.analysis.schedule import Job, graham_bound, makespan

    jobs = [Job("a", "t", 10.0), Job("b", "t", 6.0), Job("c", "t", 4.0), Job("d", "t", 3.0, deps={"b"})]
    # 2 cores, longest remaining path first: a (10) and b (6 + d's 3) at 0; at 6 c (4) goes before d (3); d waits for
    # the next free core, at 10: 13
    assert makespan(jobs, 2) == pytest.approx(13.0)
    assert makespan(jobs, 4) == pytest.approx(10.0)       # a alone is the longest chain (b + d = 9)
    # Graham: work / m + (1 - 1/m) x the longest chain = 23 / 2 + 0.5 x 10
    assert graham_bound(jobs, 2) == pytest.approx(16.5)
    two = [Job("c2", "counters", 20.0, cores=2), Job("x", "t", 5.0)]  # a 2-core job keeps both cores 10 s
    assert makespan(two, 2) == pytest.approx(15.0)


def test_a_timing_job_holds_every_core_so_nothing_runs_beside_it():
    """A timing job (`alone`) computes on one core but holds all of them: on 4 cores two 10-s timing jobs and two
    6-s shared jobs take 10 + 10 + 6 (the shared pair side by side), where four ordinary jobs would take 10."""
    from effmarl.analysis.schedule import Job, graham_bound, makespan

    jobs = [Job("t1", "timing", 10.0, alone=True), Job("t2", "timing", 10.0, alone=True),
            Job("s1", "t", 6.0), Job("s2", "t", 6.0)]
    assert makespan(jobs, 4) == pytest.approx(26.0)
    assert makespan([Job(j.name, j.kind, j.seconds) for j in jobs], 4) == pytest.approx(10.0)
    # the shared jobs' Graham bound (12 / 4 + 0.75 x 10, the chain through every job) plus the timing jobs in series
    assert graham_bound(jobs, 4) == pytest.approx(12 / 4 + 0.75 * 10 + 20)


def test_the_dry_run_job_stats_are_read_by_rule():
    from effmarl.analysis.envelope import analysis_kind, dry_run_counts

    text = ("Building DAG of jobs...\nJob stats:\njob                count\n-----------------  -------\n"
            "aggregate              12\nfigure_mast_fig8_x      1\ntrain_offpolicy        62\n"
            "total                 75\n\n"
            "Job stats:\njob  count\n---  ---\naggregate  99\n")
    assert dry_run_counts(text) == {"aggregate": 12, "figure_mast_fig8_x": 1, "train_offpolicy": 62}
    assert [analysis_kind(r) for r in ("aggregate", "figure_index", "figure_x", "table_y", "train_z")] == [
        "aggregate", "figure_index", "figure", "table", None]


def test_a_dry_runs_training_jobs_count_interleaved_pairs_and_seed_groups_beside_single_runs():
    """The default's dry run schedules 16 pairs_paper1_<n> jobs; the estimate counted them as unregistered."""
    from effmarl.analysis.envelope import dry_run_training_jobs

    counts = {"train_offpolicy": 26, "train_offpolicy_alone": 10, "train_random": 10, "aggregate": 9,
              "batch_mast_dense_16": 1, "lockstep_mast_sweep_3": 1, "figure_paper1_end_to_end": 1,
              **{f"pairs_paper1_{i}": 1 for i in range(16)}}
    assert dry_run_training_jobs(counts) == 26 + 10 + 10 + 1 + 1 + 16


def test_qmix_runs_are_priced_from_the_published_table1_per_step_cost(tmp_path):
    """Per env step: (published mean job seconds - start-up - its evaluations) / 250 000, per kind of method; a run
    of the same settings at another budget costs start-up + per-step x budget + its evaluations; runs in one process
    pay the start-up once."""
    from effmarl.analysis import envelope

    (tmp_path / "mast").mkdir()
    pd.DataFrame({"kind": ["training: mast_dense", "training: mast_sweep", "training: mast_table1"],
                  "jobs": [2, 1, 5], "job_s": [2 * 540.0, 520.0, 5 * 490.0], "longest_s": [0, 0, 0]}).to_csv(
        tmp_path / "mast" / "costs.csv", index=False)
    kinds = envelope.published_kinds(tmp_path)
    evaluations, episodes = envelope.PUBLISHED_QMIX_EVALS
    eval_s = evaluations * episodes * resources.QMIX_EVAL_EPISODE_S
    per_step = envelope.qmix_per_step(kinds)
    assert per_step["dense"] == pytest.approx((540 - 40 - eval_s) / 250_000)
    assert per_step["baseline"] == pytest.approx((490 - 40 - eval_s) / 250_000)
    cfg = {"algo": "qmix", "env": {"backend": "smax", "map": "3m"}, "budget": {"env_steps": 100_000},
           "sparse": {"method": "mast"}, "qmix": {"num_envs": 8, "updates_per_round": 8, "eval_every": 500,
                                                   "eval_episodes": 32, "shared_params": False}}
    # 201 evaluations of 32 episodes at 1.2 ms each on 3m
    assert envelope.qmix_seconds(cfg, per_step) == pytest.approx(40 + per_step["mast"] * 100_000 + 201 * 32 * 0.0012)
    # OW-QMIX: the resources model's work ratio scales the per-step cost, by hand from the measured table: per env
    # step acting + (8 updates per 8 episodes of episode_len steps) x QMIX's update x OW-QMIX's per-agent factor
    # (its own per-agent point against QMIX's shared update), over the same with QMIX's per-agent factor (1)
    row = pd.read_csv(ROOT / "benchmarks" / "results" / "step_cost.csv").set_index("point")
    act, update, length = row.loc["08_qmix_3m", ["act_s", "update_s", "episode_len"]]
    factor = max(1.0, row.loc["18_ow_qmix_3m_dense_peragent", "update_s"] / update)
    work = act + update / length * factor, act + update / length * 1.0
    ow = envelope.qmix_seconds({**cfg, "algo": "ow_qmix"}, per_step)
    assert (ow - 40 - 201 * 32 * 0.0012) / (per_step["mast"] * 100_000) == pytest.approx(work[0] / work[1])


def test_runs_sharing_a_process_pay_one_start_up_in_the_per_step_price(tmp_path):
    """A published job of 3 seeds in lockstep (jobs 1, runs 3): (job seconds - one start-up) / 3 runs, less a run's
    evaluations, over its env steps."""
    from effmarl.analysis import envelope

    (tmp_path / "mast").mkdir()
    pd.DataFrame({"kind": ["training: mast_dense", "training: mast_sweep", "training: mast_table1"],
                  "jobs": [1, 1, 5], "runs": [3, 3, 15], "job_s": [1540.0, 1300.0, 5 * 1240.0],
                  "longest_s": [0, 0, 0]}).to_csv(tmp_path / "mast" / "costs.csv", index=False)
    evaluations, episodes = envelope.PUBLISHED_QMIX_EVALS
    eval_s = evaluations * episodes * resources.QMIX_EVAL_EPISODE_S
    per_step = envelope.qmix_per_step(envelope.published_kinds(tmp_path))
    assert per_step["dense"] == pytest.approx(((1540 - 40) / 3 - eval_s) / envelope.PUBLISHED_QMIX_STEPS)
    assert per_step["baseline"] == pytest.approx(((5 * 1240 - 5 * 40) / 15 - eval_s) / envelope.PUBLISHED_QMIX_STEPS)


def test_the_default_profile_is_estimated_within_its_envelope():
    """The default profile's envelope (issue 44, configs/default.yaml's header), as estimated (docs/costs.md): <= 4 h
    on 2 cores for the whole default profile, and on 16 cores <= 45 min for the jobs that share the machine: the
    timing jobs run alone (issue 34), one after another, so on 16 cores their wall time adds to it whatever the core
    count (longest path first, without a dry run; figures and tables: minutes)."""
    from effmarl.analysis.envelope import estimate

    root = Path(__file__).resolve().parents[1]
    table, summary = estimate(str(root / "configs" / "default.yaml"), str(root / "published" / "default"), None,
                              [2, 16])
    assert summary["makespan_s"][2] <= 4 * 3600
    assert summary["makespan_s"][16] - summary["alone_s"] <= 2700
    # paper 1's part alone (`snakemake paper1_part`, issue 47): <= 65 min on 2 cores
    assert summary["paper1_makespan_s"][2] <= 65 * 60, summary["paper1_makespan_s"][2] / 60
    kinds = set(table["kind"])
    assert {"training: mast_table1", "training: paper1", "paper1_counters"} <= kinds


def test_the_extended_profile_is_estimated_within_its_envelope_counting_the_default_s_runs_as_copied():
    """The extended profile's envelope (issue 45, configs/extended.yaml's header): <= 10 h on 2 cores and <= 1.5 h on
    16, the runs that train what the default's train copied (the default run first), OW-QMIX's and RES's Table 1 rows
    at 5 seeds of each of the 7 methods and Tables 6-9 at 3 seeds among what it trains."""
    from effmarl.analysis.envelope import estimate

    root = Path(__file__).resolve().parents[1]
    table, summary = estimate(str(root / "configs" / "extended.yaml"), str(root / "published" / "default"), None,
                              [2, 16])
    assert summary["makespan_s"][2] <= 10 * 3600, summary["makespan_s"][2] / 3600
    assert summary["makespan_s"][16] <= 1.5 * 3600, summary["makespan_s"][16] / 3600
    assert summary["reused_runs"] == summary["copied_runs"] > 0
    table1 = table.set_index("kind").loc[["training: mast_dense", "training: mast_sweep", "training: mast_table1"]]
    assert table1["runs"].sum() == 2 * 7 * 5
    # Tables 6-9 at 3 seeds: every value of each knob but MAST's default (Table 1's MAST runs, copied)
    tables = table.set_index("kind").loc[[f"training: mast_abl_{k}" for k in ("t0", "lambda", "smm", "b1b2")]]
    assert tables["runs"].sum() == 3 * (2 + 2 + 3 + 2)
    assert not any(kind.startswith(("paper1", "bench")) for kind in table["kind"])
