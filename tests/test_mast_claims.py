"""Paper 2's claims table (`tables/mast_claims`, its row wording in `analysis/claims.py`): each claim beside ours
with its runs, its interval and its evidence verdict; a claim spanning cells is made on the cells on evidence; a
reduction that follows from a declared sparsity says so; MAST against each baseline with Holm's procedure. Synthetic
runs whose window means are computed by hand (the helpers of `test_mast_evidence`); no test depends on how a real
run turns out."""

from __future__ import annotations

import pandas as pd
from test_mast_analysis import sparsity_summary, write
from test_mast_evidence import LEARNING_OW, PLATEAU_QMIX, cells_inputs, curve, dense_runs, fig1_summary, runs

from effmarl.analysis import metrics
from effmarl.analysis.io import save_table
from effmarl.analysis.tables import mast_claims


def test_claims_spanning_cells_are_made_on_the_cells_on_evidence_and_name_the_illustrative_ones(tmp_path):
    """A claim over every cell (MAST against dense, against the baselines, model size, the largest reduction, the
    sweep) is made on the cells whose own runs can decide it and names the others with their stamp, instead of
    leaving its value out because one algorithm's dense was still learning."""
    inputs = cells_inputs(tmp_path, dense={"qmix": (0.8, 0.8), "ow_qmix": (0.6, 0.8)}, algos=("qmix", "ow_qmix"))
    claims = mast_claims.make(inputs).set_index("claim")
    left = f"not claimed in 1 cell (illustrative): OW-QMIX 3m: {LEARNING_OW}"
    for claim in ("MAST's win rate relative to dense, every cell",
                  "MAST above the sparse baselines where they fall below dense (Table 1's cells)",
                  "model size reduction, MAST cells", "largest training-FLOPs reduction of MAST over all cells",
                  "swept sparsities within 3 % of dense (MAST sweep), and how sure"):
        row = claims.loc[claim]
        assert row["evidence"] == f"{PLATEAU_QMIX}; left out as illustrative: ow_qmix/3m", claim
        assert row["ours"].endswith(f" | {left}") and not row["ours"].startswith("not claimed"), claim
        assert "OW-QMIX" not in row["ours"].removesuffix(f" | {left}"), claim
    perf = claims.loc["MAST's win rate relative to dense, every cell", "ours"]
    assert perf.startswith("lowest MAST / dense 0.975 [0.975, 0.975]") and "(QMIX 3m, 3 seeds); of 1 cells" in perf
    ow = claims.loc["average training-FLOPs reduction over maps, MAST-OW-QMIX"]
    assert ow["ours"] == f"not claimed: {LEARNING_OW}" and ow["evidence"] == LEARNING_OW
    assert claims.loc["average training-FLOPs reduction over maps, MAST-QMIX", "evidence"] == PLATEAU_QMIX
    assert claims.attrs["evidence"].startswith(
        "evidence per row (column `evidence`, metrics.evidence): 6 of 10 claims with a measured value on evidence; "
        "0 by construction (a reduction that follows from a declared sparsity; the win rate at it is what is "
        "measured); 1 not claimed")


def test_the_claims_3s5z_row_uses_figure1s_runs_when_they_are_given(tmp_path):
    """The published claims table said "not measured" on 3s5z because it was made without mast_fig1's runs; given
    them, the row reads them: a value with its interval on evidence, the stamp where they are illustrative."""
    claim = "MAST-QMIX win rate on 3s5z with 10 % of the parameters"
    fig1 = write(fig1_summary(3), tmp_path / "fig1.parquet")
    row = mast_claims.make([f"fig1={fig1}"]).set_index("claim").loc[claim]
    assert row["ours"] == ("MAST 0.760 [0.76, 0.76] (3 seeds; Figure 1's runs); dense 0.800; "
                           "MAST / dense 0.950 [0.950, 0.950], P = 0.00: more than 3 % below by its whole interval")
    assert row["ratio ours/paper"] == f"{0.76 / 0.9:.2f}" and "mast_fig1" in row["runs"]
    assert row["evidence"] == ("evidence: 3 seeds, 1,000 steps (dense at its plateau: qmix/3s5z +0.00 over the "
                               "second half)")
    # the default profile's Figure 1: one seed of 50 000 steps at which nothing learns on 3s5z
    default = write(fig1_summary(1, 50_000, dense=(0.0, 0.0), mast=0.0), tmp_path / "fig1_default.parquet")
    row = mast_claims.make([f"fig1={default}"]).set_index("claim").loc[claim]
    assert row["ours"] == ("not claimed: illustrative: 1 seed, 50,000 steps — not evidence (fewer than 3 seeds in "
                           "every compared cell; dense has not learned (win rate over the final 10 % < 0.1): "
                           "qmix/3s5z 0.00)")
    assert row["ratio ours/paper"] == "" and row["evidence"] == row["ours"].removeprefix("not claimed: ")
    none = mast_claims.make([]).set_index("claim").loc[claim, "ours"]
    assert none.startswith("not measured: needs MAST-QMIX runs on 3s5z at sparsity 0.9 (study mast_fig1")


