"""Paper 1, figure 4: cache counters of the sampling phase, uniform vs neighbor (misses per sampled
transition), from `effmarl counters` (<out>.parquet). Each panel names its counter source; sources that were
unavailable are listed with their reason instead of a value."""

from __future__ import annotations

import matplotlib.pyplot as plt

from effmarl.analysis.common import read_tables

CAPTION = ("Cache misses per sampled transition during the mini-batch sampling phase alone (R sampling rounds "
           "minus the same fill with 0 rounds), uniform vs neighbor sampling, per storage and N. Source named in "
           "each panel (cachegrind: simulated D1 / last-level data misses; perf: hardware events).")

METRICS = {"cachegrind": ["D1m", "DLm"], "perf": ["L1-dcache-load-misses", "LLC-load-misses", "cache-misses"]}


def make(inputs: list[str]):
    table = read_tables(inputs)
    ok = table[table.available]
    panels = [(s, m) for s, ms in METRICS.items() for m in ms if ((ok.source == s) & (ok.metric == m)).any()]
    fig, axes = plt.subplots(1, max(len(panels), 1), figsize=(3.8 * max(len(panels), 1), 3.4), squeeze=False)
    for ax, (source, metric) in zip(axes[0], panels, strict=False):
        d = ok[(ok.source == source) & (ok.metric == metric)].copy()
        d["config"] = d.storage + " N=" + d.n_agents.astype(str)
        wide = d.pivot_table(index="config", columns="sampler", values="per_sampled_transition")
        wide.plot.bar(ax=ax, rot=30)
        ax.set_ylabel("misses per sampled transition")
        ax.set_title(f"{source}: {metric}", fontsize=9)
        ax.set_xlabel("")
    missing = table[~table.available].drop_duplicates("source")
    note = "; ".join(f"{r.source}: unavailable ({r.reason})" for r in missing.itertuples())
    if note:
        fig.text(0.01, 0.99, note[:300], fontsize=6, va="top", color="0.3", wrap=True)
    fig.tight_layout(rect=(0, 0.03, 1, 0.93))
    return fig, table
