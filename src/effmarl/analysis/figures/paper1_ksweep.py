"""Paper 1, the k sweep behind the headline neighbor window: sampling time per update round (left) and the
mean episode reward of the last 20 % of episodes (right) vs the window length k (k = 1 is uniform)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from effmarl.analysis.common import named_inputs, read_tables
from effmarl.analysis.metrics import RUN_ID, final_rewards, sampling_per_round

CAPTION = ("Neighbor-sampling window k: mini-batch sampling time per update round (ms, inside training) and "
           "mean episode reward (sum of all agents, last 20 % of episodes) vs k, per algorithm, storage and N; "
           "points are seeds, lines their means. k = 1 draws exactly what uniform sampling draws.")
INPUTS = {"phases": "phases.summary.parquet of the k-sweep study",
          "metrics": "metrics.summary.parquet of the k-sweep study"}
LINES = ["cfg.algo", "cfg.env.n_agents", "cfg.replay.storage"]


def per_run(phases: pd.DataFrame, metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per run: its configuration, `sampling_ms` per update round and final `reward`."""
    samp = sampling_per_round(phases).rename(columns={"sampling_ms_per_round": "sampling_ms"})
    return samp.merge(final_rewards(metrics)[[*RUN_ID, "reward"]], on=RUN_ID, how="inner")


def make(inputs: list[str]):
    named = named_inputs(inputs, INPUTS, "figure paper1_ksweep")
    phases, metrics = read_tables(named["phases"]), read_tables(named["metrics"])
    table = per_run(phases, metrics)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for i, ((algo, n, storage), g) in enumerate(table.groupby(LINES)):
        color = plt.get_cmap("tab10").colors[i % 10]
        for ax, col in zip(axes, ("sampling_ms", "reward"), strict=True):
            ax.scatter(g["cfg.replay.neighbor_k"], g[col], s=12, alpha=0.6, color=color)
            m = g.groupby("cfg.replay.neighbor_k")[col].mean()
            ax.plot(m.index, m.values, marker="o", color=color, label=f"{algo} N={n} {storage}")
    for ax, ylabel in zip(axes, ("sampling ms per update round", "episode reward, last 20 %"), strict=True):
        ax.set_xscale("log", base=2)
        ks = sorted(table["cfg.replay.neighbor_k"].unique())
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.set_xlabel("neighbor window k")
        ax.set_ylabel(ylabel)
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    return fig, phases
