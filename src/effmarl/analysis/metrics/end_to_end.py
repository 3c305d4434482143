"""Paper 1's end-to-end comparison, neighbor vs uniform sampling, per pair and per algorithm (issue 34), and the same
pairs' sampling phase per update round (`sampling_pair_changes`, issue 47: the claims' sampling rows).

A pair p is two runs that differ only in the sampler: same study, algorithm, N, storage, seed and every other grid
key (the neighbor window k belongs to the neighbor side only). With T_u(p) and T_n(p) their training times (the
steady-state sum of the leaf phases, `metrics.run_totals`), the pair's change is

    c(p) = 100 · (T_n(p) / T_u(p) − 1)  %.

Per algorithm a (MADDPG and MASAC are never pooled: their update phases cost differently, so one's pairs are no
draws of the other's change) the statistic is the mean change c̄_a over a's pairs P_a, with its Student-t 95 %
interval c̄_a ± t_{|P_a|−1, 0.975} · s_a / √|P_a| (`stats.mean_interval`, whose coverage at 3 and 5 draws is tested).
The verdict is "neighbor faster" where the interval lies below 0, "neighbor slower" where it lies above 0, and
"undecided" where it contains 0 or there are fewer than 2 pairs (no interval): the pairs' spread is then wider than
the effect. The statistic and its interval are of one quantity, c̄_a; no change of means is mixed in.

T may be read on either clock a phase row carries (`clock_totals`): `seconds` (wall) or `cpu_seconds` (the
process's CPU time, which other processes on the machine do not inflate). The claim and the figure read `CLOCK`,
the process CPU time: the workflow runs timing jobs alone and a study declared `interleave: true` (`paper1`) trains
each pair's two runs alternately in one job, but a load it cannot control (a user's browser, a second command) still
stretches wall time while a run waits for a core; the CPU time of a 1-thread computation does not wait. The wall
clock's change is reported beside it (`paired_clocks`), so a reader sees where the two disagree.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from effmarl.analysis.metrics.phases import LEAF_PHASES, run_totals, sampling_per_round
from effmarl.analysis.metrics.runs import grid_keys, run_columns
from effmarl.analysis.metrics.stats import mean_interval, paired
from effmarl.pairs import PAIR_FIELDS

SAMPLER = "cfg.replay.sampler"
NOT_PAIR_KEYS = {f"cfg.replay.{f}" for f in PAIR_FIELDS}  # what the two runs of a pair may differ in (pairs.py)
ALGO = "cfg.algo"
FASTER, SLOWER, UNDECIDED = "neighbor faster", "neighbor slower", "undecided"
CLOCKS = ("seconds", "cpu_seconds")
CLOCK = "cpu_seconds"  # the clock of the end-to-end claim and figure (module docstring)


def clock_totals(phases: pd.DataFrame, clock: str = "seconds") -> pd.DataFrame:
    """`metrics.run_totals` (per run: `total` = Σ of the leaf phases, `update`) on one clock: `seconds` (wall) or
    `cpu_seconds` (process CPU time). A run with a leaf or update row that lacks the clock (rows written before
    cpu_seconds existed) gets NaN, not a partial sum, and so forms no pair on that clock (`pair_changes`)."""
    if clock not in CLOCKS:
        raise ValueError(f"clock: {clock!r} is not one of {', '.join(CLOCKS)}")
    if clock == "seconds":
        return run_totals(phases)
    timed = phases[phases.phase.isin([*LEAF_PHASES, "update_all_trainers"])]
    values = timed["cpu_seconds"] if "cpu_seconds" in timed else pd.Series(float("nan"), index=timed.index)
    incomplete = timed.assign(_missing=values.isna()).groupby(run_columns(phases))["_missing"].any()
    totals = run_totals(phases.drop(columns="seconds").assign(seconds=phases.get("cpu_seconds", float("nan"))))
    missing = totals.join(incomplete, on=run_columns(phases))["_missing"].fillna(True).to_numpy(dtype=bool)
    totals.loc[missing, ["total", "update"]] = float("nan")
    return totals


def pair_changes(totals: pd.DataFrame, value: str = "total") -> pd.DataFrame:
    """One row per pair of `totals` (one row per run with its `value`, by default `total` seconds, and its
    configuration columns): the pair keys (study, algorithm, N, storage and every other grid key but the sampler and
    k), `uniform` and `neighbor` (the two runs' `value`) and `change_%` = c(p). A run without its counterpart forms
    no pair."""
    keys = [k for k in ("cfg.study", ALGO, "cfg.env.n_agents", "cfg.replay.storage") if k in totals]  # always shown
    keys += [k for k in grid_keys(totals) if k not in NOT_PAIR_KEYS and k not in keys]
    pairs = paired(totals, keys, SAMPLER, value, "uniform", "neighbor").drop(columns="diff")
    pairs["change_%"] = 100.0 * (pairs["neighbor"] / pairs["uniform"] - 1.0)
    return pairs


def verdict(low: float, high: float) -> str:
    """'neighbor faster' (interval below 0), 'neighbor slower' (above 0), else 'undecided' (contains 0, or NaN)."""
    if np.isfinite(high) and high < 0:
        return FASTER
    if np.isfinite(low) and low > 0:
        return SLOWER
    return UNDECIDED


def by_algorithm(pairs: pd.DataFrame, by: tuple[str, ...] = (ALGO,)) -> pd.DataFrame:
    """Per algorithm (or per combination of the `by` columns, which always include the algorithm's where given so),
    sorted: `pairs` (how many), `change_%` (c̄, the mean per-pair change), `low` and `high` (its 95 % t interval; NaN
    under 2 pairs) and `verdict`."""
    by = list(by)
    rows = []
    for values, group in pairs.groupby(by, sort=True):
        low, high = mean_interval(group["change_%"].to_numpy())
        values = values if isinstance(values, tuple) else (values,)
        rows.append({**dict(zip(by, values, strict=True)), "pairs": len(group),
                     "change_%": float(group["change_%"].mean()), "low": low, "high": high,
                     "verdict": verdict(low, high)})
    return pd.DataFrame(rows, columns=[*by, "pairs", "change_%", "low", "high", "verdict"])


def sampling_pair_changes(phases: pd.DataFrame) -> pd.DataFrame:
    """`pair_changes` of the sampling phase per update round inside training (issue 47: the phase the paper's
    −26.66 % / −27.39 % are of) on `CLOCK`, from steady-state phase rows: `uniform` and `neighbor` in ms per round,
    `change_%` = 100 · (S_n / S_u − 1) per pair. A run whose sampling rows lack `CLOCK` forms no pair."""
    per_run = sampling_per_round(phases, CLOCK).dropna(subset=["sampling_ms_per_round"])
    return pair_changes(per_run, "sampling_ms_per_round")


def paired_clocks(phases: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(`pair_changes` on `CLOCK`, `pair_changes` on wall time) of steady-state phase rows `phases`. A run whose
    rows lack `CLOCK` (written before it existed) forms no pair on it."""
    return pair_changes(clock_totals(phases, CLOCK)), pair_changes(clock_totals(phases, "seconds"))
