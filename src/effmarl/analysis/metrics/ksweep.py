"""The neighbor window k sweep (paper 1: "headline runs use one k, chosen and justified by a k sweep"). Time: per
configuration line of the interleaved sampling benchmark (`effmarl sampling-bench --k ...`, its rounds table: N,
storage) and k, the median ms per update round and its quartiles over the rounds; the fastest k by median; and
whether it is separated from the next fastest k by a paired interval over the benchmark's repetitions: in rep r
both k were timed in the same interleaved cycle, d_r = log(t_next,r / t_best,r), and the 95 % Student-t interval
of the mean of d (stats.mean_interval) lies above 0 (the ratio exp(mean d) with its interval is quoted). The
benchmark runs alone, every k under the same drift; the sampling times of the k sweep's training runs (2 seeds
whose times differed up to 2.8x) no longer rank k. Return: per configuration line of the k sweep's training runs
(algorithm, N, storage) and k, the mean final predators' return over seeds with its 95 % Student-t interval, and
the k with the best mean return, which ranks k only where every k's runs learned (the lower end of its interval
above the random policy's return, as paper 1's reward claims require). The k-sweep figure draws it; the claims
table quotes it. Which k the headline runs use is decided once, `studies.headline_k`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from effmarl.analysis.metrics.rewards import final_rewards, learned_cells, random_floor
from effmarl.analysis.metrics.stats import mean_interval

LINES = ["cfg.algo", "cfg.env.n_agents", "cfg.replay.storage"]  # a line of the k sweep's training runs
BENCH_LINES = ["n_agents", "storage"]  # a line of the sampling benchmark's rounds
K = "cfg.replay.neighbor_k"


def bench_at_k(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of a sampling-benchmark table (summary or rounds) that its readers quote: uniform and the headline
    runs' window, marked `headline` by the benchmark (`--headline-k`, which the workflow sets from
    studies.headline_k). A table without the mark (one measured window, older benchmarks) is quoted whole."""
    return table[table["headline"].astype(bool)] if "headline" in table else table


def per_run(metrics: pd.DataFrame | None) -> pd.DataFrame:
    """One row per training run of the k sweep: its configuration and final predators' `reward` (the mean return of
    the last 20 % of its episodes); empty without metrics."""
    if metrics is None or metrics.empty:
        return pd.DataFrame(columns=[*LINES, K, "reward"])
    return final_rewards(metrics, team="predator")


def _interval(values: np.ndarray) -> tuple[float, float, str]:
    """The 95 % Student-t interval of the mean over seeds (stats.mean_interval, whose coverage at 3 and 5 seeds is
    tested; with 2 seeds it has 1 degree of freedom and is wide, as it must be); none with 1 seed."""
    lo, hi = mean_interval(values)
    return (float(lo), float(hi), "95 % t") if np.isfinite(lo) else (np.nan, np.nan, "none")


def by_k(table: pd.DataFrame) -> pd.DataFrame:
    """Per configuration line (`LINES` present in the `per_run` table) and k: `seeds`, the mean final `reward`
    over seeds (`reward_mean`), its interval `reward_lo`/`reward_hi` and the interval's kind (`interval`)."""
    lines = [c for c in LINES if c in table]
    rows = []
    for key, g in table.groupby([*lines, K], sort=True):
        row = dict(zip([*lines, K], key if isinstance(key, tuple) else (key,), strict=True))
        row["seeds"] = len(g)
        values = g["reward"].to_numpy(dtype=float)
        row["reward_mean"] = float(np.nanmean(values)) if np.isfinite(values).any() else np.nan
        row["reward_lo"], row["reward_hi"], row["interval"] = _interval(values)
        rows.append(row)
    return pd.DataFrame(rows, columns=[*lines, K, "seeds", "reward_mean", "reward_lo", "reward_hi", "interval"])


def neighbor_rounds(rounds: pd.DataFrame) -> pd.DataFrame:
    """The benchmark's rounds of the neighbor windows (uniform, k 0, has none), with `ms` per round."""
    sel = rounds[rounds["sampler"].astype(str).str.startswith("neighbor")]
    return sel.assign(k=sel["k"].astype(int), ms=sel["seconds"] * 1e3)


