"""The replay buffers `effmarl bench paper1` measures start full: transitions of a uniformly random policy on
predator-prey (`rollout`), stored as a training loop stores them (`fill`)."""

from __future__ import annotations

import numpy as np


def rollout(n_agents: int, steps: int, seed: int) -> list[tuple]:
    """`steps` predator-prey transitions of a uniformly random policy (mpe_vec: mpe2's dynamics exactly)."""
    from effmarl.envs import make_env

    env = make_env({"backend": "mpe_vec", "n_agents": n_agents, "num_obstacles": 2, "max_cycles": 25,
                    "scenario": "simple_tag"}, 1)
    rng = np.random.default_rng(seed)
    eye = np.eye(5, dtype=np.float32)
    out, step, episode = [], env.reset(seed=seed), 0
    while len(out) < steps:
        actions = rng.integers(0, 5, size=n_agents)
        nxt = env.step(actions[None])
        out.append(([o[0].copy() for o in step.obs], [eye[a] for a in actions], nxt.rewards[0].copy(),
                    [o[0].copy() for o in nxt.obs], np.full(n_agents, nxt.terminated[0], np.float32)))
        step = nxt
        if nxt.done[0]:
            episode += 1
            step = env.reset(seed=seed + episode)
    return out, env.spec


def fill(storage, transitions: list[tuple], n: int) -> None:
    """Store n transitions, each with its own fresh arrays (as a training loop stores them)."""
    for j in range(n):
        obs, act, rew, nxt, done = transitions[j % len(transitions)]
        storage.add([o.copy() for o in obs], [a.copy() for a in act], rew.copy(), [o.copy() for o in nxt],
                    done.copy())
