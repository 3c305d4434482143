"""Paper 1, Figure 5 (numbered as in docs/specification.md): end-to-end training time (sum of the leaf phases)
per run, uniform vs neighbor sampling, vs agent count, per algorithm and storage; labels give neighbor's change of
the mean over seeds (paper: −10.2 % at N = 12), each below and right of that N's points and inside its panel (the
panel's limits widen to make room, `fit_labels_inside`)."""

from __future__ import annotations

from effmarl.analysis.io import named_inputs, read_tables
from effmarl.analysis.metrics import change_pct, run_totals, steady_state
from effmarl.analysis.style import fit_labels_inside, panels, sampler_color

CAPTION = ("Paper 1, Figure 5: end-to-end training time per run (sum of the timed training phases from the first "
           "update round on, so the warm-up does not dilute it), uniform vs neighbor sampling, by algorithm, storage "
           "and agent count N; points are seeds, lines their means, labels neighbor's change of the mean vs uniform "
           "(below and right of each N's points). Paper 1: −10.2 % at N = 12.")
REPRODUCES = ("Paper 1, Figure 5 (end-to-end training time, uniform vs neighbor; figures numbered as in "
              "docs/specification.md).")
CLAIM = "Neighbor sampling cuts end-to-end training time by 10.2 % at N = 12."
OUTPUT = {"group": "paper1", "stem": "end_to_end"}
# the study that trains neighbor and uniform sampling side by side
INPUTS = {"phases": {"study": "paper1", "table": "phases", "where": {"replay.sampler": ["uniform", "neighbor"]},
                     "doc": "phases.summary.parquet of the paper-1 scaling studies (any number)"}}

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
