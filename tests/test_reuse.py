"""One run, trained once (effmarl.reuse): which runs of a profile are copied rather than trained, from an earlier run
of the profile or a complete run of the profile it reuses, and what `effmarl reuse-run` writes and refuses."""

from __future__ import annotations

import json

import pytest
import yaml

from effmarl.cli import main
from effmarl.config import ConfigError
from effmarl.groups import process_groups
from effmarl.reuse import (
    apart,
    copies,
    identity,
    planned,
    reuse_run,
    reused_profile,
    sources,
    trained,
    trained_by_this_code,
)
from effmarl.studies import expand_all, load_profile

SMAX = {"algo": "qmix", "env": {"backend": "smax", "map": "3m"}, "budget": {"env_steps": 400},
        "qmix": {"shared_params": False, "num_envs": 2, "batch_size": 4, "buffer_size": 200}}


def profile(results="R", **studies) -> dict:
    return {"profile": "smoke", "results_dir": results, "figures_dir": "F", "studies": studies}


def run_cfg(**over) -> dict:
    cfg = json.loads(json.dumps({**SMAX, "study": "s", "profile": "default", "seed": 0,
                                 "sparse": {"method": "mast", "sparsity": 0.9}}))
    cfg.update(over)
    return cfg


def test_two_runs_that_differ_only_in_their_names_are_one_run():
    assert identity(run_cfg()) == identity(run_cfg(study="other", profile="extended"))
    assert identity(run_cfg()) != identity(run_cfg(seed=1))
    assert identity(run_cfg()) != identity(run_cfg(sparse={"method": "mast", "sparsity": 0.99}))


def test_a_switch_left_unset_is_the_method_s_own_setting():
    """mast.dual_buffer.enabled: null on MAST is the dual buffer on: `true` trains the same run, `false` another; on a
    dense run the same switch set to true is another run."""
    on = run_cfg(mast={"dual_buffer": {"enabled": True}})
    off = run_cfg(mast={"dual_buffer": {"enabled": False}})
    assert identity(run_cfg()) == identity(on) != identity(off)
    dense = run_cfg(sparse={"method": "dense", "sparsity": 0.9})
    assert identity(dense) == identity({**dense, "mast": {"dual_buffer": {"enabled": False}}})
    assert identity(dense) != identity({**dense, "mast": {"dual_buffer": {"enabled": True}}})


def test_a_later_run_that_trains_what_an_earlier_one_trains_is_copied_from_it_and_trains_in_no_group():
    cfg = profile(a={"base": {**SMAX, "sparse": {"method": "mast", "sparsity": 0.9}}, "grid": {"seed": [0, 1]},
                     "runs_per_process": 2},
                  b={"base": {**SMAX, "sparse": {"method": "mast", "sparsity": 0.9},
                              "mast": {"td_lambda": {"lambda": 0.6}}},   # the default λ: the same runs as a's
                     "grid": {"mast.td_lambda.lambda": [0.2, 0.6], "seed": [0, 1]}, "runs_per_process": 2})
    runs = expand_all(cfg)
    copied = copies(cfg, runs, {})
    assert copied == {("b", "lambda-0.6_seed-0"): "R/a/seed-0", ("b", "lambda-0.6_seed-1"): "R/a/seed-1"}
    groups = process_groups(cfg, trained(runs, copied))
    assert sorted(ids for _, ids in groups.values()) == [["lambda-0.2_seed-0", "lambda-0.2_seed-1"],
                                                         ["seed-0", "seed-1"]]


def test_a_profile_s_own_runs_keep_their_jobs_whether_or_not_the_runs_it_copies_exist():
    """A job of several runs is retrained whole when one of its runs is missing (Snakemake removes a job's outputs
    before running it): were the runs a profile trains only because their source is missing grouped with its own,
    its jobs would change once the reused profile has run, and finished runs would train again. They are grouped
    apart, after the profile's own runs."""
    from effmarl.groups import workflow_groups

    cfg = profile(results="B", x={"base": SMAX, "grid": {"seed": [0, 1, 2, 3]}, "runs_per_process": 2})
    runs = expand_all(cfg)
    other = {("x", "seed-0"): "A/x/seed-0", ("x", "seed-2"): "A/x/seed-2"}   # what the reused profile trains
    ran = workflow_groups(cfg, runs, copied=other, planned=other)
    not_yet = workflow_groups(cfg, runs, copied={}, planned=other)
    assert list(ran.items()) == [("batch_x_0", ("x", ["seed-1", "seed-3"]))]
    assert list(not_yet.items()) == [("batch_x_0", ("x", ["seed-1", "seed-3"])),
                                     ("batch_x_1", ("x", ["seed-0", "seed-2"]))]


def test_the_runs_the_selection_completes_are_kept_apart_with_the_timing_studies():
    """Their sparsity is written in once the selection is made, after the workflow is planned."""
    cfg = profile(s={"base": SMAX, "sparsity_from": "selection"}, t={"base": SMAX, "timing": True}, u={"base": SMAX})
    assert apart(cfg) == {"s", "t"}


