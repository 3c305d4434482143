"""Train one seed, or S seeds of one configuration in lockstep, of QMIX / OW-QMIX / RES-QMIX, top to bottom.

    build    every seed seeded as a separate run would be: its learner (networks, masks), replay buffer,
             generator and counters; the learners stacked along a seed axis (lockstep.py); one episode runner
             for all seeds (runner.py)
    resume   each seed from its own checkpoint, when present (the budget and threads may have changed since)
    loop     until every seed has spent its budget:
               collect one episode batch per seed (ε from the seed's own env steps) and store it
               once the buffers can sample: updates_per_round × (a batch per seed, one stacked update)
               copy the target networks every target_update_interval episodes
               evaluate a seed at every multiple of eval_every it has passed (rows carry that grid step)
               checkpoint every checkpoint_every env steps
               a seed that spent its budget writes its outputs and leaves
The run harness (effmarl.harness) runs it: one `Process` (device, stop signals) for all seeds, a `Run` per seed
(its checkpoint store: refused checkpoints, resume). The end of a round is the safe point: after SIGTERM/SIGINT
every unfinished seed saves there, then the process stops (exit 128 + signal), for 1 seed as for S. Reset seeds
come from the harness too: copy j of the round that starts at the seed's episode e plays episode e + j
(`harness.episode_seed`), evaluation copies the next evaluation episodes (`harness.evaluation_seed`).
Each seed writes its own run directory (metrics, phases, model, accounting), so downstream tables see ordinary
runs; its phases rows are the shared loop's time (column lockstep_seeds says how many seeds shared it).
"""

from __future__ import annotations

import copy
import shutil
import sys
import time

import numpy as np
import torch

from effmarl import harness, io
from effmarl.algos.qmix.accounting import write_accounting
from effmarl.algos.qmix.learner import Learner
from effmarl.algos.qmix.lockstep import SeedStack
from effmarl.algos.qmix.networks import tiny_hyper
from effmarl.algos.qmix.runner import make_runner
from effmarl.algos.qmix.settings import QmixSettings, epsilon, target_kind
from effmarl.algos.qmix.tickets import install_weights, load_ticket
from effmarl.config import ConfigError
from effmarl.methods import method
from effmarl.profiling.phases import PhaseTimer
from effmarl.replay import episode
from effmarl.replay.dual import DualReplay
from effmarl.replay.dynamic import DynamicWindow
from effmarl.replay.episode import EpisodeBuffer
from effmarl.runs import RunDir
from effmarl.schedules import REFERENCE_ENV_STEPS
from effmarl.sparse.allocation import agent_shares

STATS = ("loss", "grad_norm", "td_error_abs", "q_taken_mean", "target_mean", "return_mean", "central_loss",
         "ow_weight_mean", "res_regulariser", "lambda_returns", "policy_distance", "buffer_window")


def build_learner(settings: QmixSettings, spec, schedule: dict, device, ticket: dict | None = None) -> Learner:
    """The seed's learner, its networks initialised from the global torch RNG (seed it first). Tiny narrows every
    width so that the dense network keeps as many weights as the sparse model would (networks.tiny_hyper; its
    widths are added to `schedule`, the run's record of its effective schedule). A ticket (tickets.load_ticket)
    gives the initial masks, and for a cheating ticket the initial weights."""
    q = settings.qmix
    dims = (spec.n_agents, spec.obs_dims[0], max(spec.n_actions), spec.state_dim)
    if method(settings.method).start == "narrow":
        q, tiny = tiny_hyper(settings.algo, q, *dims, settings.sparsity)
        schedule.update(tiny)
    learner = Learner(settings.algo, q, *dims, sparse=dict(settings.sparse), mellowmax=settings.mellowmax,
                      seed=settings.seed, device=device, initial_masks=ticket["masks"] if ticket else None,
                      agent_shares=shares(settings, spec))
    if ticket and ticket["weights"] is not None:
        install_weights(learner, ticket["weights"])
    return learner


