"""Statistics over seeds: bootstrap confidence intervals (scipy.stats.bootstrap; of one method's statistic, and of the
ratio of two methods' by a stratified bootstrap), the interquartile mean, the probability of improvement
(scipy.stats.mannwhitneyu), paired differences, relative changes, smoothing and normalisation. No figure or table
resamples by hand."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

CONFIDENCE = 0.95
N_RESAMPLES = 2000


def bootstrap_ci(values, confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES, seed: int = 0,
                 statistic=np.mean) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of `statistic` over axis 0 (seeds), for each remaining column (episode).

    Percentile rather than BCa: with the 2-8 seeds of a default run BCa's acceleration estimate is degenerate.
    Fewer than two samples give NaN bounds (one seed has no interval)."""
    values = np.asarray(values, dtype=float)
    squeeze = values.ndim == 1
    values = values[:, None] if squeeze else values
    if len(values) < 2:
        nan = np.full(values.shape[1:], np.nan)
        return (nan[0], nan[0]) if squeeze else (nan, nan)
    res = stats.bootstrap((values,), statistic, axis=0, confidence_level=confidence, n_resamples=n_resamples,
                          method="percentile", rng=np.random.default_rng(seed))
    lo, hi = res.confidence_interval.low, res.confidence_interval.high
    # a constant column has a zero-width interval; scipy reports NaN for it
    const = np.ptp(values, axis=0) == 0
    lo, hi = np.where(const, values[0], lo), np.where(const, values[0], hi)
    return (lo[0], hi[0]) if squeeze else (lo, hi)


def mean_interval(values, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Student-t interval of the mean over seeds: x̄ ± t_{n-1, (1+c)/2} · s / √n, s the sample standard deviation
    (ddof 1). The interval every claim over 2-8 seeds or pairs uses: at 3 and 5 normal draws it covers the true mean
    at its nominal rate (tests/test_stats_coverage.py), where a percentile bootstrap over 3 values, whose half-width
    is about one standard deviation, covers it in ≈ 75 % of draws. Non-finite values are dropped; fewer than two
    give NaN bounds, and values without spread a zero-width interval."""
    values = np.asarray(values, dtype=float).ravel()
    values = values[np.isfinite(values)]
    if len(values) < 2:
        return float("nan"), float("nan")
    mean, sd = float(values.mean()), float(values.std(ddof=1))
    half = float(stats.t.ppf(0.5 + confidence / 2, len(values) - 1)) * sd / np.sqrt(len(values))
    return mean - half, mean + half


def probability_of_improvement(x, y) -> float:
    """P(X > Y) + ½·P(X = Y) for a run X of one method against a run Y of another, over every pair of their runs
    (rliable's probability of improvement on one task): the Mann-Whitney U statistic of `x` against `y` divided by
    n·m (scipy.stats.mannwhitneyu). NaN where either side has no finite value."""
    x, y = (np.asarray(v, dtype=float) for v in (x, y))
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    if not len(x) or not len(y):
        return float("nan")
    return float(stats.mannwhitneyu(x, y, alternative="two-sided").statistic / (len(x) * len(y)))


def iqm(values, axis=0):
    """Interquartile mean (rliable's aggregate): the mean of the middle 50 % of the values."""
    return stats.trim_mean(np.asarray(values, dtype=float), 0.25, axis=axis)


def ratio_ci(x, y, statistic=iqm, confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
             seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of statistic(x) / statistic(y) (default: the IQM), the runs of x and of y
    resampled independently, each within its own method (rliable's stratified bootstrap on one task). NaN bounds
    where either side has fewer than two runs or a resample's denominator is 0."""
    x, y = (np.asarray(v, dtype=float) for v in (x, y))
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    if len(x) < 2 or len(y) < 2:
        return float("nan"), float("nan")
    if np.ptp(x) == 0 and np.ptp(y) == 0:  # no spread: the ratio itself (scipy reports NaN for a constant sample)
        point = x[0] / y[0] if y[0] != 0 else float("nan")
        return float(point), float(point)

    def ratio(a, b, axis=-1):
        with np.errstate(divide="ignore", invalid="ignore"):
            den = statistic(b, axis=axis)
            return np.where(den != 0, statistic(a, axis=axis) / np.where(den != 0, den, 1.0), np.nan)

    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)  # resamples with a zero denominator: NaN
        res = stats.bootstrap((x, y), ratio, vectorized=True, paired=False, confidence_level=confidence,
                              n_resamples=n_resamples, method="percentile", rng=np.random.default_rng(seed))
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return (lo, hi) if np.isfinite(lo) and np.isfinite(hi) else (float("nan"), float("nan"))


def change_pct(new, base):
    """Relative change of `new` against `base`, in %."""
    return 100.0 * (np.asarray(new, dtype=float) / np.asarray(base, dtype=float) - 1.0)


def paired(frame: pd.DataFrame, pair_keys: list[str], by: str, value: str, a: str, b: str) -> pd.DataFrame:
    """Rows of `frame` paired on `pair_keys`: columns `a` and `b` (the values of `value` where `by` is a or b, averaged
    over any other rows of the pair) and `diff` = b − a. Keys present on one side only form no pair."""
    sel = frame[frame[by].isin([a, b])]
    wide = sel.pivot_table(index=pair_keys, columns=by, values=value, aggfunc="mean")
    if not {a, b} <= set(wide.columns):
        return pd.DataFrame(columns=[*pair_keys, a, b, "diff"])
    wide = wide[[a, b]].dropna()
    wide["diff"] = wide[b] - wide[a]
    return wide.reset_index()


def smooth(values, window: int, method: str = "moving") -> np.ndarray:
    """Smooth along the last axis. `moving`: trailing moving average (shorter at the start);
    `savgol`: Savitzky-Golay, polynomial order 2, centred (window made odd and at least 3)."""
    values = np.asarray(values, dtype=float)
    window = max(1, int(window))
    if method == "moving":
        if window == 1:
            return values
        frame = pd.DataFrame(np.atleast_2d(values).T)
        out = frame.rolling(window, min_periods=1).mean().to_numpy().T
        return out.reshape(values.shape)
    if method == "savgol":
        window = max(3, window | 1)
        if values.shape[-1] < window:
            return values
        from scipy import signal  # imported here: only curves need it, and it costs every table job ~0.4 s

        return signal.savgol_filter(values, window, polyorder=2, axis=-1, mode="interp")
    raise ValueError(f"smoothing method {method!r}: choose 'moving' or 'savgol'")


def savgol(values, window: int = 21, order: int = 2) -> np.ndarray:
    """Savitzky-Golay smoothing along the last axis as paper 2 smooths its curves (window 21, order 2), the window
    clipped to a third of the series length (and made odd): the paper's 21 of 200 evaluations is a tenth, and a
    window near the whole series (21 of 26) would draw a fitted parabola, not the curve; a series too short for a
    window above `order` is returned as is."""
    values = np.asarray(values, dtype=float)
    n = values.shape[-1] if values.ndim else 0
    window = min(int(window), n // 3)
    window -= 1 - window % 2  # odd
    if window <= order:
        return values.copy()
    from scipy import signal

    return signal.savgol_filter(values, window, polyorder=order, axis=-1, mode="interp")


def normalise(values, low, high):
    """(values − low) / (high − low): 0 at `low` (e.g. a random policy), 1 at `high` (e.g. a reference score)."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    if np.any(high == low):
        raise ValueError("normalise: high equals low, the scale is undefined")
    return (np.asarray(values, dtype=float) - low) / (high - low)
