"""Several configurations in one process (`effmarl train --config a --out A --config b --out B`, train.train_many):
lockstep groups train one after another, each run equals the same run trained alone, the jitted SMAX program is
reused across groups, finished runs are skipped, and bad input is refused before any compute."""

from __future__ import annotations

import copy

import pandas as pd
import pytest

from effmarl.config import ConfigError, validate

TINY_NETS = {"rnn_hidden_dim": 8, "mixing_embed_dim": 4, "hypernet_embed": 8, "central_mixing_embed_dim": 8}


def tiny_cfg(seed: int, method: str = "mast", **sparse) -> dict:
    return validate({"study": "t", "algo": "qmix", "seed": seed, "env": {"backend": "smax", "map": "3m"},
                     "budget": {"env_steps": 90}, "sparse": {"method": method, "sparsity": 0.8, "delta_m": 2, **sparse},
                     "qmix": {"num_envs": 2, "eval_episodes": 2, "batch_size": 2, "buffer_size": 100,
                              "eval_every": 45, "checkpoint_every": 1000, "target_update_interval": 4,
                              "shared_params": method == "dense", **TINY_NETS}}, part="run")


def metrics(path) -> pd.DataFrame:
    return pd.read_parquet(path / "metrics.parquet").drop(columns=["wall_s"])


@pytest.mark.slow
def test_different_configurations_in_one_process_equal_each_alone(tmp_path):
    from effmarl.algos.qmix.smax_runner import build_rollout
    from effmarl.train import seed_groups, train, train_many

    a, b = tiny_cfg(3), tiny_cfg(3, "dense")
    assert seed_groups([a, b, tiny_cfg(4)]) == [[0, 2], [1]]
    train(copy.deepcopy(b), str(tmp_path / "b_alone"))  # before the group run: nothing carried over from it
    builds = build_rollout.cache_info()
    dirs = train_many(copy.deepcopy([a, b]), [str(tmp_path / "a"), str(tmp_path / "b")])
    assert [d.path.name for d in dirs] == ["a", "b"]
    assert build_rollout.cache_info().misses == builds.misses  # both groups reused the process's program
    assert all((tmp_path / n / "provenance.json").is_file() for n in ("a", "b"))
    pd.testing.assert_frame_equal(metrics(tmp_path / "b"), metrics(tmp_path / "b_alone"), rtol=1e-4)
    train(copy.deepcopy(a), str(tmp_path / "a_alone"))
    pd.testing.assert_frame_equal(metrics(tmp_path / "a"), metrics(tmp_path / "a_alone"), rtol=1e-4)
    assert not metrics(tmp_path / "a").equals(metrics(tmp_path / "b"))  # the configurations really differ

    # the same command again: every run is finished with this configuration, nothing is retrained
    before = (tmp_path / "b" / "provenance.json").read_text()
    again = train_many(copy.deepcopy([a, b]), [str(tmp_path / "a"), str(tmp_path / "b")])
    assert [str(p) for p in again] == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert (tmp_path / "b" / "provenance.json").read_text() == before


def test_a_failing_group_leaves_the_others_finished(tmp_path, monkeypatch):
    import effmarl.train as train_module

    def fake_train(cfg, out):  # the dense group "fails"; the others finish
        if cfg["sparse"]["method"] == "dense":
            raise RuntimeError("boom")
        (tmp_path / out).mkdir(parents=True, exist_ok=True)
        return out

    def fake_lockstep(cfgs, outs):
        return [fake_train(c, o) for c, o in zip(cfgs, outs, strict=True)]

    monkeypatch.setattr(train_module, "train", fake_train)
    monkeypatch.setattr(train_module, "train_lockstep", fake_lockstep)
    outs = [str(tmp_path / n) for n in ("a0", "b", "a1", "c")]
    with pytest.raises(RuntimeError, match="boom"):
        train_module.train_many([tiny_cfg(3), tiny_cfg(3, "dense"), tiny_cfg(4), tiny_cfg(3, "static")], outs)
    assert [(tmp_path / n).is_dir() for n in ("a0", "b", "a1", "c")] == [True, False, True, True]


def test_bad_input_is_refused_before_any_compute(tmp_path):
    from effmarl.train import train_many

    with pytest.raises(ConfigError) as err:
        train_many([tiny_cfg(3), tiny_cfg(4)], [str(tmp_path / "x"), str(tmp_path / "x")])
    assert err.value.lines == [f"--out {tmp_path / 'x'} given for more than one run; one output directory per run"]
    with pytest.raises(ConfigError, match="seeds must differ"):
        train_many([tiny_cfg(3), tiny_cfg(3, "dense"), tiny_cfg(3)], [str(tmp_path / n) for n in "abc"])
    assert not any(tmp_path.iterdir())


class _Built(Exception):
    """Raised by the spy once every seed's learner is built: what follows is training, which checks nothing."""


@pytest.mark.parametrize("seeds, overrides", [([3], []), ([3, 4], []), ([3], ["--set", "threads=1"])])
def test_check_config_runs_exactly_once_per_run_of_effmarl_train(tmp_path, monkeypatch, seeds, overrides):
    """`effmarl train` validates each config (config.validate runs the cross-field checks); train, train_many and
    SeedRun trust it. A spy counts check_config at every address it is reachable from."""
    import importlib

    import yaml

    from effmarl.cli import main

    qmix, qmix_run = (importlib.import_module(f"effmarl.algos.qmix{m}") for m in ("", ".run"))
    checks = importlib.import_module("effmarl.qmix_checks")

    argv = ["--debug", "train", *overrides]  # the workflow's jobs pass --set threads=1
    for seed in seeds:
        path = tmp_path / f"seed{seed}.yaml"
        path.write_text(yaml.safe_dump(tiny_cfg(seed)))
        argv += ["--config", str(path), "--out", str(tmp_path / f"out{seed}")]
    calls = []
    original = checks.check_config

    def spy(cfg):
        calls.append(cfg["seed"])
        return original(cfg)

    for module in (qmix, qmix_run, checks):
        monkeypatch.setattr(module, "check_config", spy, raising=False)

    def built(self, stack, i):
        raise _Built

    monkeypatch.setattr(qmix_run.SeedRun, "join", built)
    with pytest.raises(_Built):
        main(argv)
    assert sorted(calls) == seeds
