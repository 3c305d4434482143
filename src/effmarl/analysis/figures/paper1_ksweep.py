"""Paper 1, Figure 3's neighbor window k: the sweep that chooses the k of the neighbor runs (the paper does not
publish its window, so this is no paper figure but the one its Figure 3 rests on; figures numbered as in
docs/specification.md). Left: the sampling time per update round vs the window length k (k = 1 draws what uniform
draws), median with quartile bars over the rounds of the interleaved sampling benchmark (`effmarl sampling-bench
--k ...`, taken alone: every k in one round-robin cycle, so drift hits all alike), per line (N, storage). Right:
the mean predators' return of the last 20 % of episodes of the k sweep's training runs vs k. Above the panels the
sweep's headline (`metrics.ksweep.headline`, which the claims table quotes too): the fastest k by median, whether
it is separated from the next fastest k by the paired interval of their per-rep time ratio, and the k with the
best mean predators' return. The random policy's return is drawn dashed on the right; where the runs do not clear
it, the image is stamped: their return ranks no k."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from effmarl.analysis.io import named_inputs, read_tables, stamp
from effmarl.analysis.metrics import random_floor
from effmarl.analysis.metrics.ksweep import BENCH_LINES, LINES, K, headline, per_run
from effmarl.analysis.metrics.runs import RUN_COLUMNS

CAPTION = ("Paper 1, Figure 3's neighbor window k (no paper figure: the paper does not publish its k; this sweep "
           "chooses it). Left: mini-batch sampling time per update round (ms) vs k, median with quartile bars over "
           "the interleaved rounds of the sampling benchmark (`effmarl sampling-bench`, taken alone: every k timed "
           "in each round-robin cycle, so drift hits all alike), per N and storage. Right: mean predators' return "
           "over the last 20 % of episodes of the k sweep's training runs vs k, per algorithm, storage and N; points "
           "are seeds, lines their means, bars the 95 % Student-t interval of the mean over seeds "
           "(stats.mean_interval; none with 1 seed). Above the panels: the fastest k by median and whether it is "
           "separated from the next fastest k (95 % t interval of the per-rep time ratio above 1). k = 1 draws "
           "exactly what uniform sampling draws. Dashed: the random policy's mean predators' return at the same N.")
REPRODUCES = ("Paper 1, Figure 3's neighbor window k. No paper figure: the paper does not publish its window; this "
              "sweep chooses and justifies the k of the neighbor runs (docs/specification.md, paper-1 decisions).")
CLAIM = ("The headline k saves sampling time without costing reward; the headline says whether the fastest k "
         "is faster than the next beyond the spread of the interleaved rounds.")
OUTPUT = {"group": "paper1", "stem": "ksweep"}
INPUTS = {"rounds": {"result": "paper1_micro/sampling_bench.rounds.parquet",
                     "doc": "sampling_bench.rounds.parquet of `effmarl sampling-bench --k ...` (interleaved, alone)"},
          "metrics": {"study": "paper1_ksweep", "doc": "metrics.summary.parquet of the k-sweep study"},
          "random": {"study": "skeleton", "optional": True,
                     "doc": "metrics.summary.parquet of the random policy (the floor)"}}


def make(inputs: list[str]):
    named = named_inputs(inputs, INPUTS, "figure paper1_ksweep")
    rounds, metrics = read_tables(named["rounds"]), read_tables(named["metrics"])
    random = read_tables(named["random"]) if named["random"] else None
    table = per_run(metrics)
    head = headline(rounds, metrics, random)
    times, stats = head["times"], head["per_k"]
    words = textwrap.fill(head["text"].replace("k = ", "k\u00a0=\u00a0"), 125)
    # the headline above the panels; "k = 16" never broken across lines (no-break spaces); the figure grows with it
    title_in = 0.15 * (words.count("\n") + 1) + 0.1  # 8.5 pt lines
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4 + title_in))
    colors = plt.get_cmap("tab10").colors
    for i, ((n, storage), s) in enumerate(times.groupby(BENCH_LINES) if not times.empty else ()):
        s = s.sort_values("k")
        axes[0].errorbar(s["k"], s["median_ms"], yerr=[s["median_ms"] - s["q25_ms"], s["q75_ms"] - s["median_ms"]],
                         marker="o", capsize=4, color=colors[i % 10], label=f"N={n} {storage}")
    for i, ((algo, n, storage), g) in enumerate(table.groupby(LINES) if not table.empty else ()):
        color = colors[i % 10]
        s = stats[(stats["cfg.algo"] == algo) & (stats["cfg.env.n_agents"] == n)
                  & (stats["cfg.replay.storage"] == storage)].sort_values(K)
        axes[1].scatter(g[K], g["reward"], s=12, alpha=0.5, color=color)
        mean, lo, hi = s["reward_mean"], s["reward_lo"], s["reward_hi"]
        has = np.isfinite(lo) & np.isfinite(hi)
        axes[1].plot(s[K], mean, marker="o", color=color, label=f"{str(algo).upper()} N={n} {storage}")
        if has.any():
            axes[1].errorbar(s[K][has], mean[has], yerr=[mean[has] - lo[has], hi[has] - mean[has]], fmt="none",
                             ecolor=color, capsize=4, linewidth=1.2)
        floor = random_floor(random, int(n))
        if floor is not None:
            axes[1].axhline(floor[0], color=color, linestyle="--", linewidth=1,
                            label=f"random policy N={n} ({floor[0]:.1f})")
    ks = sorted({*map(int, times["k"] if not times.empty else []), *map(int, table[K] if not table.empty else [])})
    for ax, ylabel in zip(axes, ("sampling ms per update round",
                                 "predators' return, last 20 %"), strict=True):
        ax.set_xscale("log", base=2)
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.set_xlabel("neighbor window k")
        ax.set_ylabel(ylabel)
    if not times.empty and times["q75_ms"].max() > 10 * times["q25_ms"].min() > 0:
        axes[0].set_yscale("log")  # lines of several N, an order of magnitude apart: each line's shape visible
    axes[0].legend(fontsize=7, loc="best", title="interleaved benchmark:\nmedian, quartiles", title_fontsize=7)
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    fig.suptitle(words, fontsize=8.5, x=0.01, y=0.995, ha="left", va="top")
    fig.tight_layout()
    if head["learned"] is not True:
        stamp(fig, ["right panel: " + ("no random-policy runs to show learning" if head["learned"] is None else
                                       "runs at or below the random policy's return, which ranks no k")])
    # the footer names the runs drawn: the k sweep's training runs and the benchmark's one
    drawn = [frame.drop_duplicates([c for c in RUN_COLUMNS if c in frame])[[c for c in RUN_COLUMNS if c in frame]]
             for frame in (metrics, rounds)]  # each run's identity as its own table records it (commit included)
    return fig, pd.concat(drawn, ignore_index=True)