def test_a_timing_study_s_runs_are_never_copied_nor_copied_from():
    cfg = profile(t={"base": SMAX, "grid": {"seed": [0]}, "timing": True}, u={"base": SMAX, "grid": {"seed": [0]}},
                  v={"base": SMAX, "grid": {"seed": [0]}, "timing": True})
    assert copies(cfg, expand_all(cfg), {}) == {}
    other = {**cfg, "results_dir": "A"}
    assert list(sources(other).values()) == ["A/u/seed-0"]


def test_a_complete_run_of_the_reused_profile_is_copied_and_one_it_has_not_finished_trains(tmp_path):
    other = profile(results=str(tmp_path / "A"), a={"base": SMAX, "grid": {"seed": [0, 1]}})
    (tmp_path / "A" / "a" / "seed-0").mkdir(parents=True)
    (tmp_path / "A" / "a" / "seed-0" / "provenance.json").write_text("{}")
    found = sources(other, complete=lambda d: (tmp_path / d.removeprefix(str(tmp_path) + "/") /
                                               "provenance.json").is_file())
    assert list(found.values()) == [f"{tmp_path}/A/a/seed-0"]
    mine = profile(results="B", x={"base": SMAX, "grid": {"seed": [0, 1, 2]}})
    assert copies(mine, expand_all(mine), found) == {("x", "seed-0"): f"{tmp_path}/A/a/seed-0"}
    assert len(sources(other)) == 2   # the estimate: as if the reused profile had run


def _source_run(tmp_path, cfg):
    src = tmp_path / "src"
    src.mkdir()
    (src / "metrics.parquet").write_bytes(b"trained bytes")
    (src / "train.log").write_text("log")
    (src / "checkpoint").mkdir()
    (src / "provenance.json").write_text(json.dumps({"config": cfg, "git": {"commit": "abc"}}))
    return src


def test_reuse_run_copies_the_trained_files_and_keeps_where_and_at_which_commit_they_were_trained(tmp_path):
    src = _source_run(tmp_path, run_cfg())
    mine = run_cfg(study="fig", profile="extended", mast={"dual_buffer": {"enabled": True}})
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(mine))
    reuse_run(src, tmp_path / "config.yaml", tmp_path / "out")
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["metrics.parquet", "provenance.json"]
    assert (out / "metrics.parquet").read_bytes() == b"trained bytes"
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["config"] == mine and prov["git"] == {"commit": "abc"}
    assert prov["reused_from"] == {"run": str(src), "study": "s", "profile": "default"}


