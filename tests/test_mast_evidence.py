"""Paper 2's evidence rule (issue 21): an output resting on fewer than 3 seeds per compared cell, or on a dense model
that has not reached its plateau, says so inside itself ("illustrative: n seeds, m steps — not evidence") and stays
out of the claims table's values. The rule is tested on synthetic runs whose window means are computed by hand; no
test depends on how a real run turns out."""

from __future__ import annotations

import importlib
import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import torch
from test_mast_analysis import run_rows, sparsity_summary, summary, write
from test_mast_analysis_figures import MAST_FIGURES, inputs_for, masks_summary

from effmarl.analysis import metrics
from effmarl.analysis.figures import FIGURES
from effmarl.analysis.io import mark_evidence, save_figure, save_table
from effmarl.analysis.metrics.evidence import LEARNED_FLOOR, MIN_SEEDS, RISE_TOLERANCE, plateau, shortfalls
from effmarl.analysis.tables import TABLES, mast_selection, mast_table1
from effmarl.config import ConfigError

N_EVALS = 11  # evaluations at x = 0, 100, ..., 1000: the final 10 % is x >= 900 (two), the 10 % before halfway x = 400


def curve(earlier: float, final: float) -> list[float]:
    """Win rates of one run: `earlier` at every evaluation before x = 900 (so at x = 400), `final` at 900 and 1000."""
    return [earlier] * (N_EVALS - 2) + [final] * 2


def runs(study: str, curves: list[list[float]], **cfg) -> pd.DataFrame:
    return pd.DataFrame([row for seed, wins in enumerate(curves) for row in run_rows(study, seed, wins, **cfg)])


def dense_runs(pairs, **cfg) -> pd.DataFrame:
    """Dense runs, one per (earlier, final) pair."""
    return runs("mast_dense", [curve(e, f) for e, f in pairs], **{"cfg.sparse.method": "dense", **cfg})


def stamps(fig) -> list[str]:
    return [t.get_text() for t in fig.texts if t.get_text().startswith("illustrative")]


def fig1_summary(seeds: int, budget: int = 1000, dense=(0.8, 0.8), mast: float = 0.76) -> pd.DataFrame:
    cfg = {"cfg.env.map": "3s5z", "cfg.budget.env_steps": budget}
    return pd.concat([runs("mast_fig1", [curve(*dense)] * seeds, **cfg, **{"cfg.sparse.method": "dense"}),
                      runs("mast_fig1", [curve(mast, mast)] * seeds, **cfg, **{"cfg.sparse.method": "mast"}),
                      runs("mast_fig1", [curve(0.3, 0.3)] * seeds, **cfg, **{"cfg.sparse.method": "rigl"})])


# ---- the rule -----------------------------------------------------------------------------------------------------

def test_the_rule_is_three_seeds_and_a_dense_plateau_within_three_hundredths_or_the_seeds_spread():
    assert (MIN_SEEDS, RISE_TOLERANCE, LEARNED_FLOOR) == (3, 0.03, 0.1)


def test_dense_that_gains_less_than_the_tolerance_over_the_second_half_is_at_its_plateau():
    table = plateau(dense_runs([(0.80, 0.80), (0.78, 0.80), (0.80, 0.82)])).iloc[0]
    # rises 0, 0.02, 0.02: mean 0.0133 <= 0.03; final (0.80 + 0.80 + 0.82) / 3
    assert table["rise"] == pytest.approx(0.02 * 2 / 3) and table["final"] == pytest.approx(2.42 / 3)
    assert table["spread"] == pytest.approx(np.std([0.0, 0.02, 0.02], ddof=1))
    assert table["plateau"] and table["reason"] == "" and table["seeds"] == 3


def test_dense_still_learning_over_the_second_half_is_not_at_its_plateau_and_says_by_how_much():
    table = plateau(dense_runs([(0.5, 0.8)] * 3)).iloc[0]
    assert table["rise"] == pytest.approx(0.3) and not table["plateau"]
    assert table["reason"] == ("dense qmix/3m still learning (+0.30 from the 10 % before halfway to the final 10 %, "
                               "> 0.03)")


def test_a_rise_within_the_seeds_spread_is_noise_and_counts_as_a_plateau():
    # rises +0.2, -0.1, +0.05: mean 0.05 > 0.03, but their standard deviation is 0.15
    table = plateau(dense_runs([(0.6, 0.8), (0.9, 0.8), (0.75, 0.8)])).iloc[0]
    assert table["rise"] == pytest.approx(0.05) and table["spread"] == pytest.approx(0.15)
    assert table["plateau"]
    # the same mean rise with no spread (+0.05 every seed) is learning
    steady = plateau(dense_runs([(0.75, 0.8)] * 3)).iloc[0]
    assert steady["spread"] == pytest.approx(0.0, abs=1e-12) and not steady["plateau"]
    # the verdict says that the spread allowed the rise: "+0.26 over the second half" alone read as a contradiction
    verdict = metrics.judge(dense_runs([(0.6, 0.8), (0.9, 0.8), (0.75, 0.8)]), ["cfg.algo"],
                            dense=dense_runs([(0.6, 0.8), (0.9, 0.8), (0.75, 0.8)]))
    assert "dense at its plateau: qmix/3m +0.05 over the second half, within the seeds' spread 0.15" in verdict.text


