"""Real SMAC (oxwhirl `smac`, StarCraft II) behind the effmarl interface, for users who have StarCraft II.

The package is imported only when this backend is selected. It is NOT the PyPI package named `smac`
(that is SMAC3, a hyper-parameter optimiser); install it from its repository:

    pip install "smac @ git+https://github.com/oxwhirl/smac.git"

and point SC2PATH at the StarCraft II installation (SMAC's default is ~/StarCraftII), with the SMAC maps in
$SC2PATH/Maps/SMAC_Maps. `num_envs` StarCraft2Env instances are stepped one after another. As in the SMAX
adapter, a copy whose episode ended is frozen until the next reset. The environments are built with
`continuing_episode=True`, so a time-out is reported (info["episode_limit"]) and becomes `truncated`, not
`terminated` (PyMARL's handling: a time-out is not a terminal for bootstrapping).

Only the documented StarCraft2Env methods are used: get_env_info, reset, step, get_obs, get_state,
get_avail_actions, close.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from effmarl.envs.base import EnvSpec, Step

INSTALL_HINT = ('pip install "smac @ git+https://github.com/oxwhirl/smac.git" (the oxwhirl package from its '
                "repository, NOT the PyPI package 'smac', which is SMAC3) and install StarCraft II with the "
                "SMAC maps, then set SC2PATH to its directory")


def _sc2path_message() -> str:
    path = os.environ.get("SC2PATH")
    if path is None:
        default = os.path.join(os.path.expanduser("~"), "StarCraftII")
        state = "exists" if os.path.isdir(default) else "does not exist"
        return f"SC2PATH is not set (SMAC then looks in {default}, which {state})"
    return f"SC2PATH={path} ({'exists' if os.path.isdir(path) else 'does not exist'})"


def default_factory() -> Callable[..., object]:
    """oxwhirl SMAC's StarCraft2Env, or a clear error saying what to install and where SC2PATH points."""
    try:
        from smac.env import StarCraft2Env
    except ImportError as exc:
        raise RuntimeError(f"env.backend 'smac' needs the oxwhirl SMAC package and StarCraft II ({exc}). "
                           f"{INSTALL_HINT}. Now: {_sc2path_message()}. Without StarCraft II use "
                           "env.backend 'smax' (the default).") from None
    path = os.environ.get("SC2PATH", os.path.join(os.path.expanduser("~"), "StarCraftII"))
    if not os.path.isdir(path):
        raise RuntimeError(f"env.backend 'smac': StarCraft II not found: {_sc2path_message()}. {INSTALL_HINT}.")
    return StarCraft2Env


class SMACEnv:
    def __init__(self, map: str = "3m", num_envs: int = 1, seed: int = 0, backend: str = "smac",
                 episode_limit: int | None = None, env_factory: Callable[..., object] | None = None,
                 **smac_kwargs):
        factory = env_factory or default_factory()
        self.num_envs = num_envs
        self._envs = [factory(map_name=map, seed=seed + j, continuing_episode=True, **smac_kwargs)
                      for j in range(num_envs)]
        info = self._envs[0].get_env_info()
        n, n_actions = int(info["n_agents"]), int(info["n_actions"])
        self.spec = EnvSpec(agents=[f"ally_{i}" for i in range(n)], teams=["ally"] * n,
                            obs_dims=[int(info["obs_shape"])] * n, n_actions=[n_actions] * n,
                            state_dim=int(info["state_shape"]), episode_limit=int(info["episode_limit"]))
        if episode_limit is not None and episode_limit != self.spec.episode_limit:
            raise ValueError(f"env.episode_limit: {episode_limit} differs from the SMAC map's "
                             f"{self.spec.episode_limit}; the map decides it for real SMAC")
        self._done = np.zeros(num_envs, bool)
        self._last: list[tuple] = []

    def _observe(self, env) -> tuple:
        return (np.asarray(env.get_obs(), np.float32), np.asarray(env.get_state(), np.float32),
                np.asarray(env.get_avail_actions(), bool))

    def _make_step(self, rewards, terminated, truncated, won) -> Step:
        obs = np.stack([o for o, _, _ in self._last])
        return Step(obs=[obs[:, i] for i in range(self.spec.n_agents)], state=np.stack([s for _, s, _ in self._last]),
                    avail_actions=np.stack([a for _, _, a in self._last]),
                    rewards=np.repeat(np.asarray(rewards, np.float32)[:, None], self.spec.n_agents, axis=1),
                    terminated=np.asarray(terminated, bool), truncated=np.asarray(truncated, bool),
                    info={"battle_won": np.asarray(won, bool)})

    def reset(self, seed: int | None = None) -> Step:
        """Reset every copy. StarCraft II is seeded when the environments are built (seed + j); a seed here is
        ignored, because StarCraft2Env.reset takes none."""
        for env in self._envs:
            env.reset()
        self._last = [self._observe(env) for env in self._envs]
        self._done[:] = False
        zeros = np.zeros(self.num_envs)
        return self._make_step(zeros, zeros, zeros, zeros)

    def step(self, actions: np.ndarray) -> Step:
        actions = np.asarray(actions)
        rewards, terminated, truncated, won = (np.zeros(self.num_envs) for _ in range(4))
        for j, env in enumerate(self._envs):
            if self._done[j]:
                continue
            reward, ended, info = env.step([int(a) for a in actions[j]])
            timeout = bool(info.get("episode_limit", False))
            rewards[j] = reward
            terminated[j] = bool(ended) and not timeout
            truncated[j] = timeout
            won[j] = bool(info.get("battle_won", False))
            self._done[j] = bool(ended)
            self._last[j] = self._observe(env)
        return self._make_step(rewards, terminated, truncated, won)

    def close(self) -> None:
        for env in self._envs:
            env.close()
