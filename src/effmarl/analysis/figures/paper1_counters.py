"""Paper 1, Figure 4: cache counters of the sampling phase, uniform vs neighbor (misses per sampled transition),
from `effmarl counters` (<out>.parquet). Each panel names its counter source; sources that were unavailable are
listed with their reason instead of a value.

Each configuration is measured in several repeats, each with its own address-space layout of the driver processes
(string-hash seed, heap / mmap / stack offsets) and the same stored transitions: a bar is the median over the
repeats, its error bar the range [min, max] over them (`metrics.counter_spread`), and n (the repeats) is written in
each panel's title.

A count is the difference of two whole-process measurements (R sampling rounds minus 0 rounds); where that
difference is not above the noise of the subtraction (the median is ≤ 0, or within the `noise` column when the
counters record one) it is not a measurement of the sampling phase: it is drawn as a hollow marker on the axis
labelled "≤ noise", never as a (negative) bar. Sampler colours are those of `sampling_phase_vs_n`."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.container import ErrorbarContainer

from effmarl.analysis.io import named_inputs, read_tables
from effmarl.analysis.metrics import counter_spread
from effmarl.analysis.style import SAMPLER_COLORS

CAPTION = ("Paper 1, Figure 4 (cache behaviour of the sampling phase): cache misses per sampled transition during "
           "the mini-batch sampling phase alone (R sampling rounds minus the same fill with 0 rounds), uniform vs "
           "neighbor sampling, per storage and N. Bar: median over n repeats; error bar: range [min, max] over "
           "them; each repeat varies the address-space layout of its driver processes (hash seed, heap, mmap and "
           "stack offsets) with the same stored transitions, n is written in each panel. Source named in each "
           "panel (cachegrind: simulated D1 / last-level data misses; perf: hardware events). Differences not "
           "above the subtraction's noise are marked '≤ noise', not drawn as values.")
REPRODUCES = "Paper 1, Figure 4 (cache counters of the sampling phase)."
CLAIM = ("Neighbor sampling's saving comes from fewer cache misses (locality); a difference whose two ranges "
         "overlap is within the layout's spread and does not show it.")
OUTPUT = {"group": "paper1", "stem": "sampling_counters", "when": "paper1*"}
INPUTS = {"counters": {"result": "paper1_micro/counters.parquet", "doc": "counters.parquet of `effmarl counters`"}}
METRICS = {"cachegrind": ["D1m", "DLm"], "perf": ["L1-dcache-load-misses", "LLC-load-misses", "cache-misses"]}
METRIC_NAMES = {"D1m": "D1 data misses", "DLm": "last-level data misses"}
SAMPLERS = ["uniform", "neighbor"]
WIDTH = 0.38


def spread_of(ok: pd.DataFrame) -> pd.DataFrame:
    """`counter_spread` of the available rows, with `measured` = the median is above the median recorded noise
    (above 0 without a `noise` column)."""
    spread = counter_spread(ok)
    keys = [c for c in spread.columns if c not in ("median", "lo", "hi", "repeats")]
    if "noise" in ok and ok["noise"].notna().any():
        noise = counter_spread(ok, value="noise")[[*keys, "median"]].rename(columns={"median": "noise"})
        spread = spread.merge(noise, on=keys, how="left")
    else:
        spread["noise"] = 0.0
    spread["measured"] = spread["median"] > spread["noise"].fillna(0.0)
    return spread


def _label(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.1f}"


def _repeats_text(d: pd.DataFrame) -> str:
    lo, hi = int(d.repeats.min()), int(d.repeats.max())
    return (f"n = {lo} repeat" + "s" * (lo != 1)) if lo == hi else f"n = {lo}–{hi} repeats"


def _draw_panel(ax, d: pd.DataFrame) -> None:
    d = d.assign(config=d.storage + "\nN=" + d.n_agents.astype(str)).sort_values(["storage", "n_agents"])
    configs = list(dict.fromkeys(d["config"]))
    labelled = set()
    for j, sampler in enumerate(SAMPLERS):
        for i, config in enumerate(configs):
            row = d[(d.config == config) & (d.sampler == sampler)]
            if row.empty:
                continue
            r = row.iloc[0]
            x = i + (j - 0.5) * WIDTH
            color = SAMPLER_COLORS[sampler]
            if r["measured"]:
                ax.bar(x, r["median"], WIDTH, color=color, label=sampler if sampler not in labelled else None)
                labelled.add(sampler)
                ax.errorbar(x, r["median"], yerr=[[r["median"] - r["lo"]], [r["hi"] - r["median"]]], fmt="none",
                            ecolor="0.15", elinewidth=1.0, capsize=2.5)
                ax.annotate(_label(r["median"]), (x, max(r["hi"], r["median"])), textcoords="offset points",
                            xytext=(0, 5), ha="center", va="bottom", fontsize=7, rotation=90)
            else:
                ax.plot(x, 0, marker="o", mfc="none", color=color)
                ax.annotate("≤ noise", (x, 0), textcoords="offset points", xytext=(0, 6), ha="center",
                            va="bottom", fontsize=7, rotation=90)
    ax.set_xticks(range(len(configs)), configs, fontsize=8)
    ax.set_xlim(-0.6, len(configs) - 0.4)
    top = max([*d.loc[d.measured, "hi"].astype(float), *d.loc[d.measured, "median"].astype(float), 1.0])
    ax.set_ylim(0, top * 1.3)
    ax.set_ylabel("misses per sampled transition")
    if labelled:
        ax.legend(fontsize=7, loc="upper left", ncol=2, borderaxespad=0.3)


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def clear_legends(fig, rounds: int = 12) -> None:
    """Raise each panel's upper y limit until its legend (upper left, inside the axes) covers no bar, error bar or
    label of that panel; the data only move down, so every mark stays drawn and the legend stays inside."""
    for _ in range(rounds):
        fig.tight_layout(rect=(0, 0.03, 1, 0.93))
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        moved = False
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is None:
                continue
            box = legend.get_window_extent(renderer)
            marks = [p.get_window_extent(renderer) for p in ax.patches] + \
                [t.get_window_extent(renderer) for t in ax.texts] + \
                [line.get_window_extent(renderer) for line in _error_lines(ax)]
            if any(_overlaps(box, m) for m in marks):
                low, high = ax.get_ylim()
                ax.set_ylim(low, low + (high - low) * 1.2)
                moved = True
        if not moved:
            return


def _error_lines(ax) -> list:
    """The caps and vertical lines of a panel's error bars."""
    return [a for c in ax.containers if isinstance(c, ErrorbarContainer) for a in (*c.lines[1], *c.lines[2])]


def make(inputs: list[str]):
    table = read_tables(named_inputs(inputs, INPUTS, "figure paper1_counters")["counters"])
    ok = table[table.available.astype(bool)].copy()
    spread = spread_of(ok)
    panels = [(s, m) for s, ms in METRICS.items() for m in ms
              if ((spread.source == s) & (spread.metric == m)).any()]
    fig, axes = plt.subplots(1, max(len(panels), 1), figsize=(3.9 * max(len(panels), 1), 3.6), squeeze=False)
    for ax, (source, metric) in zip(axes[0], panels, strict=False):
        d = spread[(spread.source == source) & (spread.metric == metric)]
        _draw_panel(ax, d)
        ax.set_title(f"{source}: {METRIC_NAMES.get(metric, metric)} ({metric})\nmedian and range over "
                     f"{_repeats_text(d)}", fontsize=8.5)
    missing = table[~table.available.astype(bool)].drop_duplicates("source")
    note = "; ".join(f"{r.source}: unavailable ({r.reason})" for r in missing.itertuples())
    if note:
        fig.text(0.01, 0.99, note[:300], fontsize=6, va="top", color="0.3", wrap=True)
    clear_legends(fig)
    return fig, table