def test_dense_that_wins_nothing_has_not_learned_though_its_curve_is_flat():
    """At 50 000 steps dense won 0 % on 3s5z and 2s3z: a flat curve at 0 is no plateau."""
    table = plateau(dense_runs([(0.0, 0.0)] * 3, **{"cfg.env.map": "3s5z"})).iloc[0]
    assert table["rise"] == 0.0 and not table["learned"] and not table["plateau"]
    assert table["reason"] == "dense qmix/3s5z has not learned (win rate 0.00 over the final 10 %, < 0.1)"


def test_dense_without_an_evaluation_before_halfway_cannot_show_a_plateau():
    table = plateau(runs("mast_dense", [[0.8] * 4], **{"cfg.sparse.method": "dense"})).iloc[0]  # x = 0 ... 300
    assert np.isnan(table["rise"]) and not table["plateau"]
    assert table["reason"] == "dense qmix/3m: no evaluation in the 10 % before halfway to show a plateau"


def test_fewer_than_three_seeds_in_a_compared_cell_is_named_with_its_count():
    seeds = pd.Series({"qmix/3m/0.9": 3, "qmix/3m/0.95": 2, "dense qmix/3m": 3})
    assert shortfalls(seeds) == ["fewer than 3 seeds in 1 of 3 compared cells: qmix/3m/0.95 (2)"]
    assert shortfalls(pd.Series({"a": 1, "b": 2})) == ["fewer than 3 seeds in every compared cell"]
    assert shortfalls(pd.Series({"a": 3})) == []


def test_three_seeds_per_cell_and_dense_at_its_plateau_is_evidence_and_says_what_was_checked():
    sweep = runs("mast_sweep", [curve(0.7, 0.7)] * 3, **{"cfg.sparse.sparsity": 0.9})
    verdict = metrics.judge(sweep, ["cfg.algo", "cfg.env.map", "cfg.sparse.sparsity"],
                            dense=dense_runs([(0.8, 0.8)] * 3))
    assert not verdict.illustrative
    assert verdict.text == "evidence: 3 seeds, 1,000 steps (dense at its plateau: qmix/3m +0.00 over the second half)"


def test_the_stamp_says_the_seeds_and_steps_and_every_reason():
    sweep = pd.concat([runs("mast_sweep", [curve(0.7, 0.7)] * 3, **{"cfg.sparse.sparsity": 0.9}),
                       runs("mast_sweep", [curve(0.7, 0.7)] * 2, **{"cfg.sparse.sparsity": 0.95})])
    verdict = metrics.judge(sweep, ["cfg.algo", "cfg.env.map", "cfg.sparse.sparsity"],
                            dense=dense_runs([(0.5, 0.8)] * 3))
    assert verdict.illustrative and verdict.seeds == (2, 3) and verdict.steps == (1000,)
    assert verdict.text == (
        "illustrative: 2-3 seeds, 1,000 steps — not evidence (fewer than 3 seeds in 1 of 3 compared cells: "
        "qmix/3m/0.95 (2); dense still learning (gain from the 10 % before halfway to the final 10 % above "
        "max(0.03, the seeds' spread)): qmix/3m +0.30 > 0.03)")


def test_without_dense_runs_only_the_seed_rule_applies_and_the_stamp_names_the_budget():
    abl = summary("mast_abl_t0", [({"cfg.mast.td_lambda.burn_in_fraction": f, "cfg.budget.env_steps": 50_000},
                                   [0.0, 0.0, 0.0]) for f in (0.0, 0.75)])
    keys = ["cfg.algo", "cfg.env.map", "cfg.mast.td_lambda.burn_in_fraction"]
    verdict = metrics.judge(abl, keys)
    assert verdict.text == ("evidence: 3 seeds, 50,000 steps (no dense runs among the inputs: plateau not checked; "
                            "budget 50,000 of the paper's 2,000,000 steps)")
    one = metrics.judge(abl[abl["cfg.seed"] == 0], keys)
    assert one.text == "illustrative: 1 seed, 50,000 steps — not evidence (fewer than 3 seeds in every compared cell)"


def test_the_paper1_evidence_function_keeps_its_name_beside_the_paper2_module():
    from effmarl.analysis.metrics import phases

    assert metrics.evidence is phases.evidence  # the submodule metrics/evidence.py does not shadow it


# ---- every output carries it --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", MAST_FIGURES)
def test_every_paper2_figure_of_fewer_than_three_seeds_is_stamped_inside_the_image(name, tmp_path):
    module = importlib.import_module(FIGURES[name])
    inputs = inputs_for(name, tmp_path)  # 1-2 seeds per compared cell
    fig, shown = module.make(inputs)
    text = stamps(fig)
    assert len(text) == 1 and " — not evidence (" in text[0], [t.get_text() for t in fig.texts]
    assert text[0].replace("\n", " ").startswith("illustrative: "), text
    save_figure(fig, tmp_path / name, inputs, shown, name=name, caption=module.CAPTION)
    sidecar = json.loads((tmp_path / f"{name}.provenance.json").read_text())
    assert sidecar["evidence"].startswith("illustrative: ")


def test_the_base_win_rate_figure_is_stamped_too(tmp_path):
    from effmarl.analysis.figures import mast_base_win_rate

    base = dense_runs([(0.5, 0.8)] * 3)
    fig, _ = mast_base_win_rate.make([f"metrics={write(base, tmp_path / 'base.parquet')}"])
    assert [s.replace("\n", " ") for s in stamps(fig)] == [
        "illustrative: 3 seeds, 1,000 steps — not evidence (dense still learning (gain from the 10 % before halfway "
        "to the final 10 % above max(0.03, the seeds' spread)): qmix/3m +0.30 > 0.03)"]
    fig, _ = mast_base_win_rate.make([f"metrics={write(dense_runs([(0.8, 0.8)] * 3), tmp_path / 'b2.parquet')}"])
    assert stamps(fig) == []
    plt.close("all")


