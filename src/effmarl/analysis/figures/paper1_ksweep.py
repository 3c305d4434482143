"""Paper 1, the k sweep behind the headline neighbor window: sampling time per update round (left) and the
mean episode reward of the last 20 % of episodes (right) vs the window length k (k = 1 is uniform)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from effmarl.analysis.figures.paper1_rewards import final_rewards

CAPTION = ("Neighbor-sampling window k: mini-batch sampling time per update round (ms, inside training) and "
           "mean episode reward (sum of all agents, last 20 % of episodes) vs k, per algorithm, storage and N; "
           "points are seeds, lines their means. k = 1 draws exactly what uniform sampling draws.")
KEYS = ["cfg.algo", "cfg.env.n_agents", "cfg.replay.storage", "cfg.replay.neighbor_k", "cfg.seed"]


def per_run(phases: pd.DataFrame, metrics: pd.DataFrame) -> pd.DataFrame:
    tot = phases.pivot_table(index=KEYS, columns="phase", values=["seconds", "calls"], aggfunc="sum")
    samp = (1e3 * tot[("seconds", "sampling")] / tot[("calls", "update_all_trainers")]).rename("sampling_ms")
    return pd.concat([samp, final_rewards(metrics, KEYS)], axis=1).reset_index()


def make(inputs: list[str]):
    frames = {"phases": [], "metrics": []}
    for path in inputs:
        frames["phases" if "phases" in str(path) else "metrics"].append(pd.read_parquet(path))
    phases, metrics = (pd.concat(frames[k], ignore_index=True) for k in ("phases", "metrics"))
    table = per_run(phases, metrics)
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4))
    for (algo, n, storage), g in table.groupby(["cfg.algo", "cfg.env.n_agents", "cfg.replay.storage"]):
        label = f"{algo} N={n} {storage}"
        for ax, col in zip(axes, ("sampling_ms", "reward"), strict=True):
            ax.scatter(g["cfg.replay.neighbor_k"], g[col], s=12, alpha=0.6)
            m = g.groupby("cfg.replay.neighbor_k")[col].mean()
            ax.plot(m.index, m.values, marker="o", label=label)
    for ax, ylabel in zip(axes, ("sampling ms per update round", "episode reward, last 20 %"), strict=True):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("neighbor window k")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig, phases