@pytest.mark.parametrize("damage", ["another run", "no provenance", "unreadable provenance", "provenance of no config"])
def test_reuse_run_refuses_in_one_line_a_source_that_is_not_the_same_complete_run_and_writes_nothing(tmp_path, capsys,
                                                                                                    damage):
    src = _source_run(tmp_path, run_cfg(seed=1) if damage == "another run" else run_cfg())
    if damage == "no provenance":
        (src / "provenance.json").unlink()
    if damage == "unreadable provenance":
        (src / "provenance.json").write_text("{trunc")
    if damage == "provenance of no config":
        (src / "provenance.json").write_text('{"config": null}')
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(run_cfg()))
    code = main(["reuse-run", "--source", str(src), "--config", str(tmp_path / "config.yaml"), "--out",
                 str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and str(src) in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("text", ["", "null\n", "- a list\n"])
def test_reuse_run_refuses_in_one_line_a_config_that_is_not_a_run_configuration_and_writes_nothing(tmp_path, capsys,
                                                                                                  text):
    """An empty config.yaml (a cut-off `effmarl run-config`) ended in an AttributeError's traceback."""
    src = _source_run(tmp_path, run_cfg())
    (tmp_path / "config.yaml").write_text(text)
    code = main(["reuse-run", "--source", str(src), "--config", str(tmp_path / "config.yaml"), "--out",
                 str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and str(tmp_path / "config.yaml") in err and "mapping" in err
    assert not (tmp_path / "out").exists()


def test_a_profile_that_reuses_itself_or_a_profile_that_reuses_another_is_refused_in_one_line(tmp_path):
    me = load_profile("configs/smoke.yaml")
    with pytest.raises(ConfigError) as err:
        reused_profile({**me, "reuses": "configs/smoke.yaml"})
    assert "reuses" in str(err.value) and str(err.value).count("\n") == 0
    with pytest.raises(ConfigError) as err:
        reused_profile({**me, "reuses": str(tmp_path / "none.yaml")})
    assert "no profile file" in str(err.value)


def test_the_extended_profile_copies_every_run_the_default_trains_and_trains_only_what_it_adds():
    """configs/extended.yaml reuses configs/default.yaml: Table 1's QMIX rows and Fig. 8 are the default's runs (as if
    the default had run), and so are Fig. 1's, Fig. 5's RigL without Soft Mellowmax and Fig. 6's dense with one
    buffer and MAST with two, and each of Tables 6-9's runs at MAST's default: what it trains is OW-QMIX's and RES's
    Table 1, the other halves of Figs. 5 and 6 and the other values of Tables 6-9."""
    ext = load_profile("configs/extended.yaml")
    runs = expand_all(ext)
    copied = planned(ext, runs)
    default_runs = expand_all(load_profile("configs/default.yaml"))
    for study in ("mast_dense", "mast_sweep", "mast_table1", "mast_fig8"):
        for rid in default_runs[study]:
            assert copied[(study, rid)] == f"results/default/{study}/{rid}"
    assert all(runs[s][r]["algo"] in ("ow_qmix", "res_qmix") for s in ("mast_dense", "mast_sweep", "mast_table1")
               for r in trained(runs, copied)[s])
    left = trained(runs, copied)
    assert left["mast_fig1"] == {}
    assert {(c["sparse"]["method"], c["mast"]["dual_buffer"]["enabled"]) for c in left["mast_abl_buffer"].values()} \
        == {("dense", True), ("mast", False)}
    assert [c["mellowmax"]["enabled"] for c in left["mast_abl_operator"].values()] == [True] * 3
    assert copied[("mast_abl_operator", "enabled-False_seed-0")] == "results/default/mast_table1/method-rigl_seed-0"
    # Tables 6-9: the run of each knob's study holding MAST's default is Table 1's MAST run of its seed; the others
    # train (2 values x 3 seeds a knob, 3 x 3 for Soft Mellowmax's α x ω)
    for study, n_trained in (("mast_abl_t0", 6), ("mast_abl_lambda", 6), ("mast_abl_smm", 9), ("mast_abl_b1b2", 6)):
        sources = {copied[(study, rid)] for rid in runs[study] if (study, rid) in copied}
        assert sources == {f"results/default/mast_sweep/sparsity-0.99_seed-{seed}" for seed in (0, 1, 2)}, study
        assert len(left[study]) == n_trained, study


@pytest.mark.parametrize("git, reused", [({"commit": "abc", "dirty": False}, True),
                                         ({"commit": "old", "dirty": False}, False),
                                         ({"commit": "abc", "dirty": True}, False),
                                         (None, False)])
def test_only_a_run_trained_by_this_commit_from_a_clean_checkout_is_copied_from_the_reused_profile(tmp_path, git,
                                                                                                   reused):
    """Every table compares runs of one commit (metrics.require_one_commit): a run of the reused profile trained by
    other code, or by uncommitted code, trains here instead."""
    run = tmp_path / "run"
    run.mkdir()
    if git is not None:
        (run / "provenance.json").write_text(json.dumps({"config": run_cfg(), "git": git}))
    assert trained_by_this_code(run, "abc") is reused


def test_validate_says_how_many_of_a_profile_s_runs_are_copied(capsys):
    assert main(["validate", "configs/extended.yaml", "configs/smoke.yaml"]) == 0
    extended, smoke = capsys.readouterr().out.strip().splitlines()
    assert "188 runs" in extended and "82 of them copied, not trained" in extended and "82 from configs/default" in \
        extended
    assert smoke.endswith("10 of them copied from an earlier run that trains the same thing")


@pytest.mark.parametrize("same_commit", [True, False])
def test_the_extended_workflow_copies_a_default_run_trained_at_this_commit_and_trains_one_of_another(tmp_path,
                                                                                                   same_commit):
    """The Snakefile's plan (a dry run of configs/extended.yaml beside a results/default holding one complete dense
    run): copied by a reuse job where that run was trained at this checkout's commit, trained in a batch where not."""
    import re

    from conftest import ROOT, run_cli

    from effmarl.provenance import git_state

    commit = git_state()["commit"]
    if commit is None:
        pytest.skip("not a git checkout: no commit to compare")
    cfg = expand_all(load_profile(ROOT / "configs" / "default.yaml"))["mast_dense"]["seed-0"]
    run = tmp_path / "results" / "default" / "mast_dense" / "seed-0"
    run.mkdir(parents=True)
    for name in ("metrics.parquet", "phases.parquet", "schedule.json", "model.pt", "sparsity.parquet",
                 "layers.parquet", "agent_masks.parquet", "topology.parquet"):
        (run / name).write_text("trained")
    git = {"commit": commit if same_commit else "0" * 40, "dirty": False}
    (run / "provenance.json").write_text(json.dumps({"config": cfg, "git": git}))
    proc = run_cli("snakemake", "-n", "-p", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
                   "--configfile", str(ROOT / "configs" / "extended.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    copied = re.search(r"effmarl reuse-run --source results/default/mast_dense/seed-0 --config "
                       r"results/extended/mast_dense/seed-0/config.yaml", out)
    assert bool(copied) is same_commit
    batched = re.search(r"effmarl train [^\n]*--config results/extended/mast_dense/seed-0/config.yaml --out", out)
    assert bool(batched) is not same_commit
