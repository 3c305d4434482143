"""Paper 1, figure 6: the predators' return (paper 1's measure: the predator team's return per episode, summed
over predators) against episodes, uniform vs neighbor sampling, mean over seeds with a 95 % bootstrap band, beside
the random policy's mean return at the same N (the floor a policy that learned clears). A panel whose runs end
below that floor is stamped illustrative: "no degradation" between policies that did not learn says nothing."""

from __future__ import annotations

from effmarl.analysis.io import named_inputs, read_tables, stamp
from effmarl.analysis.metrics import bootstrap_ci, episode_returns, final_rewards, random_floor, smooth
from effmarl.analysis.style import panels, sampler_color

CAPTION = ("Paper 1, Figure 6: predators' return per episode (summed over the predators) vs episode, uniform vs "
           "neighbor sampling, mean over seeds with a 95 % percentile bootstrap band (2 000 resamples of seeds; a "
           "single seed has no band), moving average over 5 % of the episodes; dashed: the random policy's mean "
           "predators' return at the same N. One panel per algorithm and N; storages pooled per seed (they train "
           "identically).")
REPRODUCES = "Paper 1, figure 6 (reward curves)."
CLAIM = ("Neighbor sampling causes no significant degradation of reward, where both samplers' predators learn "
         "(clear the random policy).")
OUTPUT = {"group": "paper1", "stem": "reward_curves"}
# the reward claim's study where the profile has one (its predators learn), else paper1's runs
INPUTS = {"metrics": {"study": ["paper1_reward", "paper1"], "take": "first",
                      "doc": "metrics.summary.parquet of the reward study (any number)"},
          "random": {"study": "skeleton", "optional": True,
                     "doc": "metrics.summary.parquet of the random policy (the floor)"}}


def curves(metrics):
    """Predators' return per (algo, N, sampler, seed, episode); storages pooled by mean (identical per seed)."""
    ep = episode_returns(metrics[metrics["team"] == "predator"])
    keys = ["cfg.algo", "cfg.env.n_agents", "cfg.replay.sampler", "cfg.seed", "episode"]
    return ep.groupby(keys)["return"].mean().reset_index()


def floors(random) -> dict:
    """The random policy's mean predators' return per N (metrics.random_floor)."""
    if random is None or random.empty:
        return {}
    return {n: random_floor(random, n)[0] for n in sorted(random["cfg.env.n_agents"].unique())}


def make(inputs: list[str]):
    named = named_inputs(inputs, INPUTS, "figure paper1_rewards")
    summary = read_tables(named["metrics"])
    floor = floors(read_tables(named["random"]) if named["random"] else None)
    table = curves(summary)
    final = final_rewards(summary, team="predator")
    fig, grid = panels(table, ["cfg.algo", "cfg.env.n_agents"], width=3.8, height=3.2)
    below = []
    for ax, (algo, n), d in grid:
        for sampler, g in d.groupby("cfg.replay.sampler"):
            wide = g.pivot(index="cfg.seed", columns="episode", values="return").dropna(axis=1)
            smoothed = smooth(wide.to_numpy(), max(1, wide.shape[1] // 20))
            color = sampler_color(sampler)
            ax.plot(wide.columns, smoothed.mean(axis=0), label=f"{sampler} ({len(wide)} seeds)", color=color)
            if len(wide) > 1:
                lo, hi = bootstrap_ci(smoothed)
                ax.fill_between(wide.columns, lo, hi, alpha=0.25, color=color)
        if n in floor:
            ax.axhline(floor[n], color="0.3", linestyle="--", linewidth=1, label=f"random policy ({floor[n]:.1f})")
            cell = final[(final["cfg.algo"] == algo) & (final["cfg.env.n_agents"] == n)]
            if (cell.groupby("cfg.replay.sampler")["reward"].mean() <= floor[n]).any():
                below.append(f"{algo.upper()} N={n} ends at or below the random policy")
        ax.set_xlabel("episode")
        ax.set_ylabel("predators' return")
        ax.set_title(f"{algo.upper()}, N={n}", fontsize=9)
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    stamp(fig, below if floor else ["no random-policy runs to show learning"])
    return fig, summary
