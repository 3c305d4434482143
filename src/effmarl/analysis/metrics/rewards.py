"""Episode-return metrics: team returns, all-agent returns per run and episode, final reward per run."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.metrics.runs import per_run, run_columns
from effmarl.analysis.metrics.stats import mean_interval

FINAL_EPISODES = 0.2  # the final reward of a run: mean over its last 20 % of episodes (not schedules.FINAL_FRACTION)


def team_returns(metrics: pd.DataFrame) -> pd.DataFrame:
    """Return per run, episode and team (summed over the team's agents), with every configuration column."""
    keys = [*run_columns(metrics), "episode", "team"]
    values = metrics.groupby(keys)["return"].sum().reset_index().set_index(run_columns(metrics))
    return per_run(metrics, values)


def episode_returns(metrics: pd.DataFrame) -> pd.DataFrame:
    """All-agent return per run and episode, with every configuration column."""
    keys = [*run_columns(metrics), "episode"]
    values = metrics.groupby(keys)["return"].sum().reset_index().set_index(run_columns(metrics))
    return per_run(metrics, values)


def final_rewards(metrics: pd.DataFrame, fraction: float = FINAL_EPISODES, team: str | None = None) -> pd.DataFrame:
    """Per run: `reward`, the mean episode return over the last `fraction` of its episodes, summed over all agents
    or, given `team`, over that team's agents (paper 1 measures the predators' return)."""
    ep = episode_returns(metrics if team is None else metrics[metrics["team"] == team])
    keys = run_columns(metrics)
    span = ep.groupby(keys)["episode"].agg(["min", "max"])
    bounds = ep.join(span, on=keys)
    last = ep[bounds["episode"] >= bounds["min"] + (1 - fraction) * (bounds["max"] - bounds["min"])]
    return per_run(metrics, last.groupby(keys)["return"].mean().rename("reward"))


def random_floor(random: pd.DataFrame | None, n_agents: int | None) -> tuple[float, int] | None:
    """The floor a policy that learned clears (paper 1): the random policy's mean predators' return per episode at
    `n_agents` (all N when None) and the episodes it rests on; None without random-policy runs there."""
    if random is None or random.empty:
        return None
    sel = random[random["team"] == "predator"]
    if n_agents is not None and "cfg.env.n_agents" in sel:
        sel = sel[sel["cfg.env.n_agents"] == n_agents]
    if sel.empty:
        return None
    returns = episode_returns(sel)["return"]
    return float(returns.mean()), len(returns)


def learned_cells(final: pd.DataFrame, floor: float, by: list[str]) -> pd.DataFrame:
    """Per cell of `final` (one `reward` per run) grouped by `by`: its `mean` over seeds, the `low` end of its 95 %
    Student-t interval x̄ − t_{n-1, 0.975} · s / √n (stats.mean_interval; its only value with one seed) and whether it
    `learned`: `low` above the random policy's mean return `floor`. The one rule of paper 1's reward claims and of the
    k sweep."""
    rows = []
    for key, values in final.groupby(by)["reward"]:
        lo, _ = mean_interval(values.to_numpy())
        low = float(values.min() if pd.isna(lo) else lo)
        rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                     "mean": float(values.mean()), "low": low, "learned": low > floor})
    return pd.DataFrame(rows, columns=[*by, "mean", "low", "learned"])


def final_win_rates(metrics: pd.DataFrame, last: int) -> pd.DataFrame:
    """Per run: `win_rate`, the mean test win rate of its last `last` evaluations, with every configuration column."""
    keys = run_columns(metrics)
    tail = metrics.sort_values("env_steps").groupby(keys, group_keys=False).tail(last)
    return per_run(metrics, tail.groupby(keys)["test_win_rate"].mean().rename("win_rate"))