def shares(settings: QmixSettings, spec) -> list[float] | None:
    """Each agent's relative budget under sparse.allocation (None: learned); one line naming the field if the
    env's unit types do not fit sparse.type_density."""
    if not method(settings.method).masks:
        return None
    try:
        return agent_shares(settings.sparse, spec.unit_types, spec.n_agents)
    except ValueError as exc:
        field, problem = exc.args
        raise ConfigError([f"field '{field}': {problem} (env.map {settings.env.get('map')!r})"],
                          f"run {settings.study} seed {settings.seed}") from None


class SeedRun:
    """One seed's share of a run: settings, run directory, buffer, generator, counters, metrics rows so far.

    `cfg`, the validated run config, is the run's record: the harness hashes it into the checkpoints and a ticket
    compares it with its source run's; everything else reads `settings` (QmixSettings, resolved once here)."""

    def __init__(self, cfg: dict, rundir: RunDir, spec, process: harness.Process, timer: PhaseTimer):
        ticket = load_ticket(cfg, spec)  # a winning / cheating ticket's source, checked before anything is built
        self.settings = settings = QmixSettings.from_config(cfg)
        self.budget = settings.budget_env_steps
        # the run harness: a checkpoint of another configuration, past the budget or corrupted is refused here,
        # before anything is built; stray temporary files of an earlier kill are removed. The device and the stop
        # signals are the process's, shared by every seed in lockstep
        self.harness = harness.Run(cfg, rundir, budget_field="budget.env_steps", budget=self.budget,
                                   unit="env_steps", process=process)
        device = process.device
        harness.seed_everything(settings.seed)  # network initialisation depends on the seed alone
        self.rundir, self.q, self.spec, self.timer = rundir, settings.qmix, spec, timer
        self.schedule = dict(settings.schedule)  # + Tiny's widths (build_learner): schedule.json, metrics rows
        self.on = settings.components
        self.learner = build_learner(settings, spec, self.schedule, device, ticket)
        self.buffer = self.make_buffer(device)
        self.generator = torch.Generator().manual_seed(settings.seed)
        self.counters = {"env_steps": 0, "episodes": 0, "rounds": 0, "updates": 0, "evaluations": 0,
                         "next_eval": 0, "last_target_update_episode": 0, "last_checkpoint_step": 0}
        self.window: dict[str, list[float]] = {}  # training stats since the last metrics row
        self.metrics: list[dict] = []
        self.phases: list[dict] = []
        self.phase_mark = timer.mark()
        self.elapsed = 0.0  # wall seconds of training before this process (resume)
        self.started = time.perf_counter()
        self.done = self.finished = False
        self.stack, self.index = None, None  # set by `join`

    def make_buffer(self, device):
        """The episode buffer; MAST's dual buffer (B1 + B2) or RLx2's dynamic window when switched on."""
        q, scheme, s = self.q, episode.episode_scheme(self.spec), self.settings
        if s.dual_buffer:
            d = s.dual_buffer
            return DualReplay.build(lambda capacity: EpisodeBuffer(scheme, capacity, device), q.buffer_size,
                                    ratio=d["size_ratio"], split=(d["batch_ratio"], 1), concat=episode.concat)
        if s.dynamic_buffer:
            d = s.dynamic_buffer
            return DynamicWindow(EpisodeBuffer(scheme, q.buffer_size, device), d["initial_episodes"],
                                 q.buffer_size, d["threshold"], d["shrink_episodes"], d["grow_episodes"],
                                 minimum=q.batch_size)
        return EpisodeBuffer(scheme, q.buffer_size, device)

    # ---- per round ---------------------------------------------------------------------------------------
    def env_seed(self) -> int:
        """The reset seed of this round's episode batch (copy j: + j), the harness's for its first episode."""
        return harness.episode_seed(self.settings.seed, self.counters["episodes"])

    def eval_seed(self) -> int:
        """The reset seed of the next evaluation's episodes (copy j: + j), the harness's for its first one."""
        return harness.evaluation_seed(self.settings.seed, self.counters["evaluations"] * self.q.eval_episodes)

    def epsilon(self) -> float:
        return epsilon(self.schedule, self.counters["env_steps"])

    def kind(self) -> tuple[str, int, float]:
        return target_kind(self.settings.returns, self.counters["env_steps"])

    def store(self, batch: dict, out: dict) -> None:
        c = self.counters
        c["env_steps"] += int(out["length"].sum())
        c["episodes"] += len(out["length"])
        c["rounds"] += 1
        for key in ("return", "won", "length"):
            self.window.setdefault(key, []).extend(map(float, out[key]))
        with self.timer.phase("buffer_add"):
            self.buffer.add(batch)

    def after_update(self, stack: SeedStack, s: int, loss, grad_norm, stats: dict, kind) -> None:
        c, dynamic = self.counters, self.settings.dynamic_buffer
        c["updates"] += 1
        # divergence guard: a NaN/Inf loss or gradient stops the run; the last good checkpoint is kept
        harness.check_value("learner", c["updates"], "loss", loss)
        harness.check_value("learner", c["updates"], "gradient norm", grad_norm)
        values = {k: float(v) for k, v in stats.items()}
        values["lambda_returns"] = float(kind[0] != "one_step")
        if dynamic and c["updates"] % dynamic["check_every"] == 0:
            with self.timer.phase("sampling"):
                oldest = self.buffer.oldest(dynamic["check_episodes"])
                distance = self.learner.policy_distance(oldest)
                self.buffer.adjust(distance)
            values.update(policy_distance=distance, buffer_window=self.buffer.window)
        if (c["episodes"] - c["last_target_update_episode"]) / self.q.target_update_interval >= 1.0:
            with self.timer.phase("target_update"):
                stack.update_targets(s)
            c["last_target_update_episode"] = c["episodes"]
        self.record(loss=float(loss), grad_norm=float(grad_norm), **values)

    def record(self, **values: float) -> None:
        for key, value in values.items():
            self.window.setdefault(key, []).append(float(value))

    def eval_due(self) -> int | None:
        """The grid step (a multiple of eval_every; the budget at the end) to evaluate at now, or None."""
        c, every = self.counters, self.q.eval_every
        if c["env_steps"] >= c["next_eval"]:
            return c["env_steps"] // every * every
        return self.budget if c["env_steps"] >= self.budget else None

    def log_row(self, grid_step: int, test: dict, lockstep_seeds: int) -> None:
        c = self.counters
        row = {"env_steps": c["env_steps"], "eval_step": grid_step, "episodes": c["episodes"], "updates": c["updates"],
               "epsilon": self.epsilon(), **test, "wall_s": self.elapsed + time.perf_counter() - self.started}
        for key in ("return", "won", "length", *STATS):
            values = self.window.get(key)
            name = {"return": "train_return", "won": "train_win_rate", "length": "train_episode_length"}.get(key, key)
            row[name] = float(np.mean(values)) if values else float("nan")
        row.update(self.schedule)
        if self.learner.sparse:
            row.update(density=self.learner.sparse.topology.density(),
                       topology_updates=len(self.learner.sparse.history))
        self.metrics.append(row)
        self.phases += self.timer.since(self.phase_mark, env_steps=c["env_steps"], lockstep_seeds=lockstep_seeds)
        self.phase_mark = self.timer.mark()
        self.window = {}
        c["evaluations"] += 1
        c["next_eval"] = max(c["next_eval"], grid_step + self.q.eval_every)

    # ---- state (saved and restored by the run harness, with a checksum) ------------------------------------
    def join(self, stack: SeedStack, index: int) -> bool:
        """Take slot `index` of the lockstep stack; resume from this seed's checkpoint if it has one."""
        self.stack, self.index = stack, index
        return self.harness.restore(self) is not None

    def state_dict(self) -> dict:
        return {**self.stack.seed_state(self.index), "buffer": self.buffer.state_dict(),
                "generator": self.generator.get_state(), "counters": dict(self.counters),
                "window": copy.deepcopy(self.window), "metrics": list(self.metrics), "phases": list(self.phases),
                "elapsed": self.elapsed + time.perf_counter() - self.started}

    def load_state_dict(self, state: dict) -> None:
        self.stack.load_seed_state(self.index, state)
        self.buffer.load_state_dict(state["buffer"])
        self.generator.set_state(state["generator"])
        self.counters, self.window = dict(state["counters"]), state["window"]
        self.metrics, self.phases, self.elapsed = list(state["metrics"]), list(state["phases"]), state["elapsed"]

    def checkpoint_due(self) -> bool:
        """This seed's share of the round's safe point: save every checkpoint_every env steps, and when a stop was
        requested (then `run_lockstep` stops the process once every unfinished seed has saved). True if saved."""
        c = self.counters
        if not self.harness.save_due(c["env_steps"] - c["last_checkpoint_step"] >= self.q.checkpoint_every):
            return False
        c["last_checkpoint_step"] = c["env_steps"]
        with self.timer.phase("checkpoint"):
            self.harness.save(self, c["env_steps"])
        return True

    def finish(self) -> None:
        self.rundir.write_table("metrics", self.metrics)
        self.rundir.write_table("phases", self.phases)
        self.rundir.write_json("schedule", {**self.schedule, "reference_env_steps": REFERENCE_ENV_STEPS,
                                            "components": dict(self.on), "method": self.settings.method,
                                            "note": "epsilon_anneal_time and delta_m scaled by budget / reference "
                                                    "when qmix.scale_schedules; T0 and RLx2's delay are fractions "
                                                    "of the budget (docs/specification.md, paper 2 Decisions)"})
        io.write_with(self.rundir.path / "model.pt",
                      lambda tmp: torch.save({k: v.clone() for k, v in self.learner.state_dict().items()
                                              if not k.startswith("target.")}, tmp))
        full_width = None
        if method(self.settings.method).start == "narrow":  # Tiny: ratios against the full-width dense model
            spec = self.spec
            full_width = Learner(self.settings.algo, self.q, spec.n_agents, spec.obs_dims[0],
                                 max(spec.n_actions), spec.state_dim)
        write_accounting(self.rundir, self.learner, self.settings, self.spec.episode_limit, full_width,
                         unit_types=self.spec.unit_types, updates=self.counters["updates"])
        if not self.q.keep_checkpoint:
            shutil.rmtree(self.rundir.checkpoint_dir, ignore_errors=True)
        self.done = self.finished = True


