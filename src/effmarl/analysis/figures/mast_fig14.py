"""Paper 2, Figure 14: learning curves of OW-QMIX on SMAX - one panel per map, one line per method (Dense,
Tiny, SS, SET, RigL, RLx2, MAST) at the cell's chosen sparsity; per-seed Savitzky-Golay smoothing (window 21,
order 2, ≤ 1/3 of the series), mean over seeds with a 95 % bootstrap band, seeds aligned on the evaluation grid."""

from __future__ import annotations

from effmarl.analysis.common import learning_curves_figure, named_inputs

ALGO = "ow_qmix"
CAPTION = ("Paper 2, Figure 14: test win rate of OW-QMIX against environment steps on SMAX maps (not SMAC), "
           "every method at the sparsity chosen for the map (highest MAST sparsity within 3 % of dense). Each "
           "seed's curve is Savitzky-Golay smoothed (window 21, order 2, ≤ 1/3 of its length); line = mean over "
           "seeds, band = 95 % percentile-bootstrap interval (none for 1 seed); legends give n = seeds.")

INPUTS = {"dense": "metrics.summary.parquet of mast_dense",
          "sweep": "metrics.summary.parquet of mast_sweep (only the chosen sparsity is drawn)",
          "baselines": "metrics.summary.parquet of mast_table1",
          "selection": "the CSV of table mast_selection"}


def make(inputs: list[str]):
    return learning_curves_figure(ALGO, named_inputs(inputs, INPUTS, "figure mast_fig14"))
