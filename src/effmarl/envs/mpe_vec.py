"""Vectorised predator-prey: E copies of mpe2's `simple_tag_v3` stepped as one numpy array program
(`env.backend: mpe_vec`). Same spec, observations, rewards and episode ends as the `mpe` backend.

It re-implements, for the discrete-action, no-curriculum, full-observability configuration the `mpe`
backend uses, exactly what mpe2 (`mpe2/_mpe_utils/core.py`, `simple_env.py`, `simple_tag/simple_tag.py`)
computes, in float64 and in the same order of floating-point operations, so that from the same initial
state and actions it is equal to mpe2 step for step (tests/test_mpe_vec_env.py compares whole episodes):
- action a -> force u: 1 = −x, 2 = +x, 3 = −y, 4 = +y, times the agent's accel (predators 3, prey 4);
- contact force between every pair of colliding entities (agents and the 2 obstacles):
  100 · Δp / |Δp| · k·log(1 + exp(−(|Δp| − r_a − r_b)/k)), k = 1e-3, summed onto an agent in ascending
  order of the other entity as mpe2's pair loop adds them; obstacles do not move;
- integration (dt 0.1, damping 0.25, mass 1): p += v·dt; v ← 0.75·v + F·dt; v rescaled to max_speed
  (predators 1.0, prey 1.3) when faster;
- rewards after the move: each predator +10 per (predator, prey) pair in contact (all predators alike);
  each prey −10 per predator touching it minus the boundary penalty of each coordinate;
- observations (float32): own velocity, own position, obstacle positions relative to it, the other
  agents' relative positions, the other prey's velocities; episodes end by truncation after max_cycles.
Copy j reset with seed s draws its initial state from `numpy.random.default_rng(s + j)` in mpe2's order
(what mpe2's `reset(seed=s + j)` does); an unseeded reset continues copy j's generator, as mpe2's does.
"""

from __future__ import annotations

import numpy as np

from effmarl.envs.base import EnvSpec, Step
from effmarl.scenarios import scenario as scenario_entry

DT, DAMPING, CONTACT_FORCE, CONTACT_MARGIN = 0.1, 0.25, 1e2, 1e-3