def times_by_k(rounds: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark line (`BENCH_LINES`: N, storage) and k: the `median_ms` per update round, its quartiles
    `q25_ms`/`q75_ms` and the `rounds` they rest on."""
    sel = neighbor_rounds(rounds)
    g = sel.groupby([*BENCH_LINES, "k"], sort=True)["ms"]
    return pd.DataFrame({"median_ms": g.median(), "q25_ms": g.quantile(0.25), "q75_ms": g.quantile(0.75),
                         "rounds": g.size()}).reset_index()


def _k(value) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def paired_ratio(rounds: pd.DataFrame, fast: int, slow: int) -> dict:
    """The paired comparison of windows `slow` and `fast` over one line's benchmark reps: per rep r timed both,
    d_r = log(t_slow,r / t_fast,r); `ratio` exp(mean d), its 95 % t interval `lo`/`hi` (exp of stats.mean_interval
    of d; NaN below 2 reps) and the `reps` paired."""
    wide = neighbor_rounds(rounds).pivot_table(index="rep", columns="k", values="ms", aggfunc="mean")
    d = np.log(wide[slow] / wide[fast]).dropna().to_numpy() if {fast, slow} <= set(wide.columns) else np.array([])
    lo, hi = mean_interval(d)
    return {"ratio": float(np.exp(d.mean())) if len(d) else np.nan, "lo": float(np.exp(lo)),
            "hi": float(np.exp(hi)), "reps": len(d)}


def _time_line(times: pd.DataFrame, rounds: pd.DataFrame) -> dict:
    """The time headline of one benchmark line: its `times_by_k` rows and its rounds."""
    ranked = times.sort_values(["median_ms", "k"])
    if ranked.empty:
        return {"best_k_time": None, "separated": False, "text": "no sampling times", "short": "no sampling times"}
    best = ranked.iloc[0]
    best_k = _k(best["k"])
    short = f"k = {best_k} fastest, {best['median_ms']:.2f} ms [{best['q25_ms']:.2f}–{best['q75_ms']:.2f}]"
    text = (f"k = {best_k} has the lowest median sampling time per update round, {best['median_ms']:.2f} ms "
            f"(quartiles {best['q25_ms']:.2f}–{best['q75_ms']:.2f}, {int(best['rounds'])} interleaved rounds)")
    if len(ranked) < 2:
        return {"best_k_time": best_k, "separated": False, "text": text + ", the only k measured",
                "short": short + ", the only k measured"}
    nxt = ranked.iloc[1]
    pair = paired_ratio(rounds, int(best["k"]), int(nxt["k"]))
    separated = bool(np.isfinite(pair["lo"]) and pair["lo"] > 1)
    against = f"the next fastest, k = {_k(nxt['k'])} ({nxt['median_ms']:.2f} ms)"
    if not np.isfinite(pair["lo"]):
        text += (f", not separated from {against}: fewer than 2 reps timed both, no paired interval")
        short += f", not separated from k = {_k(nxt['k'])} (no paired interval)"
    else:
        short += (f", {'' if separated else 'not '}separated from k = {_k(nxt['k'])} ({nxt['median_ms']:.2f} ms; "
                  f"ratio {pair['ratio']:.3f}, 95 % t {pair['lo']:.3f}–{pair['hi']:.3f})")
        ratio = (f"k = {_k(nxt['k'])} takes {pair['ratio']:.3f}× as long in the same interleaved rep (geometric mean "
                 f"over {pair['reps']} reps, 95 % t interval {pair['lo']:.3f}–{pair['hi']:.3f}×")
        text += (f", separated from {against}: {ratio}, above 1)" if separated else
                 f", not separated from {against}: {ratio}, which reaches 1)")
    return {"best_k_time": best_k, "separated": separated, "ratio": pair["ratio"], "ratio_lo": pair["lo"],
            "ratio_hi": pair["hi"], "text": text, "short": short}


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


def _reward_line(stats: pd.DataFrame, runs: pd.DataFrame, floor: tuple[float, int] | None = None) -> dict:
    """The return headline of one training line's `by_k` rows and `per_run` rows; `floor` the random policy's
    return at its N."""
    rewards = stats.dropna(subset=["reward_mean"])
    if rewards.empty:
        return {"best_k_reward": None, "learned": None, "text": "no returns"}
    best = _k(rewards.loc[rewards["reward_mean"].idxmax(), K])
    learned, qualifier = _learning(runs, floor)
    return {"best_k_reward": best, "learned": learned, "text": f"k = {best}{qualifier}"}


def _line_name(values: dict) -> str:
    parts = []
    if "cfg.algo" in values:
        parts.append(str(values["cfg.algo"]).upper())
    for key in ("cfg.env.n_agents", "n_agents"):
        if key in values:
            parts.append(f"N = {values[key]}")
    for key in ("cfg.replay.storage", "storage"):
        if key in values:
            parts.append(f"{values[key]} storage")
    return ", ".join(parts)


def _groups(table: pd.DataFrame, lines: list[str]):
    lines = [c for c in lines if c in table]
    if not lines:
        yield {}, table
        return
    for key, g in table.groupby(lines, sort=True):
        yield dict(zip(lines, key if isinstance(key, tuple) else (key,), strict=True)), g


def _agreed(parts: list[dict], field: str):
    found = {p[field] for p in parts}
    return found.pop() if len(found) == 1 else None


def headline(rounds: pd.DataFrame | None, metrics_summary: pd.DataFrame | None,
             random: pd.DataFrame | None = None) -> dict:
    """The k sweep's headline. Time from the interleaved sampling benchmark's `rounds` (<out>.rounds.parquet of
    `effmarl sampling-bench --k ...`, taken alone): per line (N, storage) the k of the lowest median ms per update
    round, separated from the next fastest k where the 95 % t interval of the per-rep log ratio of their times lies
    above 0. Return from the k sweep's training runs (`metrics_summary`; None: no return) against the random
    policy's (`random`, the floor the runs' return must clear before it ranks k).

    Returns {"best_k_time": the fastest k by median (None without rounds), "separated": whether it is separated
    from the next fastest k by the paired interval, "best_k_reward": the k with the highest mean final predators'
    return (None without returns), "learned": whether every k's runs clear the random policy's return (None without
    returns or random-policy runs), "text": the sentences saying so with medians, quartiles, the ratio and its
    interval, seeds, "lines": one dict per benchmark line (its "line" name, "n_agents", "best_k_time", "separated",
    "ratio", "ratio_lo", "ratio_hi", "text" and its "short" form, which the text of several lines quotes),
    "reward_lines": one per training line (algorithm, N, storage), "times": the `times_by_k` table, "per_k": the
    `by_k` table of returns}. With several lines, best_k_time and best_k_reward are the k every line agrees on (None
    where they differ), separated and learned hold only if they hold in every line, and the text names each line."""
    times = times_by_k(rounds) if rounds is not None and not rounds.empty else pd.DataFrame()
    time_parts = []
    for values, g in (_groups(times, BENCH_LINES) if not times.empty else ()):
        sel = rounds[np.logical_and.reduce([rounds[c] == v for c, v in values.items()])] if values else rounds
        time_parts.append({"line": _line_name(values), "n_agents": values.get("n_agents"),
                           **_time_line(g, sel)})
    table = per_run(metrics_summary)
    stats = by_k(table)
    reward_parts = []
    for values, g in (_groups(stats, LINES) if not stats.empty else ()):
        n = values.get("cfg.env.n_agents")
        floor = random_floor(random, int(n) if n is not None else None)
        runs = table[np.logical_and.reduce([table[c] == v for c, v in values.items()])] if values else table
        reward_parts.append({"line": _line_name(values), "n_agents": n, **_reward_line(g, runs, floor)})

    if not time_parts:
        text = "Sampling time: no interleaved sampling-benchmark rounds."
    elif len(time_parts) == 1:
        text = f"Sampling time (interleaved benchmark, taken alone): {time_parts[0]['text']}."
    else:  # several lines: the method said once, each line in short
        text = ("Sampling time per update round (interleaved benchmark, taken alone), median [quartiles] over the "
                "rounds; separated: the 95 % t interval of the next fastest k's per-rep time ratio to the fastest's "
                "lies above 1. " + "; ".join(f"{p['line']}: {p['short']}" for p in time_parts) + ".")
    if reward_parts:
        text += (f" Best mean final predators' return: {reward_parts[0]['text']}." if len(reward_parts) == 1 else
                 " Best mean final predators' return: " + "; ".join(f"{p['line']}: {p['text']}"
                                                                     for p in reward_parts) + ".")
    return {"best_k_time": _agreed(time_parts, "best_k_time") if time_parts else None,
            "separated": bool(time_parts) and all(p["separated"] for p in time_parts),
            "best_k_reward": _agreed(reward_parts, "best_k_reward") if reward_parts else None,
            "learned": (None if not reward_parts or any(p["learned"] is None for p in reward_parts)
                        else all(p["learned"] for p in reward_parts)),
            "text": text, "lines": time_parts, "reward_lines": reward_parts, "times": times, "per_k": stats}
