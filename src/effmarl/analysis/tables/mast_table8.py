"""Paper 2, Table 8 (ablation): Soft Mellowmax's (α, ω) grid for MAST-QMIX on SMAX 3m at one sparsity (study
`mast_abl_smm`), as the paper's grid: one row per α, one column per ω, each cell "mean [95 % interval] (n=seeds)"."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional, read_tables
from effmarl.analysis.metrics import LAST_K, STATISTIC, VS_DEFAULT, ablation, dense_of_cells, judge

ALPHA, OMEGA = "cfg.mellowmax.alpha", "cfg.mellowmax.omega"
CAPTION = ("Paper 2, Table 8 on SMAX 3m (MAST-QMIX, one sparsity): win rate over Soft Mellowmax's α (rows) and ω "
           "(columns). Cell: " + STATISTIC + ", and n = seeds; * marks the default (α = 1, ω = 10); then " + VS_DEFAULT
           + ".")
REPRODUCES = "Paper 2, Table 8."
CLAIM = "Soft Mellowmax is robust over a range of (α, ω)."

OUTPUT = {"group": "mast", "stem": "table8_soft_mellowmax"}
INPUTS = {"metrics": {"study": "mast_abl_smm", "doc": "metrics.summary.parquet of mast_abl_smm"},
          "dense": {"study": "mast_dense", "optional": True,
                    "doc": "metrics.summary.parquet of mast_dense (its plateau in the same cell: the budget's check)"}}


def _cell(row) -> str:
    mark = "*" if row["default"] else ""
    interval = "" if pd.isna(row["mean_lo"]) else f" [{row['mean_lo']:.2f}, {row['mean_hi']:.2f}]"
    versus = "" if row["default"] else f"; vs default {row['vs_default']}"
    return f"{row['mean']:.3f}{interval} (n={int(row['seeds'])}){mark}{versus}"


def make(inputs: list[str], k: int = LAST_K) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, "table mast_table8")
    metrics, dense = read_tables(named["metrics"]), read_optional(named["dense"])
    table = ablation(metrics, [ALPHA, OMEGA], k)
    extra = [c for c in table.columns if c in ("cfg.algo", "cfg.env.map")]
    table["cell"] = table.apply(_cell, axis=1)
    grid = table.pivot_table(index=[*extra, ALPHA], columns=OMEGA, values="cell", aggfunc="first")
    grid.columns = [f"ω = {c:g}" for c in grid.columns]
    grid = grid.reset_index().rename(columns={ALPHA: "α", "cfg.algo": "algo", "cfg.env.map": "map"})
    return mark_evidence(grid.fillna("not run"), judge(metrics, ["cfg.algo", "cfg.env.map", ALPHA, OMEGA],
                                                       dense=dense_of_cells(dense, metrics)))