class VectorPredatorPrey:
    def __init__(self, n_agents: int = 3, num_obstacles: int = 2, max_cycles: int = 25,
                 scenario: str = "simple_tag", num_envs: int = 1, backend: str = "mpe_vec"):
        # the scenario's entry (effmarl/scenarios.py) says whether this file implements it
        if not scenario_entry(scenario).array_backend:
            raise ValueError(f"env.scenario: {scenario!r} has no array backend; use env.backend mpe")
        if n_agents < 3 or n_agents % 3:
            raise ValueError(f"env.n_agents: {n_agents} must be a positive multiple of 3")
        self.num_envs, self.max_cycles = num_envs, max_cycles
        n_good = n_agents // 3
        n_adv = n_agents - n_good
        self.n, self.n_adv, self.n_good, self.n_lm = n_agents, n_adv, n_good, num_obstacles
        adversary = np.arange(n_agents) < n_adv
        self.size = np.concatenate([np.where(adversary, 0.075, 0.05), np.full(num_obstacles, 0.2)])
        self.accel = np.where(adversary, 3.0, 4.0)
        self.max_speed = np.where(adversary, 1.0, 1.3)
        agents = [f"adversary_{i}" for i in range(n_adv)] + [f"agent_{i}" for i in range(n_good)]
        obs_dims = scenario_entry(scenario).obs_dims(n_agents, num_obstacles)
        self.spec = EnvSpec(agents=agents, teams=["predator" if a else "prey" for a in adversary],
                            obs_dims=obs_dims, n_actions=[5] * n_agents, state_dim=sum(obs_dims),
                            episode_limit=max_cycles)
        # for agent i: the other agents in order, and the other prey (whose velocities it sees)
        self._others = np.array([[j for j in range(n_agents) if j != i] for i in range(n_agents)])
        goods = np.arange(n_adv, n_agents)
        self._adv_vel = goods                                                     # [n_good]
        self._good_vel = np.array([[j for j in goods if j != i] for i in goods], dtype=np.int64).reshape(
            n_good, n_good - 1)
        self._dist_min = self.size[:n_agents, None] + self.size[None, :]          # [N, M]
        self._rngs = [np.random.default_rng() for _ in range(num_envs)]
        self._avail = np.ones((num_envs, n_agents, 5), dtype=bool)
        self.pos = np.zeros((num_envs, n_agents + num_obstacles, 2))
        self.vel = np.zeros((num_envs, n_agents, 2))
        self.steps = 0

    # ---- state -------------------------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> Step:
        if seed is not None:
            self._rngs = [np.random.default_rng(seed + j) for j in range(self.num_envs)]
        for j, rng in enumerate(self._rngs):
            self.pos[j, : self.n] = rng.uniform(-1, +1, (self.n, 2))
            self.pos[j, self.n:] = rng.uniform(-0.9, +0.9, (self.n_lm, 2))
        self.vel[:] = 0.0
        self.steps = 0
        zeros = np.zeros((self.num_envs, self.n), np.float32)
        flags = np.zeros(self.num_envs, bool)
        return self._step_result(zeros, flags, flags)

    def set_state(self, pos: np.ndarray, vel: np.ndarray, steps: int = 0) -> Step:
        """Start from given positions `[E, N + obstacles, 2]` and velocities `[E, N, 2]` (float64)."""
        self.pos[:] = pos
        self.vel[:] = vel
        self.steps = steps
        flags = np.zeros(self.num_envs, bool)
        return self._step_result(np.zeros((self.num_envs, self.n), np.float32), flags, flags)

    # ---- dynamics ----------------------------------------------------------------------------------------
    def _action_force(self, actions: np.ndarray) -> np.ndarray:
        u = np.zeros((self.num_envs, self.n, 2))
        u[..., 0] = np.where(actions == 1, -1.0, np.where(actions == 2, 1.0, 0.0))
        u[..., 1] = np.where(actions == 3, -1.0, np.where(actions == 4, 1.0, 0.0))
        u *= self.accel[None, :, None]
        return u + 0.0                                     # mpe2 adds a zero "noise"

    def _contact_forces(self, force: np.ndarray) -> np.ndarray:
        delta = self.pos[:, : self.n, None, :] - self.pos[:, None, :, :]              # [E, N, M, 2]
        dist = np.sqrt(np.square(delta[..., 0]) + np.square(delta[..., 1]))          # [E, N, M]
        k = CONTACT_MARGIN
        with np.errstate(divide="ignore", invalid="ignore"):
            penetration = np.logaddexp(0, -(dist - self._dist_min) / k) * k
            pair = CONTACT_FORCE * delta / dist[..., None] * penetration[..., None]
        for j in range(self.n + self.n_lm):               # mpe2's pair loop adds in ascending other-entity order
            if j < self.n:
                others = np.arange(self.n) != j
                force[:, others] = pair[:, others, j] + force[:, others]
            else:
                force = pair[:, :, j] + force
        return force

    def step(self, actions: np.ndarray) -> Step:
        actions = np.asarray(actions)
        force = self._contact_forces(self._action_force(actions))
        agents = self.pos[:, : self.n]
        agents += self.vel * DT
        self.vel = self.vel * (1 - DAMPING)
        self.vel += (force / 1.0) * DT
        speed = np.sqrt(np.square(self.vel[..., 0]) + np.square(self.vel[..., 1]))
        fast = speed > self.max_speed[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            scaled = self.vel / speed[..., None] * self.max_speed[None, :, None]
        self.vel = np.where(fast[..., None], scaled, self.vel)
        self.steps += 1
        rewards = self._rewards()
        truncated = np.full(self.num_envs, self.steps >= self.max_cycles)
        return self._step_result(rewards, np.zeros(self.num_envs, bool), truncated)

    def _rewards(self) -> np.ndarray:
        adv, good = self.pos[:, : self.n_adv], self.pos[:, self.n_adv: self.n]
        delta = adv[:, :, None, :] - good[:, None, :, :]                              # [E, n_adv, n_good, 2]
        dist = np.sqrt(np.square(delta[..., 0]) + np.square(delta[..., 1]))
        hit = dist < (0.075 + 0.05)
        rew = np.empty((self.num_envs, self.n))
        rew[:, : self.n_adv] = (10.0 * hit.sum(axis=(1, 2)))[:, None]
        x = np.abs(good)
        with np.errstate(over="ignore"):
            bound = np.where(x < 0.9, 0.0, np.where(x < 1.0, (x - 0.9) * 10, np.minimum(np.exp(2 * x - 2), 10)))
        rew[:, self.n_adv:] = (-10.0 * hit.sum(axis=1)) - bound[..., 0] - bound[..., 1]
        return rew.astype(np.float32)

    def _observations(self) -> list[np.ndarray]:
        pos, vel = self.pos[:, : self.n], self.vel
        lm = self.pos[:, self.n:, None, :] - pos[:, None, :, :]                        # [E, L, N, 2]
        rel = pos[:, None, :, :] - pos[:, :, None, :]                                 # [E, i, j, 2]: p_j − p_i
        others = rel[:, np.arange(self.n)[:, None], self._others]                     # [E, N, N−1, 2]
        e = self.num_envs
        common = np.concatenate([vel, pos, lm.transpose(0, 2, 1, 3).reshape(e, self.n, -1),
                                 others.reshape(e, self.n, -1)], axis=-1)
        adv = np.concatenate([common[:, : self.n_adv],
                              np.broadcast_to(vel[:, self._adv_vel].reshape(e, 1, -1),
                                              (e, self.n_adv, 2 * self.n_good))], axis=-1).astype(np.float32)
        good = np.concatenate([common[:, self.n_adv:], vel[:, self._good_vel].reshape(e, self.n_good, -1)],
                              axis=-1).astype(np.float32)
        return [adv[:, i] for i in range(self.n_adv)] + [good[:, i] for i in range(self.n_good)]

    def _step_result(self, rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray) -> Step:
        obs = self._observations()
        return Step(obs=obs, state=np.concatenate(obs, axis=1), avail_actions=self._avail.copy(),
                    rewards=rewards, terminated=terminated, truncated=truncated)

    def close(self) -> None:
        pass
