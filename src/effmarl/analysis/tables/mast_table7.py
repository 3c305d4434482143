"""Paper 2, Table 7 (ablation): MAST-QMIX on SMAX 3m at one sparsity, varying the λ of the λ-returns after the burn-
in (paper's best: 0.6). One row per value of `cfg.mast.td_lambda.lambda` (study `mast_abl_lambda`): the win-rate
statistic with its interval and seeds; `default` marks the configuration's default value."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional, read_tables
from effmarl.analysis.metrics import LAST_K, STATISTIC, VS_DEFAULT, ablation, dense_of_cells, judge

KEY = "cfg.mast.td_lambda.lambda"
CAPTION = ('Paper 2, Table 7 on SMAX 3m (MAST-QMIX, one sparsity): win rate against the λ of the λ-returns after'
           " the burn-in (paper's best: 0.6). Win rate: " + STATISTIC
           + "; std over seeds; `seeds` = runs per row; `vs_default`: " + VS_DEFAULT + ".")
REPRODUCES = "Paper 2, Table 7."
CLAIM = "λ = 0.6 is the paper's best."

OUTPUT = {"group": "mast", "stem": "table7_lambda"}
INPUTS = {"metrics": {"study": "mast_abl_lambda", "doc": "metrics.summary.parquet of mast_abl_lambda"},
          "dense": {"study": "mast_dense", "optional": True,
                    "doc": "metrics.summary.parquet of mast_dense (its plateau in the same cell: the budget's check)"}}


def make(inputs: list[str], k: int = LAST_K) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, "table mast_table7")
    metrics, dense = read_tables(named["metrics"]), read_optional(named["dense"])
    table = ablation(metrics, [KEY], k)
    table = table.rename(columns={KEY: "λ"})
    table = table.round({"mean": 3, "mean_lo": 3, "mean_hi": 3, "std": 3})
    return mark_evidence(table, judge(metrics, ["cfg.algo", "cfg.env.map", KEY], dense=dense_of_cells(dense, metrics)))
