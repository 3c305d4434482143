"""Paper 1, figure 6: mean episode reward curves, uniform vs neighbor sampling, with 95 % bootstrap
confidence bands over seeds (all agents' returns summed per episode, smoothed by a moving average)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from effmarl.analysis.common import panels, read_tables

CAPTION = ("Episode reward (sum of all agents' returns) vs episode, uniform vs neighbor sampling, mean over "
           "seeds with a 95 % bootstrap confidence band (2 000 resamples of seeds; a single seed has no band), "
           "moving average over 5 % of the episodes; one panel per algorithm and N (reference and contiguous "
           "storages train identically for a seed, so runs of both storages are pooled per seed).")


def bootstrap_ci(values: np.ndarray, n_boot: int = 2000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """95 % percentile bootstrap CI of the mean over axis 0 (seeds) for each column (episode)."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(values), size=(n_boot, len(values)))
    means = values[idx].mean(axis=1)
    return np.percentile(means, 2.5, axis=0), np.percentile(means, 97.5, axis=0)


def final_rewards(metrics: pd.DataFrame, keys: list[str], fraction: float = 0.2) -> pd.Series:
    """Per run (grouped by `keys`): the mean all-agent episode return over the last `fraction` of its episodes."""
    episodes = metrics.groupby(keys + ["episode"])["return"].sum().reset_index()
    last = episodes.groupby(keys)["episode"].transform(lambda e: e >= e.min() + (1 - fraction) * (e.max() - e.min()))
    return episodes[last].groupby(keys)["return"].mean().rename("reward")


def curves(summary: pd.DataFrame) -> pd.DataFrame:
    """All-agent return per (algo, N, sampler, seed, episode); storages pooled by mean (identical per seed)."""
    per_run = summary.groupby(["cfg.algo", "cfg.env.n_agents", "cfg.replay.sampler", "cfg.seed", "run_id",
                               "episode"])["return"].sum().reset_index()
    return per_run.groupby(["cfg.algo", "cfg.env.n_agents", "cfg.replay.sampler", "cfg.seed", "episode"])[
        "return"].mean().reset_index()


def make(inputs: list[str]):
    summary = read_tables(inputs)
    table = curves(summary)
    fig, grid = panels(table, ["cfg.algo", "cfg.env.n_agents"], width=3.8, height=3.2)
    for ax, (algo, n), d in grid:
        for sampler, g in d.groupby("cfg.replay.sampler"):
            wide = g.pivot(index="cfg.seed", columns="episode", values="return").dropna(axis=1)
            window = max(1, wide.shape[1] // 20)
            smooth = wide.T.rolling(window, min_periods=1).mean().T.to_numpy()
            mean = smooth.mean(axis=0)
            ax.plot(wide.columns, mean, label=f"{sampler} ({len(wide)} seeds)")
            if len(wide) > 1:
                lo, hi = bootstrap_ci(smooth)
                ax.fill_between(wide.columns, lo, hi, alpha=0.25)
        ax.set_xlabel("episode")
        ax.set_ylabel("episode reward (all agents)")
        ax.set_title(f"{algo}, N={n}", fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig, summary
