"""Coverage of the intervals the claims use, checked by simulation at the seed counts the profiles use: a 95 %
interval must contain the true value in at least 93 % of 2 000 draws of 3 and of 5 normal samples (the mean, the IQM,
and the ratio of a method's win rate to dense's); the percentile bootstraps the claims used before do not."""

import numpy as np
import pytest
from scipy import stats

from effmarl.analysis.metrics.stats import IQM_TRIM, bootstrap_ci, iqm, mean_interval, ratio_interval

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


# --- the ratio "method / dense" (paper 2's normalised win rate) and the IQM the paper-2 tables report ---

def ratio_coverage(interval, n: int, draws: int = DRAWS, seed: int = 0) -> float:
    """Realistic win rates: a method at 0.70 against dense at 0.72, both with sd 0.05 over seeds."""
    rng = np.random.default_rng(seed)
    x, y = rng.normal(0.70, 0.05, size=(draws, n)), rng.normal(0.72, 0.05, size=(draws, n))
    hits = 0
    for a, b in zip(x, y, strict=True):
        lo, hi = interval(a, b)
        hits += lo <= 0.70 / 0.72 <= hi
    return hits / draws


@pytest.mark.parametrize("n", [3, 5])
@pytest.mark.parametrize("trim", [0.0, IQM_TRIM])
def test_fiellers_ratio_interval_covers_the_true_ratio_at_its_nominal_rate(n, trim):
    assert ratio_coverage(lambda a, b: ratio_interval(a, b, trim=trim), n) >= 0.93


def stratified_percentile_bootstrap(x, y, n_resamples: int = 500):
    """The interval paper 2's ratios used before (stats.ratio_ci, removed): IQM(x) / IQM(y), the runs of x and of y
    resampled independently, percentile bounds."""
    res = stats.bootstrap((x, y), lambda a, b, axis=-1: iqm(a, axis=axis) / iqm(b, axis=axis), vectorized=True,
                          paired=False, n_resamples=n_resamples, method="percentile", rng=np.random.default_rng(0))
    return res.confidence_interval.low, res.confidence_interval.high


def test_the_stratified_percentile_bootstrap_of_the_ratio_at_three_seeds_covers_far_less_than_95_percent():
    assert ratio_coverage(stratified_percentile_bootstrap, 3, draws=400) < 0.85


def test_the_iqm_interval_covers_the_true_centre_at_five_seeds_where_it_trims_one_run_at_each_end():
    # Yuen's interval of a trimmed mean keeps h = 3 of 5 values and 2 degrees of freedom: ≈ 93.7 % (below the
    # nominal 95 %, above 93 %) at 4-8 normal seeds, so it is checked on 10 000 draws
    assert coverage(lambda row: mean_interval(row, trim=IQM_TRIM), 5, draws=10_000) >= 0.93


def test_the_iqm_interval_of_known_values_is_yuens_interval_computed_by_hand():
    # 1, 2, 3, 4, 10: g = 1 cut at each end, IQM = (2 + 3 + 4) / 3 = 3; winsorized 2, 2, 3, 4, 4 (mean 3),
    # SSw = 1 + 1 + 0 + 1 + 1 = 4, d = 4 / (3 · 2) = 2/3, t_{2, 0.975} = 4.302653:
    # 3 ± 4.302653 · 0.816497 = 3 ± 3.513101
    lo, hi = mean_interval([1.0, 2.0, 3.0, 4.0, 10.0], trim=IQM_TRIM)
    assert lo == pytest.approx(3 - 3.513101, abs=1e-5) and hi == pytest.approx(3 + 3.513101, abs=1e-5)
    # below 4 values the IQM is the mean, and so is its interval
    assert mean_interval([1.0, 2.0, 3.0], trim=IQM_TRIM) == pytest.approx(mean_interval([1.0, 2.0, 3.0]), abs=1e-12)


def test_the_ratio_interval_against_a_dense_without_spread_is_the_t_interval_divided_by_dense():
    # 0.6, 0.7, 0.8 over 0.8, 0.8, 0.8: v_b = 0, so ν = 2 and the bounds are (0.7 ± 4.302653 · 0.1 / √3) / 0.8
    lo, hi = ratio_interval([0.6, 0.7, 0.8], [0.8, 0.8, 0.8])
    assert lo == pytest.approx((0.7 - 0.248414) / 0.8, abs=1e-5) and hi == pytest.approx((0.7 + 0.248414) / 0.8,
                                                                                         abs=1e-5)


@pytest.mark.parametrize("trim", [0.0, IQM_TRIM])
def test_the_ratio_interval_is_where_scipys_welch_test_of_x_against_rho_times_y_has_p_005(trim):
    x, y = np.array([0.62, 0.70, 0.75, 0.81, 0.66]), np.array([0.76, 0.78, 0.80, 0.71, 0.74])
    lo, hi = ratio_interval(x, y, trim=trim)
    assert lo < iqm(x) / iqm(y) < hi if trim else lo < x.mean() / y.mean() < hi
    for rho in (lo, hi):
        assert stats.ttest_ind(x, rho * y, equal_var=False, trim=trim).pvalue == pytest.approx(0.05, abs=1e-9)


def test_the_ratio_interval_needs_two_runs_a_positive_dense_and_a_dense_clear_of_zero():
    assert ratio_interval([0.7, 0.7], [0.8, 0.8]) == pytest.approx((0.875, 0.875))  # no spread: the ratio itself
    assert all(np.isnan(ratio_interval([0.7], [0.8, 0.9])))  # one run: no interval
    assert all(np.isnan(ratio_interval([0.7, 0.8], [0.0, 0.0])))  # dense 0: no ratio
    assert all(np.isnan(ratio_interval([0.7, 0.8], [0.0, 0.1])))  # dense's interval reaches 0: the ratio is unbounded
