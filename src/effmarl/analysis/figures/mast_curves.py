"""Paper 2, Figures 13, 14 and 15: learning curves of one algorithm of the QMIX family on SMAX (QMIX, OW-QMIX,
RES-QMIX: the output's variant, `VARIANTS`) - one panel per map, one line per method (Dense, Tiny, SS, SET, RigL,
RLx2, MAST) at the cell's sparsity (as Table 1's); per-seed Savitzky-Golay smoothing (window 21, order 2, ≤ 1/3 of
the series), mean over seeds with a 95 % bootstrap band, seeds aligned on the evaluation grid. One module for the
three figures: they differ only in the algorithm drawn."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional
from effmarl.analysis.metrics import cell_sparsity, judge, learning_curve_runs
from effmarl.analysis.style import learning_curves_figure
from effmarl.config import ConfigError

METHOD = "cfg.sparse.method"
CAPTION = ("Paper 2, Figures 13 (QMIX), 14 (OW-QMIX) and 15 (RES-QMIX), the algorithm named in each panel's title: "
           "test win rate against environment steps on SMAX maps (not SMAC), every method at the map's Table 1 "
           "sparsity (the one its baselines ran at: declared 99 % in the default profile, the highest MAST sparsity "
           "within 3 % of dense in the paper profile). Each seed's curve is Savitzky-Golay smoothed (window 21, "
           "order 2, ≤ 1/3 of its length); line = mean over seeds, band = 95 % percentile-bootstrap interval (none "
           "for 1 seed); legends give n = seeds.")
REPRODUCES = "Paper 2, Figures 13 (QMIX), 14 (OW-QMIX) and 15 (RES-QMIX)."
CLAIM = ("MAST follows the dense curve at high sparsity for QMIX, OW-QMIX (the paper's MAST-WQMIX) and RES-QMIX; "
         "other sparse methods lag.")

# one output per algorithm (variant), each made only where Table 1 trained that algorithm (the baselines' `where`)
OUTPUT = {"group": "mast",
          "variants": {"qmix": "fig13_curves_qmix", "ow_qmix": "fig14_curves_ow_qmix",
                       "res_qmix": "fig15_curves_res_qmix"}}
INPUTS = {"dense": {"study": "mast_dense", "doc": "metrics.summary.parquet of mast_dense"},
          "sweep": {"study": "mast_sweep",
                    "doc": "metrics.summary.parquet of mast_sweep (only the chosen sparsity is drawn)"},
          "baselines": {"study": "mast_table1", "where": {"algo": "{variant}"},
                        "doc": "metrics.summary.parquet of mast_table1"},
          "selection": {"output": "mast/tables/selection.csv", "doc": "the CSV of table mast_selection"}}
VARIANTS = list(OUTPUT["variants"])


def make(inputs: list[str], variant: str = "qmix"):
    """The learning curves of algorithm `variant` (one of VARIANTS)."""
    if variant not in VARIANTS:
        raise ConfigError([f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}"], "effmarl figure mast_curves")
    named = named_inputs(inputs, INPUTS, "figure mast_curves")
    frames = {role: read_optional(named[role]) for role in ("dense", "sweep", "baselines")}
    chosen = cell_sparsity(pd.read_csv(named["selection"][0]), frames["baselines"])
    data = learning_curve_runs(variant, frames, chosen)
    fig = learning_curves_figure(variant, data, chosen)
    dense = data[data[METHOD] == "dense"] if len(data) else None
    mark_evidence(fig, judge(data, ["cfg.algo", "cfg.env.map", METHOD], dense=dense))
    return fig, (data if len(data) else None)
