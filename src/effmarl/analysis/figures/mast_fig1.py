"""Paper 2, Figure 1: each method's win rate at one sparsity (the paper: 10 % of the parameters, QMIX on 3s5z; the
extended profile: Table 1's deciding cell, QMIX on 3m at 99 %; study `mast_fig1`, each panel's title says which),
the dense model included - one bar per method (the mean over seeds of the per-run mean of the last K = 20
evaluations) with its 95 % Student-t (Yuen) interval and the seed count above each bar."""

from __future__ import annotations

import matplotlib.pyplot as plt

from effmarl.analysis.io import mark_evidence, named_inputs, read_tables
from effmarl.analysis.metrics import (
    LAST_K,
    METHOD_ORDER,
    STATISTIC,
    final_win_rate,
    judge,
    seed_stats,
    seeds_text,
    win_rate_label,
)
from effmarl.analysis.style import algo_name, bars, map_name, method_color, method_name

CAPTION = ("Paper 2, Figure 1 on SMAX (not SMAC): win rate of each method at one sparsity, dense included (the paper: "
           "10 % of the parameters, QMIX on 3s5z; the panel title gives this run's algorithm, map and sparsity). "
           "Bar and error bar: " + STATISTIC + "; n = seeds above each "
           "bar.")
REPRODUCES = "Paper 2, Figure 1."
CLAIM = ("MAST keeps > 90 % win rate on 3s5z with 10 % of the parameters where the other sparse methods fall "
         "behind (within SMAX, not SMAC).")

OUTPUT = {"group": "mast", "stem": "fig1_methods"}
INPUTS = {"metrics": {"study": "mast_fig1", "doc": "metrics.summary.parquet of mast_fig1"}}


def make(inputs: list[str], k: int = LAST_K):
    summary = read_tables(named_inputs(inputs, INPUTS, "figure mast_fig1")["metrics"])
    stats = seed_stats(final_win_rate(summary, k), ["cfg.algo", "cfg.env.map", "cfg.sparse.method"])
    cells = stats[["cfg.algo", "cfg.env.map"]].drop_duplicates().values.tolist()
    fig, axes = plt.subplots(1, len(cells), figsize=(4.5 * len(cells), 3.4), squeeze=False, sharey=True)
    for ax, (algo, name) in zip(axes[0], cells, strict=True):
        rows = stats[(stats["cfg.algo"] == algo) & (stats["cfg.env.map"] == name)].copy()
        rows["order"] = rows["cfg.sparse.method"].map({m: i for i, m in enumerate(METHOD_ORDER)}).fillna(99)
        rows = rows.sort_values("order")
        bars(ax, rows, [method_name(m) for m in rows["cfg.sparse.method"]],
             [method_color(m) for m in rows["cfg.sparse.method"]])
        sparsity = sorted({f"{s:g}" for s in summary.loc[(summary["cfg.algo"] == algo)
                                                         & (summary["cfg.sparse.method"] != "dense"),
                                                         "cfg.sparse.sparsity"]})
        ax.set_title(f"{algo_name(algo)} on SMAX {map_name(name)}, sparsity {'/'.join(sparsity)} "
                     f"({seeds_text(rows['seeds'])})", fontsize=9)
        ax.set_ylabel(win_rate_label(k))
        ax.set_ylim(0, 1.1)
    fig.tight_layout()
    mark_evidence(fig, judge(summary, ["cfg.algo", "cfg.env.map", "cfg.sparse.method"],
                             dense=summary[summary["cfg.sparse.method"] == "dense"]))
    return fig, summary
