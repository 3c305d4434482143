"""Paper 2, Table 10 (ablation): MAST-QMIX on SMAX 3m at one sparsity, varying the mask update interval Δm in
gradient updates (paper: 200). One row per value of `cfg.sparse.delta_m` (study `mast_abl_dm`): the win-rate
statistic with its interval and seeds; `default` marks the configuration's default value."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional, read_tables
from effmarl.analysis.metrics import LAST_K, STATISTIC, VS_DEFAULT, ablation, dense_of_cells, judge, used_delta_m

KEY = "cfg.sparse.delta_m"
CAPTION = ('Paper 2, Table 10 on SMAX 3m (MAST-QMIX, one sparsity): win rate against the mask update interval Δm'
           ' in gradient updates (paper: 200): `Δm` as configured, `Δm used` as the runs used it (scaled by '
           'budget / 2 M env steps when the schedules scale with the budget). Win rate: ' + STATISTIC
           + "; std over seeds; `seeds` = runs per row; `vs_default`: " + VS_DEFAULT + ".")
REPRODUCES = "Paper 2, Table 10."
CLAIM = "Δm = 200 updates is a good topology-update interval."

OUTPUT = {"group": "mast", "stem": "table10_delta_m"}
INPUTS = {"metrics": {"study": "mast_abl_dm", "doc": "metrics.summary.parquet of mast_abl_dm"},
          "dense": {"study": "mast_dense", "optional": True,
                    "doc": "metrics.summary.parquet of mast_dense (its plateau in the same cell: the budget's check)"}}


def make(inputs: list[str], k: int = LAST_K) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, "table mast_table10")
    metrics, dense = read_tables(named["metrics"]), read_optional(named["dense"])
    table = ablation(metrics, [KEY], k)
    table.insert(table.columns.get_loc(KEY) + 1, "Δm used", table[KEY].map(used_delta_m(metrics)))
    table = table.rename(columns={KEY: "Δm"})
    table = table.round({"mean": 3, "mean_lo": 3, "mean_hi": 3, "std": 3})
    return mark_evidence(table, judge(metrics, ["cfg.algo", "cfg.env.map", KEY], dense=dense_of_cells(dense, metrics)))
