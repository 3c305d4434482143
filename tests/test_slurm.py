"""The smoke workflow submitted through SLURM equals the same workflow run locally, up to timings.

The CI step .ci/slurm.sh brings up a single-node SLURM, runs the smoke profile through the executor plugin with
workflow/profiles/slurm and again locally, and runs this file with EFFMARL_SLURM_OUT naming the directory that
holds both (slurm/, local/) and the SLURM job list (slurm-jobs.txt). Without it those checks skip; the table
comparison they rely on is tested here on hand-made tables, so it runs everywhere.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT

from effmarl.groups import process_groups
from effmarl.reuse import copies
from effmarl.reuse import trained as trained_runs
from effmarl.studies import expand_all, load_profile

OUT = Path(os.environ["EFFMARL_SLURM_OUT"]) if os.environ.get("EFFMARL_SLURM_OUT") else None
slurm = pytest.mark.skipif(OUT is None, reason="no SLURM run: .ci/slurm.sh sets EFFMARL_SLURM_OUT")

# Columns that measure time (or are computed from measured times): they differ between any two runs.
TIMING = re.compile(r"(second|_s$|_ms|ms_|time|wall|elapsed|_at$|per_round|%|share|ratio|reduction|change|speed)",
                    re.IGNORECASE)
# Claims tables hold one row per paper claim; the measured value ("ours") of a claim about times, or about cache
# misses (cachegrind counts depend on the address-space layout, which differs between a SLURM job and a local
# process: the row carries its spread over repeats), or about the window k (chosen by sampling time), differs
# between any two runs.
TIMING_CLAIM = re.compile(r"(?:time|sampling phase|share|cache misses|window k)", re.IGNORECASE)
# Benchmark tables measure speed and memory in every column that is not a label: only their shape is compared.
BENCHMARK = re.compile(r"(^|/)bench(mark)?s?[/_]")


def _without_timing_claims(table: pd.DataFrame) -> pd.DataFrame:
    if "claim" not in table.columns or "ours" not in table.columns:
        return table
    table = table.copy()
    table.loc[table["claim"].astype(str).str.contains(TIMING_CLAIM), "ours"] = "(timing)"
    return table


def tables(root: Path) -> dict[str, pd.DataFrame]:
    """Every table a workflow wrote under root: study summaries (parquet) and figure tables (csv)."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.suffix == ".csv" or path.name.endswith(".summary.parquet"):
            found[str(path.relative_to(root))] = pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)
    return found


def table_differences(first: dict[str, pd.DataFrame], second: dict[str, pd.DataFrame]) -> list[str]:
    """One line per difference between two sets of tables, ignoring timing columns' values."""
    problems = [f"{name}: only in the first" for name in first.keys() - second.keys()]
    problems += [f"{name}: only in the second" for name in second.keys() - first.keys()]
    for name in sorted(first.keys() & second.keys()):
        a, b = _without_timing_claims(first[name]), _without_timing_claims(second[name])
        if list(a.columns) != list(b.columns) or len(a) != len(b):
            problems.append(f"{name}: columns or rows differ ({a.shape} vs {b.shape})")
            continue
        if BENCHMARK.search(name):
            continue
        for column in a.columns:
            if TIMING.search(str(column)):
                continue
            x, y = a[column].reset_index(drop=True), b[column].reset_index(drop=True)
            numeric = all(pd.api.types.is_numeric_dtype(v) and not pd.api.types.is_bool_dtype(v) for v in (x, y))
            same = ((x - y).abs() <= 1e-9 * (1 + y.abs())) if numeric else (x.astype(str) == y.astype(str))
            same |= x.isna() & y.isna()
            if not same.all():
                row = int((~same).idxmax())
                problems.append(f"{name}: column {column!r} differs, first at row {row} ({x[row]} vs {y[row]})")
    return problems


def test_equal_tables_differ_only_in_timings():
    a = {"t.csv": pd.DataFrame({"seed": [0, 1], "reward": [1.5, 2.0], "wall_s": [3.0, 4.0], "algo": ["x", "y"]})}
    b = {"t.csv": a["t.csv"].assign(wall_s=[9.0, 9.0])}
    assert table_differences(a, b) == []


