"""Paper 1, Figure 5 (numbered as in docs/specification.md): end-to-end training time (sum of the leaf phases)
per run, uniform vs neighbor sampling, vs agent count, per algorithm and storage; labels give neighbor's change of
the mean over seeds (paper: −10.2 % at N = 12), each below and right of that N's points and inside its panel (the
panel's limits widen to make room, `fit_labels_inside`)."""

from __future__ import annotations

from effmarl.analysis.common import named_inputs, panels, read_tables, sampler_color
from effmarl.analysis.metrics import change_pct, run_totals, steady_state

CAPTION = ("Paper 1, Figure 5: end-to-end training time per run (sum of the timed training phases from the first "
           "update round on, so the warm-up does not dilute it), uniform vs neighbor sampling, by algorithm, storage "
           "and agent count N; points are seeds, lines their means, labels neighbor's change of the mean vs uniform "
           "(below and right of each N's points). Paper 1: −10.2 % at N = 12.")
INPUTS = {"phases": "phases.summary.parquet of the paper-1 scaling studies (any number)"}

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


def make(inputs: list[str]):
    summary = read_tables(named_inputs(inputs, INPUTS, "figure paper1_end_to_end")["phases"])
    totals = run_totals(steady_state(summary))
    fig, grid = panels(totals, ["cfg.algo", "cfg.replay.storage"], width=3.6, height=3.4)
    for ax, (algo, storage), d in grid:
        means = d.groupby(["cfg.replay.sampler", "cfg.env.n_agents"])["total"].mean()
        for sampler, g in d.groupby("cfg.replay.sampler"):
            ax.scatter(g["cfg.env.n_agents"], g["total"], s=12, alpha=0.6, color=sampler_color(sampler))
            m = means.loc[sampler]
            ax.plot(m.index, m.values, marker="o", label=sampler, color=sampler_color(sampler))
        if {"uniform", "neighbor"} <= set(d["cfg.replay.sampler"]):
            lowest = d.groupby("cfg.env.n_agents")["total"].min()
            for n in means.loc["uniform"].index.intersection(means.loc["neighbor"].index):
                change = change_pct(means.loc[("neighbor", n)], means.loc[("uniform", n)])
                ax.annotate(f"{change:+.1f} %".replace("-", "−"), (n, lowest.loc[n]), textcoords="offset points",
                            xytext=(4, -4), ha="left", va="top", fontsize=8, color=sampler_color("neighbor"))
        ns = sorted(d["cfg.env.n_agents"].unique())
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.set_xlabel("agents N")
        ax.set_ylabel("training time (s)")
        ax.set_title(f"{algo}, {storage}", fontsize=9)
        ax.legend(fontsize=8, loc="upper left")
    fit_labels_inside(fig)
    return fig, summary