def test_every_claims_row_has_a_value_with_its_interval_or_names_the_runs_it_needs(tmp_path):
    inputs = cells_inputs(tmp_path, algos=("qmix", "ow_qmix")) + [
        f"fig1={write(fig1_summary(3), tmp_path / 'fig1.parquet')}"]
    claims = mast_claims.make(inputs)
    assert list(claims.columns)[:4] == ["evidence", "claim", "paper", "ours"]
    for _, row in claims.iterrows():
        if row["ours"].startswith("not measured"):
            assert row["ours"].startswith("not measured: needs ") and row["evidence"] == "", row["ours"]
        else:  # constant synthetic runs: the interval collapses on the ratio, but it is there
            assert row["evidence"].startswith("evidence: 3 seeds, 1,000 steps"), row["evidence"]
            assert "[" in row["ours"] and "]" in row["ours"], row["ours"]
    claims = claims.set_index("claim")
    wqmix = claims.loc["average training-FLOPs reduction over maps, MAST-OW-QMIX"]
    # the 3 % rule chose 0.9 of 0.9 and 0.95: the reduction there is measured (the highest sparsity where MAST holds)
    assert wqmix["ours"] == ("4.0x (1 / mean ratio; mean of per-map reductions 4.0x) over 1 map(s): 3m 4.0x (at the "
                             "sparsity the 3 % rule chose, 0.9); measured there: 3m: MAST / dense 0.975 [0.975, "
                             "0.975], P = 0.00: within 3 % by its whole interval (3 seeds)")
    assert wqmix["kind"] == "measured"
    assert wqmix["ratio ours/paper"] == f"{4.0 / 9.0:.2f}" and wqmix["sparsity"] == "3m 0.9"
    res = claims.loc["average training-FLOPs reduction over maps, MAST-RES-QMIX", "ours"]
    assert res.startswith("not measured: needs dense RES-QMIX and MAST-RES-QMIX runs (mast_dense, mast_sweep with "
                          "algo res_qmix) (the paper profile's Table 1")
    assert res.endswith("the given runs have OW-QMIX 3m, QMIX 3m")
    on_2s3z = claims.loc["training / inference FLOPs reduction, MAST-QMIX on 2s3z", "ours"]
    assert on_2s3z.startswith("not measured: needs dense QMIX and MAST-QMIX runs on 2s3z")
    md = tmp_path / "claims"
    save_table(mast_claims.make(inputs), md, inputs, name="mast_claims", caption=mast_claims.CAPTION)
    first = md.with_suffix(".md").read_text().splitlines()[0]
    assert first == ("**evidence per row (column `evidence`, metrics.evidence): 8 of 10 claims with a measured value "
                     "on evidence; 0 by construction (a reduction that follows from a declared sparsity; the win rate "
                     "at it is what is measured); 0 not claimed (illustrative runs: the stamp instead of the value); 2 "
                     "not measured (the runs they need named)**")


def test_the_claims_say_which_swept_sparsities_fall_within_3_percent_of_dense_and_how_sure(tmp_path):
    row = mast_claims.make(cells_inputs(tmp_path)).set_index("claim").loc[
        "swept sparsities within 3 % of dense (MAST sweep), and how sure"]
    # MAST 0.78 at 0.9 and 0.70 at 0.95 against dense 0.80, every seed alike: 0.975 and 0.875, intervals collapsed
    assert row["ours"] == ("QMIX 3m — 0.9: 0.975 [0.975, 0.975], P = 0.00, within 3 % by its whole interval; 0.95: "
                           "0.875 [0.875, 0.875], P = 0.00, more than 3 % below by its whole interval. highest "
                           "sparsity within 3 % by its whole interval: QMIX 3m 0.9")
    # seeds that disagree: MAST at 0.9 wins 0.70 / 0.78 / 0.86 (IQM 0.78) against dense 0.80: the interval straddles
    # 0.97 and one run in three beats dense
    (tmp_path / "b").mkdir()
    dense = dense_runs([(0.8, 0.8)] * 3)
    sweep = runs("mast_sweep", [curve(w, w) for w in (0.70, 0.78, 0.86)], **{"cfg.sparse.sparsity": 0.9})
    row = mast_claims.sweep_row(dense, sweep, k=20)
    lo, hi = metrics.ratio_interval([0.70, 0.78, 0.86], [0.8, 0.8, 0.8])
    assert lo < 0.97 < hi
    # an equivalence question: undecided, however near the point estimate, with the seeds that would decide it
    # (0.975 against 0.97 at a standard deviation of 0.08: more than the power calculation's 64)
    assert row["ours"] == (f"QMIX 3m — 0.9: 0.975 [{lo:.3f}, {hi:.3f}], P = 0.33, undecided (its interval straddles "
                           "0.97; the point estimate is above 0.97): more than 64 seeds each would be needed (80 % "
                           "power at the measured spread; now 3). highest sparsity within 3 % by its whole interval: "
                           "none")


