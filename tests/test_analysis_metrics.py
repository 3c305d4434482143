"""The analysis metrics layer: run identity, statistics (scipy), smoothing, normalisation, and named inputs,
against hand-computed values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli
from scipy import stats

from effmarl.analysis import metrics
from effmarl.analysis.io import named_inputs
from effmarl.config import ConfigError


def test_grid_keys_are_the_config_columns_that_differ_between_runs():
    frame = pd.DataFrame({"cfg.study": ["s"] * 4, "run_id": ["a", "a", "b", "c"], "cfg.profile": ["p"] * 4,
                          "cfg.algo": ["maddpg"] * 4, "cfg.replay.neighbor_k": [1, 1, 4, 16], "x": [1, 2, 3, 4]})
    assert metrics.grid_keys(frame) == ["cfg.replay.neighbor_k"]
    assert len(metrics.runs(frame)) == 3
    assert metrics.label(metrics.runs(frame).iloc[1], ["cfg.algo", "cfg.replay.neighbor_k"]) == \
        "algo=maddpg neighbor_k=4"


def test_grid_keys_leave_out_settings_that_follow_from_another_key():
    frame = pd.DataFrame({"cfg.study": "s", "run_id": ["m0", "m1", "s0", "s1"],
                          "cfg.algo": ["maddpg", "maddpg", "masac", "masac"],
                          "cfg.masac.alpha": [None, None, 0.05, 0.05], "cfg.seed": [0, 1, 0, 1]})
    assert metrics.grid_keys(frame) == ["cfg.algo", "cfg.seed"]


def test_per_run_values_never_merge_runs_that_differ_only_in_an_unlisted_key():
    # two runs identical except neighbor_k: a per-run metric must keep them apart
    rows = [{"cfg.study": "ks", "run_id": f"k{k}", "cfg.replay.neighbor_k": k, "episode": 0, "phase": phase,
             "seconds": s, "calls": c}
            for k, sampling in ((1, 2.0), (16, 1.0))
            for phase, s, c in (("sampling", sampling, 30), ("update_all_trainers", 5.0, 10))]
    table = metrics.sampling_per_round(pd.DataFrame(rows)).set_index("cfg.replay.neighbor_k")
    assert table["update_rounds"].to_dict() == {1: 10, 16: 10}
    assert table["sampling_ms_per_round"].to_dict() == pytest.approx({1: 200.0, 16: 100.0})


def test_bootstrap_ci_is_scipys_percentile_interval_and_handles_small_samples():
    values = np.array([1.0, 2.0, 4.0, 8.0, 9.0])
    lo, hi = metrics.bootstrap_ci(values, seed=3)
    ref = stats.bootstrap((values,), np.mean, confidence_level=0.95, n_resamples=2000, method="percentile",
                          rng=np.random.default_rng(3)).confidence_interval
    assert (lo, hi) == pytest.approx((ref.low, ref.high))
    assert lo <= values.mean() <= hi
    assert np.isnan(metrics.bootstrap_ci(np.array([5.0]))).all()  # one seed: no interval
    lo2, hi2 = metrics.bootstrap_ci(np.array([[3.0, 1.0], [3.0, 2.0]]))
    assert lo2[0] == hi2[0] == 3.0  # a constant column has a zero-width interval
    rng = np.random.default_rng(1)
    few, many = rng.normal(5, 1, (4, 20)), rng.normal(5, 1, (64, 20))
    width = [np.mean(np.subtract(*metrics.bootstrap_ci(v)[::-1])) for v in (few, many)]
    assert width[1] < 0.5 * width[0]  # ~1/sqrt(n): 4 vs 64 seeds


def test_iqm_change_and_normalise_by_hand():
    assert metrics.iqm([1, 2, 3, 4, 5, 6, 7, 100]) == pytest.approx(4.5)  # mean of 3, 4, 5, 6
    assert metrics.change_pct(75.0, 100.0) == pytest.approx(-25.0)
    assert metrics.normalise([0.5, 1.5], low=0.5, high=2.5).tolist() == [0.0, 0.5]
    with pytest.raises(ValueError, match="high equals low"):
        metrics.normalise([1.0], 2.0, 2.0)


def test_smoothing_moving_average_and_savitzky_golay():
    assert metrics.smooth([0.0, 2.0, 4.0, 6.0], 2).tolist() == [0.0, 1.0, 3.0, 5.0]
    x = np.arange(30.0)
    quadratic = 0.5 * x**2 - 3 * x + 1
    assert metrics.smooth(quadratic, 7, "savgol") == pytest.approx(quadratic)  # order 2 keeps a parabola
    noisy = quadratic + np.random.default_rng(0).normal(0, 5, 30)
    assert np.abs(metrics.smooth(noisy, 9, "savgol") - quadratic).mean() < np.abs(noisy - quadratic).mean()
    with pytest.raises(ValueError, match="smoothing method"):
        metrics.smooth(x, 3, "median")


def test_paired_differences_only_from_keys_present_on_both_sides():
    frame = pd.DataFrame({"seed": [0, 0, 1, 1, 2], "sampler": ["u", "n", "u", "n", "n"],
                          "reward": [10.0, 12.0, 20.0, 19.0, 50.0]})
    pairs = metrics.paired(frame, ["seed"], "sampler", "reward", "u", "n")
    assert pairs["seed"].tolist() == [0, 1] and pairs["diff"].tolist() == [2.0, -1.0]


def test_named_inputs_reject_unknown_and_missing_roles_naming_them():
    roles = {"phases": {"doc": "phases table"}, "metrics": {"doc": "metrics table"},
             "random": {"doc": "the floor", "optional": True}}
    assert named_inputs(["phases=a.parquet", "metrics=b.parquet", "phases=c.parquet"], roles) == \
        {"phases": ["a.parquet", "c.parquet"], "metrics": ["b.parquet"], "random": []}
    with pytest.raises(ConfigError, match="'metrics' \\(metrics table\\) not given"):
        named_inputs(["phases=a.parquet"], roles)
    with pytest.raises(ConfigError, match="ROLE=PATH"):
        named_inputs(["a.parquet", "metrics=b.parquet"], roles)
    assert named_inputs(["a.parquet"], {"metrics": {"doc": "m"}}) == {"metrics": ["a.parquet"]}  # bare paths


def test_cli_reports_a_missing_input_role_in_one_line(tmp_path):
    proc = run_cli("effmarl", "figure", "paper1_ksweep", "rounds=x.parquet", "--out", str(tmp_path / "k"))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "'metrics'" in proc.stderr and "Traceback" not in proc.stderr


def test_figures_and_tables_import_neither_each_other_nor_another_figure_or_table():
    import ast
    from pathlib import Path

    import effmarl.analysis

    root = Path(effmarl.analysis.__file__).parent
    for path in [*root.glob("figures/*.py"), *root.glob("tables/*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("effmarl.analysis.figures", "effmarl.analysis.tables")), \
                    f"{path.relative_to(root)} imports {node.module}: use effmarl.analysis.metrics"


def test_metrics_import_neither_io_style_figures_nor_tables_and_io_and_style_import_effmarl_at_the_top():
    """The analysis layers (issue 23): `metrics` selects and computes, `io` reads inputs and saves outputs with their
    provenance, `style` decides how things are drawn and named. metrics is the bottom and imports none of the others;
    io and style import effmarl modules only at module top, where their dependencies are seen."""
    import ast
    from pathlib import Path

    import effmarl.analysis

    root = Path(effmarl.analysis.__file__).parent
    upper = tuple(f"effmarl.analysis.{m}" for m in ("io", "style", "figures", "tables"))

    def imported(node):
        if isinstance(node, ast.ImportFrom):
            return [node.module or ""]
        return [a.name for a in node.names] if isinstance(node, ast.Import) else []

    for path in root.glob("metrics/*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            for module in imported(node):
                assert not module.startswith(upper), f"{path.relative_to(root)} imports {module}"
    for path in (root / "io.py", root / "style.py"):
        tree = ast.parse(path.read_text())
        top = set(map(id, tree.body))
        for node in ast.walk(tree):
            if any(m.startswith("effmarl") for m in imported(node)):
                assert id(node) in top, f"{path.name}:{node.lineno} imports {imported(node)} inside a function"
