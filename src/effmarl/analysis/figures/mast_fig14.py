"""Paper 2, Figure 14: learning curves of OW-QMIX on SMAX - one panel per map, one line per method (Dense,
Tiny, SS, SET, RigL, RLx2, MAST) at the cell's sparsity (as Table 1's); per-seed Savitzky-Golay smoothing (window 21,
order 2, ≤ 1/3 of the series), mean over seeds with a 95 % bootstrap band, seeds aligned on the evaluation grid."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional
from effmarl.analysis.metrics import cell_sparsity, judge, learning_curve_runs
from effmarl.analysis.style import learning_curves_figure

METHOD = "cfg.sparse.method"
ALGO = "ow_qmix"
CAPTION = ("Paper 2, Figure 14: test win rate of OW-QMIX against environment steps on SMAX maps (not SMAC), "
           "every method at the map's Table 1 sparsity (the one its baselines ran at: declared 90 % in the default "
           "profile, the highest MAST sparsity within 3 % of dense in the paper profile). Each "
           "seed's curve is Savitzky-Golay smoothed (window 21, order 2, ≤ 1/3 of its length); line = mean over "
           "seeds, band = 95 % percentile-bootstrap interval (none for 1 seed); legends give n = seeds.")
REPRODUCES = "Paper 2, Figure 14."
CLAIM = "MAST-WQMIX follows the dense curve at high sparsity."

OUTPUT = {"group": "mast", "stem": "fig14_curves_ow_qmix"}
INPUTS = {"dense": {"study": "mast_dense", "doc": "metrics.summary.parquet of mast_dense"},
          "sweep": {"study": "mast_sweep",
                    "doc": "metrics.summary.parquet of mast_sweep (only the chosen sparsity is drawn)"},
          # drawn only where Table 1 trained ow_qmix
          "baselines": {"study": "mast_table1",
                        "where": {"algo": "ow_qmix"}, "doc": "metrics.summary.parquet of mast_table1"},
          "selection": {"output": "mast/tables/selection.csv", "doc": "the CSV of table mast_selection"}}


def make(inputs: list[str]):
    named = named_inputs(inputs, INPUTS, "figure mast_fig14")
    frames = {role: read_optional(named[role]) for role in ("dense", "sweep", "baselines")}
    chosen = cell_sparsity(pd.read_csv(named["selection"][0]), frames["baselines"])
    data = learning_curve_runs(ALGO, frames, chosen)
    fig = learning_curves_figure(ALGO, data, chosen)
    dense = data[data[METHOD] == "dense"] if len(data) else None
    mark_evidence(fig, judge(data, ["cfg.algo", "cfg.env.map", METHOD], dense=dense))
    return fig, (data if len(data) else None)
