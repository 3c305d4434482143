"""Paper-2 (MAST) metrics: the per-run win-rate statistic, its aggregate over seeds, a method against dense, the
wording of the 3 % verdict, and learning curves aligned on the evaluation grid (the sparsity selection:
metrics.selection; Table 1's cells: metrics.table1; the ablations: metrics.ablations; how many seeds an undecided
comparison would need: metrics.power).

The statistic (paper 2, Table 1): per run, the mean test win rate of its last K evaluations (K = 20 in the paper,
i.e. its final 10 % of training; here min(K, available) within the run's final 10 %); across seeds, the mean (the
paper's) with its 95 % Student-t interval (`stats.mean_interval`), and against dense the ratio of the means with
Fieller's 95 % interval (`stats.ratio_interval`, Welch's degrees of freedom); both intervals' coverage at 3 and 5 seeds
is checked by tests/test_stats_coverage.py. The mean, not rliable's interquartile mean: with the 3-8 seeds of a
profile a trimmed mean keeps only h = n - 2 int(n / 4) of them (4 of 6, 4 of 8), so its interval needs more seeds
for the same decision (MAST / RigL at 99 % on SMAX 3m: 11 seeds each for 80 % power under Holm against 8 for the
mean, metrics.power). Every aggregate carries `seeds`, the number of runs it rests on; one seed has no interval (NaN).
`STATISTIC` words it once for every caption. Curves: each run's evaluations on the exact grid `eval_step`,
Savitzky-Golay smoothed per run (window 21, order 2, ≤ 1/3 of the series length), then mean and 95 % bootstrap band
over seeds per x."""

from __future__ import annotations

import numpy as np
import pandas as pd

from effmarl.analysis.metrics.power import needed_text, seeds_needed
from effmarl.analysis.metrics.runs import per_run, require_alike, run_columns
from effmarl.analysis.metrics.stats import (
    bootstrap_ci,
    mean_interval,
    probability_of_improvement,
    ratio_interval,
    savgol,
)
from effmarl.profile_checks import COMPARABLE_SETTINGS
from effmarl.schedules import FINAL_FRACTION, LAST_K

# LAST_K (20): evaluations averaged per run (the paper's last 20), within the final FINAL_FRACTION (10 %) of the run
# (the paper's last 20 of 200 evaluations); defined in effmarl.schedules, where the profile checks read them too.
SG_WINDOW, SG_ORDER = 21, 2  # the paper's Savitzky-Golay filter
TOLERANCE = 0.03  # admissible: MAST >= (1 - 3 %) x dense
# the statistic as every paper-2 caption words it (the per-run value and the aggregate over seeds)
STATISTIC = (f"per run the mean test win rate of its last min({LAST_K}, available) evaluations in the final "
             f"{100 * FINAL_FRACTION:g} % of training (paper 2's statistic); over seeds the mean with its 95 % "
             "Student-t interval (none for 1 seed)")
RATIO_STATISTIC = "ratio of the means over seeds with Fieller's 95 % interval"


def win_rate_label(k: int = LAST_K) -> str:
    """The y label of every paper-2 win-rate axis."""
    return f"win rate (mean over seeds, final {100 * FINAL_FRACTION:g} %, <= {k} evals)"

ALGO, MAP, METHOD, SPARSITY, SEED = "cfg.algo", "cfg.env.map", "cfg.sparse.method", "cfg.sparse.sparsity", "cfg.seed"
DELTA_M = "cfg.sparse.delta_m"
STAT_COLUMNS = ["mean", "mean_lo", "mean_hi", "std", "seeds"]
RATIO_COLUMNS = ["size", "size_ratio", "train_flops_ratio", "inference_flops_ratio"]
# What every run of one comparison (a selection or Table-1 cell, a Fig. 8 panel) must share (studies.py, which checks
# a profile's configs before any job starts; here the results are checked, whichever runs they come from).
SHARED_SETTINGS = [f"cfg.{path}" for path in COMPARABLE_SETTINGS]