def cells_inputs(tmp_path, seeds: int = 3, dense=(0.8, 0.8), algos=("qmix",), maps=("3m",)) -> list[str]:
    """Table-1 inputs with `seeds` runs per cell, N_EVALS evaluations each: dense at (earlier, final) `dense` (or
    `dense[algo]`), MAST at 0.9 (0.78) and 0.95 (0.7), the five baselines at 0.9; the selection chooses 0.9."""
    parts = {"dense": [], "sweep": [], "baselines": []}
    for algo in algos:
        for m in maps:
            cell = {"cfg.algo": algo, "cfg.env.map": m}
            pair = dense[algo] if isinstance(dense, dict) else dense
            parts["dense"].append(runs("mast_dense", [curve(*pair)] * seeds, **cell, **{"cfg.sparse.method": "dense"}))
            for s, w in ((0.9, 0.78), (0.95, 0.7)):
                parts["sweep"].append(runs("mast_sweep", [curve(w, w)] * seeds, **cell, **{"cfg.sparse.sparsity": s}))
            for method, w in (("tiny", 0.4), ("static", 0.6), ("set", 0.64), ("rigl", 0.72), ("rlx2", 0.76)):
                parts["baselines"].append(runs("mast_table1", [curve(w, w)] * seeds, **cell,
                                               **{"cfg.sparse.method": method, "cfg.sparse.sparsity": 0.9}))
    frames = {k: pd.concat(v, ignore_index=True) for k, v in parts.items()}
    paths = {k: write(f, tmp_path / f"{k}.parquet") for k, f in frames.items()}
    sel = tmp_path / "selection.csv"
    mast_selection.make([f"dense={paths['dense']}", f"sweep={paths['sweep']}"]).to_csv(sel, index=False)
    sp = pd.concat([sparsity_summary(frames["sweep"], "mast"), sparsity_summary(frames["baselines"])])
    return [f"dense={paths['dense']}", f"sweep={paths['sweep']}", f"baselines={paths['baselines']}",
            f"sparsity={write(sp, tmp_path / 'sparsity.parquet')}", f"selection={sel}"]


def test_a_learning_curve_figure_of_three_seeds_at_dense_plateau_carries_no_stamp(tmp_path):
    fig13 = importlib.import_module(FIGURES["mast_curves"])
    inputs = [a for a in cells_inputs(tmp_path) if not a.startswith("sparsity=")]
    fig, _ = fig13.make(inputs)
    assert stamps(fig) == []
    (tmp_path / "b").mkdir()
    learning = [a for a in cells_inputs(tmp_path / "b", dense=(0.5, 0.8)) if not a.startswith("sparsity=")]
    fig, _ = fig13.make(learning)
    assert len(stamps(fig)) == 1 and "dense still learning" in stamps(fig)[0].replace("\n", " ")
    assert "qmix/3m +0.30 > 0.03" in stamps(fig)[0].replace("\n", " ")
    plt.close("all")


def _ablation_inputs(tmp_path) -> dict[str, list[str]]:
    p = lambda frame, stem: [f"metrics={write(frame, tmp_path / f'{stem}.parquet')}"]  # noqa: E731
    one = lambda study, key, values: summary(study, [({key: v}, [0.1]) for v in values])  # noqa: E731
    return {"mast_table6": p(one("mast_abl_t0", "cfg.mast.td_lambda.burn_in_fraction", (0.0, 0.375)), "t0"),
            "mast_table7": p(one("mast_abl_lambda", "cfg.mast.td_lambda.lambda", (0.3, 0.6)), "lambda"),
            "mast_table8": p(summary("mast_abl_smm", [({"cfg.mellowmax.alpha": 1.0, "cfg.mellowmax.omega": 10.0},
                                                       [0.1])]), "smm"),
            "mast_table9": p(one("mast_abl_b1b2", "cfg.mast.dual_buffer.batch_ratio", (1, 3)), "b1b2"),
            "mast_table10": p(one("mast_abl_dm", "cfg.sparse.delta_m", (100, 200)), "dm")}


@pytest.mark.parametrize("name", ["mast_selection", "mast_table1", "mast_table5", "mast_values", "mast_table6",
                                  "mast_table7", "mast_table8", "mast_table9", "mast_table10"])
def test_every_paper2_table_of_one_seed_carries_the_stamp_in_its_csv_and_above_its_md_caption(name, tmp_path):
    module = importlib.import_module(TABLES[name])
    if name in ("mast_selection", "mast_table1", "mast_table5", "mast_values"):
        inputs = cells_inputs(tmp_path, seeds=1)
        cells = ("dense=", "sweep=", "baselines=", "selection=")
        keep = {"mast_selection": ("dense=", "sweep="), "mast_table5": cells, "mast_values": cells}
        inputs = [a for a in inputs if a.startswith(keep.get(name, ("",)))]
    else:
        inputs = _ablation_inputs(tmp_path)[name]
    table = module.make(inputs)
    stem = tmp_path / "out"
    save_table(table, stem, inputs, name=name, caption=module.CAPTION)
    csv = pd.read_csv(stem.with_suffix(".csv"))
    assert csv.columns[0] == "evidence" and csv["evidence"].nunique() == 1
    stamp = csv["evidence"].iloc[0]
    assert stamp.startswith("illustrative: 1 seed, 1,000 steps — not evidence (fewer than 3 seeds"), stamp
    md = stem.with_suffix(".md").read_text().splitlines()
    assert md[0] == f"**{stamp}**" and md[2] == module.CAPTION
    assert "| evidence" not in md[4]  # said once above the caption, not on every row
    assert json.loads(stem.with_suffix(".provenance.json").read_text())["evidence"] == stamp


