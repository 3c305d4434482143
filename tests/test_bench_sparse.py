"""`effmarl bench sparse`: sparse agent-network inference in wall-clock time, as a workflow step."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
import torch
from conftest import ROOT

from effmarl.bench import sparse
from effmarl.cli import main
from effmarl.config import ConfigError
from effmarl.studies import expand_all, load_profile


def test_every_variant_computes_the_dense_masked_network_and_the_flops_ratio_follows_the_sparsity():
    variants, info = sparse.variants_of_size(obs=20, hidden=16, actions=5, sparsity=0.8, seed=3)
    assert set(variants) == set(sparse.VARIANTS)
    x, h = torch.randn(7, 20), torch.randn(7, 16)
    with torch.no_grad():
        ref = variants["masked_dense"](x, h)
        for name in ("mask_mul", "csr", "compact"):
            out = variants[name](x, h)
            torch.testing.assert_close(out[0], ref[0], rtol=1e-4, atol=1e-5)
            torch.testing.assert_close(out[1], ref[1], rtol=1e-4, atol=1e-5)
        assert not torch.allclose(variants["dense"](x, h)[0], ref[0])  # dense keeps every weight
    assert 0.1 < info["flops_ratio"] < 0.4  # about 1 - sparsity (biases, ER densities per layer)


def test_the_command_writes_one_row_per_rows_and_variant_with_provenance(tmp_path):
    out = tmp_path / "bench_sparse"
    assert main(["bench", "sparse", "--obs", "20", "--hidden", "16", "--actions", "5", "--rows", "4", "16",
                 "--repeats", "2", "--budget-s", "0.001", "--out", str(out)]) == 0
    table = pd.read_csv(out.with_suffix(".csv"))
    assert sorted(zip(table["rows"], table["variant"], strict=True)) == \
        sorted((r, v) for r in (4, 16) for v in sparse.VARIANTS)
    assert (table[table.variant == "dense"]["speedup_vs_dense"] == 1.0).all() and (table["median_us"] > 0).all()
    rec = json.loads(out.with_suffix(".provenance.json").read_text())
    assert rec["benchmark"] == "bench_sparse" and rec["kind"] == "benchmark" and rec["caption"]
    assert "Theoretical forward FLOPs" in out.with_suffix(".md").read_text()
    # what else ran while it measured, in its table and its provenance (either answer is right on a shared machine)
    assert re.search(r"(taken alone|beside other work): other processes used \d+ % of the \d+ cores",
                     out.with_suffix(".md").read_text())
    assert 0 <= rec["machine_load"]["others_share"] <= 1 and rec["machine_load"]["alone"] in (True, False)


def test_bad_options_are_one_line_errors(tmp_path, capsys):
    assert main(["bench", "sparse", "--rows", "0", "--run", str(tmp_path), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["effmarl: effmarl bench sparse: --rows must be positive, got 0",
                   f"effmarl: effmarl bench sparse: --run {tmp_path}: no model.pt and masks.pt there (a finished "
                   "sparse run directory)"]
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("run", ["mast_dense/algo-qmix_seed-0", "mast_ref/seed-9", "nosuch/seed-0"])
def test_a_profile_naming_no_sparse_per_agent_run_is_refused(run):
    profile = load_profile(ROOT / "configs" / "smoke.yaml")
    profile["bench"]["sparse"]["run"] = run
    with pytest.raises(ConfigError, match="field 'bench.sparse.run'"):
        expand_all(profile)


@pytest.mark.slow
def test_the_smoke_workflow_measures_its_trained_mast_networks(smoke_workflow):
    stem = smoke_workflow["figures"] / "bench" / "bench_sparse"
    table = pd.read_csv(stem.with_suffix(".csv"))
    assert set(table["variant"]) == set(sparse.VARIANTS) and table["flops_ratio"].between(0.0, 0.5).all()
    rec = json.loads(stem.with_suffix(".provenance.json").read_text())
    assert [p.split("/")[-3:] for p in rec["inputs"]] == [["mast_ref", "seed-0", "model.pt"],
                                                          ["mast_ref", "seed-0", "masks.pt"]]