def test_claims_rows_resting_on_illustrative_runs_give_the_stamp_instead_of_their_value(tmp_path):
    claims = mast_claims.make(cells_inputs(tmp_path, seeds=2))
    stamp = "illustrative: 2 seeds, 1,000 steps — not evidence (fewer than 3 seeds in every compared cell)"
    measured = claims[~claims["ours"].str.startswith("not measured")]
    assert len(measured) == 6  # largest FLOPs, QMIX average, size, win rate, baselines, sweep: the one QMIX 3m cell
    assert (measured["ours"] == f"not claimed: {stamp}").all() and (measured["evidence"] == stamp).all()
    assert (measured["ratio ours/paper"] == "").all()
    assert claims.attrs["evidence"].startswith("evidence per row (column `evidence`, metrics.evidence): 0 of 10 claims")


def test_claims_read_the_cells_sparsity_from_the_runs_where_no_selection_is_given(tmp_path):
    """The default profile declares Table 1 at 90 % (the baselines' configured sparsity) rather than choosing it;
    OW-QMIX runs dense and MAST at 0.9 only. Without a selection CSV the cells sit at the runs' sparsity, not at
    the sweep's other sparsities."""
    inputs = [a for a in cells_inputs(tmp_path) if not a.startswith("selection=")]
    ow = {"cfg.algo": "ow_qmix"}
    extra = {"dense": dense_runs([(0.8, 0.8)] * 3, **ow),
             "sweep": runs("mast_sweep", [curve(0.78, 0.78)] * 3, **ow, **{"cfg.sparse.sparsity": 0.9})}
    for i, arg in enumerate(inputs):
        role, _, path = arg.partition("=")
        if role in extra:
            frame = pd.concat([pd.read_parquet(path), extra[role]], ignore_index=True)
            inputs[i] = f"{role}={write(frame, tmp_path / f'{role}_ow.parquet')}"
            if role == "sweep":
                sp = pd.concat([pd.read_parquet(next(a for a in inputs if a.startswith("sparsity=")).partition("=")[2]),
                                sparsity_summary(extra[role], "mast")])
                inputs.append(f"sparsity={write(sp, tmp_path / 'sparsity_ow.parquet')}")
    inputs = [a for a in inputs if not a.endswith("/sparsity.parquet")]
    claims = mast_claims.make(inputs).set_index("claim")
    perf = claims.loc["MAST's win rate relative to dense, every cell"]
    assert perf["sparsity"] == "OW-QMIX 3m 0.9, QMIX 3m 0.9"
    assert "MAST / dense 0.975 [0.975, 0.975]" in perf["ours"]
    assert claims.loc["average training-FLOPs reduction over maps, MAST-OW-QMIX", "ours"].startswith(
        "by construction (declared sparsity 0.9): 4.0x")


def test_claims_label_reductions_at_a_declared_sparsity_by_construction_and_do_not_count_them(tmp_path):
    """Without a selection (the default profile declares 90 %), every FLOPs and size reduction follows from the
    declared sparsity: labelled 'by construction', its ratio to the paper left out, and not counted as measured;
    what is measured there is MAST / dense."""
    inputs = [a for a in cells_inputs(tmp_path) if not a.startswith("selection=")]
    claims = mast_claims.make(inputs).set_index("claim")
    reductions = [c for c in claims.index if "reduction" in c]
    for claim in reductions:
        row = claims.loc[claim]
        if row["ours"].startswith("not measured"):
            assert row["kind"] == ""
            continue
        assert row["kind"] == "by construction", claim
        assert row["ours"].startswith("by construction (declared sparsity"), row["ours"]
        assert "; measured at it: " in row["ours"] and "MAST / dense 0.975 [0.975, 0.975]" in row["ours"]
        assert row["ratio ours/paper"] == ""
    assert claims.loc["MAST's win rate relative to dense, every cell", "kind"] == "measured"
    # 3 rows with a value are reductions by construction; the win-rate rows are what is measured
    assert claims.attrs["evidence"].startswith("evidence per row (column `evidence`, metrics.evidence): 3 of 10 claims "
                                               "with a measured value on evidence; 3 by construction")


