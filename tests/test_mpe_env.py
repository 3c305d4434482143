"""The MPE predator-prey adapter behind the common environment interface."""

from __future__ import annotations

import numpy as np
import pytest

from effmarl.envs import make_env


@pytest.mark.parametrize("n_agents", [3, 6, 12])
def test_team_sizes_and_shapes(n_agents):
    env = make_env({"backend": "mpe", "n_agents": n_agents, "num_obstacles": 2, "max_cycles": 25,
                    "scenario": "simple_tag"}, num_envs=2)
    spec = env.spec
    assert spec.teams.count("predator") == 2 * n_agents // 3
    assert spec.teams.count("prey") == n_agents // 3
    step = env.reset(seed=0)
    assert [o.shape for o in step.obs] == [(2, d) for d in spec.obs_dims]
    assert step.state.shape == (2, spec.state_dim) == (2, sum(spec.obs_dims))
    assert step.avail_actions.shape == (2, n_agents, 5) and step.avail_actions.all()
    env.close()


def test_episode_truncates_at_max_cycles_and_is_seeded():
    def rollout(seed):
        env = make_env({"backend": "mpe", "n_agents": 3, "num_obstacles": 2, "max_cycles": 7,
                        "scenario": "simple_tag"})
        step, rng, steps, rewards = env.reset(seed=seed), np.random.default_rng(0), 0, []
        while not step.done.all():
            step = env.step(rng.integers(0, 5, size=(1, 3)))
            steps += 1
            rewards.append(step.rewards.copy())
        assert step.truncated.all() and not step.terminated.any()
        return steps, np.concatenate(rewards), step.obs[0]

    steps, rewards, last = rollout(seed=11)
    assert steps == 7
    steps2, rewards2, last2 = rollout(seed=11)
    np.testing.assert_array_equal(last, last2)
    np.testing.assert_array_equal(rewards, rewards2)
    assert not np.array_equal(last, rollout(seed=12)[2])
