"""Paper 2, Table 5: Table 1's cells with standard deviations over seeds - per algorithm x map x method at the cell's
sparsity (as Table 1: the one its baselines ran at), the win rate mean ± std over seeds and the normalised win rate
(mean / dense mean) ± std / dense mean."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional, read_tables
from effmarl.analysis.metrics import LAST_K, STATISTIC, interval_text, judge_each_cell, table1_cells
from effmarl.analysis.style import algo_name, map_name, method_name

CAPTION = ("Paper 2, Table 5 on SMAX: Table 1's cells with standard deviations. Win rate: " + STATISTIC + "; here "
           "mean ± std (ddof 1) over seeds, std empty for 1 seed; "
           "normalised = mean / dense mean, ± std / dense mean; `normalised [95 % CI]` = mean / dense mean with "
           "Fieller's 95 % interval (dense: the reference) and `p_improvement` = the probability that a run of the "
           "method beats a dense run (as Table 1); `seeds` = runs per cell.")
REPRODUCES = "Paper 2, Table 5."
CLAIM = "The spread over seeds behind Table 1's comparison."

OUTPUT = {"group": "mast", "stem": "table5"}
INPUTS = {"dense": {"study": "mast_dense", "doc": "metrics.summary.parquet of mast_dense"},
          "sweep": {"study": "mast_sweep",
                    "doc": "metrics.summary.parquet of mast_sweep (MAST rows: its runs at the chosen sparsity)"},
          "baselines": {"study": "mast_table1", "doc": "metrics.summary.parquet of mast_table1 (tiny, static, set, "
                                                       "rigl, rlx2 at the chosen sparsity)"},
          "selection": {"output": "mast/tables/selection.csv", "doc": "the CSV of table mast_selection"}}


def _pm(mean, std) -> str:
    if pd.isna(mean):
        return ""
    return f"{mean:.3f} ± {std:.3f}" if pd.notna(std) else f"{mean:.3f} (1 seed, no std)"


def _ratio(row) -> str:
    """'0.975 [0.912, 1.043]' of a method's mean / dense mean; dense is the reference, not a cell without an
    interval."""
    if row["method"] == "dense":
        return "1.000 (the reference)" if pd.notna(row["normalised"]) else ""
    if pd.isna(row["normalised"]):
        return ""
    why = row["normalised_why"] if isinstance(row["normalised_why"], str) and row["normalised_why"] else "1 seed"
    return f"{row['normalised']:.3f} {interval_text(row['normalised_lo'], row['normalised_hi'], 3, why)}"


def make(inputs: list[str], k: int = LAST_K) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, "table mast_table5")
    dense, sweep = read_tables(named["dense"]), read_tables(named["sweep"])
    baselines = read_optional(named["baselines"])
    t = table1_cells(dense, sweep, baselines, None, pd.read_csv(named["selection"][0]), k=k)
    out = pd.DataFrame({"algorithm": t["algo"].map(algo_name), "map": t["map"].map(map_name),
                        "method": t["method"].map(method_name), "sparsity": t["sparsity"],
                        "win rate": [_pm(m, s) for m, s in zip(t["mean"], t["std"], strict=True)],
                        "normalised": [_pm(m, s) for m, s in zip(t["normalised"], t["normalised_std"],
                                                                 strict=True)],
                        "normalised [95 % CI]": [_ratio(r) for _, r in t.iterrows()],
                        "p_improvement": t["p_improvement"],
                        "win_rate_mean": t["mean"], "win_rate_std": t["std"], "normalised_mean": t["normalised"],
                        "normalised_std": t["normalised_std"], "seeds": t["seeds"]})
    verdict = judge_each_cell(t, dense, dense, sweep, baselines)  # each cell by its own dense
    return mark_evidence(out.round(4), verdict, verdict.rows(t["algo"], t["map"]))
