"""A uniform random policy: the reward floor that learning algorithms must beat, and the walking
skeleton of the training loop (env-step phases, per-episode metrics, provenance)."""

from __future__ import annotations

import numpy as np

from effmarl import harness
from effmarl.envs import make_env
from effmarl.profiling.phases import PhaseTimer
from effmarl.runs import RunDir


def run(cfg: dict, rundir: RunDir) -> None:
    env = make_env(cfg["env"])
    spec = env.spec
    rng = np.random.default_rng(cfg["seed"])
    timer = PhaseTimer()
    metrics, phases = [], []
    # env.num_envs copies play episodes e … e + E − 1 side by side (copy j reset with seed + j), as in the
    # off-policy loop; each copy's episode is its own metrics row
    for episode in range(0, cfg["budget"]["episodes"], env.num_envs):
        step = env.reset(seed=harness.episode_seed(cfg["seed"], episode))
        returns = np.zeros((env.num_envs, spec.n_agents))
        while not step.done.all():
            with timer.phase("action_selection"):
                actions = np.stack([rng.integers(0, n, size=env.num_envs) for n in spec.n_actions], axis=1)
            with timer.phase("env_step"):
                step = env.step(actions)
            returns += step.rewards
        metrics += [{"episode": episode + j, "agent": name, "team": team, "return": float(ret)}
                    for j, per_copy in enumerate(returns)
                    for name, team, ret in zip(spec.agents, spec.teams, per_copy, strict=True)]
        phases += timer.snapshot(episode=episode)
    env.close()
    rundir.write_table("metrics", metrics)
    rundir.write_table("phases", phases)