@pytest.mark.parametrize("name", ["mast_table6", "mast_table7", "mast_table8", "mast_table9", "mast_table10",
                                  "mast_fig5"])
def test_an_ablation_given_mast_dense_checks_the_plateau_of_dense_in_its_own_cell_only(name, tmp_path):
    """Tables 6-10 and Fig. 5 hold no dense model of their own: given the profile's dense runs they judge the budget
    by dense's plateau in their cell (QMIX on 3m here), never by another algorithm's; without them they say the
    plateau was not checked (in the evidence text; these synthetic inputs have too few seeds to be evidence)."""
    kind = "figure" if name == "mast_fig5" else "table"
    module = importlib.import_module((FIGURES if kind == "figure" else TABLES)[name])
    own = inputs_for(name, tmp_path) if kind == "figure" else _ablation_inputs(tmp_path)[name]

    def verdict(dense) -> str:
        inputs = own + ([f"dense={write(dense, tmp_path / 'dense.parquet')}"] if dense is not None else [])
        made = module.make(inputs)
        if kind == "figure":
            fig = made[0]
            text = " ".join(t.get_text().replace("\n", " ") for t in fig.texts if t.get_text().startswith(
                ("illustrative", "evidence")))
            plt.close("all")
            return text
        return made.attrs["evidence"]

    learning = dense_runs([(0.5, 0.8)] * 3)  # qmix/3m rises +0.30: still learning
    other = dense_runs([(0.5, 0.8)] * 3, **{"cfg.algo": "ow_qmix"})
    flat = dense_runs([(0.8, 0.8)] * 3)
    assert "dense still learning" in verdict(learning) and "qmix/3m +0.30 > 0.03" in verdict(learning)
    assert "still learning" not in verdict(pd.concat([flat, other], ignore_index=True))
    assert "ow_qmix" not in verdict(pd.concat([flat, other], ignore_index=True))
    assert "dense" not in verdict(None) and "dense" not in verdict(other)  # (the 1-2 seeds stamp it anyway)


def test_table1_of_three_seeds_per_cell_with_dense_at_its_plateau_says_it_is_evidence(tmp_path):
    table = mast_table1.make(cells_inputs(tmp_path))
    assert set(table["evidence"]) == {
        "evidence: 3 seeds, 1,000 steps (dense at its plateau: qmix/3m +0.00 over the second half)"}
    (tmp_path / "b").mkdir()
    still = mast_table1.make(cells_inputs(tmp_path / "b", dense=(0.6, 0.8)))
    assert set(still["evidence"]) == {
        "illustrative: 3 seeds, 1,000 steps — not evidence (dense still learning (gain from the 10 % before "
        "halfway to the final 10 % above max(0.03, the seeds' spread)): qmix/3m +0.20 > 0.03)"}


PLATEAU_QMIX = "evidence: 3 seeds, 1,000 steps (dense at its plateau: qmix/3m +0.00 over the second half)"
LEARNING_OW = ("illustrative: 3 seeds, 1,000 steps — not evidence (dense still learning (gain from the 10 % before "
               "halfway to the final 10 % above max(0.03, the seeds' spread)): ow_qmix/3m +0.20 > 0.03)")


def test_table1_judges_each_algorithm_and_map_by_its_own_dense_so_a_cell_still_learning_stamps_only_its_rows(
        tmp_path):
    """The extended profile's Table 1 holds three algorithms; OW-QMIX's dense still gaining over the second half
    made every row illustrative, QMIX's and RES's too, though their own dense had levelled off. Each row now
    carries its own cell's verdict (its average row its algorithm's), and the first line names which cells are
    evidence and which not."""
    inputs = cells_inputs(tmp_path, dense={"qmix": (0.8, 0.8), "ow_qmix": (0.6, 0.8)}, algos=("qmix", "ow_qmix"))
    table = mast_table1.make(inputs)
    by_algo = table.groupby("algorithm")["evidence"].agg(set)
    assert by_algo["QMIX"] == {PLATEAU_QMIX} and by_algo["OW-QMIX"] == {LEARNING_OW}  # average rows included
    assert table.attrs["evidence"] == (
        "evidence per cell (column `evidence`), 1 of 2 cells on evidence: qmix/3m (3 seeds, 1,000 steps); "
        "illustrative: ow_qmix/3m (dense still learning (gain from the 10 % before halfway to the final 10 % above "
        "max(0.03, the seeds' spread)): ow_qmix/3m +0.20 > 0.03)")
    stem = tmp_path / "table1"
    save_table(table, stem, inputs, name="mast_table1", caption=mast_table1.CAPTION)
    md = stem.with_suffix(".md").read_text()
    assert md.startswith(f"**{table.attrs['evidence']}**") and "| evidence " in md  # the column stays in the .md
    from effmarl.readme_tables import BLOCKS  # the docs' quote of it says the same first line, once

    pub = tmp_path / "pub" / "mast" / "tables"
    pub.mkdir(parents=True)
    save_table(table, pub / "table1", inputs, name="mast_table1")
    block = BLOCKS["paper2-table1"].render(lambda rel: (tmp_path / "pub" / rel).read_text(), lambda rel: rel)
    assert block.startswith(f"**{table.attrs['evidence']}**\n\n| ")
    # one cell alone, or every cell alike: one verdict, as before
    (tmp_path / "b").mkdir()
    alike = mast_table1.make(cells_inputs(tmp_path / "b", algos=("qmix", "ow_qmix")))
    assert set(alike["evidence"]) == {alike.attrs["evidence"]} and alike.attrs["evidence"].startswith("evidence: ")


