"""Paper 1's scenarios are one table (effmarl/scenarios.py): the schema's scenario and team enums are the table's, a
new scenario is one entry that the schema, the mpe backend and the resources model accept without another edit, and
the array backend is refused for a scenario it does not implement before any compute."""

from __future__ import annotations

import dataclasses

import pytest

from effmarl import resources
from effmarl.config import ConfigError, schema, validate
from effmarl.scenarios import SCENARIOS, scenario

RANDOM = {"study": "s", "algo": "random", "seed": 0, "budget": {"episodes": 1}}


@pytest.fixture
def toy(monkeypatch):
    """A scenario `toy`: mpe2's simple_tag under another name, without an array backend."""
    entry = dataclasses.replace(SCENARIOS["simple_tag"], name="toy", array_backend=False)
    monkeypatch.setitem(SCENARIOS, "toy", entry)
    return entry


def test_the_schemas_scenario_and_team_enums_are_the_tables():
    defs = schema()["$defs"]
    assert defs["env_mpe"]["properties"]["scenario"]["enum"] == list(SCENARIOS) == ["simple_tag"]
    teams = defs["offpolicy"]["properties"]["train_teams"]
    assert teams["items"]["enum"] == teams["default"] == ["predator", "prey"]


def test_simple_tags_observation_model_by_hand():
    # own velocity and position (4), 2 obstacles (4), 2 other agents (4), and the prey's velocity: a predator sees
    # the one prey's (2), the prey sees no other prey's
    assert SCENARIOS["simple_tag"].obs_dims(3, 2) == [14, 14, 12]
    # N = 6, no obstacles: 4 + 0 + 10, plus 2 prey velocities for a predator, 1 for a prey
    assert SCENARIOS["simple_tag"].obs_dims(6, 0) == [18, 18, 18, 18, 16, 16]
    assert resources.mpe_obs_dim({"n_agents": 6, "num_obstacles": 0}) == 18
    assert SCENARIOS["simple_tag"].arguments(6, 2) == {"num_adversaries": 4, "num_good": 2, "num_obstacles": 2}


def test_a_new_scenario_is_one_table_entry(toy):
    cfg = validate({**RANDOM, "env": {"backend": "mpe", "scenario": "toy", "n_agents": 3}}, part="run")
    assert cfg["env"]["scenario"] == "toy"
    from effmarl.envs import make_env

    env = make_env(cfg["env"])
    assert env.spec.teams == ["predator", "predator", "prey"] and env.spec.obs_dims == toy.obs_dims(3, 2)
    env.close()
    assert resources.mpe_obs_dim(cfg["env"]) == 14


def test_the_array_backend_is_refused_for_a_scenario_it_does_not_implement(toy):
    with pytest.raises(ConfigError, match="field 'env.backend': scenario 'toy' has no array backend"):
        validate({**RANDOM, "env": {"backend": "mpe_vec", "scenario": "toy", "n_agents": 3}}, part="run")
    from effmarl.envs.mpe_vec import VectorPredatorPrey

    with pytest.raises(ValueError, match="env.scenario: 'toy' has no array backend"):
        VectorPredatorPrey(3, scenario="toy")


def test_a_scenario_the_table_lacks_is_refused_naming_the_known_ones():
    with pytest.raises(ConfigError, match="field 'env.scenario': 'tag' is not allowed; allowed values: 'simple_tag'"):
        validate({**RANDOM, "env": {"backend": "mpe", "scenario": "tag"}}, part="run")
    with pytest.raises(ValueError, match="env.scenario: 'tag' is not supported; allowed: 'simple_tag'"):
        scenario("tag")