def seeds_text(seeds) -> str:
    """'n = 1 seed', 'n = 3 seeds', 'n = 2-3 seeds' (a range where the count differs, e.g. across x)."""
    values = sorted({int(s) for s in np.atleast_1d(seeds) if pd.notna(s)})
    if not values:
        return "n = 0 seeds"
    text = str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}"
    return f"n = {text} seed" + ("" if values == [1] else "s")


def interval_text(lo, hi, digits: int = 2, why: str = "1 seed") -> str:
    """'[0.41, 0.62]', or 'no interval (<why>)' where the bounds are NaN."""
    if pd.isna(lo) or pd.isna(hi):
        return f"no interval ({why})"
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


UNDECIDED = "undecided"


def versus_tolerance(point, lo, hi, tolerance: float = TOLERANCE) -> str:
    """The verdict on a method / dense ratio against the bar 1 − tolerance (0.97), an equivalence question decided by
    its 95 % interval [lo, hi] alone: 'within 3 % by its whole interval' (lo ≥ 0.97), 'more than 3 % below by its
    whole interval' (hi < 0.97), else 'undecided (its interval straddles 0.97; the point estimate is above / below)'
    or 'undecided (no interval; ...)'. The one place every paper-2 '< 3 % below dense' verdict is worded
    (select_sparsity, table1_cells, the claims); `needed` (metrics.power.needed_text) may say how many seeds would
    decide an undecided one."""
    bar, pct = 1 - tolerance, f"{100 * tolerance:g} %"
    if pd.isna(point):
        return "no ratio (dense wins 0 %)"
    if pd.notna(lo) and pd.notna(hi):
        if lo >= bar - 1e-12:
            return f"within {pct} by its whole interval"
        if hi < bar - 1e-12:
            return f"more than {pct} below by its whole interval"
    side = "above" if point >= bar - 1e-12 else "below"
    why = "no interval" if pd.isna(lo) or pd.isna(hi) else f"its interval straddles {bar:g}"
    return f"{UNDECIDED} ({why}; the point estimate is {side} {bar:g})"


def _key(frame: pd.DataFrame, column: str) -> pd.Series:
    """A sparsity-like float key rounded so that 0.9 from two sources compares equal."""
    return frame[column].astype(float).round(6)


def _keyed(keys: list[str], values) -> dict:
    return dict(zip(keys, values if isinstance(values, tuple) else (values,), strict=True))


def require_comparable(frames: dict[str, pd.DataFrame], where: str, keys: tuple[str, ...] = (ALGO, MAP)) -> None:
    """A one-line ConfigError per SHARED_SETTINGS column whose value differs between the runs of `frames` ({input
    role: metrics summary}) within one group of `keys`, naming the values and the roles that hold them."""
    require_alike(frames, where, SHARED_SETTINGS, keys)


