"""The one interface every environment backend implements.

Environments come as a batch of `num_envs` parallel copies. Arrays are numpy, batch-first:
observations per agent (agents may differ in observation size), a global state, available-action masks,
per-agent rewards, and per-copy termination flags. Algorithms import this module, never an environment
package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class EnvSpec:
    agents: list[str]          # agent names, in the order of every per-agent array
    teams: list[str]           # team of each agent, e.g. "predator" / "prey" or "ally"
    obs_dims: list[int]        # observation size of each agent
    n_actions: list[int]       # discrete action count of each agent
    state_dim: int             # size of the global state
    episode_limit: int         # steps after which an episode is truncated
    unit_types: tuple[str, ...] | None = None  # unit type name of each agent (SMAX: marine, stalker, ...), if known

    @property
    def n_agents(self) -> int:
        return len(self.agents)


@dataclass
class Step:
    obs: list[np.ndarray]             # per agent: [num_envs, obs_dims[i]] float32
    state: np.ndarray                 # [num_envs, state_dim] float32
    avail_actions: np.ndarray         # [num_envs, n_agents, max(n_actions)] bool
    rewards: np.ndarray               # [num_envs, n_agents] float32 (zeros after reset)
    terminated: np.ndarray            # [num_envs] bool: the episode ended inside the task
    truncated: np.ndarray             # [num_envs] bool: the episode hit its step limit
    info: dict[str, np.ndarray] = field(default_factory=dict)  # e.g. battle_won [num_envs] bool

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated


class MultiAgentEnv(Protocol):
    spec: EnvSpec
    num_envs: int

    def reset(self, seed: int | None = None) -> Step:
        """Reset every copy; with a seed, copy j is seeded with seed + j."""

    def step(self, actions: np.ndarray) -> Step:
        """Advance every copy by one step; actions is [num_envs, n_agents] int."""

    def close(self) -> None: ...
