"""Paper 1, Figure 3 (numbered as in docs/specification.md): sampling-phase time per update round, uniform vs
neighbor, vs agent count, with the % reduction of neighbor sampling on each storage (paper: −26.66 % at N = 3,
−27.39 % at N = 12), each below and right of that N's lower quartiles and inside its panel (the panel's limits
widen to make room, `fit_labels_inside`).

Reads the table of `effmarl sampling-bench` (<out>.parquet: interleaved A B A B medians and quartiles)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from effmarl.analysis.common import named_inputs, read_tables, sampler_color
from effmarl.analysis.metrics import change_pct

CAPTION = ("Paper 1, Figure 3: mini-batch sampling phase per update round (per_agent mode: N × [draw B indices, "
           "gather all N agents]), median with quartiles over interleaved rounds, uniform vs neighbor sampling on the "
           "reference (openai/maddpg layout) and contiguous storages; labels give neighbor's change vs uniform "
           "on the same storage (below and right of each N's points). Paper 1: −26.66 % (N = 3), −27.39 % (N = 12).")
INPUTS = {"bench": "sampling_bench.parquet of `effmarl sampling-bench`"}

LABEL_PAD_PX = 3.0  # room between a value label and the axis line


def fit_labels_inside(fig, rounds: int = 10) -> None:
    """Lay the figure out (tight_layout), then widen each panel's x and y limits until every text in it lies inside
    its axes, `LABEL_PAD_PX` from the axis lines: a label is never struck through by an axis or cut by the canvas.
    Labels are anchored to data points with an offset in points, so each widening moves them inwards; a few rounds
    settle it. (The same as paper1_end_to_end's: figure modules do not import each other.)"""
    for _ in range(rounds):
        fig.tight_layout()
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        moved = False
        for ax in fig.axes:
            if not ax.texts:
                continue
            box = ax.get_window_extent(renderer)
            texts = [t.get_window_extent(renderer) for t in ax.texts]
            pad = LABEL_PAD_PX
            left = max(0.0, *(box.x0 + pad - t.x0 for t in texts))
            right = max(0.0, *(t.x1 - box.x1 + pad for t in texts))
            down = max(0.0, *(box.y0 + pad - t.y0 for t in texts))
            up = max(0.0, *(t.y1 - box.y1 + pad for t in texts))
            if left or right or down or up:
                inverse = ax.transData.inverted()
                x0, y0 = inverse.transform((box.x0 - 1.5 * left, box.y0 - 1.5 * down))
                x1, y1 = inverse.transform((box.x1 + 1.5 * right, box.y1 + 1.5 * up))
                ax.set_xlim(x0, x1)
                ax.set_ylim(y0, y1)
                moved = True
        if not moved:
            return



def reductions(table: pd.DataFrame) -> pd.DataFrame:
    """Neighbor vs uniform change (%) per storage and N."""
    t = table.assign(kind=table.sampler.str.split("_").str[0])
    wide = t.pivot_table(index=["storage", "n_agents"], columns="kind", values="median_ms").reset_index()
    wide["change_%"] = change_pct(wide["neighbor"], wide["uniform"])
    return wide


def make(inputs: list[str]):
    table = read_tables(named_inputs(inputs, INPUTS, "figure paper1_sampling_bench")["bench"])
    red = reductions(table)
    storages = list(dict.fromkeys(table.storage))
    fig, axes = plt.subplots(1, len(storages), figsize=(4.2 * len(storages), 3.4), squeeze=False)
    for ax, storage in zip(axes[0], storages, strict=True):
        for sampler, g in table[table.storage == storage].groupby("sampler", sort=False):
            g = g.sort_values("n_agents")
            ax.errorbar(g.n_agents, g.median_ms, yerr=[g.median_ms - g.q25_ms, g.q75_ms - g.median_ms],
                        marker="o", capsize=3, label=sampler,
                        color=sampler_color(sampler))
        lowest = table[table.storage == storage].groupby("n_agents")["q25_ms"].min()
        for _, r in red[red.storage == storage].dropna(subset=["change_%"]).iterrows():
            ax.annotate(f"{r['change_%']:+.1f} %".replace("-", "−"), (r.n_agents, lowest.loc[r.n_agents]),
                        textcoords="offset points", xytext=(4, -4), ha="left", va="top", fontsize=8,
                        color=sampler_color("neighbor"))
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(table.n_agents.unique()), [str(n) for n in sorted(table.n_agents.unique())])
        ax.set_xlabel("agents N")
        ax.set_ylabel("ms per update round")
        ax.set_title(f"{storage} storage")
        ax.legend(fontsize=8, loc="upper left")
    fit_labels_inside(fig)
    return fig, table
