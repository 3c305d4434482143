"""Paper 1, figure 4: cache counters of the sampling phase, uniform vs neighbor (misses per sampled
transition), from `effmarl counters` (<out>.parquet). Each panel names its counter source; sources that were
unavailable are listed with their reason instead of a value.

A count is the difference of two whole-process measurements (R sampling rounds minus 0 rounds); where that
difference is not above the noise of the subtraction (it is ≤ 0, or within the `noise` column when the counters
record one) it is not a measurement of the sampling phase: it is drawn as a hollow marker on the axis labelled
"≤ noise", never as a (negative) bar. Sampler colours are those of `sampling_phase_vs_n`."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from effmarl.analysis.common import SAMPLER_COLORS, named_inputs, read_tables

CAPTION = ("Cache misses per sampled transition during the mini-batch sampling phase alone (R sampling rounds "
           "minus the same fill with 0 rounds), uniform vs neighbor sampling, per storage and N. Source named in "
           "each panel (cachegrind: simulated D1 / last-level data misses; perf: hardware events). Differences "
           "not above the subtraction's noise are marked '≤ noise', not drawn as values.")
INPUTS = {"counters": "counters.parquet of `effmarl counters`"}
METRICS = {"cachegrind": ["D1m", "DLm"], "perf": ["L1-dcache-load-misses", "LLC-load-misses", "cache-misses"]}
SAMPLERS = ["uniform", "neighbor"]


def above_noise(table: pd.DataFrame) -> pd.Series:
    """True where a counter difference is a measurement: positive and, when a per-transition `noise` is
    recorded, larger than it."""
    value = table["per_sampled_transition"].astype(float)
    noise = table["noise"].astype(float).fillna(0.0) if "noise" in table else 0.0
    return value > noise


def make(inputs: list[str]):
    table = read_tables(named_inputs(inputs, INPUTS, "figure paper1_counters")["counters"])
    ok = table[table.available.astype(bool)].copy()
    ok["measured"] = above_noise(ok)
    panels = [(s, m) for s, ms in METRICS.items() for m in ms if ((ok.source == s) & (ok.metric == m)).any()]
    fig, axes = plt.subplots(1, max(len(panels), 1), figsize=(3.8 * max(len(panels), 1), 3.4), squeeze=False)
    width = 0.38
    for ax, (source, metric) in zip(axes[0], panels, strict=False):
        d = ok[(ok.source == source) & (ok.metric == metric)].copy()
        d["config"] = d.storage + " N=" + d.n_agents.astype(str)
        configs = list(dict.fromkeys(d.sort_values(["storage", "n_agents"])["config"]))
        for j, sampler in enumerate(SAMPLERS):
            for i, config in enumerate(configs):
                row = d[(d.config == config) & (d.sampler == sampler)]
                if row.empty:
                    continue
                x = i + (j - 0.5) * width
                if row["measured"].iloc[0]:
                    ax.bar(x, row["per_sampled_transition"].iloc[0], width, color=SAMPLER_COLORS[sampler],
                           label=sampler if i == 0 else None)
                else:
                    ax.plot(x, 0, marker="o", mfc="none", color=SAMPLER_COLORS[sampler])
                    ax.annotate("≤ noise", (x, 0), textcoords="offset points", xytext=(0, 4), ha="center",
                                fontsize=6, rotation=90)
        ax.set_xticks(range(len(configs)), configs, rotation=30, ha="right")
        ax.set_ylim(bottom=0)
        ax.set_ylabel("misses per sampled transition")
        ax.set_title(f"{source}: {metric}", fontsize=9)
        ax.legend(fontsize=7)
    missing = table[~table.available.astype(bool)].drop_duplicates("source")
    note = "; ".join(f"{r.source}: unavailable ({r.reason})" for r in missing.itertuples())
    if note:
        fig.text(0.01, 0.99, note[:300], fontsize=6, va="top", color="0.3", wrap=True)
    fig.tight_layout(rect=(0, 0.03, 1, 0.93))
    return fig, table
