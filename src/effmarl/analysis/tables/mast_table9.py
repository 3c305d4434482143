"""Paper 2, Table 9 (ablation): MAST-QMIX on SMAX 3m at one sparsity, varying the dual-buffer batch split b1:b2,
given as b1/b2 (paper: 3:1). One row per value of `cfg.mast.dual_buffer.batch_ratio` (study `mast_abl_b1b2`): the
win-rate statistic with its interval and seeds; `default` marks the configuration's default value."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional, read_tables
from effmarl.analysis.metrics import LAST_K, STATISTIC, VS_DEFAULT, ablation, dense_of_cells, judge

KEY = "cfg.mast.dual_buffer.batch_ratio"
CAPTION = ('Paper 2, Table 9 on SMAX 3m (MAST-QMIX, one sparsity): win rate against the dual-buffer batch split '
           'b1:b2, given as b1/b2 (paper: 3:1). Win rate: ' + STATISTIC
           + "; std over seeds; `seeds` = runs per row; `vs_default`: " + VS_DEFAULT + ".")
REPRODUCES = "Paper 2, Table 9."
CLAIM = "A 3:1 split between the large and the small buffer works best."

OUTPUT = {"group": "mast", "stem": "table9_b1_b2"}
INPUTS = {"metrics": {"study": "mast_abl_b1b2", "doc": "metrics.summary.parquet of mast_abl_b1b2"},
          "dense": {"study": "mast_dense", "optional": True,
                    "doc": "metrics.summary.parquet of mast_dense (its plateau in the same cell: the budget's check)"}}


def make(inputs: list[str], k: int = LAST_K) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, "table mast_table9")
    metrics, dense = read_tables(named["metrics"]), read_optional(named["dense"])
    table = ablation(metrics, [KEY], k)
    table = table.rename(columns={KEY: "b1:b2"})
    table = table.round({"mean": 3, "mean_lo": 3, "mean_hi": 3, "std": 3})
    return mark_evidence(table, judge(metrics, ["cfg.algo", "cfg.env.map", KEY], dense=dense_of_cells(dense, metrics)))
