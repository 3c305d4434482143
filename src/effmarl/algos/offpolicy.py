"""The off-policy training loop of paper 1, shared by MADDPG and MASAC (openai/maddpg `train.py`).

Per environment step, written as the phases paper 1 profiles:
    action_selection -> env_step -> buffer_add
    every `update_every` env steps once `warmup` transitions are stored, an update round
    (`update_all_trainers`, an enclosing phase) for every agent i:
        sampling (indices from the sampler, batch gathered from the storage) -> target_q -> q_loss -> p_loss
        -> target_update
`replay.batch_mode`: `per_agent` (the original: each agent's update draws its own batch, so the reference
storage does N·N per-agent-buffer gathers per round) or `shared` (one batch per round for all agents).
`offpolicy.learner`: `sequential` (the paper-faithful round above, agent after agent) or `batched`
(effmarl.algos.batched: the sampling phase draws all of the round's batches as one `[G, B, …]` gather, then
target_q, q_loss, p_loss and target_update each run once for all agents together).

`env.num_envs` = E environment copies step in lockstep (all of paper 1's episodes end together, by
truncation): one `act` for all copies and agents, one env step, E transitions stored (copy order), and env
steps, episodes and the update ratio counted over all copies — a vector step that carries the env-step count
across m multiples of `update_every` runs m rounds, so E = 1 is the original loop and any E keeps one round
per `update_every` transitions. Copy j of the episode round starting at episode e is reset with
`episode_seed(seed, e) + j = episode_seed(seed, e + j)`: the copies play the episodes e … e + E − 1.

The whole run state — networks, optimisers, RNG states, replay storage, counters, metrics and phase rows so
far — is a `TrainState`; the run harness (effmarl.harness) saves it with a checksum every
`offpolicy.checkpoint_every` episodes and when SIGTERM/SIGINT arrives (then stops), restores it when a run
starts and finds one, and stops the run if an update round leaves a NaN/Inf in the learner's parameters.

A run is a `Trainer`, advanced one episode round at a time (`step`, which ends at the safe point): `train_loop`
steps one to its budget; `run_interleaved` steps two (a neighbor/uniform pair, `effmarl train --interleave`)
alternately in one process, each with its own global RNG states, so each writes what it writes alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch

from effmarl import harness
from effmarl.algos.batched import BatchedMADDPG, BatchedMASAC
from effmarl.algos.maddpg import MADDPG
from effmarl.algos.masac import MASAC
from effmarl.algos.offpolicy_settings import OffPolicySettings
from effmarl.envs import EnvSpec, make_env
from effmarl.profiling.phases import PhaseTimer
from effmarl.replay import Batch, Storage, make_sampler, make_storage, sampling_round
from effmarl.runs import RunDir

UPDATE_PHASES = ("sampling", "target_q", "q_loss", "p_loss", "target_update")
LOOP_PHASES = ("action_selection", "env_step", "buffer_add", "update_all_trainers")

# (config `algo`, config `offpolicy.learner`) -> the learner class the loop trains: the one place that choice is
# made (`run` below for `effmarl train`, effmarl.bench.paper1 for its loops)
LEARNERS = {
    ("maddpg", "sequential"): MADDPG,
    ("maddpg", "batched"): BatchedMADDPG,
    ("masac", "sequential"): MASAC,
    ("masac", "batched"): BatchedMASAC,
}


class OffPolicyLearner(Protocol):
    """What a sequential learner class of `LEARNERS` provides to the loop (a batched one, `batched = True`, has
    `update_all(batch, timer)` for the whole round instead of `update`). Not qmix's `Learner` class."""

    def act(self, obs: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
        """Per-agent observations `[E, D_i]` of E environment copies -> action indices `[E, n_agents]` and the
        per-agent one-hot actions `[E, A_i]` stored in the replay buffer."""

    def update(self, agent: int, batch: Batch, timer: PhaseTimer) -> None:
        """One agent's update, timed as target_q, q_loss, p_loss, target_update."""

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> None: ...


@dataclass
class TrainState:
    """Everything needed to continue a run exactly where it stopped."""

    learner: OffPolicyLearner
    storage: Storage
    rng: np.random.Generator              # the sampler's index draws
    episode: int = 0                      # completed episodes
    env_steps: int = 0
    update_rounds: int = 0
    metrics: list[dict] = field(default_factory=list)
    phases: list[dict] = field(default_factory=list)

    def state_dict(self) -> dict:
        return {
            "learner": self.learner.state_dict(),
            "storage": self.storage.state_dict(),
            "rng": {"sampler": self.rng.bit_generator.state, **harness.global_rng_states()},  # data only
            "counters": {"episode": self.episode, "env_steps": self.env_steps, "update_rounds": self.update_rounds},
            "metrics": self.metrics,
            "phases": self.phases,
        }

    def load_state_dict(self, state: dict) -> None:
        self.learner.load_state_dict(state["learner"])
        self.storage.load_state_dict(state["storage"])
        rng = state["rng"]
        self.rng.bit_generator.state = rng["sampler"]
        harness.set_global_rng_states(rng)
        counters = state["counters"]
        self.episode, self.env_steps, self.update_rounds = (counters["episode"], counters["env_steps"],
                                                            counters["update_rounds"])
        self.metrics, self.phases = list(state["metrics"]), list(state["phases"])


def update_round(state: TrainState, sampler, batch_size: int, batch_mode: str, trained: list[int],
                 timer: PhaseTimer) -> None:
    """`update all trainers`: every trained agent's update, each on its own batch or on one shared batch.
    A batched learner gets all of the round's batches at once (one per agent, untrained ones included and
    masked out, in per_agent mode) and updates every agent in one pass."""
    if getattr(state.learner, "batched", False):
        groups = state.learner.n if batch_mode == "per_agent" else 1
        with timer.phase("sampling"):
            batch = sampling_round(state.storage, sampler, state.rng, batch_size, groups, layout="stacked")
        state.learner.update_all(batch, timer)
        state.update_rounds += 1
        return
    batch = None
    for agent in trained:
        if batch is None or batch_mode == "per_agent":
            with timer.phase("sampling"):
                (batch,) = sampling_round(state.storage, sampler, state.rng, batch_size, 1)
        state.learner.update(agent, batch, timer)
    state.update_rounds += 1


@dataclass
class Loop:
    """What one run's episodes need besides the `TrainState`: environment, sampler, who trains, the timer."""

    settings: OffPolicySettings
    env: object
    spec: EnvSpec
    sampler: object
    trained: list[int]
    timer: PhaseTimer
    device: torch.device


def build(settings: OffPolicySettings | dict, make_learner,
          device: torch.device | None = None) -> tuple[Loop, TrainState]:
    """The environment, learner, storage and sampler of a run's settings (or of its validated run config, resolved
    into them); `make_learner(settings, spec, device)` builds the learner."""
    settings = OffPolicySettings.from_config(settings)
    off, replay = settings.offpolicy, settings.replay
    device = device or harness.resolve_device(settings.device)
    env = make_env(settings.env)
    spec: EnvSpec = env.spec
    trained = [i for i, team in enumerate(spec.teams) if team in off.train_teams]
    learner = make_learner(settings, spec, device)
    if hasattr(learner, "set_trained"):
        learner.set_trained(trained)
    state = TrainState(
        learner=learner,
        storage=make_storage(replay, spec.obs_dims, spec.n_actions, device=str(device)),
        rng=harness.stream_rng(settings.seed, 1),
    )
    timer = PhaseTimer(sync=torch.cuda.synchronize if device.type == "cuda" else None)
    return Loop(settings, env, spec, make_sampler(replay), trained, timer, device), state


def play_episode(loop: Loop, state: TrainState) -> np.ndarray:
    """One episode of every environment copy, in lockstep, of the phase-timed loop (updates included);
    returns the returns `[E, n_agents]`."""
    off, replay, timer = loop.settings.offpolicy, loop.settings.replay, loop.timer
    copies, every = loop.env.num_envs, off.update_every
    step = loop.env.reset(seed=harness.episode_seed(loop.settings.seed, state.episode))
    obs = step.obs
    returns = np.zeros((copies, loop.spec.n_agents))
    done = False
    while not done:
        with timer.phase("action_selection"):
            actions, onehots = state.learner.act(obs)
        with timer.phase("env_step"):
            step = loop.env.step(actions)
        with timer.phase("buffer_add"):
            # `done` is termination inside the task; a step-limit truncation still bootstraps
            state.storage.add_batch(obs, onehots, step.rewards, step.obs,
                                    np.broadcast_to(step.terminated[:, None], step.rewards.shape))
        if step.done.any() and not step.done.all():
            raise RuntimeError("env.num_envs: environment copies ended their episodes at different steps; the "
                               "off-policy loop steps copies in lockstep")
        obs, done = step.obs, bool(step.done.all())
        returns += step.rewards
        before, state.env_steps = state.env_steps, state.env_steps + copies
        if len(state.storage) < off.warmup:
            continue
        for _ in range(state.env_steps // every - before // every):
            with timer.phase("update_all_trainers"):
                update_round(state, loop.sampler, off.batch_size, replay.batch_mode, loop.trained, timer)
            # outside the timed phases: NaN/Inf parameters stop the run before they reach a checkpoint
            harness.guard_finite("update_all_trainers", state.env_steps,
                                 getattr(state.learner, "modules", state.learner.state_dict)())
    return returns


class Trainer:
    """One run under the run harness, advanced one episode round (E copies) at a time: `train_loop` drives one to
    its budget, `run_interleaved` drives two alternately in one process. Built from the validated run config `cfg`
    (the run's record: the harness hashes it into the checkpoints; everything else reads `settings`, resolved once
    here) with the learner of `make_learner(settings, spec, device)`; a checkpoint in the run directory is restored
    (`resumed_from`)."""

    def __init__(self, cfg: dict, rundir: RunDir, make_learner, process: harness.Process):
        self.cfg, self.rundir, self.settings = cfg, rundir, OffPolicySettings.from_config(cfg)
        self.run = harness.Run(cfg, rundir, budget_field="budget.episodes", budget=self.settings.budget_episodes,
                               unit="episodes", process=process)
        self.loop, self.state = build(self.settings, make_learner, self.run.device)
        self.resumed_from = self.run.restore(self.state)
        self.run.show_progress("episode")

    @property
    def done(self) -> bool:
        return self.state.episode >= self.settings.budget_episodes

    def step(self) -> None:
        """One episode round: its metrics and phase rows, then the safe point's save, when periodic or when a stop
        was requested. Stopping is the caller's (`Process.stop_if_requested`), once every run of the process saved."""
        state, spec, timer = self.state, self.loop.spec, self.loop.timer
        episode = state.episode
        returns = play_episode(self.loop, state)
        state.metrics += [{"episode": episode + j, "agent": name, "team": team, "return": float(ret),
                           "env_steps": state.env_steps, "update_rounds": state.update_rounds}
                          for j, per_copy in enumerate(returns)
                          for name, team, ret in zip(spec.agents, spec.teams, per_copy, strict=True)]
        state.episode += len(returns)
        self.run.advance(state.episode)
        every = self.settings.offpolicy.checkpoint_every
        periodic = bool(every) and state.episode // every > episode // every
        state.phases += timer.snapshot(episode=episode)
        if periodic:  # the row is saved with the state (seconds unknown yet), so a resumed run keeps it too
            state.phases.append({"episode": episode, "phase": "checkpoint", "seconds": float("nan"),
                                 "cpu_seconds": float("nan"), "calls": 1})
        start, start_cpu = time.perf_counter(), time.process_time()
        if self.run.save_due(periodic):  # a signal's save adds no row: counts stay equal
            self.save()
        if periodic:
            state.phases[-1] = {**state.phases[-1], "seconds": time.perf_counter() - start,
                                "cpu_seconds": time.process_time() - start_cpu}

    def save(self) -> None:
        self.run.save(self.state, self.state.episode)

    def where(self) -> str:
        """Where a stop leaves this run, for the stop's one-line message."""
        return f"at {self.state.episode} episodes; run state saved in {self.run.store.dir}"

    def finish(self) -> TrainState:
        """Close the environment; write metrics, phases and counters."""
        state, off = self.state, self.settings.offpolicy
        self.run.close_progress()
        self.loop.env.close()
        self.rundir.write_table("metrics", state.metrics)
        self.rundir.write_table("phases", state.phases)
        self.rundir.write_json("counters", {"episodes": state.episode, "env_steps": state.env_steps,
                                            "update_rounds": state.update_rounds,
                                            "resumed_from_episode": self.resumed_from,
                                            "device": str(self.loop.device),
                                            "env_backend": self.settings.env["backend"], "learner": off.learner})
        return state


def train_loop(cfg: dict, rundir: RunDir, make_learner) -> TrainState:
    """Run `cfg` with the learner built by `make_learner(settings, spec, device)` under the run harness (checkpoint
    with checksum, resume, signals, divergence guard); writes metrics and phases."""
    with harness.Process(OffPolicySettings.from_config(cfg).device) as process:
        trainer = Trainer(cfg, rundir, make_learner, process)
        while not trainer.done:
            trainer.step()
            process.stop_if_requested(trainer.where())
    return trainer.finish()  # outside the signal handlers, as every run's outputs are written


def run_interleaved(cfgs: list[dict], rundirs: list[RunDir]) -> list[bool]:
    """Train runs (paper 1's neighbor/uniform pairs) alternately in this process: round r plays one episode round
    of each unfinished run, in the given order when r is even and reversed when r is odd (A B B A A B …), so that
    whatever else loads the machine loads every run alike and neither is always first. Each run keeps its own
    global RNG states (torch, numpy, python: swapped in before its round and out after it) and its own timer,
    environment, sampler stream and learner, so it writes exactly what it writes when trained alone (`train_loop`);
    only its times differ. A stop signal saves every run at its safe point (all are between episodes) and stops.
    Returns, per run, whether it finished (all do, or an exception is raised)."""
    settings = [OffPolicySettings.from_config(cfg) for cfg in cfgs]
    with harness.Process(settings[0].device) as process:
        trainers, rngs = [], []
        for cfg, s, rundir in zip(cfgs, settings, rundirs, strict=True):
            harness.seed_everything(s.seed)  # what `effmarl train` does before a run alone
            trainers.append(Trainer(cfg, rundir, LEARNERS[s.algo, s.offpolicy.learner], process))
            rngs.append(harness.global_rng_states())
        order = list(range(len(trainers)))
        while not all(t.done for t in trainers):
            for i in order:
                trainer = trainers[i]
                if trainer.done:
                    continue
                harness.set_global_rng_states(rngs[i])
                trainer.step()
                rngs[i] = harness.global_rng_states()
                if process.stop_requested:  # each run saves with its own global RNG states (the state holds them)
                    for j, other in enumerate(trainers):
                        if other is not trainer:
                            harness.set_global_rng_states(rngs[j])
                            other.save()
                    process.stop_if_requested("; ".join(t.where() for t in trainers))
            order.reverse()
    for trainer in trainers:
        trainer.finish()
    return [True] * len(trainers)


def run(cfg: dict, rundir: RunDir) -> None:
    """`effmarl train` of a paper-1 run: the loop with the learner class `LEARNERS` names for `cfg`."""
    settings = OffPolicySettings.from_config(cfg)
    train_loop(cfg, rundir, LEARNERS[settings.algo, settings.offpolicy.learner])
