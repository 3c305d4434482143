"""Real-SMAC adapter against a stand-in with StarCraft2Env's documented methods; the missing-SC2 message."""

import sys

import numpy as np
import pytest

from effmarl.envs import make_env
from effmarl.envs.smac import SMACEnv


class FakeStarCraft2Env:
    """StarCraft2Env's documented interface: 2 agents, 4 actions, episodes end by a scripted rule."""

    made: list = []

    def __init__(self, map_name="3m", seed=None, continuing_episode=False, **kwargs):
        self.map_name, self.seed, self.continuing_episode = map_name, seed, continuing_episode
        self.episode_limit = 4
        self.t = 0
        FakeStarCraft2Env.made.append(self)

    def get_env_info(self):
        return {"state_shape": 5, "obs_shape": 3, "n_actions": 4, "n_agents": 2, "episode_limit": self.episode_limit}

    def reset(self):
        self.t = 0
        return self.get_obs(), self.get_state()

    def get_obs(self):
        return [np.full(3, self.t + i, np.float32) for i in range(2)]

    def get_state(self):
        return np.full(5, self.t, np.float32)

    def get_avail_actions(self):
        return [[1, 1, 0, 1], [1, 0, 1, 1]]

    def step(self, actions):
        assert len(actions) == 2 and all(isinstance(a, int) for a in actions)
        self.t += 1
        if self.seed == 0 and self.t == 2:  # copy 0 wins at step 2
            return 1.5, True, {"battle_won": True}
        if self.t >= self.episode_limit:  # SMAC: the time-out flag only with continuing_episode
            return 0.25, True, ({"episode_limit": True} if self.continuing_episode else {})
        return 0.25, False, {"battle_won": False}

    def close(self):
        pass


def test_adapter_maps_smac_outputs():
    env = SMACEnv(map="3m", num_envs=2, env_factory=FakeStarCraft2Env)
    assert env.spec.n_agents == 2 and env.spec.obs_dims == [3, 3] and env.spec.state_dim == 5
    assert env.spec.episode_limit == 4 and all(e.continuing_episode for e in env._envs)
    step = env.reset()
    assert step.avail_actions.shape == (2, 2, 4) and step.avail_actions.dtype == bool
    ends = []
    for _ in range(4):
        step = env.step(np.zeros((2, 2), int))
        ends.append((step.terminated.copy(), step.truncated.copy(), step.info["battle_won"].copy(),
                     step.rewards[:, 0].copy()))
    term, trunc, won, rew = (np.array(x) for x in zip(*ends, strict=True))
    # copy 0: won at step 2 (a terminal), then frozen with zero reward; copy 1: time-out at step 4
    assert term[1, 0] and won[1, 0] and rew[1, 0] == 1.5 and (rew[2:, 0] == 0).all()
    assert trunc[3, 1] and not term[:, 1].any() and not won[:, 1].any()
    assert step.obs[0].shape == (2, 3) and step.state.shape == (2, 5)


def test_missing_smac_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "smac", None)  # import smac -> ImportError
    monkeypatch.setenv("SC2PATH", "/nonexistent/StarCraftII")
    with pytest.raises(RuntimeError) as err:
        make_env({"backend": "smac", "map": "3m"})
    message = str(err.value)
    assert "git+https://github.com/oxwhirl/smac.git" in message and "SMAC3" in message
    assert "SC2PATH=/nonexistent/StarCraftII" in message and "does not exist" in message
