"""An MPE scenario of paper 1 (mpe2, PettingZoo parallel API) behind the effmarl interface: the scenario's entry in
effmarl/scenarios.py names its mpe2 module, its teams and their sizes (simple_tag, the paper's predator-prey: N
learning agents, 2N/3 predators - mpe2's "adversaries" - and N/3 prey), discrete actions.
"""

from __future__ import annotations

import importlib

import numpy as np

from effmarl.envs.base import EnvSpec, Step
from effmarl.scenarios import scenario as scenario_entry


class MPEPredatorPrey:
    def __init__(self, n_agents: int = 3, num_obstacles: int = 2, max_cycles: int = 25,
                 scenario: str = "simple_tag", num_envs: int = 1, backend: str = "mpe"):
        entry = scenario_entry(scenario)
        if n_agents < 3 or n_agents % 3:
            raise ValueError(f"env.n_agents: {n_agents} must be a positive multiple of 3")
        module = importlib.import_module(f"mpe2.{entry.module}")
        self.num_envs = num_envs
        self._envs = [module.parallel_env(**entry.arguments(n_agents, num_obstacles), max_cycles=max_cycles,
                                          continuous_actions=False) for _ in range(num_envs)]
        first = self._envs[0]
        agents = list(first.possible_agents)
        self.spec = EnvSpec(
            agents=agents,
            teams=[entry.team_of(a) for a in agents],
            obs_dims=[first.observation_space(a).shape[0] for a in agents],
            n_actions=[int(first.action_space(a).n) for a in agents],
            state_dim=int(first.state_space.shape[0]),
            episode_limit=max_cycles,
        )
        self._avail = np.ones((num_envs, len(agents), max(self.spec.n_actions)), dtype=bool)

    def _gather(self, per_env_obs: list[dict], rewards: np.ndarray, terminated, truncated) -> Step:
        obs = [np.stack([o[a] for o in per_env_obs]).astype(np.float32) for a in self.spec.agents]
        state = np.concatenate(obs, axis=1)
        return Step(obs=obs, state=state, avail_actions=self._avail.copy(), rewards=rewards,
                    terminated=np.asarray(terminated, bool), truncated=np.asarray(truncated, bool))

    def reset(self, seed: int | None = None) -> Step:
        per_env = [env.reset(seed=None if seed is None else seed + j)[0] for j, env in enumerate(self._envs)]
        zeros = np.zeros((self.num_envs, self.spec.n_agents), np.float32)
        return self._gather(per_env, zeros, [False] * self.num_envs, [False] * self.num_envs)

    def step(self, actions: np.ndarray) -> Step:
        actions = np.asarray(actions)
        per_env, rewards, terminated, truncated = [], [], [], []
        for j, env in enumerate(self._envs):
            obs, rew, term, trunc, _ = env.step({a: int(actions[j, i]) for i, a in enumerate(self.spec.agents)})
            per_env.append(obs)
            rewards.append([rew[a] for a in self.spec.agents])
            terminated.append(all(term[a] for a in self.spec.agents))
            truncated.append(all(trunc[a] for a in self.spec.agents))
        return self._gather(per_env, np.asarray(rewards, np.float32), terminated, truncated)

    def close(self) -> None:
        for env in self._envs:
            env.close()
