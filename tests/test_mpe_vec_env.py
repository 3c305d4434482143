"""The vectorised predator-prey (`env.backend: mpe_vec`) against mpe2's simple_tag_v3, step for step.

Measured bit-exact on this machine (same float64 operations in the same order); the test allows float32
rounding-level differences so a different numpy SIMD path cannot fail it spuriously."""

from __future__ import annotations

import numpy as np
import pytest

from effmarl.envs import make_env


def _pair(n_agents: int, num_envs: int = 1, max_cycles: int = 25):
    cfg = {"n_agents": n_agents, "num_obstacles": 2, "max_cycles": max_cycles, "scenario": "simple_tag"}
    return make_env({**cfg, "backend": "mpe"}, num_envs), make_env({**cfg, "backend": "mpe_vec"}, num_envs)


def _assert_steps_equal(ref, vec, where: str) -> None:
    for i, (a, b) in enumerate(zip(ref.obs, vec.obs, strict=True)):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-6, err_msg=f"{where}: obs of agent {i}")
    np.testing.assert_allclose(vec.state, ref.state, rtol=0, atol=1e-6, err_msg=f"{where}: state")
    np.testing.assert_allclose(vec.rewards, ref.rewards, rtol=0, atol=1e-5, err_msg=f"{where}: rewards")
    np.testing.assert_array_equal(vec.terminated, ref.terminated, err_msg=f"{where}: terminated")
    np.testing.assert_array_equal(vec.truncated, ref.truncated, err_msg=f"{where}: truncated")


def _run_pair(n_agents: int, num_envs: int, episodes: int, seed: int, policy) -> dict:
    """Step both backends with the same actions; returns counts of events that exercise the dynamics."""
    ref, vec = _pair(n_agents, num_envs)
    assert vec.spec == ref.spec
    rng = np.random.default_rng(seed)
    seen = {"contacts": 0, "boundary": 0, "speed_capped": 0}
    for episode in range(episodes):
        # the second episode resets without a seed: both continue their generators
        reset_seed = seed + 10 * episode if episode == 0 else None
        a, b = ref.reset(seed=reset_seed), vec.reset(seed=reset_seed)
        _assert_steps_equal(a, b, f"N={n_agents} episode {episode} reset")
        for t in range(25):
            actions = policy(rng, a, num_envs, n_agents)
            a, b = ref.step(actions), vec.step(actions)
            _assert_steps_equal(a, b, f"N={n_agents} episode {episode} step {t}")
            seen["contacts"] += int((a.rewards[:, 0] > 0).sum())
            seen["boundary"] += int((a.rewards[:, n_agents - n_agents // 3:] % 10 != 0).sum())
            speed = np.linalg.norm(vec.vel, axis=-1)
            seen["speed_capped"] += int(np.isclose(speed, vec.max_speed[None]).sum())
        assert a.done.all() and b.done.all()
    ref.close()
    return seen


def _random(rng, step, num_envs, n_agents):
    return rng.integers(0, 5, size=(num_envs, n_agents))


def _chase(rng, step, num_envs, n_agents):
    """Predators move toward the first prey, prey keep going one way: contacts, speed caps and boundary
    penalties all happen (the random policy alone rarely reaches them)."""
    n_adv = n_agents - n_agents // 3
    actions = np.empty((num_envs, n_agents), np.int64)
    for i in range(n_agents):
        if i < n_adv:
            rel = step.obs[i][:, 4 + 4 + 2 * (n_adv - 1): 4 + 4 + 2 * n_adv]   # first prey, relative position
            horiz = np.abs(rel[:, 0]) > np.abs(rel[:, 1])
            actions[:, i] = np.where(horiz, np.where(rel[:, 0] < 0, 1, 2), np.where(rel[:, 1] < 0, 3, 4))
        else:
            actions[:, i] = np.where(rng.random(num_envs) < 0.8, 2 + 2 * (i % 2), rng.integers(0, 5, num_envs))
    return actions


@pytest.mark.parametrize("n_agents", [3, 12, pytest.param(48, marks=pytest.mark.slow)])
def test_equal_to_mpe2_over_whole_episodes(n_agents):
    seen = {k: 0 for k in ("contacts", "boundary", "speed_capped")}
    copies = 1 if n_agents == 48 else 2          # mpe2 itself takes ~0.1 s per step at N = 48
    for policy, seed in ((_random, n_agents), (_chase, 100 + n_agents)):
        for k, v in _run_pair(n_agents, copies, 2, seed, policy).items():
            seen[k] += v
    # the comparison covered collisions (predator reward), prey leaving the area and speed caps
    assert seen["contacts"] > 0 and seen["boundary"] > 0 and seen["speed_capped"] > 0, seen


def test_every_copy_equals_its_own_mpe2_environment_seeded_seed_plus_j():
    """E = 4 copies reset with seed s step for step as four separate one-copy mpe2 environments reset with s + j."""
    copies, seed = 4, 31
    vec = make_env({"backend": "mpe_vec", "n_agents": 3, "num_envs": copies})
    refs = [make_env({"backend": "mpe", "n_agents": 3}) for _ in range(copies)]
    rng = np.random.default_rng(seed)
    b, per_copy = vec.reset(seed=seed), [ref.reset(seed=seed + j) for j, ref in enumerate(refs)]
    for t in range(25):
        for j, a in enumerate(per_copy):
            for i in range(3):
                np.testing.assert_allclose(b.obs[i][j], a.obs[i][0], rtol=0, atol=1e-6, err_msg=f"copy {j} t {t}")
            np.testing.assert_allclose(b.rewards[j], a.rewards[0], rtol=0, atol=1e-5, err_msg=f"copy {j} t {t}")
        actions = rng.integers(0, 5, size=(copies, 3))
        b = vec.step(actions)
        per_copy = [ref.step(actions[j: j + 1]) for j, ref in enumerate(refs)]
    assert b.done.all() and all(a.done.all() for a in per_copy)


def test_set_state_starts_from_the_given_state():
    vec = make_env({"backend": "mpe_vec", "n_agents": 3}, 1)
    pos = np.array([[[0.0, 0.0], [0.5, 0.0], [0.0, 0.06], [0.9, 0.9], [-0.9, -0.9]]])
    step = vec.set_state(pos, np.zeros((1, 3, 2)))
    assert step.obs[0][0, 2:4].tolist() == [0.0, 0.0]
    # the prey (agent 2) overlaps predator 0 (0.06 < 0.075 + 0.05): both predators get +10, the prey −10
    step = vec.step(np.zeros((1, 3), np.int64))
    assert step.rewards[0].tolist() == [10.0, 10.0, -10.0]


def test_bad_agent_count_names_the_field():
    with pytest.raises(ValueError, match="env.n_agents"):
        make_env({"backend": "mpe_vec", "n_agents": 4}, 1)
