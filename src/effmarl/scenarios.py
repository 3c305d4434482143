"""Paper 1's MPE scenarios, one table: the schema's `env.scenario` and `offpolicy.train_teams` enums, the mpe
backend (effmarl/envs/mpe.py), the array backend's refusal of a scenario it does not implement (envs/mpe_vec.py)
and the resources model's observation size (effmarl/resources.py) read it.

Adding a scenario is one `Scenario` entry in `SCENARIOS`; an array (mpe_vec) implementation of it is optional and
declared by `array_backend`. Plain Python (no mpe2, no numpy), so the schema and the resources model can read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def simple_tag_arguments(n_agents: int, num_obstacles: int) -> dict:
    """mpe2 simple_tag's team sizes: 2N/3 predators (its "adversaries") and N/3 prey (its "good" agents)."""
    return {"num_adversaries": n_agents - n_agents // 3, "num_good": n_agents // 3, "num_obstacles": num_obstacles}


def simple_tag_obs_dims(n_agents: int, num_obstacles: int) -> list[int]:
    """Each agent's observation in mpe2's order (predators, then prey): own velocity and position, the obstacles'
    relative positions, every other agent's relative position and every other prey's velocity."""
    n_prey = n_agents // 3
    return [4 + 2 * num_obstacles + 2 * (n_agents - 1) + 2 * (n_prey - (0 if i < n_agents - n_prey else 1))
            for i in range(n_agents)]


@dataclass(frozen=True)
class Scenario:
    """One MPE scenario (config field `env.scenario`), N = env.n_agents learning agents with discrete actions.

    module:        its mpe2 module, whose parallel_env(**arguments, max_cycles, continuous_actions=False) builds it
    teams:         mpe2 agent-name prefix -> the team its agents belong to (offpolicy.train_teams names teams)
    arguments:     mpe2's keyword arguments (team sizes, obstacles) for (N, env.num_obstacles)
    obs_dims:      the observation size of each agent, in mpe2's agent order, for (N, env.num_obstacles)
    array_backend: whether effmarl/envs/mpe_vec.py implements it (env.backend mpe_vec)
    n_actions:     actions per agent (MPE's discrete moves: none, -x, +x, -y, +y)
    """
    name: str
    module: str
    teams: dict[str, str]
    arguments: Callable[[int, int], dict]
    obs_dims: Callable[[int, int], list[int]]
    array_backend: bool
    n_actions: int = 5

    def team_of(self, agent: str) -> str:
        """The team of mpe2 agent `agent` (e.g. "adversary_0" -> "predator")."""
        return self.teams[agent.rsplit("_", 1)[0]]


SCENARIOS: dict[str, Scenario] = {s.name: s for s in (
    Scenario("simple_tag", "simple_tag_v3", {"adversary": "predator", "agent": "prey"}, simple_tag_arguments,
             simple_tag_obs_dims, array_backend=True),
)}


def scenario(name: str) -> Scenario:
    """The table entry of scenario `name`; ValueError naming the field and the known scenarios for any other."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise ValueError(f"env.scenario: {name!r} is not supported; allowed: "
                         f"{', '.join(map(repr, SCENARIOS))}") from None
