"""The config schema: defaults, clear one-line errors naming the field, study expansion."""

from __future__ import annotations

import copy

import pytest

from effmarl.config import ConfigError, config_hash, expand_study, load_yaml, validate

GOOD_RUN = {"study": "t", "algo": "random", "seed": 0, "env": {"backend": "mpe", "n_agents": 3}}


def errors_of(cfg: dict, part: str = "run") -> list[str]:
    with pytest.raises(ConfigError) as info:
        validate(copy.deepcopy(cfg), part=part)
    return info.value.lines


def test_defaults_are_filled_from_the_schema():
    cfg = validate(copy.deepcopy(GOOD_RUN), part="run")
    assert cfg["env"] == {"backend": "mpe", "n_agents": 3, "scenario": "simple_tag", "num_obstacles": 2,
                          "max_cycles": 25}
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
    ({"seed": "zero"}, "field 'seed': 'zero' is not of type 'integer'"),
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
    for path in sorted((repo_root / "configs").glob("*.yaml")):
        validate(load_yaml(path), source=str(path))


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