@pytest.mark.parametrize("name", ["mast_table5", "mast_values"])
def test_the_other_tables_of_table1s_cells_judge_each_cell_by_its_own_dense_too(name, tmp_path):
    inputs = cells_inputs(tmp_path, dense={"qmix": (0.8, 0.8), "ow_qmix": (0.6, 0.8)}, algos=("qmix", "ow_qmix"))
    table = importlib.import_module(TABLES[name]).make([a for a in inputs if not a.startswith("sparsity=")])
    by_algo = table.groupby("algorithm")["evidence"].agg(set)
    assert by_algo["QMIX"] == {PLATEAU_QMIX} and by_algo["OW-QMIX"] == {LEARNING_OW}
    assert table.attrs["evidence"].startswith("evidence per cell (column `evidence`), 1 of 2 cells on evidence")


def test_the_sparsity_selection_judges_each_algorithm_and_map_by_its_own_dense(tmp_path):
    inputs = cells_inputs(tmp_path, dense={"qmix": (0.8, 0.8), "ow_qmix": (0.6, 0.8)}, algos=("qmix", "ow_qmix"))
    table = mast_selection.make([a for a in inputs if a.startswith(("dense=", "sweep="))])
    by_algo = table.groupby("algo")["evidence"].agg(set)
    assert by_algo["qmix"] == {"evidence: 3 seeds, 1,000 steps (dense at its plateau: qmix/3m +0.00 over the "
                               "second half)"}
    assert by_algo["ow_qmix"] == {LEARNING_OW}
    assert table.attrs["evidence"].startswith("evidence per cell (column `evidence`), 1 of 2 cells on evidence")


def test_mark_evidence_replaces_an_earlier_mark_instead_of_adding_a_second_column():
    verdict = metrics.judge(summary("s", [({}, [0.1])]), ["cfg.algo"])
    table = mark_evidence(mark_evidence(pd.DataFrame({"a": [1, 2]}), verdict), verdict)
    assert list(table.columns) == ["evidence", "a"] and table.attrs["evidence"] == verdict.text


# ---- the other defects of the published default run (issue 21) ---------------------------------------------------

def test_figure11_draws_per_input_first_layer_masks_per_agent_when_given_the_masks(tmp_path):
    fig11 = importlib.import_module(FIGURES["mast_fig11"])
    fig, _ = fig11.make(inputs_for("mast_fig11", tmp_path))  # masks.pt of 3 agents, 64 hidden units, 20 inputs
    heat, detail = [ax for ax in fig.axes if ax.images]
    assert detail.images[0].get_array().shape == (3, 20)  # agents x input features of agent.fc1
    assert detail.get_xlabel() == "input feature of agent.fc1" and "per input" in detail.get_title()
    assert "first layer (agent.fc1.weight)" in fig11.CAPTION and "per input" not in heat.get_title()
    plt.close("all")


def test_figure11_without_masks_says_in_the_image_that_it_has_no_first_layer_detail(tmp_path):
    """The default run's Figure 11 had no masks.pt: it showed the per-layer heat map only while its caption described
    the first-layer detail, and nothing in the image said the detail was missing."""
    fig11 = importlib.import_module(FIGURES["mast_fig11"])
    masks = [a for a in inputs_for("mast_fig11", tmp_path) if a.startswith("masks=")]
    fig, _ = fig11.make(masks)
    assert len([ax for ax in fig.axes if ax.images]) == 1
    titles = " ".join(ax.get_title() for ax in fig.axes)
    assert "no first-layer detail: no masks.pt given" in titles, titles
    plt.close("all")


def test_figure13_smooths_each_seed_with_a_window_of_a_third_of_its_evaluations_and_has_no_empty_panel(tmp_path):
    """The default run's Figure 13 smoothed 26 evaluations with the paper's window of 21 (a parabola, which reversed
    Table 1's order) and its saved image was half empty (a one-line footer widened it)."""
    from PIL import Image
    from scipy.signal import savgol_filter

    rng = np.random.default_rng(0)
    wins = {(m, seed): rng.random(26) for m in ("3m", "2s3z") for seed in range(3)}
    dense = pd.concat([runs("mast_dense", [wins[(m, s)] for s in range(3)],
                            **{"cfg.sparse.method": "dense", "cfg.env.map": m}) for m in ("3m", "2s3z")])
    sweep = pd.concat([runs("mast_sweep", [wins[(m, s)] * 0.9 for s in range(3)], **{"cfg.env.map": m})
                       for m in ("3m", "2s3z")])
    base = pd.concat([runs("mast_table1_long_study_name", [wins[(m, s)] * 0.5 for s in range(3)],
                           **{"cfg.sparse.method": "rigl", "cfg.env.map": m}) for m in ("3m", "2s3z")])
    d, s, b = (write(f, tmp_path / f"{n}.parquet") for f, n in ((dense, "d"), (sweep, "s"), (base, "b")))
    mast_selection.make([f"dense={d}", f"sweep={s}"]).to_csv(tmp_path / "sel.csv", index=False)
    inputs = [f"dense={d}", f"sweep={s}", f"baselines={b}", f"selection={tmp_path / 'sel.csv'}"]
    fig13 = importlib.import_module(FIGURES["mast_curves"])
    fig, shown = fig13.make(inputs)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 2 and all(len(ax.lines) == 3 for ax in panels)  # one panel per map, none empty
    for ax in panels:
        m = ax.get_title().split("SMAX ")[1].split(",")[0]
        line = next(line for line in ax.lines if line.get_label().startswith("Dense"))
        expected = np.mean([savgol_filter(wins[(m, seed)], 7, 2) for seed in range(3)], axis=0)  # 26 // 3 = 8 -> 7
        assert line.get_ydata() == pytest.approx(expected)
    written = save_figure(fig, tmp_path / "fig13", inputs, shown)
    png = next(w for w in written if w.suffix == ".png")
    assert Image.open(png).width <= 1.15 * fig.get_figwidth() * 150  # the footer wraps: no blank half


