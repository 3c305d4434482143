"""Paper 2 study on the smoke profile: every MAST table and figure and the claims table exist; Table 1 holds every
method of the methods' table in every (algorithm, map) cell; the baselines ran at the sparsity the selection chose
(the second stage reads the first stage's output); winning and cheating tickets started from their source run."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import ROOT

from effmarl.methods import METHODS as SPARSE_METHODS
from effmarl.studies import expand_all, load_profile

MAST_FIGURES = ["fig1_methods", "fig4_multi_step", "fig5_soft_mellowmax", "fig6_dual_buffer",
                "fig8_win_rate_vs_sparsity", "fig10_tickets", "fig11_first_layer_masks", "fig12_allocation",
                "fig13_curves_qmix", "fig14_curves_ow_qmix", "fig15_curves_res_qmix", "fig16_operators"]
MAST_TABLES = ["selection", "table1", "table5", "values", "table6_burn_in", "table7_lambda", "table8_soft_mellowmax",
               "table9_b1_b2", "table10_delta_m", "claims"]
METHODS = {m.display for m in SPARSE_METHODS.values()}  # the smoke profile runs every method of the table

pytestmark = pytest.mark.slow


def test_smoke_workflow_makes_every_paper2_output(smoke_workflow):
    mast = smoke_workflow["figures"] / "mast"
    missing = [f"{stem}.{ext}" for stem in MAST_FIGURES for ext in ("pdf", "png", "provenance.json")
               if not (mast / f"{stem}.{ext}").is_file()]
    missing += [f"tables/{stem}.{ext}" for stem in MAST_TABLES for ext in ("csv", "md", "provenance.json")
                if not (mast / "tables" / f"{stem}.{ext}").is_file()]
    assert missing == []


def test_table1_holds_every_method_in_every_cell(smoke_workflow):
    table = pd.read_csv(smoke_workflow["figures"] / "mast" / "tables" / "table1.csv")
    cells = table[table["map"] != "average"].groupby(["algorithm", "map"])["method"].apply(set)
    assert len(cells) == 3 and all(methods == METHODS for methods in cells), cells


def test_baselines_ran_at_the_sparsity_the_selection_chose(smoke_workflow):
    results = smoke_workflow["results"]
    selection = pd.read_csv(smoke_workflow["figures"] / "mast" / "tables" / "selection.csv")
    chosen = selection[selection["chosen"]].set_index(["algo", "map"])["sparsity"]
    assert chosen.index.is_unique and len(chosen) == 3
    runs = list((results / "mast_table1").glob("*/config.yaml"))
    assert len(runs) == len(expand_all(load_profile(ROOT / "configs/smoke.yaml"))["mast_table1"])
    for path in runs:
        cfg = yaml.safe_load(path.read_text())
        assert cfg["sparse"]["sparsity"] == chosen[(cfg["algo"], cfg["env"]["map"])], path


def test_tickets_start_from_their_source_runs_masks(smoke_workflow):
    import torch

    results = smoke_workflow["results"]
    for path in (results / "mast_tickets").glob("*/config.yaml"):
        ticket = yaml.safe_load(path.read_text())["sparse"]["ticket"]
        if ticket["kind"] == "random":
            assert ticket["source"] is None
            continue
        assert ticket["source"] == str(results / "mast_ref" / "seed-0")
        source = torch.load(results / "mast_ref" / "seed-0" / "masks.pt")["online"]["topology"]["masks"]
        own = torch.load(path.parent / "masks.pt")["online"]["topology"]["masks"]
        assert all(torch.equal(own[name], mask) for name, mask in source.items())  # static: never changed


def test_figure11_is_drawn_with_the_first_layer_masks_its_caption_describes(smoke_workflow):
    """The default run's Figure 11 promised per-input first-layer masks and showed only the per-layer heat map: the
    workflow gave it no masks.pt. It now reads the masks of MAST's own (learned) allocation."""
    import json

    sidecar = json.loads((smoke_workflow["figures"] / "mast" / "fig11_first_layer_masks.provenance.json").read_text())
    masks = [i for i in sidecar["named_inputs"] if i.startswith("mask_files=")]
    assert masks and all(i.endswith("/masks.pt") for i in masks), sidecar["named_inputs"]
