"""Paper 2's components ablation (table `mast_components`): MAST against MAST without Soft Mellowmax, without hybrid
TD(λ) and without the dual buffer, at one cell, against values computed by hand on small synthetic study summaries
(built as tests/test_mast_analysis.py builds them)."""

from __future__ import annotations

import pandas as pd
import pytest
from test_mast_analysis import summary, write

from effmarl.analysis import metrics
from effmarl.analysis.tables import TABLES, mast_components
from effmarl.config import ConfigError

ALIKE = {"cfg.qmix.updates_per_round": 8}  # a setting every compared run must share (metrics.require_comparable)
# one component switched off per run, as study mast_components sets it (`without` names the run, as its run ids do)
OFF = {name: {**ALIKE, column: False, "cfg.without": name} for name, column in (
    ("soft_mellowmax", "cfg.mellowmax.enabled"), ("td_lambda", "cfg.mast.td_lambda.enabled"),
    ("dual_buffer", "cfg.mast.dual_buffer.enabled"))}


def inputs(tmp_path, ablated_runs=None, with_dense=True):
    # full MAST at the cell (0.9): per-run statistics 0.8, 0.7, 0.6 (IQM of three runs = their mean, 0.7); the sweep's
    # 0.8 runs (0.1 each) are another sparsity and must be left out
    sweep = summary("mast_sweep", [({**ALIKE, "cfg.sparse.sparsity": 0.9}, [0.8, 0.7, 0.6]),
                                   ({**ALIKE, "cfg.sparse.sparsity": 0.8}, [0.1, 0.1, 0.1])])
    ablated = summary("mast_components", ablated_runs or [
        (OFF["soft_mellowmax"], [0.5, 0.5, 0.5]),   # ratio 0.5 / 0.7; every pair lost: P = 0
        (OFF["td_lambda"], [0.8, 0.7, 0.6]),        # the same runs' values: ratio 1, 3 wins + 3 ties of 9: P = 0.5
        (OFF["dual_buffer"], [0.9, 0.9, 0.9])])     # ratio 0.9 / 0.7, every pair won: P = 1
    args = [f"mast={write(sweep, tmp_path / 'sweep.parquet')}", f"ablated={write(ablated, tmp_path / 'abl.parquet')}"]
    if with_dense:
        dense = summary("mast_dense", [({**ALIKE, "cfg.sparse.method": "dense"}, [0.8, 0.8, 0.8])])
        args.append(f"dense={write(dense, tmp_path / 'dense.parquet')}")
    return args


def test_each_component_removed_against_full_mast_with_hand_computed_ratios(tmp_path):
    table = mast_components.make(inputs(tmp_path)).set_index("removed")
    assert list(table.index) == ["dense", "none", "soft_mellowmax", "td_lambda", "dual_buffer"]
    assert table.loc["none", "variant"] == "MAST (all components)" and table.loc["none", "sparsity"] == 0.9
    assert table["mean"].to_dict() == pytest.approx({"dense": 0.8, "none": 0.7, "soft_mellowmax": 0.5,
                                                    "td_lambda": 0.7, "dual_buffer": 0.9})
    assert table["ratio"].to_dict() == pytest.approx({"dense": round(0.8 / 0.7, 4), "none": 1.0,
                                                      "soft_mellowmax": round(0.5 / 0.7, 4), "td_lambda": 1.0,
                                                      "dual_buffer": round(0.9 / 0.7, 4)})
    # dense's 0.8 against full MAST's 0.8 / 0.7 / 0.6: of 9 pairs 6 won and 3 tied (counted half): 7.5 / 9
    assert table["p_improvement"].to_dict() == pytest.approx({"dense": round(7.5 / 9, 4), "none": 0.5,
                                                              "soft_mellowmax": 0.0, "td_lambda": 0.5,
                                                              "dual_buffer": 1.0})
    assert (table["seeds"] == 3).all() and (table["seed_list"] == "0, 1, 2").all()
    assert table.loc["none", "std"] == pytest.approx(0.1)  # std (ddof 1) of 0.8, 0.7, 0.6
    for name, row in table.iterrows():  # every interval holds its point estimate
        assert row["ratio_lo"] <= row["ratio"] + 1e-9 and row["ratio"] <= row["ratio_hi"] + 1e-9, name
    # a constant variant against a spread reference (Fieller with v_a = 0): 0.5 over the t-interval of 0.8, 0.7, 0.6,
    # 0.7 ± 4.302653 · 0.1 / √3 = 0.7 ± 0.248414, so [0.5 / 0.948414, 0.5 / 0.451586]
    assert (table.loc["soft_mellowmax", "ratio_lo"], table.loc["soft_mellowmax", "ratio_hi"]) == pytest.approx(
        (0.5 / 0.948414, 0.5 / 0.451586), abs=1e-4)
    assert table.loc["dense", "sparsity"] == 0.0


def test_dense_is_optional_and_the_module_is_registered(tmp_path):
    table = mast_components.make(inputs(tmp_path, with_dense=False))
    assert "dense" not in set(table["removed"]) and len(table) == 4
    assert TABLES["mast_components"] == "effmarl.analysis.tables.mast_components"
    assert mast_components.INPUTS["dense"]["optional"] is True


def test_the_removed_component_is_read_from_the_config_as_the_learner_reads_it():
    frame = pd.DataFrame({"cfg.sparse.method": ["mast", "mast", "mast", "rigl", "rigl"],
                          "cfg.mellowmax.enabled": [None, False, False, None, True],
                          "cfg.mast.td_lambda.enabled": [None, None, False, None, None]})
    # unset = on for MAST, off for any other method (rigl: everything off; rigl + Soft Mellowmax: two off)
    assert list(metrics.removed_components(frame)) == [
        "none", "soft_mellowmax", "soft_mellowmax+td_lambda", "soft_mellowmax+td_lambda+dual_buffer",
        "td_lambda+dual_buffer"]


def test_runs_trained_differently_or_of_another_method_are_refused_in_one_line(tmp_path):
    changed = [({**OFF["td_lambda"], "cfg.qmix.updates_per_round": 2}, [0.7, 0.7])]  # the others: 8
    with pytest.raises(ConfigError, match="cfg.qmix.updates_per_round"):
        mast_components.make(inputs(tmp_path, changed))
    with pytest.raises(ConfigError, match="method.s. rigl"):
        mast_components.make(inputs(tmp_path, [({**ALIKE, "cfg.sparse.method": "rigl"}, [0.7, 0.7])]))


def test_the_components_table_says_in_every_row_whether_it_is_evidence(tmp_path):
    """Three seeds per variant and full MAST: no seed shortfall. One seed per variant: stamped as illustrative, in
    the `evidence` column every paper-2 table carries (metrics.evidence)."""
    table = mast_components.make(inputs(tmp_path))
    assert table.columns[0] == "evidence" and table["evidence"].nunique() == 1
    assert "fewer than 3 seeds" not in table["evidence"].iloc[0]
    (tmp_path / "one").mkdir()
    table = mast_components.make(inputs(tmp_path / "one", [(OFF[name], [0.5]) for name in OFF]))
    verdict = table["evidence"].iloc[0]
    assert verdict.startswith("illustrative: 1-3 seeds") and "fewer than 3 seeds in 3 of 5 compared cells" in verdict