def test_the_index_gives_each_paper2_output_one_name_its_own_caption_and_its_stamp(tmp_path):
    """The published index listed a costs table as "(None)" without a caption, and one module drawing several
    studies three times under one name; a paper-2 output now also carries its evidence stamp into the index."""
    from effmarl.analysis.index import write_index
    from effmarl.cli import main

    inputs = cells_inputs(tmp_path, seeds=1)
    pub = tmp_path / "pub" / "mast"
    (pub / "tables").mkdir(parents=True)
    (pub / "replicate" / "tables").mkdir(parents=True)
    sel_inputs = [a for a in inputs if a.startswith(("dense=", "sweep="))]
    fig1 = write(fig1_summary(1), tmp_path / "fig1.parquet")
    commands = [["table", "mast_selection", *sel_inputs, "--out", str(pub / "tables" / "selection")],
                ["table", "mast_selection", *sel_inputs, "--out", str(pub / "replicate" / "tables" / "selection")],
                ["table", "mast_table1", *inputs, "--out", str(pub / "tables" / "table1")],
                ["table", "mast_claims", *inputs, f"fig1={fig1}", "--out", str(pub / "tables" / "claims")],
                ["figure", "mast_fig1", f"metrics={fig1}", "--out", str(pub / "fig1_methods")]]
    for command in commands:
        assert main(command) == 0, command
    outputs = [str(p) for p in pub.rglob("*") if p.suffix in (".csv", ".md", ".png", ".pdf")]
    md = write_index(outputs, tmp_path / "pub" / "index")[0].read_text()
    sections = {s.splitlines()[0]: s for s in md.split("\n## ")[1:]}
    assert sorted(sections) == sorted([
        "table `mast/tables/selection` (mast_selection)", "table `mast/replicate/tables/selection` (mast_selection)",
        "table `mast/tables/table1` (mast_table1)", "table `mast/tables/claims` (mast_claims)",
        "figure `mast/fig1_methods` (mast_fig1)"])
    for heading, text in sections.items():
        name = heading.split("(")[-1].rstrip(")")
        module = importlib.import_module(TABLES.get(name) or FIGURES[name])
        assert module.CAPTION in text.splitlines(), heading
    table1 = sections["table `mast/tables/table1` (mast_table1)"].splitlines()
    assert table1[2].startswith("**illustrative: 1 seed, 1,000 steps — not evidence")
    figure = sections["figure `mast/fig1_methods` (mast_fig1)"].splitlines()
    assert figure[2].startswith("**illustrative: 1 seed, 1,000 steps — not evidence")
    claims = sections["table `mast/tables/claims` (mast_claims)"].splitlines()
    assert claims[2].startswith("**evidence per row (column `evidence`")


def test_table1_table5_and_the_selection_carry_method_over_dense_with_its_interval_and_p_improvement(tmp_path):
    from effmarl.analysis.tables import mast_table5

    inputs = cells_inputs(tmp_path)
    sel = mast_selection.make([a for a in inputs if a.startswith(("dense=", "sweep="))]).set_index("sparsity")
    assert sel.loc[0.9, ["normalised_lo", "normalised_hi"]].tolist() == pytest.approx([0.975, 0.975])
    assert sel.loc[0.9, "p_improvement"] == 0.0  # 0.78 never beats 0.80
    t1 = mast_table1.make(inputs)
    t1 = t1[t1["map"] == "3m"].set_index("method")  # not the 'average' rows
    assert t1.loc["MAST", ["normalised_lo", "normalised_hi", "p_improvement"]].tolist() == pytest.approx(
        [0.975, 0.975, 0.0])
    t5 = mast_table5.make([a for a in inputs if not a.startswith("sparsity=")]).set_index("method")
    assert t5.loc["MAST", "normalised [95 % CI]"] == "0.975 [0.975, 0.975]"
    assert t5.loc["MAST", "p_improvement"] == 0


def test_the_readme_block_of_table1_carries_its_stamp_when_the_published_table_has_one(tmp_path):
    """docs/results.md quotes Table 1's numbers from the published CSV: without its verdict the quote would look like
    evidence where the table itself says it is not (a table published before the column keeps its block as it was)."""
    from effmarl.readme_tables import BLOCKS

    inputs = cells_inputs(tmp_path, dense=(0.6, 0.8))  # 3 seeds, dense still learning
    pub = tmp_path / "pub"
    (pub / "mast" / "tables").mkdir(parents=True)
    save_table(mast_table1.make(inputs), pub / "mast" / "tables" / "table1", inputs, name="mast_table1")
    block = BLOCKS["paper2-table1"].render(lambda rel: (pub / rel).read_text(), lambda rel: rel)
    assert block.startswith("**illustrative: 3 seeds, 1,000 steps — not evidence (dense still learning")
    assert "| QMIX 3m | MAST | 0.9 |" in block
    csv = pub / "mast" / "tables" / "table1.csv"
    csv.write_text(pd.read_csv(csv).drop(columns="evidence").to_csv(index=False))
    assert BLOCKS["paper2-table1"].render(lambda rel: (pub / rel).read_text(), lambda rel: rel).startswith("| ")


