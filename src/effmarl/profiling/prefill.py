"""The one prefill of paper 1's sampling benchmarks (`effmarl sampling-bench`, `effmarl bench paper1`): replay
buffers that start full of predator-prey transitions of a uniformly random policy.

A rollout of L distinct transitions (`rollout`), replayed into the buffer as stored transition j = rollout[j mod L]
for j = 0 … n−1, each with its own fresh arrays as a training loop stores them (`fill`). Since only j mod L is
read, any L ≥ min(n, L₀) stores the same n transitions as L₀ does: the callers draw L = min(n, 2 000).

Both benchmarks once wrote their own copy: `sampling-bench` stepped mpe2 (`backend: mpe`) with per-agent action
draws and boolean dones, `bench paper1` the array port `mpe_vec` with one draw of N actions and float32 dones.
The transitions are bit-identical (tests/test_prefill.py) and both storages store done as a float, so what the
buffers hold did not differ; this is the `mpe_vec` one (about nine times faster to generate at N = 12).
"""

from __future__ import annotations

import numpy as np

DISTINCT = 2_000  # distinct transitions a benchmark generates at most; the fill replays them


def rollout(n_agents: int, steps: int, seed: int) -> tuple[list[tuple], object]:
    """`steps` predator-prey transitions (obs, one-hot act, rew, next_obs, done) of a uniformly random policy,
    episode e reset with seed + e (mpe_vec: mpe2's dynamics exactly), and the environment's spec."""
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
    """Store n transitions, transition j = transitions[j mod L], each with its own fresh arrays (as a training
    loop stores them)."""
    for j in range(n):
        obs, act, rew, nxt, done = transitions[j % len(transitions)]
        storage.add([o.copy() for o in obs], [a.copy() for a in act], rew.copy(), [o.copy() for o in nxt],
                    done.copy())