def preflight(cfg: dict) -> None:
    """Checks that need files or the env, before any run is built (`effmarl train`): a ticket's source run, the
    unit types of a by_type allocation."""
    load_ticket(cfg)
    settings = QmixSettings.from_config(cfg)
    if settings.sparse["allocation"] == "by_type":
        from effmarl.envs import make_env

        env = make_env(settings.env, 1)
        shares(settings, env.spec)
        env.close()


def check_lockstep(cfgs: list[dict]) -> None:
    """Seeds trained together must share every setting but the seed."""
    first = {k: v for k, v in cfgs[0].items() if k != "seed"}
    for cfg in cfgs[1:]:
        if {k: v for k, v in cfg.items() if k != "seed"} != first:
            raise ConfigError([f"lockstep: run with seed {cfg['seed']} differs from seed {cfgs[0]['seed']} in more "
                               "than its seed; only seeds of one configuration can train together"])
    seeds = [cfg["seed"] for cfg in cfgs]
    if len(set(seeds)) != len(seeds):
        raise ConfigError([f"lockstep: seeds must differ, got {seeds}"])


def run_lockstep(cfgs: list[dict], rundirs: list[RunDir], stop_after: int | None = None) -> list[bool]:
    """Train the seeds of `cfgs` (one configuration, different seeds) together, each into its run directory;
    returns, per seed, True when it finished. `stop_after` (tests) stops after the first checkpoint at or beyond
    that many env steps, as a crash would, leaving the checkpoints behind."""
    check_lockstep(cfgs)
    settings, n = QmixSettings.from_config(cfgs[0]), len(cfgs)  # equal but for the seed
    # the run harness: one device and one set of stop signals for the process; SIGTERM / SIGINT are acted on at
    # the end of a collection round, where every unfinished seed saves before the process stops
    with harness.Process(settings.device) as process:
        device = process.device
        timer = PhaseTimer(sync=torch.cuda.synchronize if device.type == "cuda" else None)
        runner = make_runner(settings, n, device, timer)
        seeds = [SeedRun(c, d, runner.spec, process, timer) for c, d in zip(cfgs, rundirs, strict=True)]
        stack = SeedStack([s.learner for s in seeds])
        resumed = [s.join(stack, i) for i, s in enumerate(seeds)]
        progress = _progress(sum(s.budget for s in seeds), sum(s.counters["env_steps"] for s in seeds),
                             any(resumed), cfgs[0], n)

        def evaluate(due: list[int]) -> None:
            with timer.phase("evaluation"):
                outs = runner.evaluate([s.learner.agent for s in seeds], [s.eval_seed() for s in seeds])
            for i in due:
                s, out = seeds[i], outs[i]
                test = {"test_win_rate": float(out["won"].mean()), "test_return": float(out["return"].mean()),
                        "test_episode_length": float(out["length"].mean())}
                s.log_row(s.eval_due(), test, n)
                progress.write(f"seed {s.settings.seed} env_steps {s.counters['env_steps']}: test win rate "
                               f"{test['test_win_rate']:.3f}, test return {test['test_return']:.3f}, epsilon "
                               f"{s.epsilon():.3f}, wall {s.metrics[-1]['wall_s']:.0f} s", file=sys.stderr)

        if any(s.counters["evaluations"] == 0 for s in seeds):
            evaluate([i for i, s in enumerate(seeds) if s.counters["evaluations"] == 0])  # PyMARL: at step 0
        while not all(s.done for s in seeds):
            active = [i for i, s in enumerate(seeds) if not s.done]
            before = sum(s.counters["env_steps"] for s in seeds)
            collect_round(seeds, runner, active)
            progress.update(sum(s.counters["env_steps"] for s in seeds) - before)
            learning = [i for i in active if seeds[i].buffer.can_sample(settings.qmix.batch_size)]
            update_round(seeds, stack, timer, learning)
            due = [i for i in active if seeds[i].eval_due() is not None]
            if due:
                evaluate(due)
            # the safe point: a seed that spent its budget finishes; every other one saves when due or stopping
            for i in active:
                s = seeds[i]
                if s.counters["env_steps"] >= s.budget:
                    s.finish()
                elif s.checkpoint_due() and stop_after is not None and s.counters["env_steps"] >= stop_after:
                    s.done = True  # as if killed: its checkpoint stays, no outputs
            if not all(s.done for s in seeds):
                process.stop_if_requested("at the end of a collection round; every unfinished seed's run state is "
                                          "saved in its checkpoint/")
    progress.close()
    runner.close()
    return [s.finished for s in seeds]


