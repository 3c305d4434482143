"""Paper 1, Figure 3 (numbered as in docs/specification.md): sampling-phase time per update round, uniform vs
neighbor, vs agent count, with the % reduction of neighbor sampling on each storage (paper: −26.66 % at N = 3,
−27.39 % at N = 12), each below and right of that N's lower quartiles and inside its panel (the panel's limits
widen to make room, `fit_labels_inside`).

Reads the table of `effmarl sampling-bench` (<out>.parquet: interleaved A B A B medians and quartiles) and draws
uniform beside the headline runs' window (`metrics.ksweep.bench_at_k`: the window the benchmark marked, paper1's
replay.neighbor_k as the profile runs it) where the benchmark measured several (the k sweep's; its figure draws
them all)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from effmarl.analysis.io import named_inputs, read_tables
from effmarl.analysis.metrics import change_pct
from effmarl.analysis.metrics.ksweep import bench_at_k
from effmarl.analysis.style import fit_labels_inside, sampler_color

CAPTION = ("Paper 1, Figure 3: mini-batch sampling phase per update round (per_agent mode: N × [draw B indices, "
           "gather all N agents]), median with quartiles over interleaved rounds, uniform vs neighbor sampling (the "
           "headline runs' window k) on the "
           "reference (openai/maddpg layout) and contiguous storages; labels give neighbor's change vs uniform "
           "on the same storage (below and right of each N's points). Paper 1: −26.66 % (N = 3), −27.39 % (N = 12).")
REPRODUCES = ("Paper 1, Figure 3 (sampling-phase time, uniform vs neighbor, with the % reduction; figures numbered "
              "as in docs/specification.md).")
CLAIM = "Neighbor sampling cuts the sampling phase by 26.66 % (N = 3) and 27.39 % (N = 12)."
OUTPUT = {"group": "paper1", "stem": "sampling_phase_vs_n", "when": "paper1*"}
INPUTS = {"bench": {"result": "paper1_micro/sampling_bench.parquet",
                    "doc": "sampling_bench.parquet of `effmarl sampling-bench`"}}


def reductions(table: pd.DataFrame) -> pd.DataFrame:
    """Neighbor vs uniform change (%) per storage and N."""
    t = table.assign(kind=table.sampler.str.split("_").str[0])
    wide = t.pivot_table(index=["storage", "n_agents"], columns="kind", values="median_ms").reset_index()
    wide["change_%"] = change_pct(wide["neighbor"], wide["uniform"])
    return wide


def make(inputs: list[str]):
    table = bench_at_k(read_tables(named_inputs(inputs, INPUTS, "figure paper1_sampling_bench")["bench"]))
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
