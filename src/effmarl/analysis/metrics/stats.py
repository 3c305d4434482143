"""Statistics over seeds: the interval every claim and table uses (`mean_interval`, the Student-t interval of a mean
or of a trimmed mean such as the IQM, and `ratio_interval`, Fieller's interval of a ratio of two such means with
Welch's degrees of freedom; both checked for coverage at 3 and 5 seeds by tests/test_stats_coverage.py), the
interquartile mean, the probability of improvement (scipy.stats.mannwhitneyu), paired differences, relative changes,
smoothing and normalisation, and a percentile bootstrap band (scipy.stats.bootstrap) that only learning-curve figures
draw. No figure or table resamples by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

CONFIDENCE = 0.95
N_RESAMPLES = 2000


def bootstrap_ci(values, confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES, seed: int = 0,
                 statistic=np.mean) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of `statistic` over axis 0 (seeds), for each remaining column (episode).

    For the bands of learning-curve figures (metrics.mast.curves, figures/paper1_rewards.py), not for claims: over 3
    seeds its half-width is about one standard deviation and it covers the true mean in ≈ 75 % of draws
    (tests/test_stats_coverage.py), so claim, verdict and table intervals use `mean_interval` / `ratio_interval`.
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


IQM_TRIM = 0.25  # the interquartile mean trims a quarter of the runs at each end (scipy's int(0.25 n))


def _trimmed(values, trim: float) -> tuple[float, float, int]:
    """(trimmed mean, its squared standard error, h) of one sample: g = int(trim · n) values cut at each end, h = n − 2g
    kept; the standard error is Yuen's, d = SSw / (h (h − 1)) with SSw the sum of squares of the g-times winsorized
    sample about its mean (scipy.stats.ttest_ind(trim=...)'s); with g = 0, s² / n."""
    x = np.sort(values)
    n = len(x)
    g = int(trim * n)
    h = n - 2 * g
    w = np.clip(x, x[g], x[n - g - 1])
    return float(stats.trim_mean(x, trim)), float(((w - w.mean()) ** 2).sum() / (h * (h - 1))), h


def _finite(values) -> np.ndarray:
    values = np.asarray(values, dtype=float).ravel()
    return values[np.isfinite(values)]


def mean_interval(values, confidence: float = CONFIDENCE, trim: float = 0.0) -> tuple[float, float]:
    """Student-t interval of the (trimmed) mean over seeds: m ± t_{h-1, (1+c)/2} · √d, with m the mean cut by
    g = int(trim · n) values at each end, h = n − 2g and d Yuen's squared standard error (`_trimmed`): the
    Tukey-McLaughlin interval. trim = 0 (the default) is x̄ ± t_{n-1, (1+c)/2} · s / √n, s the sample standard
    deviation (ddof 1); trim = IQM_TRIM is the interval of the interquartile mean (`iqm`), which equals the mean's
    below 4 values (g = 0). The interval every claim over 2-8 seeds or pairs uses: at 3 and 5 normal draws it covers
    the true mean at its nominal rate (tests/test_stats_coverage.py), where a percentile bootstrap over 3 values,
    whose half-width is about one standard deviation, covers it in ≈ 75 % of draws. Non-finite values are dropped;
    fewer than two (or fewer than two left after trimming) give NaN bounds, and values without spread a zero-width
    interval."""
    values = _finite(values)
    if len(values) < 2 or len(values) - 2 * int(trim * len(values)) < 2:
        return float("nan"), float("nan")
    mean, var, h = _trimmed(values, trim)
    half = float(stats.t.ppf(0.5 + confidence / 2, h - 1)) * np.sqrt(var)
    return mean - half, mean + half


def ratio_interval(x, y, confidence: float = CONFIDENCE, trim: float = 0.0) -> tuple[float, float]:
    """Fieller's interval of ρ = m_x / m_y, the ratio of two independent (trimmed) means (e.g. a method's win rate
    over dense's), with Welch's degrees of freedom: the set of ρ at which Welch's test of m_x − ρ·m_y = 0 does not
    reject, i.e. (a − ρb)² ≤ t²_{ν(ρ)} (v_a + ρ² v_b), where a, b are the (trimmed) means, v_a, v_b their squared
    standard errors (`_trimmed`; Yuen's test where trim > 0) and ν(ρ) = (v_a + ρ² v_b)² / (v_a² / (h_x − 1) +
    ρ⁴ v_b² / (h_y − 1)). Each bound is a root of (b² − t² v_b) ρ² − 2abρ + (a² − t² v_a) = 0, the t quantile
    iterated at the bound's own ν; at the bounds scipy.stats.ttest_ind(x, ρ·y, equal_var=False, trim=trim) has
    p = 1 − c. Its coverage at 3 vs 3 and 5 vs 5 normal runs is checked by simulation (tests/test_stats_coverage.py).
    NaN bounds where either side has fewer than two finite values, where b ≤ 0, or where b is within its own
    interval of 0 (b² ≤ t² v_b: the ratio is unbounded); no spread on either side gives the ratio itself."""
    x, y = _finite(x), _finite(y)
    nan = (float("nan"), float("nan"))
    if min(len(x), len(y)) < 2 or min(len(v) - 2 * int(trim * len(v)) for v in (x, y)) < 2:
        return nan
    (a, va, hx), (b, vb, hy) = _trimmed(x, trim), _trimmed(y, trim)
    if b <= 0:
        return nan
    if va == 0 and vb == 0:
        return a / b, a / b
    q = 0.5 + confidence / 2

    def t_at(rho: float) -> float:
        num, den = (va + rho**2 * vb) ** 2, va**2 / (hx - 1) + rho**4 * vb**2 / (hy - 1)
        return float(stats.t.ppf(q, num / den))

    bounds = []
    for side in (-1.0, 1.0):
        rho = a / b
        for _ in range(100):
            t = t_at(rho)
            quad = b**2 - t**2 * vb
            if quad <= 0:
                return nan
            disc = t**2 * (a**2 * vb + b**2 * va) - t**4 * va * vb
            new = (a * b + side * np.sqrt(max(disc, 0.0))) / quad
            if abs(new - rho) <= 1e-13 * max(1.0, abs(new)):
                break
            rho = new
        bounds.append(float(new))
    return bounds[0], bounds[1]


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
    """Interquartile mean (rliable's aggregate): the mean of the middle 50 % of the values, scipy.stats.trim_mean
    with int(0.25 n) values cut at each end, so below 4 values it is the mean (its interval: mean_interval(trim=
    IQM_TRIM))."""
    return stats.trim_mean(np.asarray(values, dtype=float), IQM_TRIM, axis=axis)


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


def ratio_test(x, y, rho: float = 1.0, trim: float = 0.0) -> tuple[float, float]:
    """(T, p): Welch's test (Yuen's where trim > 0) of m_x − ρ·m_y = 0, two-sided, for the ratio m_x / m_y of two
    independent (trimmed) means against the value ρ: T = (a − ρb) / √(v_a + ρ² v_b) on ν(ρ) degrees of freedom
    (`ratio_interval`'s notation), i.e. scipy.stats.ttest_ind(x, ρ·y, equal_var=False, trim=trim). Fieller's 95 %
    interval (`ratio_interval`) is the set of ρ at which this p ≥ 0.05, so where the interval exists its lying wholly
    above (below) ρ is p < 0.05 with T > 0 (T < 0). NaN where either side has fewer than two finite values (after
    trimming)."""
    x, y = _finite(x), _finite(y)
    if min(len(x), len(y)) < 2 or min(len(v) - 2 * int(trim * len(v)) for v in (x, y)) < 2:
        return float("nan"), float("nan")
    res = stats.ttest_ind(x, rho * y, equal_var=False, trim=trim)
    return float(res.statistic), float(res.pvalue)


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values of a family of m tests (Holm 1979): sorted ascending, p̃_(i) = max_{j ≤ i}
    min(1, (m − j + 1) p_(j)), returned in the input's order; a test is rejected at family-wise level α where p̃ < α.
    NaN p-values are not part of the family (m counts the finite ones) and stay NaN. Written here because scipy has
    only the false-discovery-rate adjustment (scipy.stats.false_discovery_control) and statsmodels is no dependency
    for five lines."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(np.isfinite(p))
    m = len(idx)
    if not m:
        return out
    order = idx[np.argsort(p[idx], kind="stable")]
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adjusted
    return out
