"""The neighbor window k sweep (paper 1: "headline runs use one k, chosen and justified by a k sweep"): per
configuration line (algorithm, N, storage) and k, the mean sampling ms per update round and the mean final
predators' return over seeds with their 95 % Student-t interval (stats.mean_interval), and the headline: the fastest
k, whether its interval is apart from the next fastest k's, and the k with the best mean return, which ranks k only
where every k's runs learned (the lower end of its interval above the random policy's return, as paper 1's reward
claims require). The k-sweep figure draws it; the claims table quotes it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from effmarl.analysis.metrics.phases import sampling_per_round
from effmarl.analysis.metrics.rewards import final_rewards, learned_cells, random_floor
from effmarl.analysis.metrics.runs import RUN_ID
from effmarl.analysis.metrics.stats import mean_interval

LINES = ["cfg.algo", "cfg.env.n_agents", "cfg.replay.storage"]
K = "cfg.replay.neighbor_k"


def per_run(phases: pd.DataFrame, metrics: pd.DataFrame | None) -> pd.DataFrame:
    """One row per run: its configuration, `sampling_ms` per update round and final `reward` (NaN without
    metrics)."""
    samp = sampling_per_round(phases).rename(columns={"sampling_ms_per_round": "sampling_ms"})
    if metrics is None:
        return samp.assign(reward=np.nan)
    return samp.merge(final_rewards(metrics, team="predator")[[*RUN_ID, "reward"]], on=RUN_ID, how="inner")


def _interval(values: np.ndarray) -> tuple[float, float, str]:
    """The 95 % Student-t interval of the mean over seeds (stats.mean_interval, whose coverage at 3 and 5 seeds is
    tested; with 2 seeds it has 1 degree of freedom and is wide, as it must be); none with 1 seed."""
    lo, hi = mean_interval(values)
    return (float(lo), float(hi), "95 % t") if np.isfinite(lo) else (np.nan, np.nan, "none")


def by_k(table: pd.DataFrame) -> pd.DataFrame:
    """Per configuration line (`LINES` present in `table`) and k: `seeds`, and for `time` (sampling ms per round)
    and `reward` the mean over seeds, its interval `_lo`/`_hi` and the interval's kind (`interval`)."""
    lines = [c for c in LINES if c in table]
    rows = []
    for key, g in table.groupby([*lines, K], sort=True):
        row = dict(zip([*lines, K], key if isinstance(key, tuple) else (key,), strict=True))
        row["seeds"] = len(g)
        for name, col in (("time", "sampling_ms"), ("reward", "reward")):
            values = g[col].to_numpy(dtype=float)
            row[f"{name}_mean"] = float(np.nanmean(values)) if np.isfinite(values).any() else np.nan
            row[f"{name}_lo"], row[f"{name}_hi"], kind = _interval(values)
            if name == "time":
                row["interval"] = kind
        rows.append(row)
    return pd.DataFrame(rows)


def _k(value) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _learning(runs: pd.DataFrame, floor: tuple[float, int] | None) -> tuple[bool | None, str]:
    """Whether every k's runs learned (metrics.learned_cells, the rule of paper 1's reward claims) against the
    random policy's return `floor`, and the words that qualify the best-return k accordingly."""
    if floor is None:
        return None, " (no random-policy runs to show that any k's predators learned)"
    cells = learned_cells(runs.dropna(subset=["reward"]), floor[0], [K])
    below = [_k(k) for k in cells.loc[~cells["learned"], K]]
    if not below:
        return True, ""
    which = "no k clears" if len(below) == len(cells) else f"k = {', '.join(map(str, below))} do not clear"
    return False, (f", but {which} the random policy's return ({floor[0]:.1f}, {floor[1]} episodes): "
                   "the return ranks no k")