def test_the_readme_block_of_a_one_seed_table1_shows_no_interval_instead_of_failing(tmp_path):
    """One seed has no bootstrap interval (empty `mean_lo` / `mean_hi`): the docs block says so instead of failing to
    read an empty bound as a number."""
    from effmarl.readme_tables import BLOCKS

    inputs = cells_inputs(tmp_path, seeds=1)
    pub = tmp_path / "pub"
    (pub / "mast" / "tables").mkdir(parents=True)
    save_table(mast_table1.make(inputs), pub / "mast" / "tables" / "table1", inputs, name="mast_table1")
    block = BLOCKS["paper2-table1"].render(lambda rel: (pub / rel).read_text(), lambda rel: rel)
    assert "| QMIX 3m | MAST | 0.9 | 1 / " in block and "0.780 [no interval: 1 seed] |" in block


# ---- verdicts follow the interval, and reductions that follow from a declared sparsity say so (issue 35) ----------

def test_table5s_dense_row_is_the_reference_and_not_a_one_seed_cell(tmp_path):
    from effmarl.analysis.tables import mast_table5

    t5 = mast_table5.make([a for a in cells_inputs(tmp_path) if not a.startswith("sparsity=")]).set_index("method")
    assert t5.loc["Dense", "seeds"] == 3
    assert t5.loc["Dense", "normalised [95 % CI]"] == "1.000 (the reference)"


def test_the_selection_says_where_its_admissible_verdict_rests_on_the_point_estimate_alone():
    dense = dense_runs([(0.8, 0.8)] * 3)
    # MAST 0.70 / 0.78 / 0.86 against dense 0.80: IQM ratio 0.975, admissible by the point estimate, its interval
    # straddles 0.97
    spread = metrics.select_sparsity(dense, runs("mast_sweep", [curve(w, w) for w in (0.70, 0.78, 0.86)],
                                                 **{"cfg.sparse.sparsity": 0.9}), k=20).iloc[0]
    assert spread["admissible"] and spread["normalised_lo"] < 0.97 < spread["normalised_hi"]
    assert spread["verdict"] == ("undecided (its interval straddles 0.97; the point estimate is above 0.97): more than "
                                 "64 seeds each would be needed (80 % power at the measured spread; now 3)")
    sure = metrics.select_sparsity(dense, runs("mast_sweep", [curve(0.78, 0.78)] * 3,
                                               **{"cfg.sparse.sparsity": 0.9}), k=20).iloc[0]
    assert sure["verdict"] == "within 3 % by its whole interval"
    below = metrics.select_sparsity(dense, runs("mast_sweep", [curve(w, w) for w in (0.4, 0.5, 0.6)],
                                                **{"cfg.sparse.sparsity": 0.9}), k=20).iloc[0]
    assert not below["admissible"] and below["verdict"] == "more than 3 % below by its whole interval"


def test_table1_says_for_each_method_whether_its_interval_decides_the_3_percent_verdict(tmp_path):
    t1 = mast_table1.make(cells_inputs(tmp_path))
    t1 = t1[t1["map"] == "3m"].set_index("method")
    assert t1.loc["MAST", "vs_dense"] == "within 3 % by its whole interval"  # 0.78 / 0.80 on every seed
    assert t1.loc["Tiny", "vs_dense"] == "more than 3 % below by its whole interval"
    assert t1.loc["Dense", "vs_dense"] == "the reference"


def test_mast_against_a_baseline_is_undecided_where_the_ratio_interval_holds_one():
    cfg = {"cfg.sparse.sparsity": 0.9}
    frame = pd.concat([runs("mast_sweep", [curve(w, w) for w in (0.5, 0.6, 0.7)], **cfg),
                       runs("mast_table1", [curve(w, w) for w in (0.55, 0.6, 0.65)],
                            **{**cfg, "cfg.sparse.method": "rigl"}),
                       runs("mast_table1", [curve(w, w) for w in (0.2, 0.25, 0.3)],
                            **{**cfg, "cfg.sparse.method": "static"})], ignore_index=True)
    final = metrics.final_win_rate(frame)
    final["cfg.sparse.method"] = final["cfg.sparse.method"].where(final["cfg.study"] != "mast_sweep", "mast")
    table = metrics.versus_baselines(final).set_index("method")
    assert list(table.index) == ["static", "rigl"]  # Table 1's method order
    lo, hi = metrics.ratio_interval([0.5, 0.6, 0.7], [0.55, 0.6, 0.65], trim=metrics.IQM_TRIM)
    assert table.loc["rigl", ["ratio", "lo", "hi"]].tolist() == pytest.approx([1.0, lo, hi])
    assert lo < 1 < hi and table.loc["rigl", "verdict"] == "undecided"
    assert table.loc["static", "ratio"] == pytest.approx(0.6 / 0.25) and table.loc["static", "verdict"] == "MAST above"
    assert table.loc["static", "seeds"] == "3, 3"
    assert [metrics.ratio_verdict(*b) for b in ((1.01, 2), (0.5, 0.99), (0.9, 1.1), (np.nan, 1))] == [
        "MAST above", "MAST below", "undecided", "no interval"]


