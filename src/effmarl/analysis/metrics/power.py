"""How many seeds an undecided comparison would need: the power calculation behind every "undecided" verdict of
paper 2 (a method / dense against 0.97, MAST / a baseline against 1).

A comparison of two methods' runs x and y is decided where Fieller's interval of the ratio of their (trimmed) means
(`stats.ratio_interval`) lies wholly on one side of a bar ρ₀. With n seeds of each, the probability that it does,
on the side its point estimate is on, is its power. `seeds_needed` takes the measured means and standard deviations
as the truth (normal seeds), draws `DRAWS` experiments of n seeds per method for n = 2, 3, ... `MAX_SEEDS` (common
random numbers: the first n of one set of draws, so the power is smooth in n), and returns the first n whose power
reaches `POWER` (0.8, the usual planning target). A family of m comparisons decided by Holm's step-down procedure
(`stats.holm`) is planned at Bonferroni's level (1 − confidence) / m, Holm's first and strictest step, so the count
is on the safe side for every member of the family.

The decision in the draws is `ratio_test`'s, vectorised: Welch's (Yuen's) test of m_x − ρ₀·m_y = 0 at ν(ρ₀)
degrees of freedom, which rejects exactly where ρ₀ lies outside Fieller's interval; a draw whose reference is not
clear of 0 (b² ≤ t² v_b with t at ν = h_y − 1, Fieller's set then unbounded) counts as undecided. The count is
checked by simulation with `ratio_interval` itself (tests/test_stats_power.py): at the returned n the interval
decides in about 80 % of fresh draws, at n − 1 in fewer."""

from __future__ import annotations

import numpy as np
from scipy import stats

from effmarl.analysis.metrics.stats import CONFIDENCE

POWER = 0.8
MAX_SEEDS = 64
DRAWS = 4000


def _trimmed_rows(samples: np.ndarray, trim: float) -> tuple[np.ndarray, np.ndarray, int]:
    """Per row of `samples` [draws, n]: the trimmed mean, Yuen's squared standard error and h (stats._trimmed,
    vectorised over rows)."""
    x = np.sort(samples, axis=1)
    n = x.shape[1]
    g = int(trim * n)
    h = n - 2 * g
    w = np.clip(x, x[:, [g]], x[:, [n - g - 1]])
    var = ((w - w.mean(axis=1, keepdims=True)) ** 2).sum(axis=1) / (h * (h - 1))
    return x[:, g:n - g].mean(axis=1), var, h


def decided_sides(x: np.ndarray, y: np.ndarray, rho: float, confidence: float = CONFIDENCE,
                  trim: float = 0.0) -> np.ndarray:
    """Per row of the draws `x`, `y` ([draws, n] each): +1 where Fieller's interval of m_x / m_y lies wholly above
    `rho`, −1 where wholly below, 0 where it holds `rho` or is unbounded (the test of module docstring)."""
    a, va, hx = _trimmed_rows(x, trim)
    b, vb, hy = _trimmed_rows(y, trim)
    q = 0.5 + confidence / 2
    se2 = va + rho**2 * vb
    with np.errstate(divide="ignore", invalid="ignore"):
        t_stat = (a - rho * b) / np.sqrt(se2)
        nu = se2**2 / (va**2 / (hx - 1) + rho**4 * vb**2 / (hy - 1))
    bounded = (b > 0) & (b**2 > stats.t.ppf(q, hy - 1) ** 2 * vb)
    reject = np.abs(t_stat) > stats.t.ppf(q, nu)
    return np.where(bounded & reject, np.sign(t_stat), 0).astype(int)


def seeds_needed(x, y, rho: float, confidence: float = CONFIDENCE, trim: float = 0.0, family: int = 1,
                 power: float = POWER, max_seeds: int = MAX_SEEDS, draws: int = DRAWS, seed: int = 0) -> float:
    """The seeds per method at which the interval of mean(x) / mean(y) would lie wholly on the side of `rho` its point
    estimate is on with probability `power`, the measured means and standard deviations (ddof 1) of `x` and `y`
    taken as the truth (module docstring); `family` > 1 plans at Bonferroni's level (1 − confidence) / family.
    inf where the point estimate sits on `rho` or no n up to `max_seeds` reaches the power; NaN where either side
    has fewer than two finite values or `y`'s mean is not positive."""
    x, y = (np.asarray(v, dtype=float) for v in (x, y))
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    if min(len(x), len(y)) < 2 or y.mean() <= 0:
        return float("nan")
    side = np.sign(x.mean() / y.mean() - rho)
    if side == 0:
        return float("inf")
    level = 1 - (1 - confidence) / max(1, int(family))
    rng = np.random.default_rng(seed)
    zx, zy = rng.standard_normal((draws, max_seeds)), rng.standard_normal((draws, max_seeds))
    mx, sx, my, sy = x.mean(), x.std(ddof=1), y.mean(), y.std(ddof=1)
    for n in range(2, max_seeds + 1):
        if n - 2 * int(trim * n) < 2:
            continue
        hits = decided_sides(mx + sx * zx[:, :n], my + sy * zy[:, :n], rho, level, trim) == side
        if hits.mean() >= power:
            return float(n)
    return float("inf")


def needed_text(n: float, have: int | None = None) -> str:
    """'≈ 9 seeds each would decide it (80 % power at the measured spread; now 6)', 'more than 64 seeds each would
    be needed (...)', or '' (NaN: no estimate)."""
    if np.isnan(n):
        return ""
    now = "" if have is None else f"; now {have}"
    if np.isinf(n):
        return f"more than {MAX_SEEDS} seeds each would be needed ({100 * POWER:g} % power at the measured spread{now})"
    return f"≈ {int(n)} seeds each would decide it ({100 * POWER:g} % power at the measured spread{now})"
