"""Paper 2, Figure 5: Soft Mellowmax against max in a sparse method's targets (study `mast_abl_operator`, rows with
cfg.mellowmax.operator max or soft_mellowmax; the paper's pair is RigL with and without it, the extended profile's
too): left the test win rate, right the value estimate Q (q_taken_mean, the mixer's Q of the taken actions, solid)
against the discounted return G those replayed steps obtained (return_mean, dashed) over environment steps; smoothed
per seed, mean over seeds with a 95 % bootstrap band. The legend gives each operator's bias Q - G over the final 10 %
of training with its 95 % Student-t interval over seeds (metrics.values, as the values table): what decides whether
Soft Mellowmax lowers the over-estimation."""

from __future__ import annotations

import matplotlib.pyplot as plt

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional, read_tables
from effmarl.analysis.metrics import curves, dense_of_cells, interval_text, judge, operator_of
from effmarl.analysis.metrics.stats import mean_interval
from effmarl.analysis.metrics.values import G, Q, value_bias
from effmarl.analysis.style import OPERATOR_NAMES, OPERATOR_ORDER, algo_name, draw_curve, map_name, method_name, note

SHOWN = ["max", "soft_mellowmax"]
CAPTION = ("Paper 2, Figure 5 on SMAX: a sparse method (the title names it) with the max operator vs Soft Mellowmax "
           "in its targets. Left: test win rate; right: value estimate Q (mean Q of the taken actions, q_taken_mean, "
           "solid) and the discounted return G the replayed steps obtained (return_mean, dashed) against environment "
           "steps; the legend gives bias = Q - G over the final 10 % of training, mean over seeds with its 95 % "
           "Student-t interval (G is the replayed, epsilon-greedy behaviour's return: compare the operators). Each "
           "seed Savitzky-Golay smoothed (window 21, order 2, ≤ 1/3 of its length), seeds aligned on the evaluation "
           "grid; line = mean, band = 95 % percentile-bootstrap interval (none for 1 seed); legends give n = seeds.")
REPRODUCES = "Paper 2, Figure 5."
CLAIM = "Soft Mellowmax curbs the overestimation of sparse value networks and improves their win rate."

OUTPUT = {"group": "mast", "stem": "fig5_soft_mellowmax"}
INPUTS = {"metrics": {"study": "mast_abl_operator", "doc": "metrics.summary.parquet of mast_abl_operator"},
          "dense": {"study": "mast_dense", "optional": True,
                    "doc": "metrics.summary.parquet of mast_dense (its plateau in the same cell: the budget's check)"}}


def bias_text(data) -> dict[str, str]:
    """Per operator: 'bias Q - G +0.031 [+0.010, +0.052] (3 seeds)' over the final 10 % of training (metrics.values)."""
    runs = value_bias(data)
    out = {}
    for op, group in runs.assign(operator=operator_of(runs)).groupby("operator"):
        bias = group["bias"].dropna().to_numpy(dtype=float)
        if len(bias):
            lo, hi = mean_interval(bias)
            out[op] = f"bias Q - G {bias.mean():+.3f} {interval_text(lo, hi, 3, f'{len(bias)} seed')}"
    return out


def make(inputs: list[str]):
    named = named_inputs(inputs, INPUTS, "figure mast_fig5")
    summary, dense = read_tables(named["metrics"]), read_optional(named["dense"])
    data = summary.assign(operator=operator_of(summary))
    data = data[data["operator"].isin(SHOWN)]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    biases = bias_text(data) if len(data) and Q in data else {}
    for ax, value, ylabel in ((axes[0], "test_win_rate", "test win rate"),
                              (axes[1], Q, "value estimate Q (solid), return obtained G (dashed)")):
        c = curves(data, ["operator"], value) if len(data) and value in data else None
        returns = curves(data, ["operator"], G) if value == Q and c is not None and G in data else None
        drawn = False
        for op in [o for o in OPERATOR_ORDER if c is not None and o in set(c["operator"])]:
            label = OPERATOR_NAMES[op] + (f"; {biases[op]}" if value == Q and op in biases else "")
            color = "tab:red" if op == "soft_mellowmax" else "tab:gray"
            draw_curve(ax, c[c["operator"] == op], label, color=color)
            if returns is not None and op in set(returns["operator"]):
                draw_curve(ax, returns[returns["operator"] == op], f"G, {OPERATOR_NAMES[op]}", color=color,
                           linestyle="--")
            drawn = True
        if drawn:
            ax.legend(fontsize=6)
        else:
            note(ax, f"no {ylabel} of max / Soft Mellowmax runs")
        ax.set_xlabel("environment steps")
        ax.set_ylabel(ylabel, fontsize=8)
    axes[0].set_ylim(-0.02, 1.02)
    if len(data):
        cells = data[["cfg.algo", "cfg.env.map", "cfg.sparse.method", "cfg.sparse.sparsity"]].drop_duplicates()
        fig.suptitle("; ".join(f"{method_name(m)}-{algo_name(a)} on SMAX {map_name(e)}, sparsity {s:g}"
                               for a, e, m, s in cells.itertuples(index=False)), fontsize=9)
    fig.tight_layout()
    mark_evidence(fig, judge(data, ["cfg.algo", "cfg.env.map", "operator"], dense=dense_of_cells(dense, data)))
    return fig, summary
