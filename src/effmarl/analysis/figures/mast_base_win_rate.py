"""Paper 2 base: greedy test win rate vs environment steps, per map and algorithm (mean and 95 % CI over seeds)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

from effmarl.analysis.io import mark_evidence, named_inputs, read_tables
from effmarl.analysis.metrics import judge
from effmarl.analysis.style import ALGO_NAMES

CAPTION = ("Test win rate of greedy QMIX-family agents on SMAX maps (jaxmarl's JAX re-implementation of SMAC, "
           "heuristic enemy) against environment steps; line = mean over seeds, band = 95 % bootstrap CI. "
           "64zg_approx is an approximation of 2c_vs_64zg (SMAX has no colossus, splash damage or cliffs).")
REPRODUCES = "Paper 2, the dense baselines of figures 13-15 (learning curves per algorithm)."
CLAIM = "The dense value-based learners MAST sparsifies learn the maps."


OUTPUT = {"group": "mast_base", "stem": "test_win_rate"}
INPUTS = {"metrics": {"study": "mast_base", "doc": "metrics.summary.parquet of the mast_base study"}}


def make(inputs: list[str]):
    summary = read_tables(named_inputs(inputs, INPUTS, "figure mast_base_win_rate")["metrics"])
    data = summary.assign(algorithm=summary["cfg.algo"].map(ALGO_NAMES).fillna(summary["cfg.algo"]),
                          map=summary["cfg.env.map"].astype(str).str.replace("64zg_approx", "64zg (approx.)"))
    maps = sorted(data["map"].unique())
    fig, axes = plt.subplots(1, len(maps), figsize=(4 * len(maps), 3.2), squeeze=False, sharey=True)
    for ax, name in zip(axes[0], maps, strict=True):
        sns.lineplot(data=data[data["map"] == name], x="eval_step", y="test_win_rate", hue="algorithm",
                     errorbar=("ci", 95), ax=ax)
        ax.set_title(f"SMAX {name}")
        ax.set_xlabel("environment steps")
        ax.set_ylabel("test win rate")
        ax.set_ylim(-0.02, 1.02)
    fig.tight_layout()
    dense = summary[summary["cfg.sparse.method"] == "dense"] if "cfg.sparse.method" in summary else summary
    mark_evidence(fig, judge(summary, ["cfg.algo", "cfg.env.map"], dense=dense))
    return fig, summary
