"""How a profile's runs become jobs and configs beyond the plain grid: several runs in one process
(runs_per_process / seeds_per_process), the MAST sparsity selection that sets the baselines' sparsity
(sparsity_from), and ticket runs paired with their source run by seed (ticket_source)."""

from __future__ import annotations

import pytest

from effmarl.config import ConfigError, load_yaml
from effmarl.groups import process_groups
from effmarl.studies import expand_all, selected_config

SMAX = {"algo": "qmix", "env": {"backend": "smax", "map": "3m"}, "budget": {"env_steps": 400},
        "qmix": {"shared_params": False, "num_envs": 2, "batch_size": 4, "buffer_size": 200}}


def profile(**studies) -> dict:
    return {"profile": "smoke", "results_dir": "R", "figures_dir": "F", "studies": studies}


def test_runs_per_process_chunks_a_study_in_grid_order_whatever_it_varies():
    cfg = profile(s={"base": {**SMAX, "sparse": {"method": "mast"}},
                     "grid": {"sparse.sparsity": [0.5, 0.9], "seed": [0, 1, 2]}, "runs_per_process": 4})
    runs = expand_all(cfg)
    groups = process_groups(cfg, runs)
    ids = list(runs["s"])
    assert list(groups.values()) == [("s", ids[:4]), ("s", ids[4:])]
    assert all(name.startswith("batch_s_") for name in groups)


