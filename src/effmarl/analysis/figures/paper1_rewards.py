"""Paper 1, figure 6: mean episode reward curves, uniform vs neighbor sampling, with 95 % bootstrap
confidence bands over seeds (all agents' returns summed per episode, smoothed)."""

from __future__ import annotations

from effmarl.analysis.common import named_inputs, panels, read_tables, sampler_color
from effmarl.analysis.metrics import bootstrap_ci, episode_returns, smooth

CAPTION = ("Episode reward (sum of all agents' returns) vs episode, uniform vs neighbor sampling, mean over "
           "seeds with a 95 % percentile bootstrap band (scipy.stats.bootstrap, 2 000 resamples of seeds; a single "
           "seed has no band), moving average over 5 % of the episodes; one panel per algorithm and N (reference "
           "and contiguous storages train identically for a seed, so runs of both storages are pooled per seed).")
INPUTS = {"metrics": "metrics.summary.parquet of the paper-1 scaling studies (any number)"}


def curves(metrics):
    """All-agent return per (algo, N, sampler, seed, episode); storages pooled by mean (identical per seed)."""
    ep = episode_returns(metrics)
    keys = ["cfg.algo", "cfg.env.n_agents", "cfg.replay.sampler", "cfg.seed", "episode"]
    return ep.groupby(keys)["return"].mean().reset_index()


def make(inputs: list[str]):
    summary = read_tables(named_inputs(inputs, INPUTS, "figure paper1_rewards")["metrics"])
    table = curves(summary)
    fig, grid = panels(table, ["cfg.algo", "cfg.env.n_agents"], width=3.8, height=3.2)
    for ax, (algo, n), d in grid:
        for sampler, g in d.groupby("cfg.replay.sampler"):
            wide = g.pivot(index="cfg.seed", columns="episode", values="return").dropna(axis=1)
            smoothed = smooth(wide.to_numpy(), max(1, wide.shape[1] // 20))
            color = sampler_color(sampler)
            ax.plot(wide.columns, smoothed.mean(axis=0), label=f"{sampler} ({len(wide)} seeds)", color=color)
            if len(wide) > 1:
                lo, hi = bootstrap_ci(smoothed)
                ax.fill_between(wide.columns, lo, hi, alpha=0.25, color=color)
        ax.set_xlabel("episode")
        ax.set_ylabel("episode reward (all agents)")
        ax.set_title(f"{algo}, N={n}", fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig, summary