def _line_headline(stats: pd.DataFrame, runs: pd.DataFrame, floor: tuple[float, int] | None = None) -> dict:
    """The headline of one configuration line's `by_k` rows and `per_run` rows; `floor` the random policy's return
    at its N."""
    ranked = stats.dropna(subset=["time_mean"]).sort_values("time_mean")
    if ranked.empty:
        return {"best_k_time": None, "best_k_reward": None, "separated": False, "learned": None,
                "text": "no sampling times."}
    best = ranked.iloc[0]
    best_k_time = _k(best[K])
    rewards = stats.dropna(subset=["reward_mean"])
    best_k_reward = _k(rewards.loc[rewards["reward_mean"].idxmax(), K]) if len(rewards) else None

    def spread(r) -> str:
        if not np.isfinite(r["time_lo"]):
            return f"{int(r['seeds'])} seed{'s' if r['seeds'] != 1 else ''}, no interval"
        return f"{r['interval']} over {int(r['seeds'])} seeds {r['time_lo']:.2f}–{r['time_hi']:.2f}"

    text = f"k = {best_k_time} has the lowest mean sampling time, {best['time_mean']:.2f} ms ({spread(best)})"
    if len(ranked) < 2:
        separated = False
        text += ", the only k swept"
    else:
        nxt = ranked.iloc[1]
        finite = all(np.isfinite(r[c]) for r in (best, nxt) for c in ("time_lo", "time_hi"))
        separated = bool(finite and best["time_hi"] < nxt["time_lo"])
        against = f"k = {_k(nxt[K])}'s {nxt['time_mean']:.2f} ms ({spread(nxt)})"
        text += (f", separated from the next fastest, {against}: the intervals do not overlap" if separated else
                 f", not separated from the next fastest, {against}: "
                 + ("the intervals overlap" if finite else "without intervals no separation is shown"))
    learned = None
    if best_k_reward is not None:
        learned, qualifier = _learning(runs, floor)
        text += f". Best mean final predators' return: k = {best_k_reward}{qualifier}."
    else:
        text += "."
    return {"best_k_time": best_k_time, "best_k_reward": best_k_reward, "separated": separated, "learned": learned,
            "text": text}


def _line_name(values: dict) -> str:
    parts = []
    if "cfg.algo" in values:
        parts.append(str(values["cfg.algo"]).upper())
    if "cfg.env.n_agents" in values:
        parts.append(f"N = {values['cfg.env.n_agents']}")
    if "cfg.replay.storage" in values:
        parts.append(f"{values['cfg.replay.storage']} storage")
    return ", ".join(parts)


def headline(phases_summary: pd.DataFrame, metrics_summary: pd.DataFrame | None,
             random: pd.DataFrame | None = None) -> dict:
    """The k sweep's headline from its phases and metrics summaries (metrics may be None: no reward then) and the
    random policy's metrics (`random`, the floor the runs' return must clear before it ranks k).

    Returns {"best_k_time": the k with the lowest mean sampling ms per update round, "best_k_reward": the k with
    the highest mean final reward (None without rewards), "learned": whether every k's runs clear the random
    policy's return (None without rewards or random-policy runs), "separated": whether the fastest k's interval
    over seeds lies wholly below the next fastest k's (False where either has no interval), "text": one sentence
    saying so with means, intervals and seed counts, "lines": one such dict per configuration line (algorithm, N,
    storage) with its "line" name and "n_agents", "per_k": the `by_k` table}. With several configuration lines,
    best_k_time and best_k_reward are the k every line agrees on (None where they differ), separated and learned
    hold only if they hold in every line, and the text names each line."""
    table = per_run(phases_summary, metrics_summary)
    stats = by_k(table)
    lines = [c for c in LINES if c in stats]
    parts = []
    for key, g in (stats.groupby(lines, sort=True) if lines else [((), stats)]):
        values = dict(zip(lines, key if isinstance(key, tuple) else (key,), strict=True))
        n = values.get("cfg.env.n_agents")
        floor = random_floor(random, int(n) if n is not None else None)
        runs = table[np.logical_and.reduce([table[c] == v for c, v in values.items()])] if values else table
        parts.append({"line": _line_name(values), "n_agents": n, **_line_headline(g, runs, floor)})
    if len(parts) == 1:
        out = {k: v for k, v in parts[0].items() if k not in ("line", "n_agents")}
    else:
        def agreed(field):
            found = {p[field] for p in parts}
            return found.pop() if len(found) == 1 else None
        out = {"best_k_time": agreed("best_k_time"), "best_k_reward": agreed("best_k_reward"),
               "separated": all(p["separated"] for p in parts),
               "learned": (None if any(p["learned"] is None for p in parts) else all(p["learned"] for p in parts)),
               "text": " ".join(f"{p['line']}: {p['text']}" for p in parts)}
    return {**out, "lines": parts, "per_k": stats}
