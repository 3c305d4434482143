"""Paper 1, Figure 5 (numbered as in docs/specification.md): end-to-end training time (sum of the leaf phases, on
the claim's clock `metrics.end_to_end.CLOCK`: process CPU time) per run, uniform vs neighbor sampling, vs agent
count, per algorithm and storage, each neighbor/uniform pair (same seed and every other setting) joined by a line.
Labels give the mean per-pair change c̄ = mean over pairs of 100 · (T_neighbor / T_uniform − 1) % with its 95 % t
interval (metrics.end_to_end; paper: −10.2 % at N = 12), each below and right of that N's points and inside its
panel (the panel's limits widen to make room, `fit_labels_inside`). Algorithms are never pooled. A figure where
some cell's interval contains 0 (or has under 2 pairs) is stamped illustrative, naming the cells: there the pairs'
spread is wider than the effect."""

from __future__ import annotations

import matplotlib.pyplot as plt

from effmarl.analysis.io import named_inputs, read_tables, stamp
from effmarl.analysis.metrics import steady_state
from effmarl.analysis.metrics.end_to_end import ALGO, CLOCK, UNDECIDED, by_algorithm, clock_totals, pair_changes
from effmarl.analysis.style import fit_labels_inside, panels, sampler_color

CAPTION = ("Paper 1, Figure 5: end-to-end training time per run (process CPU seconds of the timed training phases "
           "from the first update round on, so the warm-up does not dilute it), uniform vs neighbor sampling, by "
           "algorithm, storage and agent count N; points are runs, a grey line joins each neighbor/uniform pair "
           "(same seed and settings), labels the mean per-pair change of neighbor vs uniform with its 95 % t "
           "interval (below and right of each N's points); stamped illustrative where an interval contains 0. "
           "Paper 1: −10.2 % at N = 12.")
REPRODUCES = ("Paper 1, Figure 5 (end-to-end training time, uniform vs neighbor; figures numbered as in "
              "docs/specification.md).")
CLAIM = "Neighbor sampling cuts end-to-end training time by 10.2 % at N = 12."
OUTPUT = {"group": "paper1", "stem": "end_to_end"}
# the studies that train neighbor and uniform sampling as interleaved pairs, each pair alone (timing studies)
INPUTS = {"phases": {"study": ["paper1", "paper1_e2e"], "table": "phases",
                     "where": {"replay.sampler": ["uniform", "neighbor"]},
                     "doc": "phases.summary.parquet of the studies timing neighbor vs uniform sampling as pairs"}}
N, STORAGE = "cfg.env.n_agents", "cfg.replay.storage"
OFFSET = 0.12  # x offset of uniform (left) and neighbor (right) runs from their N's position


def _signed(value: float) -> str:
    return f"{value:+.1f}".replace("-", "−")


def label(cell) -> str:
    """'−15.0 % [−27.4, −2.6]' (its verdict decided), or with ' undecided' on a second line."""
    interval = "" if cell["pairs"] < 2 else f" [{_signed(cell['low'])}, {_signed(cell['high'])}]"
    text = f"{_signed(cell['change_%'])} %{interval}"
    return text + ("\nundecided" if cell["verdict"] == UNDECIDED else "")


def make(inputs: list[str]):
    summary = read_tables(named_inputs(inputs, INPUTS, "figure paper1_end_to_end")["phases"])
    totals = clock_totals(steady_state(summary), CLOCK).dropna(subset=["total"])
    if totals.empty:  # runs recorded before phase rows carried the claim's clock
        fig = plt.figure(figsize=(3.6, 3.4))
        stamp(fig, [f"no run's phase rows carry {CLOCK}"])
        return fig, summary
    pairs = pair_changes(totals)
    cells = by_algorithm(pairs, by=(ALGO, STORAGE, N)) if not pairs.empty else None
    fig, grid = panels(totals, [ALGO, STORAGE], width=3.6, height=3.4)
    undecided = []
    for ax, (algo, storage), d in grid:
        ns = sorted(d[N].unique())
        where = {n: i for i, n in enumerate(ns)}
        for sampler, side in (("uniform", -OFFSET), ("neighbor", OFFSET)):
            g = d[d["cfg.replay.sampler"] == sampler]
            ax.scatter(g[N].map(where) + side, g["total"], s=14, color=sampler_color(sampler), label=sampler,
                       zorder=3)
        mine = pairs[(pairs[ALGO] == algo) & (pairs[STORAGE] == storage)] if not pairs.empty else pairs
        for _, p in mine.iterrows():
            x = where[p[N]]
            ax.plot([x - OFFSET, x + OFFSET], [p["uniform"], p["neighbor"]], color="0.6", lw=0.8, zorder=2)
        lowest = d.groupby(N)["total"].min()
        for _, cell in (cells[(cells[ALGO] == algo) & (cells[STORAGE] == storage)].iterrows()
                        if cells is not None else ()):
            ax.annotate(label(cell), (where[cell[N]] + OFFSET, lowest.loc[cell[N]]),
                        textcoords="offset points", xytext=(4, -4), ha="left", va="top", fontsize=7,
                        color=sampler_color("neighbor"))
            if cell["verdict"] == UNDECIDED:
                undecided.append(f"{str(algo).upper()} {storage} N = {cell[N]}")
        ax.set_xticks(range(len(ns)), [str(n) for n in ns])
        ax.set_xlim(-0.5, len(ns) - 0.5)
        ax.set_xlabel("agents N")
        ax.set_ylabel("training time (process CPU s)" if CLOCK == "cpu_seconds" else "training time (s)")
        ax.set_title(f"{algo}, {storage}", fontsize=9)
        ax.legend(fontsize=8, loc="best")
    fit_labels_inside(fig)
    stamp(fig, ["no neighbor/uniform pairs"] if cells is None else
          [f"neighbor vs uniform undecided (the 95 % interval of the mean per-pair change contains 0, or under 2 "
           f"pairs) at {', '.join(undecided)}"] if undecided else [])
    return fig, summary
