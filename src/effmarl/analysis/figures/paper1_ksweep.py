"""Paper 1, Figure 3's neighbor window k: the sweep that chooses the k of the neighbor runs (the paper does not
publish its window, so this is no paper figure but the one its Figure 3 rests on; figures numbered as in
docs/specification.md). Sampling time per update round (left) and the mean predators' return of the last 20 % of
episodes (right) vs the window length k (k = 1 is uniform), with the sweep's headline written above the panels:
the fastest k by mean, its interval over seeds beside the next fastest k's, whether the two are separated, and
the k with the best mean predators' return (`metrics.ksweep.headline`, which the claims table quotes too). The
random policy's return is drawn dashed on the right; where the runs do not clear it, the image is stamped: their
return ranks no k."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np

from effmarl.analysis.io import named_inputs, read_tables, stamp
from effmarl.analysis.metrics import random_floor
from effmarl.analysis.metrics.ksweep import LINES, K, headline, per_run

CAPTION = ("Paper 1, Figure 3's neighbor window k (no paper figure: the paper does not publish its k; this sweep "
           "chooses it): mini-batch sampling time per update round (ms, inside training) and mean predators' return "
           "over the last 20 % of episodes vs k, per algorithm, storage and N; points are seeds, lines "
           "their means, bars the 95 % Student-t interval of the mean over seeds (stats.mean_interval; none with 1 "
           "seed). Above the panels: the fastest k by mean and whether its interval is "
           "separated from the next fastest k's. k = 1 draws exactly what uniform sampling draws. Dashed: the random "
           "policy's mean predators' return at the same N.")
REPRODUCES = ("Paper 1, Figure 3's neighbor window k. No paper figure: the paper does not publish its window; this "
              "sweep chooses and justifies the k of the neighbor runs (docs/specification.md, paper-1 decisions).")
CLAIM = ("The headline k saves sampling time without costing reward; the headline says whether the fastest k "
         "is faster than the next beyond the spread of its seeds.")
OUTPUT = {"group": "paper1", "stem": "ksweep"}
INPUTS = {"phases": {"study": "paper1_ksweep", "table": "phases", "doc": "phases.summary.parquet of the k-sweep study"},
          "metrics": {"study": "paper1_ksweep", "doc": "metrics.summary.parquet of the k-sweep study"},
          "random": {"study": "skeleton", "optional": True,
                     "doc": "metrics.summary.parquet of the random policy (the floor)"}}


def make(inputs: list[str]):
    named = named_inputs(inputs, INPUTS, "figure paper1_ksweep")
    phases, metrics = read_tables(named["phases"]), read_tables(named["metrics"])
    random = read_tables(named["random"]) if named["random"] else None
    table = per_run(phases, metrics)
    head = headline(phases, metrics, random)
    stats = head["per_k"]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for i, ((algo, n, storage), g) in enumerate(table.groupby(LINES)):
        color = plt.get_cmap("tab10").colors[i % 10]
        s = stats[(stats["cfg.algo"] == algo) & (stats["cfg.env.n_agents"] == n)
                  & (stats["cfg.replay.storage"] == storage)].sort_values(K)
        for ax, col, name in zip(axes, ("sampling_ms", "reward"), ("time", "reward"), strict=True):
            ax.scatter(g[K], g[col], s=12, alpha=0.5, color=color)
            mean, lo, hi = s[f"{name}_mean"], s[f"{name}_lo"], s[f"{name}_hi"]
            has = np.isfinite(lo) & np.isfinite(hi)
            ax.plot(s[K], mean, marker="o", color=color, label=f"{str(algo).upper()} N={n} {storage}")
            if has.any():
                ax.errorbar(s[K][has], mean[has], yerr=[mean[has] - lo[has], hi[has] - mean[has]], fmt="none",
                            ecolor=color, capsize=4, linewidth=1.2)
        floor = random_floor(random, int(n))
        if floor is not None:
            axes[1].axhline(floor[0], color=color, linestyle="--", linewidth=1,
                            label=f"random policy N={n} ({floor[0]:.1f})")
    for ax, ylabel in zip(axes, ("sampling ms per update round", "predators' return, last 20 %"), strict=True):
        ax.set_xscale("log", base=2)
        ks = sorted(table[K].unique())
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.set_xlabel("neighbor window k")
        ax.set_ylabel(ylabel)
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    # the headline above the panels; "k = 16" never broken across lines (no-break spaces)
    fig.suptitle(textwrap.fill(head["text"].replace("k = ", "k\u00a0=\u00a0"), 125), fontsize=8.5, x=0.01,
                 ha="left")
    fig.tight_layout()
    if head["learned"] is not True:
        stamp(fig, ["right panel: " + ("no random-policy runs to show learning" if head["learned"] is None else
                                       "runs at or below the random policy's return, which ranks no k")])
    return fig, phases