def test_seeds_per_process_groups_only_runs_that_differ_in_their_seed():
    cfg = profile(s={"base": {**SMAX, "device": "cuda", "sparse": {"method": "mast"}},
                     "grid": {"sparse.sparsity": [0.5, 0.9], "seed": [0, 1, 2]}, "seeds_per_process": 2})
    groups = process_groups(cfg, expand_all(cfg))
    assert [ids for _, ids in groups.values()] == [["sparsity-0.5_seed-0", "sparsity-0.5_seed-1"],
                                                   ["sparsity-0.9_seed-0", "sparsity-0.9_seed-1"]]


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_seeds_in_lockstep_on_a_cpu_are_refused_in_one_line_before_any_job(device, monkeypatch):
    """8 seeds in lockstep cost 7.9-10.2x one seed on the CPU (benchmarks/results/qmix_lockstep_cpu.md): no less
    than 8 separate runs, so a profile asking for it on a CPU is refused; on CUDA it stays available."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cfg = profile(s={"base": {**SMAX, "device": device}, "grid": {"seed": [0, 1]}, "seeds_per_process": 2})
    with pytest.raises(ConfigError) as err:
        expand_all(cfg)
    assert str(err.value).count("\n") == 0 and "studies.s.seeds_per_process" in str(err.value)
    assert "cpu" in str(err.value) and "cuda" in str(err.value)


def test_a_lone_run_stays_a_job_of_its_own():
    cfg = profile(s={"base": SMAX, "grid": {"seed": [0]}, "runs_per_process": 8})
    assert process_groups(cfg, expand_all(cfg)) == {}


def test_ticket_runs_take_the_source_run_with_the_same_seed():
    source = {"base": {**SMAX, "sparse": {"method": "mast"}}, "grid": {"seed": [0, 1]}}
    tickets = {"base": {**SMAX, "sparse": {"method": "static"}},
               "grid": {"sparse.ticket.kind": ["random", "winning"], "seed": [1, 0]}, "ticket_source": "ref"}
    runs = expand_all(profile(t=tickets, ref=source))  # the source is expanded first whatever the order
    assert list(runs) == ["t", "ref"]
    assert {rid: c["sparse"]["ticket"]["source"] for rid, c in runs["t"].items()} == {
        "kind-random_seed-1": None, "kind-random_seed-0": None,
        "kind-winning_seed-1": "R/ref/seed-1", "kind-winning_seed-0": "R/ref/seed-0"}


@pytest.mark.parametrize("source,expected", [
    ({"base": SMAX, "grid": {"seed": [0]}}, "study 'ref' has 0 runs with seed 1"),
    ({"base": SMAX, "grid": {"qmix.lr": [0.1, 0.2], "seed": [0, 1]}}, "study 'ref' has 2 runs with seed 0"),
])
def test_a_ticket_source_without_exactly_one_run_per_seed_is_one_line(source, expected):
    tickets = {"base": {**SMAX, "sparse": {"method": "static", "ticket": {"kind": "winning"}}},
               "grid": {"seed": [0, 1]}, "ticket_source": "ref"}
    with pytest.raises(ConfigError) as err:
        expand_all(profile(ref=source, t=tickets))
    assert "field 'studies.t.ticket_source'" in str(err.value) and expected in str(err.value)
    assert len(str(err.value).splitlines()) == 1


def test_an_unknown_ticket_source_is_named():
    tickets = {"base": {**SMAX, "sparse": {"method": "static"}}, "grid": {"seed": [0]}, "ticket_source": "nope"}
    with pytest.raises(ConfigError, match="field 'studies.t.ticket_source': 'nope' is not another study"):
        expand_all(profile(t=tickets))


def test_sparsity_from_selection_needs_the_dense_and_sweep_studies():
    table1 = {"base": {**SMAX, "sparse": {"method": "rigl"}}, "grid": {"seed": [0]}, "sparsity_from": "selection"}
    with pytest.raises(ConfigError, match="studies.t.sparsity_from': the selection needs studies mast_dense"):
        expand_all(profile(t=table1))


def test_selected_config_writes_the_chosen_sparsity_of_its_algo_and_map(tmp_path):
    table = tmp_path / "selection.csv"
    table.write_text("algo,map,sparsity,chosen\nqmix,3m,0.5,False\nqmix,3m,0.9,True\nqmix,2s3z,0.8,True\n"
                     "ow_qmix,3m,0.95,True\n")
    cfg = {"algo": "qmix", "env": {"map": "3m"}, "sparse": {"sparsity": 0.1}}
    assert selected_config(cfg, table)["sparse"]["sparsity"] == 0.9
    assert cfg["sparse"]["sparsity"] == 0.1  # the parse-time config is left alone
    with pytest.raises(ConfigError, match="0 chosen sparsities for algo 'res_qmix' map '3m'"):
        selected_config({**cfg, "algo": "res_qmix"}, table)


def test_yaml_merge_keys_override_and_own_duplicates_are_still_refused(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("a: &base {x: 1, y: 2}\nb: {<<: *base, y: 3}\n")
    assert load_yaml(good) == {"a": {"x": 1, "y": 2}, "b": {"x": 1, "y": 3}}
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: &base {x: 1}\nb: {<<: *base, y: 3, y: 4}\n")
    with pytest.raises(ConfigError, match="duplicate key 'y'"):
        load_yaml(bad)


def test_run_config_command_writes_the_config_with_the_selected_sparsity(tmp_path):
    import yaml
    from conftest import run_cli

    table = tmp_path / "selection.csv"
    table.write_text("algo,map,sparsity,chosen\nqmix,3m,0.5,False\nqmix,3m,0.95,True\n")
    cfg = {"study": "t", "algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "3m"},
           "sparse": {"method": "rigl", "sparsity": 0.9}}
    out = tmp_path / "run" / "config.yaml"
    proc = run_cli("effmarl", "run-config", "--selection", str(table), "--out", str(out), input=yaml.safe_dump(cfg))
    assert proc.returncode == 0, proc.stderr
    assert yaml.safe_load(out.read_text()) == {**cfg, "sparse": {"method": "rigl", "sparsity": 0.95}}
    plain = tmp_path / "plain.yaml"
    assert run_cli("effmarl", "run-config", "--out", str(plain), input=yaml.safe_dump(cfg)).returncode == 0
    assert yaml.safe_load(plain.read_text()) == cfg
    bad = run_cli("effmarl", "run-config", "--selection", str(table), "--out", str(tmp_path / "x.yaml"),
                  input=yaml.safe_dump({**cfg, "algo": "ow_qmix"}))
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1 and "0 chosen sparsities" in bad.stderr
    assert not (tmp_path / "x.yaml").exists()


def test_a_profile_whose_compared_studies_are_trained_differently_stops_before_any_job():
    """Fig. 8 / Table 1 / the selection put mast_dense, mast_sweep, mast_fig8 and the sparsity_from studies side by
    side: a profile where one of them has another budget is refused at parse time, one line, naming the field, the
    values and the studies; another map may differ."""
    mast = {**SMAX, "sparse": {"method": "mast"}}
    studies = {"mast_dense": {"base": {**SMAX, "sparse": {"method": "dense"}}, "grid": {"seed": [0]}},
               "mast_sweep": {"base": mast, "grid": {"sparse.sparsity": [0.5, 0.9], "seed": [0]}},
               "mast_fig8": {"base": {**mast, "budget": {"env_steps": 200}}, "grid": {"seed": [0]}}}
    with pytest.raises(ConfigError) as err:
        expand_all(profile(**studies))
    assert str(err.value).splitlines() == [
        "profile: field 'budget.env_steps': the studies paper 2 compares differ for qmix on 3m (400 in mast_dense, "
        "mast_sweep; 200 in mast_fig8); every method of one comparison must be trained alike"]
    other_map = {"base": {**mast, "env": {"backend": "smax", "map": "2s3z"}, "budget": {"env_steps": 200}},
                 "grid": {"seed": [0]}}
    expand_all(profile(**{**studies, "mast_fig8": other_map}))
    alone = {k: v for k, v in studies.items() if k != "mast_fig8"}
    expand_all(profile(**alone, ablation=studies["mast_fig8"]))  # not a compared study: its own budget
