"""Which figures and tables a profile makes: resolved from what each module declares (effmarl.outputs), so that a
study renamed in the catalogue fails here instead of silently dropping its outputs."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

from effmarl.analysis.figures import FIGURES
from effmarl.analysis.tables import TABLES
from effmarl.outputs import left_out, needed_studies, problems, profile_outputs
from effmarl.studies import expand_all, load_catalogue, load_profile

R, F = "res", "fig"


def outputs_of(runs: dict, studies: dict | None = None) -> dict[tuple[str, str], dict]:
    """{(group, stem): {"name", "inputs"}} for `runs` ({study: {run id: config}})."""
    made = profile_outputs(runs, {"studies": studies or {s: {} for s in runs}}, R, F)
    return {(o.group, o.stem): {"name": o.name, "kind": o.kind, "inputs": o.inputs} for o in made}


def run(algo="qmix", **cfg):
    return {"algo": algo, **cfg}


def test_every_module_declares_where_it_is_written_and_what_each_role_reads():
    assert problems() == []


def test_every_study_a_module_needs_is_declared_in_the_study_catalogue():
    missing = {study: users for study, users in needed_studies().items() if study not in load_catalogue()}
    assert missing == {}


@pytest.mark.parametrize("profile", ["smoke.yaml", "paper.yaml"])
def test_the_smoke_and_paper_profiles_make_every_figure_and_table(profile):
    cfg = load_profile(ROOT / "configs" / profile)
    made = profile_outputs(expand_all(cfg), cfg, R, F)
    assert {("figure", n) for n in FIGURES} | {("table", n) for n in TABLES} == {(o.kind, o.name) for o in made}


def test_an_output_is_left_out_when_a_study_it_needs_is_missing_and_made_without_an_optional_one():
    runs = {"mast_alloc": {"a": run(sparse={"allocation": "learned"}, env={"map": "2s3z"}),
                           "b": run(sparse={"allocation": "manual"}, env={"map": "2s3z"})}}
    made = outputs_of(runs)
    # Figure 12 reads mast_alloc's masks and, optionally, its metrics: both given
    assert made[("mast", "fig12_allocation")]["inputs"] == {"masks": [f"{R}/mast_alloc/agent_masks.summary.parquet"],
                                                            "allocation": [f"{R}/mast_alloc/metrics.summary.parquet"]}
    # Figure 11's mask files are the learned-allocation runs' only (a run filter)
    assert made[("mast", "fig11_first_layer_masks")]["inputs"]["mask_files"] == [f"{R}/mast_alloc/a/masks.pt"]
    # nothing that needs mast_dense, an ablation or paper 1 is made
    assert set(made) == {("mast", "fig11_first_layer_masks"), ("mast", "fig12_allocation")}


def test_a_per_algorithm_figure_is_made_only_where_table_1_trained_that_algorithm():
    runs = {"mast_dense": {"d": run()}, "mast_sweep": {"s": run()}, "mast_table1": {"t": run("ow_qmix")}}
    made = outputs_of(runs)
    assert ("mast", "fig14_curves_ow_qmix") in made
    assert ("mast", "fig13_curves_qmix") not in made and ("mast", "fig15_curves_res_qmix") not in made


def test_a_role_reading_another_output_gets_it_only_when_the_profile_makes_that_output():
    runs = {"mast_dense": {"d": run()}, "mast_sweep": {"s": run()}, "mast_table1": {"t": run()}}
    made = outputs_of(runs)
    selection = f"{F}/mast/tables/selection.csv"
    assert made[("mast", "selection")]["kind"] == "table"
    assert made[("mast", "table1")]["inputs"]["selection"] == [selection]
    assert made[("mast", "claims")]["inputs"]["selection"] == [selection]
    # without the sweep there is no selection, so neither Table 1 nor the claims (made only with all three studies)
    del runs["mast_sweep"]
    assert not {("mast", "selection"), ("mast", "table1"), ("mast", "claims")} & set(outputs_of(runs))


def test_a_role_reading_a_repository_file_gets_it_only_where_the_checkout_has_it(monkeypatch, tmp_path):
    runs = {"mast_dense": {"d": run()}, "mast_sweep": {"s": run()}, "mast_table1": {"t": run()}}
    probe = "benchmarks/results/qmix_multitype_maps_summary.csv"
    monkeypatch.chdir(ROOT)  # the workflow resolves from the repository root
    assert outputs_of(runs)[("mast", "claims")]["inputs"]["map_probe"] == [probe]
    monkeypatch.chdir(tmp_path)  # a checkout without the file: the optional role is given nothing, the table is made
    assert "map_probe" not in outputs_of(runs)[("mast", "claims")]["inputs"]


def test_one_output_per_matching_study_and_the_first_listed_study_the_profile_has():
    both = {"replay": {"sampler": "uniform"}}, {"replay": {"sampler": "neighbor"}}
    runs = {"paper1": {"u": run("maddpg", **both[0]), "n": run("maddpg", **both[1])},
            "paper1_scale": {"u": run("maddpg", **both[0])}}
    made = outputs_of(runs)
    assert {g for g, s in made if s == "phase_breakdown"} == {"paper1", "paper1_scale"}
    assert made[("paper1", "phase_scaling")]["inputs"]["phases"] == [f"{R}/paper1_scale/phases.summary.parquet"]
    assert made[("paper1", "end_to_end")]["inputs"]["phases"] == [f"{R}/paper1/phases.summary.parquet"]
    # a paper1 study of one sampler times no neighbor-vs-uniform pair: no end-to-end figure, and the phase shares
    # fall back to paper1 only where there is no paper1_scale
    runs = {"paper1": {"u": run("maddpg", **both[0])}}
    made = outputs_of(runs)
    assert ("paper1", "end_to_end") not in made
    assert made[("paper1", "phase_scaling")]["inputs"]["phases"] == [f"{R}/paper1/phases.summary.parquet"]
    assert "phases" not in made[("paper1", "claims")]["inputs"]  # optional there: the claim says it is missing


def test_the_tickets_figure_reads_the_study_its_tickets_took_their_masks_from():
    runs = {"mast_tickets": {"t": run()}, "mast_ref": {"r": run()}}
    made = outputs_of(runs, {"mast_tickets": {"ticket_source": "mast_ref"}, "mast_ref": {}})
    assert made[("mast", "fig10_tickets")]["inputs"] == {"tickets": [f"{R}/mast_tickets/metrics.summary.parquet"],
                                                         "mast": [f"{R}/mast_ref/metrics.summary.parquet"]}


def test_the_default_profile_draws_figure_11_from_table_1s_own_mast_runs_and_leaves_figure_12_out_saying_why():
    cfg = load_profile(ROOT / "configs" / "default.yaml")
    runs = expand_all(cfg)
    made = {(o.group, o.stem): o.inputs for o in profile_outputs(runs, cfg, R, F)}
    assert "mast_alloc" not in runs
    assert made[("mast", "fig11_first_layer_masks")]["masks"] == [f"{R}/mast_sweep/agent_masks.summary.parquet"]
    assert made[("mast", "fig11_first_layer_masks")]["mask_files"] == [f"{R}/mast_sweep/{rid}/masks.pt"
                                                                       for rid in runs["mast_sweep"]]
    # 3m has one unit type: every agent's mean holding is the budget / 3 by construction, so no Fig. 12
    assert {run["env"]["map"] for run in runs["mast_sweep"].values()} == {"3m"}
    assert ("mast", "fig12_allocation") not in made
    (why,) = [o.reason for o in left_out(runs, cfg, R, F) if o.name == "mast_fig12"]
    assert "several unit types" in why and "env.map in 2s3z, 3s5z" in why


def test_the_paper_profile_makes_figure_12_from_the_allocation_study_on_2s3z():
    cfg = load_profile(ROOT / "configs" / "paper.yaml")
    made = {(o.group, o.stem): o.inputs for o in profile_outputs(expand_all(cfg), cfg, R, F)}
    assert made[("mast", "fig12_allocation")] == {"masks": [f"{R}/mast_alloc/agent_masks.summary.parquet"],
                                                  "allocation": [f"{R}/mast_alloc/metrics.summary.parquet"]}


def test_a_study_counts_for_where_some_when_one_of_its_runs_takes_a_listed_value():
    multi = {"env": {"map": "2s3z"}}
    runs = {"mast_sweep": {"a": run(env={"map": "3m"}), "b": run(**multi)}}
    made = outputs_of(runs)
    assert made[("mast", "fig12_allocation")]["inputs"] == {"masks": [f"{R}/mast_sweep/agent_masks.summary.parquet"]}
    runs = {"mast_sweep": {"a": run(env={"map": "3m"})}}
    assert ("mast", "fig12_allocation") not in outputs_of(runs)
    assert ("mast", "components") not in made  # mast_components is not in the default: it does not fit at 250 000


def test_the_components_table_reads_full_mast_from_the_sweep_the_ablated_runs_and_dense():
    cfg = load_profile(ROOT / "configs" / "smoke.yaml")
    runs = expand_all(cfg)
    made = {(o.group, o.stem): o.inputs for o in profile_outputs(runs, cfg, R, F)}
    assert made[("mast", "components")] == {"mast": [f"{R}/mast_sweep/metrics.summary.parquet"],
                                            "ablated": [f"{R}/mast_components/metrics.summary.parquet"],
                                            "dense": [f"{R}/mast_dense/metrics.summary.parquet"]}


def test_one_curves_module_makes_one_output_per_algorithm_table_1_trained_with_its_variant():
    runs = {"mast_dense": {"d": run()}, "mast_sweep": {"s": run()},
            "mast_table1": {"q": run("qmix"), "r": run("res_qmix")}}
    made = {(o.stem, o.name, o.variant) for o in profile_outputs(runs, {"studies": {s: {} for s in runs}}, R, F)
            if o.name == "mast_curves"}
    assert made == {("fig13_curves_qmix", "mast_curves", "qmix"), ("fig15_curves_res_qmix", "mast_curves", "res_qmix")}


def test_the_figure_index_lists_each_left_out_output_with_its_reason(tmp_path):
    import matplotlib.pyplot as plt

    from effmarl.analysis.io import save_figure
    from effmarl.cli import main

    fig, _ = plt.subplots()
    made = [str(p) for p in save_figure(fig, tmp_path / "mast" / "one", [], name="x", caption="a figure")]
    cfg = load_profile(ROOT / "configs" / "default.yaml")
    left = [vars(o) for o in left_out(expand_all(cfg), cfg, R, F)]
    assert main(["index", *made, "--out", str(tmp_path / "index"), "--left-out", json.dumps(left)]) == 0
    text = (tmp_path / "index.md").read_text()
    listed = text.split("# Not made in this profile")[1]
    assert "- figure `mast_fig12` (fig12_allocation): no agent_masks.summary.parquet of MAST runs on a map with " \
           "several unit types (counted only from runs with env.map in 2s3z, 3s5z)" in listed
    assert "`mast_fig8`" not in listed and "## figure `mast/one` (x)" in text.split("# Not made")[0]


def test_a_variant_declaration_is_checked(monkeypatch):
    import effmarl.outputs as outputs

    bad = [("figure", "a", {"group": "g", "stem": "s", "variants": {"x": "s_x"}}, {}),
           ("figure", "b", {"group": "g", "stem": "s"},
            {"r": {"doc": "d", "study": "t", "where": {"algo": "{variant}"}}})]
    monkeypatch.setattr(outputs, "declarations", lambda: bad)
    assert outputs.problems() == ["figure a: OUTPUT variants is a {variant: stem} dict, without stem or for_each",
                                  'figure b: INPUTS use "{variant}" but OUTPUT declares no variants']
