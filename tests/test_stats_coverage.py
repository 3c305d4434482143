"""Coverage of the interval the claims use, checked by simulation at the seed counts the profiles use: a 95 %
interval must contain the true mean in at least 93 % of 2 000 draws of 3 and of 5 normal samples; the percentile
bootstrap over 3 values (the interval the claims used before) does not."""

import numpy as np
import pytest

from effmarl.analysis.metrics.stats import bootstrap_ci, mean_interval

DRAWS = 2000


def coverage(interval, n: int, draws: int = DRAWS, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    samples = rng.normal(loc=1.0, scale=0.3, size=(draws, n))
    hits = 0
    for row in samples:
        lo, hi = interval(row)
        hits += lo <= 1.0 <= hi
    return hits / draws


@pytest.mark.parametrize("n", [3, 5])
def test_the_mean_interval_covers_the_true_mean_at_its_nominal_rate(n):
    assert coverage(mean_interval, n) >= 0.93


def test_the_percentile_bootstrap_over_three_seeds_covers_far_less_than_95_percent():
    assert coverage(lambda row: bootstrap_ci(row, n_resamples=500), 3, draws=400) < 0.85


def test_the_mean_interval_of_known_values_is_the_t_interval_computed_by_hand():
    # 1, 2, 3: mean 2, s = 1, t_{2, 0.975} = 4.302653, half-width 4.302653 / sqrt(3) = 2.484138
    lo, hi = mean_interval([1.0, 2.0, 3.0])
    assert lo == pytest.approx(2 - 2.484138, abs=1e-5) and hi == pytest.approx(2 + 2.484138, abs=1e-5)


def test_the_mean_interval_needs_two_finite_values_and_has_zero_width_without_spread():
    assert all(np.isnan(mean_interval([1.0, np.nan])))
    assert mean_interval([0.5, 0.5, 0.5]) == (0.5, 0.5)
