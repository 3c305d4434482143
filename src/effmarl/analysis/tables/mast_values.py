"""Paper 2's mechanism on Table 1's runs: each method's value estimate against the discounted return its replayed
steps obtained (metrics.values: Q, G and bias = Q - G over the final 10 % of training, mean over seeds, the bias's
95 % t-interval), beside its win rate. Where the baselines fall below dense and MAST does not, the paper's account
predicts the baselines' bias further from MAST's and dense's; this table measures it."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional, read_tables
from effmarl.analysis.metrics import LAST_K, interval_text, judge_each_cell, table1_cells
from effmarl.analysis.metrics.values import value_cells
from effmarl.analysis.style import algo_name, map_name, method_name

CAPTION = ("Paper 2 on SMAX, its mechanism measured on Table 1's runs: per method, Q = the mean value estimate of the "
           "taken actions (the mixer's Q_tot) and G = the mean discounted return those replayed steps went on to "
           "obtain, over the learner updates of the final 10 % of training, means over seeds; bias = Q - G with its "
           "95 % Student-t interval over seeds (> 0: over-estimation); `verdict` follows the interval. G is the "
           "replayed behaviour's return (epsilon-greedy, older policies), so compare methods, not a bias with 0. "
           "`win rate` as Table 1 (mean over seeds).")
REPRODUCES = "Paper 2, the value-estimation account of sections 3-4 (its Fig. 5 shows value estimates)."
CLAIM = ("Sparse networks' value targets go wrong (over-estimation) and MAST's components repair them: the baselines' "
         "bias differs from dense's where MAST's does not.")

OUTPUT = {"group": "mast", "stem": "values"}
INPUTS = {"dense": {"study": "mast_dense", "doc": "metrics.summary.parquet of mast_dense"},
          "sweep": {"study": "mast_sweep",
                    "doc": "metrics.summary.parquet of mast_sweep (MAST rows: its runs at Table 1's sparsity)"},
          "baselines": {"study": "mast_table1", "doc": "metrics.summary.parquet of mast_table1 (the baselines at "
                                                       "Table 1's sparsity)"},
          "selection": {"output": "mast/tables/selection.csv", "doc": "the CSV of table mast_selection"}}


def make(inputs: list[str], k: int = LAST_K) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, "table mast_values")
    dense, sweep = read_tables(named["dense"]), read_tables(named["sweep"])
    baselines = read_optional(named["baselines"])
    selection = pd.read_csv(named["selection"][0])
    values = value_cells(dense, sweep, baselines, selection)
    cells = table1_cells(dense, sweep, baselines, None, selection, k=k)
    t = values.merge(cells[["algo", "map", "method", "mean"]], on=["algo", "map", "method"], how="left")
    out = pd.DataFrame({
        "algorithm": t["algo"].map(algo_name), "map": t["map"].map(map_name), "method": t["method"].map(method_name),
        "sparsity": t["sparsity"], "seeds": t["seeds"], "win rate": t["mean"], "Q (value estimate)": t["q_taken"],
        "G (return obtained)": t["return_obtained"],
        "bias Q - G [95 % CI]": [f"{b:+.3f} {interval_text(lo, hi, 3, f'{n} seed')}" if pd.notna(b) else ""
                                 for b, lo, hi, n in zip(t["bias"], t["bias_lo"], t["bias_hi"], t["bias_seeds"],
                                                         strict=True)],
        "verdict": t["verdict"], "bias": t["bias"], "bias_lo": t["bias_lo"], "bias_hi": t["bias_hi"],
        "bias_seeds": t["bias_seeds"]})
    verdict = judge_each_cell(cells, dense, dense, sweep, baselines)  # each cell by its own dense
    return mark_evidence(out.round(4), verdict, verdict.rows(t["algo"], t["map"]))
