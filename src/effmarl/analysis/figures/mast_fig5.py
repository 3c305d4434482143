"""Paper 2, Figure 5: Soft Mellowmax against max in MAST's targets (study `mast_abl_operator`, rows with
cfg.mellowmax.operator max or soft_mellowmax): left the test win rate, right the value estimate (q_taken_mean, the
mean Q of the taken actions) over environment steps; smoothed per seed, mean over seeds with a 95 % bootstrap band."""

from __future__ import annotations

import matplotlib.pyplot as plt

from effmarl.analysis.io import mark_evidence, named_inputs, read_tables
from effmarl.analysis.metrics import curves, judge, operator_of
from effmarl.analysis.style import OPERATOR_NAMES, OPERATOR_ORDER, draw_curve, note

SHOWN = ["max", "soft_mellowmax"]
CAPTION = ("Paper 2, Figure 5 on SMAX: MAST with the max operator vs Soft Mellowmax in its targets. Left: test win "
           "rate; right: value estimate (mean Q of the taken actions, q_taken_mean) against environment steps. Each "
           "seed Savitzky-Golay smoothed (window 21, order 2, ≤ 1/3 of its length), seeds aligned on the evaluation "
           "grid; line = mean, band = 95 % percentile-bootstrap interval (none for 1 seed); legends give n = seeds.")
REPRODUCES = "Paper 2, Figure 5."
CLAIM = "Soft Mellowmax curbs the overestimation of sparse value networks and improves their win rate."

OUTPUT = {"group": "mast", "stem": "fig5_soft_mellowmax"}
INPUTS = {"metrics": {"study": "mast_abl_operator", "doc": "metrics.summary.parquet of mast_abl_operator"}}


def make(inputs: list[str]):
    summary = read_tables(named_inputs(inputs, INPUTS, "figure mast_fig5")["metrics"])
    data = summary.assign(operator=operator_of(summary))
    data = data[data["operator"].isin(SHOWN)]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.3))
    for ax, value, ylabel in ((axes[0], "test_win_rate", "test win rate"),
                              (axes[1], "q_taken_mean", "value estimate (mean Q of taken actions)")):
        c = curves(data, ["operator"], value) if len(data) and value in data else None
        drawn = False
        for op in [o for o in OPERATOR_ORDER if c is not None and o in set(c["operator"])]:
            draw_curve(ax, c[c["operator"] == op], OPERATOR_NAMES[op])
            drawn = True
        if drawn:
            ax.legend(fontsize=7)
        else:
            note(ax, f"no {ylabel} of max / Soft Mellowmax runs")
        ax.set_xlabel("environment steps")
        ax.set_ylabel(ylabel)
    axes[0].set_ylim(-0.02, 1.02)
    fig.tight_layout()
    mark_evidence(fig, judge(data, ["cfg.algo", "cfg.env.map", "operator"]))
    return fig, summary