def evaluations(metrics: pd.DataFrame, value: str = "test_win_rate") -> pd.DataFrame:
    """The rows of `metrics` that carry `value`, with `x`: the evaluation grid step (`eval_step`), or where a row has
    none, its env_steps rounded down to the grid of cfg.qmix.eval_every (so seeds line up on the same x)."""
    rows = metrics[metrics[value].notna()].copy() if value in metrics else metrics.iloc[:0].copy()
    x = rows["eval_step"] if "eval_step" in rows else pd.Series(np.nan, index=rows.index)
    if x.isna().any() and "env_steps" in rows:
        every = rows["cfg.qmix.eval_every"] if "cfg.qmix.eval_every" in rows else pd.Series(1, index=rows.index)
        every = every.fillna(1).astype(float).clip(lower=1)
        x = x.fillna((rows["env_steps"] // every) * every)
    rows["x"] = x.astype(float)
    return rows[rows["x"].notna()]


def final_win_rate(metrics: pd.DataFrame, k: int = LAST_K, value: str = "test_win_rate",
                   fraction: float = FINAL_FRACTION) -> pd.DataFrame:
    """Per run: `win_rate`, the mean of `value` over its last min(k, available) evaluations (by eval_step) that fall
    in the final `fraction` of the run (x >= (1 - fraction) x its last evaluation step, so the last evaluation
    always counts), and `evals`, how many it averaged; with every configuration column. At the paper's scale
    (2 M steps, an evaluation every 10 000) both limits give the paper's last 20; a shorter run averages its final
    10 % only, not evaluations from early in learning."""
    ev = evaluations(metrics, value)
    keys = run_columns(metrics)
    last = ev.groupby(keys)["x"].transform("max")
    ev = ev[ev["x"] >= (1 - fraction) * last]
    tail = ev.sort_values([*keys, "x"]).groupby(keys, group_keys=False).tail(int(k))
    agg = tail.groupby(keys)[value].agg(win_rate="mean", evals="count")
    return per_run(metrics, agg)


def seed_stats(per_run_values: pd.DataFrame, keys: list[str], value: str = "win_rate") -> pd.DataFrame:
    """Per group of `keys`: the mean over its runs of `value` with its 95 % Student-t interval (`mean_lo`, `mean_hi`:
    stats.mean_interval; NaN for one seed), std (ddof 1; NaN for one seed) and `seeds`, the number of runs in the
    group."""
    rows = []
    ident = run_columns(per_run_values)
    for values, group in per_run_values.groupby(keys, dropna=False, sort=True):
        v = group[value].to_numpy(dtype=float)
        v = v[np.isfinite(v)]
        lo, hi = mean_interval(v)
        rows.append({**_keyed(keys, values), "mean": float(v.mean()) if len(v) else np.nan,
                     "mean_lo": float(lo), "mean_hi": float(hi),
                     "std": float(v.std(ddof=1)) if len(v) > 1 else np.nan,
                     "seeds": int(group.drop_duplicates(ident).shape[0]) if ident else len(group)})
    return pd.DataFrame(rows, columns=[*keys, *STAT_COLUMNS])


def sweep_stats(per_run: pd.DataFrame, keys: list[str], value: str = "win_rate") -> pd.DataFrame:
    """`seed_stats` in the figures' columns: per group of `keys`, `mean`, `lo`/`hi` (its 95 % Student-t interval) and
    `seeds`."""
    out = seed_stats(per_run, keys, value).rename(columns={"mean_lo": "lo", "mean_hi": "hi"})
    return out[[*keys, "mean", "lo", "hi", "seeds"]]


def curves(metrics: pd.DataFrame, keys: list[str], value: str = "test_win_rate", window: int = SG_WINDOW,
           order: int = SG_ORDER, smooth: bool = True) -> pd.DataFrame:
    """Learning curves: per group of `keys` and grid step x, the mean over seeds of each run's Savitzky-Golay
    smoothed `value`, its 95 % bootstrap band (`lo`, `hi`; NaN where one seed) and `seeds` at that x.
    Seeds are aligned on the evaluation grid (`evaluations`), never on raw env_steps."""
    ev = evaluations(metrics, value)
    ident = run_columns(metrics)
    out = []
    for values, group in ev.groupby(keys, dropna=False, sort=True):
        wide = group.groupby([*ident, "x"])[value].mean().unstack("x").sort_index(axis=1)
        if smooth:
            smoothed = []
            for _, row in wide.iterrows():  # each run over its own points (a shorter run is smoothed on its own)
                present = row.dropna()
                smoothed.append(pd.Series(savgol(present.to_numpy(), window, order), index=present.index))
            wide = pd.DataFrame(smoothed, columns=wide.columns)
        matrix = wide.to_numpy(dtype=float)
        counts = np.isfinite(matrix).sum(axis=0)
        mean = np.nanmean(np.where(np.isfinite(matrix), matrix, np.nan), axis=0) if len(matrix) else matrix
        lo, hi = np.full(len(counts), np.nan), np.full(len(counts), np.nan)
        full = counts == len(matrix)
        if full.any():
            lo[full], hi[full] = bootstrap_ci(matrix[:, full])
        for j in np.flatnonzero(~full):
            col = matrix[:, j]
            lo[j], hi[j] = bootstrap_ci(col[np.isfinite(col)])
        base = _keyed(keys, values)
        out.append(pd.DataFrame({**base, "x": wide.columns.to_numpy(dtype=float), "mean": mean, "lo": lo, "hi": hi,
                                 "seeds": counts}))
    columns = [*keys, "x", "mean", "lo", "hi", "seeds"]
    return pd.concat(out, ignore_index=True)[columns] if out else pd.DataFrame(columns=columns)


VS_DENSE_COLUMNS = ["normalised_lo", "normalised_hi", "normalised_why", "p_improvement", "seeds_needed"]


def no_interval_why(lo, mine, ref, of_ref: str) -> str:
    """Why the ratio of `mine`'s runs over `ref`'s (named `of_ref`) has no Fieller interval (stats.ratio_interval's
    NaN bound `lo`): '1 seed' (of `mine`), '1 <of_ref> seed', '<of_ref> wins 0 %', or '<of_ref>'s interval reaches 0'
    (the ratio is unbounded: the reference is not clear of 0); '' where it has one."""
    mine, ref = np.asarray(mine, dtype=float), np.asarray(ref, dtype=float)
    if np.isfinite(lo):
        return ""
    if np.isfinite(mine).sum() < 2:
        return "1 seed"
    if np.isfinite(ref).sum() < 2:
        return f"1 {of_ref} seed"
    return f"{of_ref} wins 0 %" if ref[np.isfinite(ref)].mean() <= 0 else f"{of_ref}'s interval reaches 0"


def versus_dense(per_run_values: pd.DataFrame, dense_runs: pd.DataFrame, keys: list[str], cell: list[str],
                 value: str = "win_rate", tolerance: float = TOLERANCE, of_ref: str = "dense") -> pd.DataFrame:
    """Per group of `keys` of `per_run_values`, against the dense runs of its `cell` (the (algo, map) columns):
    `normalised_lo` / `normalised_hi`, Fieller's 95 % interval of mean / dense mean (stats.ratio_interval),
    `p_improvement`, the probability that a run of the group beats a dense run (stats.probability_of_improvement;
    0.5 = no difference), and `seeds_needed`, the seeds per method at which the interval would decide the 3 % verdict
    (versus_tolerance) at the measured spread (metrics.power.seeds_needed; NaN where it is decided already or cannot
    be estimated). NaN bounds where a side has too few runs (one seed has no interval) or where dense's mean is not
    clear of 0 (the ratio is unbounded); `normalised_why` says which ('' where there is an interval), naming the
    reference runs `of_ref`."""
    rows = []
    dense = {k if isinstance(k, tuple) else (k,): g[value].to_numpy(dtype=float)
             for k, g in dense_runs.groupby(cell, dropna=False)}
    for values, group in per_run_values.groupby(keys, dropna=False, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        mine = group[value].to_numpy(dtype=float)
        ref = dense.get(tuple(values[keys.index(c)] for c in cell), np.array([]))
        lo, hi = ratio_interval(mine, ref)
        bar = 1 - tolerance
        decided = np.isfinite(lo) and (lo >= bar - 1e-12 or hi < bar - 1e-12)
        rows.append({**_keyed(keys, values), "normalised_lo": lo, "normalised_hi": hi,
                     "normalised_why": no_interval_why(lo, mine, ref, of_ref),
                     "p_improvement": probability_of_improvement(mine, ref),
                     "seeds_needed": np.nan if decided else seeds_needed(mine, ref, bar)})
    return pd.DataFrame(rows, columns=[*keys, *VS_DENSE_COLUMNS])


def undecided_text(verdict: str, needed: float, have: int | None = None) -> str:
    """`verdict` (versus_tolerance's or a ratio verdict), with the seeds that would decide it appended where it is
    undecided and an estimate exists."""
    extra = needed_text(needed, have) if verdict.startswith(UNDECIDED) else ""
    return f"{verdict}: {extra}" if extra else verdict