def test_mast_against_a_baseline_whose_interval_reaches_zero_is_undecided_and_says_why():
    """Fieller's set is unbounded where the baseline's own interval reaches 0 (SS at 99 %: 0.18, 0.36, 0.16): the
    ratio has no interval because the baseline is not clear of 0, not because of its seeds, and MAST is not above
    it by an interval; a baseline of one seed has no interval for that reason."""
    cfg = {"cfg.sparse.sparsity": 0.99}
    frame = pd.concat([runs("mast_sweep", [curve(w, w) for w in (0.5, 0.6, 0.7)], **cfg),
                       runs("mast_table1", [curve(w, w) for w in (0.05, 0.35, 0.1)],
                            **{**cfg, "cfg.sparse.method": "static"}),
                       runs("mast_table1", [curve(0.4, 0.4)], **{**cfg, "cfg.sparse.method": "set"})],
                      ignore_index=True)
    final = metrics.final_win_rate(frame)
    final["cfg.sparse.method"] = final["cfg.sparse.method"].where(final["cfg.study"] != "mast_sweep", "mast")
    assert np.isnan(metrics.ratio_interval([0.5, 0.6, 0.7], [0.05, 0.35, 0.1], trim=metrics.IQM_TRIM)).all()
    table = metrics.versus_baselines(final).set_index("method")
    assert table.loc["static", ["verdict", "why"]].tolist() == ["undecided", "baseline's interval reaches 0"]
    assert table.loc["set", ["verdict", "why", "seeds"]].tolist() == ["no interval", "1 baseline seed", "3, 1"]
    assert table.loc["static", "ratio"] == pytest.approx(0.6 / (0.5 / 3))  # the IQM of 3 runs is their mean


# ---- outputs say what they show: no pooling across sparsities, no stale sparsity in a caption (issue 44) ----------

def test_figure11_draws_each_sparsity_apart_and_never_pools_masks_of_two_sparsities(tmp_path):
    """The published Figure 11 averaged the masks of MAST's 0.9, 0.95 and 0.99 runs into one heat map labelled as
    Table 1's runs: each sparsity now has its own column, and the first-layer detail of each pools its own files."""
    fig11 = importlib.import_module(FIGURES["mast_fig11"])
    table = masks_summary()
    table["cfg.sparse.sparsity"] = np.where(table["cfg.seed"] == 0, 0.9, 0.99)
    files = []
    for seed, sparsity, density in ((0, 0.9, 0.5), (1, 0.99, 0.05)):
        run = tmp_path / f"sparsity-{sparsity}_seed-{seed}"
        run.mkdir()
        (run / "config.yaml").write_text(f"sparse: {{method: mast, sparsity: {sparsity}}}\n")
        mask = torch.rand(3, 64, 20, generator=torch.Generator().manual_seed(seed)) < density
        torch.save({"online": {"topology": {"masks": {"agent.fc1.weight": mask}}}}, run / "masks.pt")
        files.append((f"mask_files={run / 'masks.pt'}", mask.float().mean(dim=-2).numpy()))
    masks = write(table, tmp_path / "masks.parquet")
    fig, _ = fig11.make([f"masks={masks}", *(arg for arg, _ in files)])
    heat = [ax for ax in fig.axes if ax.images and "per input" not in ax.get_title()]
    detail = [ax for ax in fig.axes if ax.images and "per input" in ax.get_title()]
    assert [("sparsity 0.9 " in ax.get_title(), "sparsity 0.99 " in ax.get_title()) for ax in heat] == [
        (True, False), (False, True)]
    assert [ax.get_title().split(":")[0] for ax in detail] == ["first layer, sparsity 0.9",
                                                               "first layer, sparsity 0.99"]
    for ax, (_, expected) in zip(detail, files, strict=True):  # one file per sparsity: its own detail, unpooled
        np.testing.assert_allclose(ax.images[0].get_array(), expected, rtol=1e-6)
    plt.close("all")
    (tmp_path / "sparsity-0.9_seed-0" / "config.yaml").unlink()
    with pytest.raises(ConfigError, match="no config.yaml beside it to say its sparsity"):
        fig11.make([f"masks={masks}", *(arg for arg, _ in files)])


def test_every_declared_sparsity_named_in_a_caption_docstring_or_profile_comment_is_the_default_profiles():
    """The published outputs and configs said "declared 90 %" (studies.yaml, default.yaml, metrics/selection.py, the
    learning curves' caption) a redesign after the default moved to 99 %: wherever a text names the sparsity the
    default profile declares, it is the one the profile's Table-1 runs have."""
    import re

    from conftest import ROOT

    from effmarl.studies import expand_all, load_profile

    runs = expand_all(load_profile(ROOT / "configs" / "default.yaml"))
    declared = {round(100 * cfg["sparse"]["sparsity"]) for cfg in runs["mast_table1"].values()}
    assert len(declared) == 1
    pattern = re.compile(r"declared(?: sparsity)?:? (?:at )?(\d+(?:\.\d+)?) ?%")
    stale = []
    for path in [*(ROOT / "src" / "effmarl").rglob("*.py"), *(ROOT / "configs").glob("*.yaml")]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            stale += [f"{path.relative_to(ROOT)}:{n}: {m.group(0)}" for m in pattern.finditer(line)
                      if round(float(m.group(1))) not in declared]
    assert stale == [], f"the default profile declares {declared.pop()} %"