def test_up_to_20x_is_measured_only_at_a_cell_that_has_that_reduction_or_where_the_sweep_tried_it(tmp_path):
    # declared at 0.9, no selection: the largest reduction of any cell is 4.0x (train FLOPs ratio 0.25) and nothing
    # was tried at the paper's ≈ 95 %: the paper's 20x is not measured
    inputs = [a for a in cells_inputs(tmp_path) if not a.startswith("selection=")]
    largest = mast_claims.make(inputs).set_index("claim").loc["largest training-FLOPs reduction of MAST over all cells"]
    assert largest["kind"] == "by construction" and largest["ratio ours/paper"] == ""
    assert largest["ours"].endswith("up to 20x not measured: no cell at a 20x reduction and no swept sparsity at "
                                    "≈ 0.95 (the paper's: MAST-QMIX on 2s3z)")
    # the selection tried 0.9 and 0.95 and its 3 % rule chose 0.9: the reduction there is measured, and so is the
    # answer to "up to 20x" (the rule stopped short of it)
    (tmp_path / "b").mkdir()
    claims = mast_claims.make(cells_inputs(tmp_path / "b")).set_index("claim")
    largest = claims.loc["largest training-FLOPs reduction of MAST over all cells"]
    assert largest["kind"] == "measured" and largest["ratio ours/paper"] == f"{4.0 / 20.0:.2f}"
    assert largest["ours"].endswith("the sweep tried up to 0.95 (the paper's 20x: ≈ 0.95) and the 3 % rule stopped "
                                    "at 0.9")
    average = claims.loc["average training-FLOPs reduction over maps, MAST-QMIX"]
    assert average["kind"] == "measured" and average["ratio ours/paper"] == f"{4.0 / 10.0:.2f}"
    assert ("(at the sparsity the 3 % rule chose, 0.9); measured there: 3m: MAST / dense 0.975 [0.975, 0.975], "
            "P = 0.00: within 3 % by its whole interval" in average["ours"])


def test_the_claims_put_mast_against_each_baseline_where_the_baselines_fall_below_dense(tmp_path):
    """The paper's central claim as a row: the baselines that fall below dense by their whole interval, MAST's own
    verdict, and MAST / each baseline with Fieller's interval; 'MAST above' only where the whole interval is > 1."""
    row = mast_claims.make(cells_inputs(tmp_path)).set_index("claim").loc[
        "MAST above the sparse baselines where they fall below dense (Table 1's cells)"]
    # every seed alike: dense 0.80, MAST 0.78, Tiny 0.40, SS 0.60, SET 0.64, RigL 0.72, RLx2 0.76; intervals collapse
    assert row["ours"] == (
        "QMIX 3m 0.9: below dense by the whole interval: Tiny 0.50 [0.50, 0.50], SS 0.75 [0.75, 0.75], SET 0.80 "
        "[0.80, 0.80], RigL 0.90 [0.90, 0.90], RLx2 0.95 [0.95, 0.95]; MAST / dense 0.975 [0.975, 0.975], P = 0.00: "
        "within 3 % by its whole interval; MAST / Tiny 1.95 [1.95, 1.95] MAST above (Holm p 0.000); SS 1.30 [1.30, "
        "1.30] MAST above (Holm p 0.000); SET 1.22 [1.22, 1.22] MAST above (Holm p 0.000); RigL 1.08 [1.08, 1.08] "
        "MAST above (Holm p 0.000); RLx2 1.03 [1.03, 1.03] MAST above (Holm p 0.000); above 5 of 5 baselines by the "
        "whole interval, Holm's procedure holding the family of 5 comparisons at 5 %")
    assert row["evidence"].startswith("evidence: 3 seeds") and row["sparsity"] == "QMIX 3m 0.9"


def test_a_comparison_holms_correction_left_undecided_names_holm_once_and_says_what_the_interval_alone_said():
    """The extended profile's RES-QMIX MAST / SET 1.34 [1.07, 1.77] (Holm p 0.061) read 'undecided (Holm) (Holm p
    0.061)': the verdict's '(Holm)' and the p-value's parentheses said the same thing twice."""
    record = {"verdict": "undecided (Holm)", "p_holm": 0.061, "seeds_needed": 8, "seeds": "5, 5", "lo": 1.07,
              "hi": 1.77}
    text = mast_claims._versus_text(record)
    assert text.count("Holm") == 1
    assert text.startswith("undecided (Holm p 0.061; the interval alone lies above 1)")
    decided = {**record, "verdict": "MAST above", "p_holm": 0.004, "seeds_needed": float("nan")}
    assert mast_claims._versus_text(decided) == "MAST above (Holm p 0.004)"
