"""Paper 2, Table 6 (ablation): MAST-QMIX on SMAX 3m at one sparsity, varying the burn-in T0 of hybrid TD(λ) as a
fraction of the budget (paper: T0 = 0.75 M of 2 M steps). One row per value of `cfg.mast.td_lambda.burn_in_fraction`
(study `mast_abl_t0`): the win-rate statistic with its interval and seeds; `default` marks the configuration's
default value."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional, read_tables
from effmarl.analysis.metrics import LAST_K, STATISTIC, VS_DEFAULT, ablation, dense_of_cells, judge

KEY = "cfg.mast.td_lambda.burn_in_fraction"
CAPTION = ('Paper 2, Table 6 on SMAX 3m (MAST-QMIX, one sparsity): win rate against the burn-in T0 of hybrid '
           'TD(λ) as a fraction of the budget (paper: T0 = 0.75 M of 2 M steps). Win rate: ' + STATISTIC + '; std '
           'over seeds; `seeds` = runs per row; `vs_default`: ' + VS_DEFAULT + '.')
REPRODUCES = "Paper 2, Table 6."
CLAIM = "One-step targets first, λ-returns after a burn-in (paper: T0 = 0.75 M of 2 M steps) work best."

OUTPUT = {"group": "mast", "stem": "table6_burn_in"}
INPUTS = {"metrics": {"study": "mast_abl_t0", "doc": "metrics.summary.parquet of mast_abl_t0"},
          "dense": {"study": "mast_dense", "optional": True,
                    "doc": "metrics.summary.parquet of mast_dense (its plateau in the same cell: the budget's check)"}}


def make(inputs: list[str], k: int = LAST_K) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, "table mast_table6")
    metrics, dense = read_tables(named["metrics"]), read_optional(named["dense"])
    table = ablation(metrics, [KEY], k)
    table = table.rename(columns={KEY: "T0 / budget"})
    table = table.round({"mean": 3, "mean_lo": 3, "mean_hi": 3, "std": 3})
    return mark_evidence(table, judge(metrics, ["cfg.algo", "cfg.env.map", KEY], dense=dense_of_cells(dense, metrics)))
