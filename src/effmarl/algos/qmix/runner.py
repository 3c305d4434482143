"""Episode runners of the QMIX family: play one episode in every parallel env copy with ε-greedy GRU agents and
return PyMARL episode batches (replay/episode.py layout) and per-episode outcomes.

Two runners, one interface — `collect(agents, env_seeds, epsilons, generators)` plays one episode batch for
each of S seeds (S learners' agents, S seeds of the env copies, S values of ε, S torch generators) and returns
[(batch, outcomes)] per seed; `evaluate(agents, env_seeds)` does the same greedily on the evaluation copies:

  PythonRunner — any backend behind the env interface (SMAX, StarCraft II SMAC): one Python step at a time
                 (env step, torch action choice, buffer write), one env object per seed. The reference.
  SMAXRunner   — SMAX only: the whole episode batch of every seed (env copies, the GRU agents, ε-greedy, the
                 episode buffer) is one jitted JAX program (smax_runner.py); the agents' torch parameters
                 reach it through DLPack, the batch comes back the same way. No per-step host round trip.
                 Its exploration draws come from a JAX key derived from the round's env seed (the generators are
                 not used), so a resumed run draws the same actions without any RNG state to checkpoint.

`make_runner` picks SMAXRunner for the SMAX backend unless qmix.runner says otherwise.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch

from effmarl.algos.qmix.operators import greedy_actions
from effmarl.algos.qmix.settings import QmixSettings
from effmarl.envs import make_env
from effmarl.nets.rnn_agent import RNNAgent, agent_inputs
from effmarl.profiling.phases import PhaseTimer
from effmarl.replay.episode import empty_batch, episode_scheme


def select_actions(q_values: torch.Tensor, avail: torch.Tensor, epsilon: float,
                   generator: torch.Generator) -> torch.Tensor:
    """ε-greedy over available actions only (PyMARL): the greedy action is the best available one, and a
    random action is uniform over the available ones. Returns CPU actions (the generator lives there)."""
    greedy = greedy_actions(q_values, avail).cpu()
    if epsilon <= 0:
        return greedy
    flat = avail.reshape(-1, avail.shape[-1]).float().cpu()
    random = torch.multinomial(flat, 1, generator=generator).view(greedy.shape)
    explore = torch.rand(greedy.shape, generator=generator) < epsilon
    return torch.where(explore, random, greedy)


def _tensors(step) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """obs [E, n, obs_dim], state [E, state_dim], avail [E, n, A] of a Step, sharing its numpy memory (read
    only: the SMAX arrays are views of JAX buffers; these tensors are only read, never written)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return (torch.from_numpy(np.stack(step.obs, axis=1)), torch.from_numpy(step.state),
                torch.from_numpy(step.avail_actions))


class PythonRunner:
    """One Python step at a time over any env backend; one env object (num_envs copies) per seed."""

    def __init__(self, env_cfg: dict, num_envs: int, eval_episodes: int, n_seeds: int, device,
                 timer: PhaseTimer | None = None):
        self.envs = [make_env(env_cfg, num_envs) for _ in range(n_seeds)]
        self.eval_envs = [make_env(env_cfg, eval_episodes) for _ in range(n_seeds)]
        self.spec = self.envs[0].spec
        self.scheme = episode_scheme(self.spec)
        self.device = torch.device(device)
        self.timer = timer or PhaseTimer(enabled=False)

    def collect(self, agents: list[RNNAgent], env_seeds: list[int], epsilons: list[float],
                generators: list[torch.Generator]) -> list[tuple[dict, dict]]:
        return [self.play(self.envs[s], agent, env_seeds[s], epsilons[s], generators[s], self.timer)
                for s, agent in enumerate(agents)]

    def evaluate(self, agents: list[RNNAgent], env_seeds: list[int]) -> list[dict]:
        off = PhaseTimer(enabled=False)
        return [self.play(self.eval_envs[s], agent, env_seeds[s], 0.0, None, off)[1] for s, agent in enumerate(agents)]

    def play(self, env, agent: RNNAgent, seed: int, epsilon: float, generator, timer) -> tuple[dict, dict]:
        """One episode in each copy of `env`; returns the episode batch and per-episode outcomes."""
        n_env, limit, n_agents = env.num_envs, self.spec.episode_limit, self.spec.n_agents
        n_actions = max(self.spec.n_actions)
        batch = empty_batch(self.scheme, n_env)
        with timer.phase("env_step"):
            step = env.reset(seed=seed)
        active = np.ones(n_env, bool)
        returns, won = np.zeros(n_env), np.zeros(n_env, bool)
        h = agent.init_hidden(n_env, n_agents)
        last = torch.full((n_env, n_agents), -1, dtype=torch.int64)
        obs, state, avail = _tensors(step)
        for t in range(limit):
            rows = torch.from_numpy(active)
            with timer.phase("buffer_add"):
                batch["obs"][rows, t], batch["state"][rows, t] = obs[rows], state[rows]
                batch["avail"][rows, t] = avail[rows]
            with timer.phase("action_selection"), torch.no_grad():
                inputs = agent_inputs(obs, last, n_actions).to(self.device)
                qs, h = agent(inputs, h)
                actions = select_actions(qs, avail.to(self.device), epsilon, generator)
                last = actions
            with timer.phase("env_step"):
                step = env.step(actions.numpy())
            obs, state, avail = _tensors(step)
            with timer.phase("buffer_add"):
                batch["actions"][rows, t] = actions[rows]
                batch["reward"][rows, t] = torch.from_numpy(step.rewards[:, 0])[rows]
                batch["terminated"][rows, t] = torch.from_numpy(step.terminated)[rows]
                batch["filled"][rows, t] = True
                batch["obs"][rows, t + 1] = obs[rows]
                batch["state"][rows, t + 1] = state[rows]
                batch["avail"][rows, t + 1] = avail[rows]
            returns += np.where(active, step.rewards[:, 0], 0.0)
            won |= active & step.info["battle_won"]
            active &= ~step.done
            if not active.any():
                break
        lengths = batch["filled"].sum(1).numpy()
        return batch, {"return": returns, "won": won, "length": lengths}

    def close(self) -> None:
        for env in self.envs + self.eval_envs:
            env.close()


def make_runner(settings: QmixSettings | dict, n_seeds: int, device, timer: PhaseTimer | None = None):
    """SMAXRunner for the SMAX backend (qmix.runner auto or jax), else PythonRunner. `settings`: the run's
    QmixSettings (a validated run config is resolved into them)."""
    if not isinstance(settings, QmixSettings):
        settings = QmixSettings.from_config(settings)
    q = settings.qmix
    if q.runner == "jax" or (q.runner == "auto" and settings.env["backend"] == "smax"):
        from effmarl.algos.qmix.smax_runner import SMAXRunner

        return SMAXRunner(settings.env, q.num_envs, q.eval_episodes, n_seeds, device, timer)
    return PythonRunner(settings.env, q.num_envs, q.eval_episodes, n_seeds, device, timer)
