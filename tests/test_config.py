"""The config schema: defaults, clear one-line errors naming the field, study expansion."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest
from conftest import ROOT

from effmarl.config import ConfigError, config_hash, load_yaml, validate
from effmarl.studies import expand_study

GOOD_RUN = {"study": "t", "algo": "random", "seed": 0, "env": {"backend": "mpe", "n_agents": 3}}


def errors_of(cfg: dict, part: str = "run") -> list[str]:
    with pytest.raises(ConfigError) as info:
        validate(copy.deepcopy(cfg), part=part)
    return info.value.lines


def test_defaults_are_filled_from_the_schema():
    cfg = validate(copy.deepcopy(GOOD_RUN), part="run")
    assert cfg["env"] == {"backend": "mpe", "n_agents": 3, "scenario": "simple_tag", "num_obstacles": 2,
                          "max_cycles": 25, "num_envs": 1}
    assert cfg["budget"]["episodes"] == 10
    assert cfg["device"] == "cpu" and cfg["threads"] == 1


def test_algorithm_sections_are_filled_only_for_the_algorithms_that_read_them():
    random_run = validate(copy.deepcopy(GOOD_RUN), part="run")
    assert set(random_run) == {"study", "algo", "seed", "env", "budget", "device", "threads", "profile"}
    qmix_run = validate({**GOOD_RUN, "algo": "qmix", "env": {"backend": "smax", "map": "3m"},
                         "budget": {"env_steps": 100}}, part="run")
    assert {"qmix", "sparse", "mellowmax", "mast", "rlx2"} <= set(qmix_run)


@pytest.mark.parametrize(("change", "expected"), [
    ({"algo": "maddpgg"}, "field 'algo': 'maddpgg' is not allowed; allowed values: 'random'"),
    ({"seed": -1}, "field 'seed': -1 is less than the minimum of 0"),
    ({"seed": "zero"}, "field 'seed': must be an integer, got 'zero' (str)"),
    ({"env": {"backend": "mpe", "n_agents": 4}}, "field 'env.n_agents': 4 is not a multiple of 3"),
    ({"env": {"backend": "atari"}}, "field 'env.backend': 'atari' is not allowed; allowed values: 'mpe'"),
    ({"env": {"backend": "mpe", "agents": 3}}, "field 'env': unknown key(s) 'agents'; allowed keys: backend,"),
    ({"budget": {"episodes": 0}}, "field 'budget.episodes': 0 is less than the minimum of 1"),
    ({"colour": "red"}, "field '(top level)': unknown key(s) 'colour'"),
])
def test_bad_values_give_one_line_naming_the_field(change, expected):
    lines = errors_of({**GOOD_RUN, **change})
    assert len(lines) == 1
    assert lines[0].startswith(expected)
    assert "\n" not in lines[0]


def test_missing_required_field_is_named():
    cfg = {k: v for k, v in GOOD_RUN.items() if k != "seed"}
    assert errors_of(cfg) == ["field 'seed': required but missing"]


def test_every_problem_is_reported_not_just_the_first():
    lines = errors_of({**GOOD_RUN, "seed": -1, "algo": "x"})
    assert {line.split(":")[0] for line in lines} == {"field 'algo'", "field 'seed'"}


def test_profiles_in_repository_are_valid(repo_root):
    from conftest import PROFILES

    from effmarl.studies import load_profile

    for name in PROFILES:
        load_profile(repo_root / "configs" / name)


def test_profile_errors_name_the_study_field():
    profile = {"profile": "smoke", "results_dir": "r", "figures_dir": "f",
               "studies": {"s": {"base": {}, "grid": {"seed": []}}}}
    lines = errors_of(profile, part="workflow")
    assert lines == ["field 'studies.s.grid.seed': [] should be non-empty"]


def test_paper1_micro_sizes_are_checked_with_the_profile():
    profile = {"profile": "smoke", "results_dir": "r", "figures_dir": "f", "studies": {},
               "paper1_micro": {"counters": {"storage": ["fast"], "agents": [5]}, "sampling_bench": {"fil": 10}}}
    lines = errors_of(profile, part="workflow")
    assert any(line.startswith("field 'paper1_micro.counters.storage.0': 'fast' is not allowed") for line in lines)
    assert any(line.startswith("field 'paper1_micro.counters.agents.0': 5 is not allowed") for line in lines)
    assert any(line.startswith("field 'paper1_micro.sampling_bench': unknown key(s) 'fil'") for line in lines)


def test_expand_study_makes_every_grid_combination_with_readable_ids():
    study = {"base": {"algo": "random", "env": {"backend": "mpe"}}, "grid": {"env.n_agents": [3, 6], "seed": [0, 1]}}
    runs = expand_study("demo", study, "smoke")
    assert list(runs) == ["n_agents-3_seed-0", "n_agents-3_seed-1", "n_agents-6_seed-0", "n_agents-6_seed-1"]
    run = runs["n_agents-6_seed-1"]
    assert (run["env"]["n_agents"], run["seed"], run["study"], run["profile"]) == (6, 1, "demo", "smoke")
    assert study["base"] == {"algo": "random", "env": {"backend": "mpe"}}  # the base is not mutated


def test_expand_study_rejects_a_bad_grid_value_before_any_run():
    study = {"base": {"algo": "random", "env": {"backend": "mpe"}}, "grid": {"env.n_agents": [3, 5], "seed": [0]}}
    with pytest.raises(ConfigError) as info:
        expand_study("demo", study, "smoke")
    assert "studies.demo run n_agents-5_seed-0" in str(info.value)
    assert "env.n_agents" in str(info.value)


def test_config_hash_ignores_key_order_and_sees_values():
    a = {"x": 1, "y": {"a": 1, "b": 2}}
    b = {"y": {"b": 2, "a": 1}, "x": 1}
    assert config_hash(a) == config_hash(b)
    assert config_hash(a) != config_hash({"x": 2, "y": {"a": 1, "b": 2}})


MADDPG = {"study": "t", "algo": "maddpg", "seed": 0, "env": {"backend": "mpe"},
          "offpolicy": {"batch_size": 32, "warmup": 50}, "replay": {"buffer_size": 1000}}
QMIX = {"study": "t", "algo": "qmix", "seed": 0, "env": {"backend": "smax"}, "budget": {"env_steps": 1000}}


@pytest.mark.parametrize(("base", "dotted", "value", "expected"), [
    # NaN passes every JSON Schema bound (comparisons with NaN are false): rejected as not a finite number
    (MADDPG, "offpolicy.gamma", float("nan"), "field 'offpolicy.gamma': must be a finite number, got nan"),
    (MADDPG, "offpolicy.lr", float("inf"), "field 'offpolicy.lr': must be a finite number, got inf"),
    (QMIX, "qmix.epsilon_start", float("nan"), "field 'qmix.epsilon_start': must be a finite number"),
    (QMIX, "sparse.sparsity", float("nan"), "field 'sparse.sparsity': must be a finite number"),
    (MADDPG, "offpolicy.lr", 1e6, "field 'offpolicy.lr': 1000000.0 is above the upper bound 10"),
    # whole-number floats passed `type: integer` and crashed later in torch
    (MADDPG, "offpolicy.batch_size", 32.0, "field 'offpolicy.batch_size': must be an integer, got 32.0 (float)"),
    (MADDPG, "offpolicy.hidden", [64.0, 64], "field 'offpolicy.hidden.0': must be an integer, got 64.0"),
    (MADDPG, "seed", 2**32, "field 'seed': 4294967296 is above the upper bound 4294967295"),
    (MADDPG, "seed", True, "field 'seed': must be an integer, got True (bool)"),
    (MADDPG, "replay.buffer_size", 10**12, "field 'replay.buffer_size': 1000000000000 is above the upper bound"),
    (QMIX, "qmix.rnn_hidden_dim", 10**9, "field 'qmix.rnn_hidden_dim': 1000000000 is above the upper bound 65536"),
    (MADDPG, "threads", 10**6, "field 'threads': 1000000 is above the upper bound 1024"),
])
def test_non_finite_huge_and_float_integers_are_rejected_naming_the_field(base, dotted, value, expected):
    from effmarl.config import set_dotted

    cfg = copy.deepcopy(base)
    set_dotted(cfg, dotted, value)
    lines = errors_of(cfg)
    assert len(lines) == 1 and lines[0].startswith(expected), lines


def test_cross_field_checks_run_inside_validate_for_both_stacks():
    off = copy.deepcopy(MADDPG)
    off["offpolicy"]["batch_size"] = 5000
    assert errors_of(off) == ["field 'offpolicy.batch_size': 5000 exceeds replay.buffer_size 1000"]
    q = copy.deepcopy(QMIX)
    q["qmix"] = {"batch_size": 64, "buffer_size": 32}
    assert errors_of(q) == ["field 'qmix.batch_size': 64 exceeds qmix.buffer_size 32"]
    q = {k: v for k, v in QMIX.items() if k != "budget"}
    assert errors_of(q) == ["field 'budget.env_steps': required for algo 'qmix' (its budget is env steps)"]


def test_cross_field_errors_of_a_profile_name_the_study_run():
    profile = {"profile": "smoke", "results_dir": "r", "figures_dir": "f",
               "studies": {"s": {"base": {**MADDPG, "offpolicy": {"batch_size": 5000}}, "grid": {"seed": [0]}}}}
    from effmarl.studies import expand_all

    with pytest.raises(ConfigError) as err:
        expand_all(validate(profile))
    assert err.value.source == "studies.s run seed-0" and "offpolicy.batch_size" in err.value.lines[0]


def test_duplicate_yaml_keys_are_rejected_naming_the_key(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("study: t\nalgo: random\nseed: 0\nseed: 1\nenv: {backend: mpe}\n")
    with pytest.raises(ConfigError) as err:
        load_yaml(path)
    assert err.value.source == str(path) and "duplicate key 'seed'" in err.value.lines[0]
    path.write_text("env: {backend: mpe, backend: smax}\n")
    with pytest.raises(ConfigError, match="duplicate key 'backend'"):
        load_yaml(path)


@pytest.mark.parametrize(("make", "expected"), [
    (lambda p: p.mkdir(), "is a directory"),
    (lambda p: p.write_bytes(bytes(range(256)) * 4), "not a text file"),
])
def test_unreadable_config_files_are_one_line(tmp_path, make, expected):
    path = tmp_path / "cfg.yaml"
    make(path)
    with pytest.raises(ConfigError, match=expected):
        load_yaml(path)


def test_mixed_int_and_str_unknown_keys_are_reported_not_crashed():
    (line,) = errors_of({**GOOD_RUN, 1: "a", "b": 2})
    assert line.startswith("field '(top level)': unknown key(s) 'b', 1; allowed keys: algo, budget,")


def test_run_ids_are_file_names_and_wildcards_for_any_grid_value():
    from effmarl.studies import run_id

    assert run_id({"offpolicy.hidden": [64, 64], "seed": 0}) == "hidden-64x64_seed-0"
    assert run_id({"offpolicy.lr": 0.01}) == "lr-0.01"
    odd = run_id({"env.map": "a/b c"})
    assert "/" not in odd and " " not in odd and odd.startswith("map-a-b-c-h")
    assert run_id({"env.map": "a/b c"}) != run_id({"env.map": "a b/c"})


def test_the_sampling_benchmarks_windows_k_are_a_list_of_positive_integers():
    def profile(k):
        return {"profile": "smoke", "results_dir": "r", "figures_dir": "f", "studies": {},
                "paper1_micro": {"sampling_bench": {"k": k}}}

    def lines(k):
        return errors_of(profile(k), part="workflow")

    assert validate(profile([1, 4, 16, 64]), part="workflow")["paper1_micro"]["sampling_bench"]["k"] == [1, 4, 16, 64]
    assert lines(16) == ["field 'paper1_micro.sampling_bench.k': must be array, got 16 (int)"]
    assert lines([1, 0]) == ["field 'paper1_micro.sampling_bench.k.1': 0 is less than the minimum of 1"]
    assert lines([]) == ["field 'paper1_micro.sampling_bench.k': [] should be non-empty"]


def test_validating_a_profile_as_effmarl_validate_and_the_workflow_do_imports_no_torch():
    """`effmarl validate` and the Snakefile's loading (load_yaml, resolve_profile, validate, expand_all, and the
    modules the rule files import) run every run's cross-field checks, and import no torch: Snakemake parses the
    workflow once per job."""
    code = """
import sys
from effmarl.cli import main
from effmarl.config import load_yaml, validate
from effmarl.studies import expand_all, resolve_profile
import effmarl.outputs, effmarl.resources
assert main(["validate", "configs/default.yaml"]) == 0
config = load_yaml("configs/smoke.yaml")
config.update(resolve_profile(config))
validate(config, source="profile")
expand_all(config)
print(sorted(m for m in ("torch", "jax") if m in sys.modules))
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "[]"