def collect_round(seeds: list[SeedRun], runner, active: list[int]) -> None:
    """One episode batch per seed (every seed plays: one program; only the active seeds keep theirs)."""
    results = runner.collect([s.learner.agent for s in seeds], [s.env_seed() for s in seeds],
                             [s.epsilon() for s in seeds], [s.generator for s in seeds])
    for i in active:
        seeds[i].store(*results[i])


def update_round(seeds: list[SeedRun], stack: SeedStack, timer: PhaseTimer, learning: list[int]) -> None:
    """qmix.updates_per_round stacked updates of the seeds in `learning` (each samples its own batch)."""
    if not learning:
        return
    q = seeds[learning[0]].q
    for _ in range(q.updates_per_round):
        with timer.phase("sampling"):
            batches = [seeds[i].buffer.sample(q.batch_size, seeds[i].generator) for i in learning]
        kinds = [seeds[i].kind() for i in learning]
        with timer.phase("learner_forward"):
            total, losses, stats = stack.losses(batches, kinds, learning)
        with timer.phase("learner_backward"):
            norms = stack.step(total, learning, [seeds[i].counters["updates"] + 1 for i in learning],
                               [seeds[i].counters["env_steps"] / seeds[i].budget for i in learning])
        for j, i in enumerate(learning):
            seeds[i].after_update(stack, i, losses[j], norms[i], stats[j], kinds[j])


def run(cfg: dict, rundir: RunDir, stop_after: int | None = None) -> bool:
    """One seed: the lockstep loop with S = 1."""
    return run_lockstep([cfg], [rundir], stop_after)[0]


def _progress(total: int, initial: int, resumed: bool, cfg: dict, n_seeds: int):
    """The harness's progress display over the seeds' summed env-step budgets."""
    return harness.progress(total, initial=initial, desc=harness.progress_label(cfg, n_seeds, resumed), unit="step")
