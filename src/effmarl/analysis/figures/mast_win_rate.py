"""MAST study: greedy test win rate vs environment steps per method (mean and 95 % CI over seeds), per map and
algorithm. x is each evaluation's grid step (eval_step, a multiple of qmix.eval_every), so every seed has a point at
every x and the band is over seeds."""

from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

from effmarl.analysis.common import ALGO_NAMES, METHOD_NAMES, METHOD_ORDER, named_inputs, read_tables

CAPTION = ("Test win rate against environment steps on SMAX maps for each sparse-training method at one global "
           "sparsity, next to the dense model; every method uses per-agent (unshared) agent networks, the dense "
           "reference included. Line = mean over seeds, band = 95 % bootstrap CI.")

INPUTS = {"metrics": "metrics.summary.parquet of the MAST study"}


def make(inputs: list[str]):
    summary = read_tables(named_inputs(inputs, INPUTS, "figure mast_win_rate")["metrics"])
    data = summary.assign(method=summary["cfg.sparse.method"].map(METHOD_NAMES),
                          panel=summary["cfg.algo"].map(ALGO_NAMES).fillna(summary["cfg.algo"]) + " on SMAX "
                          + summary["cfg.env.map"].astype(str))
    order = [METHOD_NAMES[m] for m in METHOD_ORDER if METHOD_NAMES[m] in set(data["method"])]
    panels = sorted(data["panel"].unique())
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.2), squeeze=False, sharey=True)
    for ax, name in zip(axes[0], panels, strict=True):
        sns.lineplot(data=data[data["panel"] == name], x="eval_step", y="test_win_rate", hue="method",
                     hue_order=order, errorbar=("ci", 95), ax=ax)
        ax.set_title(name)
        ax.set_xlabel("environment steps")
        ax.set_ylabel("test win rate")
        ax.set_ylim(-0.02, 1.02)
    fig.tight_layout()
    return fig, summary
