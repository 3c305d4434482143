"""Paper 2's mechanism measured (metrics.values, table mast_values): the value estimate against the return obtained,
per run over the final 10 % of training, per Table-1 cell with a t-interval over seeds; values computed by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from effmarl.analysis.metrics.values import value_bias, value_cells
from effmarl.analysis.tables import mast_selection, mast_values

BASE = {"cfg.algo": "qmix", "cfg.env.map": "3m", "cfg.profile": "test", "cfg.qmix.eval_every": 100,
        "cfg.budget.env_steps": 1000, "git_commit": "abcdef1234"}


def run(study: str, method: str, sparsity: float, seed: int, bias: float, win: float = 0.5,
        with_return: bool = True) -> list[dict]:
    """Evaluation rows every 100 steps (win rate `win`) and a training row 50 steps after each, whose Q is the step /
    1000 and whose return obtained is that Q minus `bias` in the final tenth (steps >= 900) and 0 before."""
    conf = {**BASE, "cfg.study": study, "cfg.sparse.method": method, "cfg.sparse.sparsity": sparsity,
            "cfg.seed": seed, "run_id": f"method-{method}_sparsity-{sparsity}_seed-{seed}"}
    rows = []
    for step in range(0, 1001, 100):
        rows.append({**conf, "env_steps": step, "eval_step": step, "test_win_rate": win, "q_taken_mean": np.nan,
                     "return_mean": np.nan})
        if step + 50 <= 1000:
            q = (step + 50) / 1000
            g = q - bias if step + 50 >= 900 else 0.0
            rows.append({**conf, "env_steps": step + 50, "eval_step": np.nan, "test_win_rate": np.nan,
                         "q_taken_mean": q, "return_mean": g})
    # a last training row at the budget, so the final tenth holds two training rows: 950 and 1000
    q = 1.0
    rows.append({**conf, "env_steps": 1000, "eval_step": np.nan, "test_win_rate": np.nan, "q_taken_mean": q,
                 "return_mean": q - bias})
    frame = pd.DataFrame(rows)
    return frame if with_return else frame.drop(columns="return_mean")


def test_a_runs_bias_is_its_mean_value_estimate_minus_its_mean_return_over_the_final_tenth_of_training():
    per_run = value_bias(run("mast_dense", "dense", 0.9, 0, bias=0.2))
    r = per_run.iloc[0]
    # the final tenth: env_steps >= 0.9 x 1000 -> the training rows at 950 and 1000: Q = (0.95 + 1.0) / 2
    assert r["q_taken"] == pytest.approx(0.975) and r["return_obtained"] == pytest.approx(0.775)
    assert r["bias"] == pytest.approx(0.2) and r["updates_logged"] == 2


def test_a_run_that_did_not_record_the_return_has_no_bias_rather_than_a_made_up_one():
    r = value_bias(run("mast_dense", "dense", 0.9, 0, bias=0.2, with_return=False)).iloc[0]
    assert r["q_taken"] == pytest.approx(0.975) and np.isnan(r["return_obtained"]) and np.isnan(r["bias"])


def cells_inputs():
    dense = pd.concat([run("mast_dense", "dense", 0.9, s, b) for s, b in enumerate([0.0, 0.1, 0.2])])
    sweep = pd.concat([run("mast_sweep", "mast", sp, s, b) for sp, biases in ((0.9, [5.0] * 3),
                                                                             (0.99, [-0.3, -0.25, -0.2]))
                       for s, b in enumerate(biases)])
    baselines = pd.concat([run("mast_table1", "rigl", 0.99, s, b) for s, b in enumerate([0.3, 0.4, 0.5])])
    return dense, sweep, baselines


def test_each_cell_has_the_t_interval_of_its_seeds_bias_and_a_verdict_that_follows_it():
    dense, sweep, baselines = cells_inputs()
    cells = value_cells(dense, sweep, baselines, None).set_index("method")
    t = 4.302652729911275  # Student t, 2 degrees of freedom, 97.5 %
    # dense 0.0, 0.1, 0.2: mean 0.1, s 0.1 -> 0.1 ± t 0.1 / sqrt 3 contains 0
    assert cells.loc["dense", "bias"] == pytest.approx(0.1)
    assert cells.loc["dense", ["bias_lo", "bias_hi"]].tolist() == pytest.approx([0.1 - t * 0.1 / 3 ** 0.5,
                                                                                 0.1 + t * 0.1 / 3 ** 0.5])
    assert cells.loc["dense", "verdict"] == "no bias shown"
    # RigL 0.3, 0.4, 0.5: 0.4 ± 0.248, above 0; MAST at Table 1's 0.99 only (its 0.9 runs' bias of 5 left out)
    assert cells.loc["rigl", "verdict"] == "over-estimates" and cells.loc["rigl", "bias"] == pytest.approx(0.4)
    assert cells.loc["mast", "bias"] == pytest.approx(-0.25) and cells.loc["mast", "verdict"] == "under-estimates"
    assert cells.loc["mast", "sparsity"] == 0.99 and cells.loc["mast", "seeds"] == 3
    assert cells.loc["mast", "bias_hi"] == pytest.approx(-0.25 + t * 0.05 / 3 ** 0.5)


def test_the_table_puts_each_methods_bias_beside_its_win_rate(tmp_path):
    dense, sweep, baselines = cells_inputs()
    paths = {}
    for name, frame in (("dense", dense), ("sweep", sweep), ("baselines", baselines)):
        paths[name] = str(tmp_path / f"{name}.parquet")
        frame.to_parquet(paths[name])
    selection = tmp_path / "selection.csv"
    mast_selection.make([f"dense={paths['dense']}", f"sweep={paths['sweep']}"]).to_csv(selection, index=False)
    table = mast_values.make([f"{k}={v}" for k, v in paths.items()] + [f"selection={selection}"]).set_index("method")
    assert list(table.index) == ["Dense", "RigL", "MAST"]  # Table 1's order
    assert table.loc["RigL", "win rate"] == pytest.approx(0.5) and table.loc["RigL", "seeds"] == 3
    assert table.loc["RigL", "bias Q - G [95 % CI]"].startswith("+0.400 [0.152, 0.648]")
    assert table.loc["MAST", "verdict"] == "under-estimates"
