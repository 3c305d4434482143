"""The family control and the power calculation behind paper 2's verdicts: Holm's adjusted p-values computed by hand,
the ratio test that Fieller's interval inverts, and the seeds an undecided comparison would need, checked by
simulation with the interval itself (as tests/test_stats_coverage.py checks the intervals)."""

import numpy as np
import pandas as pd
import pytest

from effmarl.analysis.metrics import power
from effmarl.analysis.metrics.stats import holm, ratio_interval, ratio_test
from effmarl.analysis.metrics.table1 import ratio_verdict, versus_baselines


def test_holms_adjusted_p_values_of_three_tests_computed_by_hand():
    # sorted 0.01, 0.03, 0.04: 3 · 0.01 = 0.03; max(0.03, 2 · 0.03) = 0.06; max(0.06, 1 · 0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    # capped at 1, and a NaN is no member of the family (m = 2 here)
    assert holm([0.6, np.nan, 0.02]).tolist()[::2] == pytest.approx([0.6, 0.04])
    assert np.isnan(holm([0.6, np.nan, 0.02])[1])
    assert holm([]).size == 0


def test_the_ratio_test_rejects_exactly_where_fiellers_interval_leaves_out_the_bar():
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(300):
        x, y = rng.normal(0.55, 0.06, 5), rng.normal(0.47, 0.06, 5)
        lo, hi = ratio_interval(x, y)
        for rho in (1.0, 0.97, 1.1):
            t, p = ratio_test(x, y, rho)
            outside = lo > rho or hi < rho
            if abs(p - 0.05) > 1e-6:  # at p = 0.05 the bar is a bound: either answer is right
                assert outside == (p < 0.05) and (not outside or (lo > rho) == (t > 0))
                checked += 1
    assert checked > 800


def test_the_vectorised_decision_of_the_power_calculation_equals_fiellers_interval_on_each_draw():
    rng = np.random.default_rng(5)
    x, y = rng.normal(0.55, 0.06, (400, 6)), rng.normal(0.45, 0.05, (400, 6))
    sides = power.decided_sides(x, y, 1.0)
    for row_x, row_y, side in zip(x, y, sides, strict=True):
        lo, hi = ratio_interval(row_x, row_y)
        assert side == (1 if lo > 1 else -1 if hi < 1 else 0)


def simulated_power(n: int, mx, sx, my, sy, rho: float, draws: int = 1500, seed: int = 11) -> float:
    """The fraction of fresh normal experiments of n seeds each whose Fieller interval lies above `rho` (scalar
    stats.ratio_interval: the rule the tables apply)."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(draws):
        lo, _hi = ratio_interval(rng.normal(mx, sx, n), rng.normal(my, sy, n))
        hits += lo > rho
    return hits / draws


def test_the_seeds_needed_decide_the_comparison_in_about_80_percent_of_fresh_draws_and_one_fewer_does_not():
    # MAST / RigL at 99 % on SMAX 3m as nine seeds each measured it (means 0.557 and 0.438)
    mast = [0.652, 0.512, 0.486, 0.509, 0.567, 0.583, 0.589, 0.575, 0.542]
    rigl = [0.414, 0.409, 0.452, 0.377, 0.456, 0.411, 0.556, 0.477, 0.492]
    n = power.seeds_needed(mast, rigl, 1.0)
    assert 3 <= n <= 12
    args = (np.mean(mast), np.std(mast, ddof=1), np.mean(rigl), np.std(rigl, ddof=1), 1.0)
    assert simulated_power(int(n), *args) >= power.POWER - 0.04
    assert simulated_power(int(n) - 1, *args) < power.POWER + 0.04


def test_a_family_needs_at_least_as_many_seeds_as_one_comparison_and_a_smaller_effect_more():
    mast, rigl = [0.65, 0.51, 0.49, 0.51, 0.57, 0.58], [0.41, 0.41, 0.45, 0.38, 0.46, 0.41]
    rlx2 = [0.56, 0.50, 0.50, 0.52, 0.55, 0.49]
    alone, family = power.seeds_needed(mast, rigl, 1.0), power.seeds_needed(mast, rigl, 1.0, family=5)
    assert family >= alone
    assert power.seeds_needed(mast, rlx2, 1.0) > alone


def test_a_point_estimate_on_the_bar_or_a_missing_side_has_no_finite_seed_count():
    assert power.seeds_needed([0.5, 0.6], [0.5, 0.6], 1.0) == float("inf")
    assert np.isnan(power.seeds_needed([0.5], [0.5, 0.6], 1.0))
    assert np.isnan(power.seeds_needed([0.5, 0.6], [0.0, 0.0], 1.0))
    assert power.needed_text(float("nan")) == ""
    assert power.needed_text(9.0, 6) == "≈ 9 seeds each would decide it (80 % power at the measured spread; now 6)"
    assert power.needed_text(float("inf")).startswith("more than 64 seeds each would be needed")


def test_a_ratio_whose_interval_alone_is_above_one_is_undecided_where_holm_does_not_reject():
    assert ratio_verdict(1.05, 1.4) == "MAST above"
    assert ratio_verdict(1.05, 1.4, p_family=0.03) == "MAST above"
    assert ratio_verdict(1.05, 1.4, p_family=0.08) == "undecided (Holm)"
    assert ratio_verdict(0.6, 0.9, p_family=0.01) == "MAST below"


def runs_of(values: dict) -> pd.DataFrame:
    rows = [{"cfg.algo": "qmix", "cfg.env.map": "3m", "cfg.sparse.method": method, "win_rate": w}
            for method, ws in values.items() for w in ws]
    return pd.DataFrame(rows)


def test_mast_against_five_baselines_is_one_family_each_decided_by_its_holm_adjusted_p():
    values = {"mast": [0.55, 0.60, 0.50, 0.57, 0.53], "tiny": [0.20, 0.25, 0.22, 0.18, 0.24],
              "static": [0.10, 0.30, 0.12, 0.05, 0.20], "set": [0.45, 0.50, 0.40, 0.47, 0.42],
              "rigl": [0.47, 0.55, 0.43, 0.50, 0.46], "rlx2": [0.56, 0.50, 0.52, 0.58, 0.49]}
    table = versus_baselines(runs_of(values)).set_index("method")
    assert list(table.index) == ["tiny", "static", "set", "rigl", "rlx2"] and (table["family"] == 5).all()
    p = [ratio_test(values["mast"], values[m])[1] for m in table.index]
    assert table["p"].tolist() == pytest.approx(p)
    assert table["p_holm"].tolist() == pytest.approx(holm(p).tolist())
    for method, row in table.iterrows():
        above_by_interval = row["lo"] > 1
        expected = ("MAST above" if row["p_holm"] < 0.05 else "undecided (Holm)") if above_by_interval else "undecided"
        assert row["verdict"] == expected, method
        assert np.isnan(row["seeds_needed"]) == (expected == "MAST above"), method
    assert table.loc["tiny", "verdict"] == "MAST above" and table.loc["rlx2", "verdict"] == "undecided"
    # RigL: its interval alone lies above 1 (p 0.017), but Holm's third step tests it at 0.05 / 3
    assert table.loc["rigl", "lo"] > 1 and table.loc["rigl", "verdict"] == "undecided (Holm)"
    # the undecided ones say how many seeds would decide them, planned at the family's level
    assert table.loc["rlx2", "seeds_needed"] == power.seeds_needed(values["mast"], values["rlx2"], 1.0, family=5)
