"""How figures look, the same in every figure: one colour per sampler, phase and paper-2 method, the display names
of algorithms, methods, maps, tickets and target operators, and the drawing helpers the figures share (panels,
legends, bars, smoothed curves with their bands, labels kept inside their axes).

What belongs here: whatever decides how something is drawn or named on a figure. What is drawn (selecting runs,
computing statistics and curves) is `analysis.metrics`; reading inputs and saving outputs with their provenance
is `analysis.io`."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from effmarl.analysis.metrics import METHOD_ORDER, curves, seeds_text
from effmarl.methods import METHODS
from effmarl.variants import QMIX_VARIANTS

# One colour per sampler and per phase, the same in every figure (tab10).
_TAB10 = plt.get_cmap("tab10").colors
SAMPLER_COLORS = {"uniform": _TAB10[0], "neighbor": _TAB10[1]}
PHASE_COLORS = {phase: _TAB10[i] for i, phase in enumerate(
    ["action_selection", "env_step", "buffer_add", "sampling", "target_q", "q_loss", "p_loss", "target_update"])}


# Display names of the paper-2 algorithms and sparse-training methods (their table order is metrics.METHOD_ORDER).
ALGO_NAMES = {name: v.display for name, v in QMIX_VARIANTS.items()}  # effmarl/variants.py


def sampler_color(sampler: str):
    """The colour of a sampler, also for benchmark names such as `neighbor_k16`."""
    return SAMPLER_COLORS.get(str(sampler).split("_")[0], "0.5")


def panels(frame: pd.DataFrame, keys: list[str], width: float, height: float):
    """One subplot per distinct combination of `keys` in `frame`, side by side.

    Returns the figure and a list of (axis, key values, the rows of `frame` with those values).
    """
    combos = frame[keys].drop_duplicates().values.tolist()
    fig, axes = plt.subplots(1, len(combos), figsize=(width * len(combos), height), squeeze=False)
    rows = [frame[(frame[keys] == values).all(axis=1)] for values in combos]
    return fig, list(zip(axes[0], combos, rows, strict=True))


LABEL_PAD_PX = 3.0  # room between a value label and the axis line


def fit_labels_inside(fig, rounds: int = 10) -> None:
    """Lay the figure out (tight_layout), then widen each panel's x and y limits until every text in it lies inside
    its axes, `LABEL_PAD_PX` from the axis lines: a label is never struck through by an axis or cut by the canvas.
    Labels are anchored to data points with an offset in points, so each widening moves them inwards; a few rounds
    settle it."""
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


# ---- paper 2 (MAST) drawing helpers shared by the mast_* figures -------------------------------------------------
TICKET_NAMES = {"random": "random ticket", "winning": "winning ticket", "cheating": "cheating ticket"}
OPERATOR_ORDER = ["max", "softmax", "mellowmax", "soft_mellowmax"]
OPERATOR_NAMES = {"max": "max", "softmax": "softmax", "mellowmax": "Mellowmax", "soft_mellowmax": "Soft Mellowmax"}


def method_color(method: str):
    """One colour per paper-2 method, the same in every figure (tab10, its entry's `color` in effmarl/methods.py)."""
    return _TAB10[METHODS[method].color % 10] if method in METHODS else "0.5"


def method_name(method) -> str:
    m = METHODS.get(str(method))  # the table read live (effmarl/methods.py), so a method added to it is named
    return m.display if m is not None else str(method)


def algo_name(algo) -> str:
    v = QMIX_VARIANTS.get(str(algo))  # the table read live, so a variant added to it is named
    return v.display if v is not None else str(algo)


def map_name(name) -> str:
    return str(name).replace("64zg_approx", "64zg (approx.)")


def draw_curve(ax, curve: pd.DataFrame, label: str, color=None, linestyle="-") -> None:
    """One smoothed mean line with its band (from `metrics.curves` rows of one group); the legend label gets the
    seed count. A single point is drawn as a marker (a line needs two)."""
    curve = curve.sort_values("x")
    text = f"{label} ({seeds_text(curve['seeds'])})"
    marker = "o" if len(curve) < 3 else None
    (line,) = ax.plot(curve["x"], curve["mean"], label=text, color=color, linestyle=linestyle, marker=marker)
    band = curve.dropna(subset=["lo", "hi"])
    if len(band):
        ax.fill_between(band["x"], band["lo"], band["hi"], color=line.get_color(), alpha=0.2, linewidth=0)


def note(ax, text: str) -> None:
    """A message in an axis that has nothing else to show (never an empty plot)."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=9, color="0.3", wrap=True)


def bars(ax, stats: pd.DataFrame, labels: list[str], colors=None, value: str = "mean", lo: str = "mean_lo",
         hi: str = "mean_hi") -> None:
    """Bars of `value` (the mean over seeds) with its interval [`lo`, `hi`] as error bars where there is one, and each
    bar's seed count written above it ('n=1: no interval' where one seed)."""
    x = np.arange(len(stats))
    heights = stats[value].to_numpy(dtype=float)
    ax.bar(x, np.nan_to_num(heights), color=colors, edgecolor="0.2", linewidth=0.5)
    lo, hi = stats[lo].to_numpy(dtype=float), stats[hi].to_numpy(dtype=float)
    has = np.isfinite(lo) & np.isfinite(hi)
    if has.any():
        ax.errorbar(x[has], heights[has], yerr=[heights[has] - lo[has], hi[has] - heights[has]], fmt="none",
                    ecolor="0.1", capsize=3, linewidth=1)
    # on two lines: seven one-line labels ("n=1, no CI") overlap their neighbours in a 4.5-inch panel
    for xi, top, n in zip(x, np.where(has, hi, heights), stats["seeds"], strict=True):
        ax.text(xi, (top if np.isfinite(top) else 0) + 0.02, f"n={int(n)}" + ("" if n > 1 else "\nno CI"),
                ha="center", va="bottom", fontsize=7, linespacing=1.0)
    ax.set_xticks(x, labels, rotation=30 if len(labels) > 4 else 0, ha="right" if len(labels) > 4 else "center")


def curve_panels(panels_data: list[tuple[str, pd.DataFrame]], hue: str, order: list, names: dict, colors: dict,
                 value: str = "test_win_rate", ylabel: str = "test win rate", width: float = 4.0,
                 height: float = 3.2, title: str = ""):
    """One panel per (title, metrics rows), one smoothed line with a band per value of `hue` (in `order`), seeds
    aligned on the evaluation grid; a panel without data says so. Returns the figure."""
    n = max(1, len(panels_data))
    fig, axes = plt.subplots(1, n, figsize=(width * n, height), squeeze=False)
    for ax, (name, rows) in zip(axes[0], panels_data or [("no runs", pd.DataFrame())], strict=True):
        data = curves(rows, [hue], value) if len(rows) and hue in rows else pd.DataFrame()
        present = [h for h in order if len(data) and h in set(data[hue])]
        present += [h for h in (sorted(set(data[hue]), key=str) if len(data) else []) if h not in present]
        for h in present:
            draw_curve(ax, data[data[hue] == h], names.get(h, str(h)), colors.get(h))
        if not present:
            note(ax, f"no {ylabel} values in these runs")
        else:
            ax.legend(fontsize=7)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("environment steps")
        ax.set_ylabel(ylabel)
        if value == "test_win_rate":
            ax.set_ylim(-0.02, 1.02)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def learning_curves_figure(algo: str, data: pd.DataFrame, chosen: pd.DataFrame | None):
    """Paper 2, Figures 13-15: for one algorithm, one panel per map (titled with the map's `chosen` sparsity), one
    line per method, from the rows `metrics.learning_curve_runs` selects. Returns the figure."""
    maps = sorted(set(data["cfg.env.map"])) if len(data) else []
    sparsity = {}
    if chosen is not None:
        sparsity = {m: s for a, m, s in zip(chosen["algo"], chosen["map"], chosen["sparsity"], strict=True)
                    if a == algo}
    panels_data = [(f"{algo_name(algo)} on SMAX {map_name(m)}"
                    + (f", sparsity {sparsity[m]:g}" if m in sparsity else ""), data[data["cfg.env.map"] == m])
                   for m in maps]
    if not panels_data:
        panels_data = [(f"{algo_name(algo)}: no runs of this algorithm in the inputs", pd.DataFrame())]
    colors = {m: method_color(m) for m in METHOD_ORDER}
    return curve_panels(panels_data, "cfg.sparse.method", METHOD_ORDER, {m: method_name(m) for m in METHOD_ORDER},
                        colors)