def test_table_differences_are_named():
    a = {"t.csv": pd.DataFrame({"reward": [1.5, 2.0], "algo": ["x", "y"]}), "only.csv": pd.DataFrame()}
    b = {"t.csv": pd.DataFrame({"reward": [1.5, 2.5], "algo": ["x", "z"]})}
    assert table_differences(a, b) == [
        "only.csv: only in the first",
        "t.csv: column 'reward' differs, first at row 1 (2.0 vs 2.5)",
        "t.csv: column 'algo' differs, first at row 1 (y vs z)",
    ]
    c = {"t.csv": pd.DataFrame({"reward": [1.5]}), "only.csv": pd.DataFrame()}
    assert table_differences(a, c)[0].startswith("t.csv: columns or rows differ")


def test_claims_about_times_are_timings_and_other_claims_are_compared():
    claims = pd.DataFrame({"claim": ["sampling phase, N=3", "end-to-end training time",
                                     "D1 data-cache misses per sampled transition, neighbor vs uniform, N=3",
                                     "neighbor window k of the headline runs", "final episode reward"],
                           "ours": ["-78 %", "-10 %", "176.9 [175.7, 178.0] -> 186.0 [184.7, 187.3]",
                                    "k = 8 has the lowest mean sampling time", "-0.82"],
                           "source": [None, "x", "z", "w", "y"]})
    other = claims.assign(ours=["+0.3 %", "-12 %", "179.1 [178.4, 179.8] -> 187.2 [187.0, 187.5]",
                                "k = 1 has the lowest mean sampling time", "-0.82"])
    assert table_differences({"claims.csv": claims}, {"claims.csv": other}) == []
    worse = other.assign(ours=list(other["ours"][:-1]) + ["+1.5"])
    assert table_differences({"claims.csv": claims}, {"claims.csv": worse}) == [
        "claims.csv: column 'ours' differs, first at row 4 (-0.82 vs +1.5)"]


def test_benchmark_tables_are_compared_by_shape_only():
    a = {"figures/bench/bench_qmix.csv": pd.DataFrame({"lockstep_cost": [1.9], "peak_rss_mib": [395.6]})}
    assert table_differences(a, {"figures/bench/bench_qmix.csv": a["figures/bench/bench_qmix.csv"] * 2}) == []
    assert table_differences(a, {"figures/bench/bench_qmix.csv": pd.DataFrame({"lockstep_cost": [1.9, 2.0],
                                                                               "peak_rss_mib": [1.0, 2.0]})})
    assert not BENCHMARK.search("figures/mast/tables/methods.csv")


def test_timing_columns_are_recognised():
    timing = ["seconds", "wall_s", "sampling_ms_per_round", "change_vs_reference_uniform_%", "made_at", "share"]
    kept = ["reward", "test_win_rate", "env.n_agents", "episode", "loss", "algo", "sparsity"]
    assert all(TIMING.search(c) for c in timing) and not any(TIMING.search(c) for c in kept)


# ---- checks on a SLURM run (the CI step) ---------------------------------------------------------------------

def _smoke() -> dict:
    return load_profile(ROOT / "configs" / "smoke.yaml")


@slurm
def test_every_training_run_was_a_completed_slurm_job():
    jobs = (OUT / "slurm-jobs.txt").read_text().split("\n")
    comments = [line.split()[1] for line in jobs if line.strip() and line.split()[2] == "COMPLETED"]
    profile = _smoke()
    # runs copied from an earlier run that trains the same thing (effmarl.reuse) are local copies, not jobs
    runs = trained_runs(expand_all(profile), copies(profile, expand_all(profile), {}))
    grouped = process_groups(profile, runs)
    in_lockstep = {(study, rid) for study, ids in grouped.values() for rid in ids}
    # the executor plugin comments each job with its rule and wildcards: rule_train_<kind>_wildcards_<study>_<id>
    # for a run of its own, rule_<group name> for seeds trained in lockstep
    alone = {(study, rid) for study, ids in runs.items() for rid in ids if (study, rid) not in in_lockstep}
    trained = {c.split("_wildcards_", 1)[1] for c in comments if c.startswith("rule_train_") and "_wildcards_" in c}
    assert trained == {f"{study}_{rid}" for study, rid in alone}
    assert {f"rule_{name}" for name in grouped} <= set(comments)
    local = {"rule_aggregate", "rule_figure", "rule_table", "rule_figure_index", "rule_run_config"}
    assert not any(c.split("_wildcards")[0] in local for c in comments), "a local rule was submitted as a job"
    assert not any(c.startswith("rule_reuse_") for c in comments), "a copy was submitted as a job"


@slurm
def test_slurm_and_local_runs_write_the_same_tables_up_to_timings():
    results = _smoke()["results_dir"]
    first, second = tables(OUT / "slurm" / results), tables(OUT / "local" / results)
    assert len(first) >= 5, sorted(first)
    assert table_differences(first, second) == []
