"""Value-based MARL on SMAC-like maps: QMIX, OW-QMIX (WQMIX) and RES-QMIX, with PyMARL's defaults.

One learner for the three (config `algo`), read top to bottom:
  collect  — `num_envs` parallel episodes with ε-greedy GRU agents (PyMARL's runner), into the episode buffer;
  train    — sample `batch_size` episodes, unroll agent and target agent over time, mix, build targets
             (double Q; one-step by default, n-step / λ on request), masked TD loss, RMSprop, clip;
             targets copied every `target_update_interval` episodes;
  evaluate — every `eval_every` env steps, `eval_episodes` greedy episodes: test win rate and return.

  qmix     — Q_tot from the monotonic QMIX mixer; target V(s') = target mixer at the double-Q actions.
  ow_qmix  — adds a central GRU agent and an unrestricted feed-forward central mixer Q*; targets come from
             the target Q* at QMIX's greedy actions; QMIX's squared error is weighted 1 where Q_tot is below
             the target and w (0.1) where it over-estimates it (Rashid et al. 2020, oxwhirl/wqmix).
  res_qmix — target V(s') is RES's softmax operator over n·m joint actions (one agent deviates from the
             greedy joint action), weights softmax(β Q_tot) from the online mixer; plus λ·(Q_tot − G_t)²
             with the discounted return G_t (Pan et al. 2021, ling-pan/RES).

The whole run state (networks, optimiser, RNG states, replay buffer, counters, metrics so far) lives in one
`QMIXRun` object; `save`/`load` write it to rundir.checkpoint_dir/state.pt atomically, and a run resumes
from there when the file exists.
"""

from __future__ import annotations

import copy
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from effmarl import io
from effmarl.config import ConfigError, config_hash
from effmarl.envs import make_env
from effmarl.nets.mixers import CentralFFMixer, QMixer
from effmarl.nets.rnn_agent import RNNAgent, agent_inputs, input_dim, linear_factory
from effmarl.profiling.phases import PhaseTimer
from effmarl.replay.episode import EpisodeBuffer, empty_batch, episode_scheme
from effmarl.runs import RunDir
from effmarl.targets.returns import discounted_returns, targets
from effmarl.train import seed_everything

NEG = -1e9  # stands for -inf on unavailable actions (finite, so that masked products stay finite)
REFERENCE_ENV_STEPS = 2_000_000  # the paper's budget; shorter budgets scale the ε schedule


def check_config(cfg: dict) -> None:
    """Cross-field checks the schema cannot express; raises ConfigError before any compute."""
    q, lines = cfg["qmix"], []
    if cfg["budget"].get("env_steps") is None:
        lines.append(f"field 'budget.env_steps': required for algo {cfg['algo']!r} (its budget is env steps)")
    if q["batch_size"] > q["buffer_size"]:
        lines.append(f"field 'qmix.batch_size': {q['batch_size']} exceeds qmix.buffer_size {q['buffer_size']}")
    if q["num_envs"] > q["buffer_size"]:
        lines.append(f"field 'qmix.num_envs': {q['num_envs']} exceeds qmix.buffer_size {q['buffer_size']}")
    if lines:
        raise ConfigError(lines, f"run {cfg.get('study', '?')}")


def effective_schedule(cfg: dict) -> dict:
    """The ε schedule actually used: scaled by budget / 2 M steps for shorter budgets (papers.md Decision)."""
    q, budget = cfg["qmix"], cfg["budget"]["env_steps"]
    scale = min(1.0, budget / REFERENCE_ENV_STEPS) if q["scale_schedules"] else 1.0
    return {"schedule_scale": scale, "epsilon_anneal_time": max(1, round(q["epsilon_anneal_time"] * scale)),
            "epsilon_start": q["epsilon_start"], "epsilon_finish": q["epsilon_finish"]}


def select_actions(q_values: torch.Tensor, avail: torch.Tensor, epsilon: float,
                   generator: torch.Generator) -> torch.Tensor:
    """ε-greedy over available actions only (PyMARL): the greedy action is the best available one, and a
    random action is uniform over the available ones. Returns CPU actions (the generator lives there)."""
    greedy = q_values.masked_fill(~avail, NEG).argmax(-1).cpu()
    if epsilon <= 0:
        return greedy
    flat = avail.reshape(-1, avail.shape[-1]).float().cpu()
    random = torch.multinomial(flat, 1, generator=generator).view(greedy.shape)
    explore = torch.rand(greedy.shape, generator=generator) < epsilon
    return torch.where(explore, random, greedy)


class Learner(nn.Module):
    """Networks, target networks and the optimiser of one qmix-family algorithm, and its update."""

    def __init__(self, algo: str, q: dict, n_agents: int, obs_dim: int, n_actions: int, state_dim: int):
        super().__init__()
        self.algo, self.q, self.n_agents, self.n_actions = algo, q, n_agents, n_actions
        linear = linear_factory(n_agents, q["shared_params"])
        in_dim = input_dim(obs_dim, n_actions, n_agents)
        self.agent = RNNAgent(in_dim, n_actions, q["rnn_hidden_dim"], linear)
        self.mixer = QMixer(n_agents, state_dim, q["mixing_embed_dim"], q["hypernet_embed"], q["hypernet_layers"])
        if algo == "ow_qmix":
            self.central_agent = RNNAgent(in_dim, n_actions, q["rnn_hidden_dim"], linear)
            self.central_mixer = CentralFFMixer(n_agents, state_dim, q["central_mixing_embed_dim"])
        self.target = copy.deepcopy(nn.ModuleDict({k: m for k, m in self.named_children()}))
        self.target.requires_grad_(False)
        self.optimiser = torch.optim.RMSprop(self.online_parameters(), lr=q["lr"], alpha=q["optim_alpha"],
                                             eps=q["optim_eps"])

    def online_parameters(self) -> list[nn.Parameter]:
        return [p for name, p in self.named_parameters() if not name.startswith("target.")]

    def update_targets(self) -> None:
        for name, module in self.target.items():
            module.load_state_dict(getattr(self, name).state_dict())

    @staticmethod
    def unroll(agent: RNNAgent, inputs: torch.Tensor) -> torch.Tensor:
        """Q-values [B, T+1, n, A] from agent inputs [B, T+1, n, in], the GRU carried over time."""
        return agent.unroll(inputs)

    def res_values(self, q_online: torch.Tensor, q_target: torch.Tensor, avail: torch.Tensor,
                   greedy: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
        """RES softmax operator: Σ_{(i,a)} softmax_{(i,a)}(β Q_tot(u*_{-i}, a)) · Q_tot^target(u*_{-i}, a)."""
        n, m = self.n_agents, self.n_actions
        eye = torch.eye(n, dtype=torch.bool, device=q_online.device).view(n, 1, n)

        def counterfactual(qs: torch.Tensor) -> torch.Tensor:  # [..., n, m] -> [..., n*m, n]
            at_greedy = qs.gather(-1, greedy.unsqueeze(-1)).squeeze(-1)  # [..., n]
            cf = torch.where(eye, qs.unsqueeze(-1), at_greedy[..., None, None, :])
            return cf.reshape(*qs.shape[:-2], n * m, n)

        masked_online = q_online.masked_fill(~avail, 0.0)
        masked_target = q_target.masked_fill(~avail, 0.0)
        online_tot = self.mixer.forward_many(counterfactual(masked_online), states)
        target_tot = self.target["mixer"].forward_many(counterfactual(masked_target), states)
        logits = (self.q["res_beta"] * online_tot).masked_fill(~avail.reshape(*avail.shape[:-2], n * m), NEG)
        return (torch.softmax(logits, dim=-1) * target_tot).sum(-1)

    @torch.no_grad()
    def td_targets(self, batch: dict[str, torch.Tensor], inputs: torch.Tensor, q_all: torch.Tensor) -> torch.Tensor:
        """Targets y [B, T]: bootstrap values V(s_t) for t = 0..T from the target networks, then the returns."""
        q, avail, states = self.q, batch["avail"], batch["state"]
        q_target = self.unroll(self.target["agent"], inputs)
        source = q_all if q["double_q"] else q_target
        greedy = source.masked_fill(~avail, NEG).argmax(-1)                       # [B, T+1, n]
        if self.algo == "ow_qmix":
            central_target = self.unroll(self.target["central_agent"], inputs)
            at_greedy = central_target.gather(-1, greedy.unsqueeze(-1)).squeeze(-1)
            values = self.target["central_mixer"](at_greedy, states)
        elif self.algo == "res_qmix":
            values = self.res_values(q_all, q_target, avail, greedy, states)
        else:
            values = self.target["mixer"](q_target.gather(-1, greedy.unsqueeze(-1)).squeeze(-1), states)
        return targets(q["return_kind"], batch["reward"], batch["terminated"], batch["filled"], values, q["gamma"],
                       q["n_step"], q["td_lambda"])

    def loss(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict]:
        q = self.q
        rewards, mask, actions, states = batch["reward"], batch["filled"], batch["actions"], batch["state"]
        last = torch.cat([torch.full_like(actions[:, :1], -1), actions[:, :-1]], dim=1)
        inputs = agent_inputs(batch["obs"], last, self.n_actions)

        q_all = self.unroll(self.agent, inputs)                                   # [B, T+1, n, A]
        chosen = q_all[:, :-1].gather(-1, actions[:, :-1].unsqueeze(-1)).squeeze(-1)
        q_tot = self.mixer(chosen, states[:, :-1])                                # [B, T]
        y = self.td_targets(batch, inputs, q_all.detach())

        n_valid = mask.sum().clamp(min=1)
        td = torch.where(mask, q_tot - y, torch.zeros_like(q_tot))
        stats = {}
        if self.algo == "ow_qmix":
            weights = torch.where(td < 0, torch.ones_like(td), torch.full_like(td, q["ow_w"]))
            central_q = self.unroll(self.central_agent, inputs)[:, :-1]
            central_chosen = central_q.gather(-1, actions[:, :-1].unsqueeze(-1)).squeeze(-1)
            central_td = torch.where(mask, self.central_mixer(central_chosen, states[:, :-1]) - y,
                                     torch.zeros_like(q_tot))
            central_loss = (central_td ** 2).sum() / n_valid
            loss = (weights * td ** 2).sum() / n_valid + q["central_loss"] * central_loss
            stats.update(central_loss=central_loss.item(), ow_weight_mean=float(weights[mask].mean()))
        else:
            loss = (td ** 2).sum() / n_valid
        if self.algo == "res_qmix":
            g = discounted_returns(rewards, mask, q["gamma"])
            reg = (torch.where(mask, q_tot - g, torch.zeros_like(q_tot)) ** 2).sum() / n_valid
            loss = loss + q["res_lambda"] * reg
            stats["res_regulariser"] = reg.item()
        n = float(n_valid)
        stats.update(td_error_abs=td.abs().sum().item() / n, q_taken_mean=(q_tot * mask).sum().item() / n,
                     target_mean=(y * mask).sum().item() / n)
        return loss, stats


class QMIXRun:
    """Everything one run needs and is: env, learner, buffer, RNGs, counters, metrics rows so far."""

    def __init__(self, cfg: dict, rundir: RunDir):
        check_config(cfg)
        seed_everything(cfg["seed"])  # network initialisation depends on the seed alone, whoever calls this
        self.cfg, self.rundir, self.q = cfg, rundir, cfg["qmix"]
        self.device = torch.device("cuda" if cfg["device"] == "auto" and torch.cuda.is_available()
                                   else "cpu" if cfg["device"] == "auto" else cfg["device"])
        self.schedule = effective_schedule(cfg)
        self.env = make_env(cfg["env"], self.q["num_envs"])
        self.eval_env = make_env(cfg["env"], self.q["eval_episodes"])
        spec = self.spec = self.env.spec
        self.n_agents, self.n_actions = spec.n_agents, max(spec.n_actions)
        self.learner = Learner(cfg["algo"], self.q, spec.n_agents, spec.obs_dims[0], self.n_actions,
                               spec.state_dim).to(self.device)
        self.scheme = episode_scheme(spec)
        self.buffer = EpisodeBuffer(self.scheme, self.q["buffer_size"], self.device)
        self.generator = torch.Generator().manual_seed(cfg["seed"])
        self.timer = PhaseTimer(sync=torch.cuda.synchronize if self.device.type == "cuda" else None)
        self.counters = {"env_steps": 0, "episodes": 0, "rounds": 0, "updates": 0, "evaluations": 0,
                         "last_target_update_episode": 0, "last_eval_step": None, "last_checkpoint_step": 0}
        self.window: dict[str, list[float]] = {}  # training stats since the last metrics row
        self.metrics: list[dict] = []
        self.phases: list[dict] = []
        self.elapsed = 0.0  # wall seconds of training before this process (resume)

    # ---- state ---------------------------------------------------------------------------------------
    @property
    def checkpoint_path(self) -> Path:
        return self.rundir.checkpoint_dir / "state.pt"

    def state_dict(self) -> dict:
        return {"config_hash": config_hash(self.cfg), "learner": self.learner.state_dict(),
                "optimiser": self.learner.optimiser.state_dict(), "buffer": self.buffer.state_dict(),
                "generator": self.generator.get_state(), "torch_rng": torch.get_rng_state(),
                "numpy_rng": np.random.get_state(), "counters": dict(self.counters),
                "window": copy.deepcopy(self.window), "metrics": list(self.metrics), "phases": list(self.phases),
                "elapsed": self.elapsed + time.perf_counter() - self._started}

    def load_state_dict(self, state: dict) -> None:
        if state["config_hash"] != config_hash(self.cfg):
            raise ConfigError([f"checkpoint {self.checkpoint_path} belongs to another configuration "
                               f"(hash {state['config_hash']} != {config_hash(self.cfg)}); remove it to start over"],
                              str(self.rundir.path))
        self.learner.load_state_dict(state["learner"])
        self.learner.optimiser.load_state_dict(state["optimiser"])
        self.buffer.load_state_dict(state["buffer"])
        self.generator.set_state(state["generator"])
        torch.set_rng_state(state["torch_rng"])
        np.random.set_state(state["numpy_rng"])
        self.counters, self.window = dict(state["counters"]), state["window"]
        self.metrics, self.phases, self.elapsed = list(state["metrics"]), list(state["phases"]), state["elapsed"]

    def save(self) -> None:
        self.counters["last_checkpoint_step"] = self.counters["env_steps"]
        with self.timer.phase("checkpoint"):
            state = self.state_dict()
            io.write_with(self.checkpoint_path, lambda tmp: torch.save(state, tmp))

    def load(self) -> bool:
        if not self.checkpoint_path.exists():
            return False
        self.load_state_dict(torch.load(self.checkpoint_path, map_location=self.device, weights_only=False))
        return True

    # ---- acting --------------------------------------------------------------------------------------
    def epsilon(self) -> float:
        s = self.schedule
        frac = min(1.0, self.counters["env_steps"] / s["epsilon_anneal_time"])
        return s["epsilon_start"] - frac * (s["epsilon_start"] - s["epsilon_finish"])

    def play(self, env, seed: int, epsilon: float, phases: bool = True) -> tuple[dict, dict]:
        """One episode in each copy of `env`; returns the episode batch and per-episode outcomes."""
        timer = self.timer if phases else PhaseTimer(enabled=False)
        n_env, limit = env.num_envs, self.spec.episode_limit
        batch = empty_batch(self.scheme, n_env)
        with timer.phase("env_step"):
            step = env.reset(seed=seed)
        active = np.ones(n_env, bool)
        returns, won = np.zeros(n_env), np.zeros(n_env, bool)
        h = self.learner.agent.init_hidden(n_env, self.n_agents)
        last = torch.full((n_env, self.n_agents), -1, dtype=torch.int64)
        obs, state, avail = _tensors(step)
        for t in range(limit):
            rows = torch.from_numpy(active)
            with timer.phase("buffer_add"):
                batch["obs"][rows, t], batch["state"][rows, t] = obs[rows], state[rows]
                batch["avail"][rows, t] = avail[rows]
            with timer.phase("action_selection"), torch.no_grad():
                inputs = agent_inputs(obs, last, self.n_actions).to(self.device)
                qs, h = self.learner.agent(inputs, h)
                actions = select_actions(qs, avail.to(self.device), epsilon, self.generator)
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

    # ---- training ------------------------------------------------------------------------------------
    def train_step(self) -> None:
        learner, q = self.learner, self.q
        with self.timer.phase("sampling"):
            batch = self.buffer.sample(q["batch_size"], self.generator)
        with self.timer.phase("learner_forward"):
            loss, stats = learner.loss(batch)
        with self.timer.phase("learner_backward"):
            learner.optimiser.zero_grad()
            loss.backward()
            grad_norm = nn.utils.clip_grad_norm_(learner.online_parameters(), q["grad_norm_clip"])
            learner.optimiser.step()
        self.counters["updates"] += 1
        episodes = self.counters["episodes"]
        if (episodes - self.counters["last_target_update_episode"]) / q["target_update_interval"] >= 1.0:
            with self.timer.phase("target_update"):
                learner.update_targets()
            self.counters["last_target_update_episode"] = episodes
        self._record(loss=loss.item(), grad_norm=float(grad_norm), **stats)

    def _record(self, **values: float) -> None:
        for key, value in values.items():
            self.window.setdefault(key, []).append(float(value))

    def evaluate(self) -> dict:
        with self.timer.phase("evaluation"):
            seed = 1_000_003 * (self.cfg["seed"] + 1) + 7919 * self.counters["evaluations"] + 2**30
            _, out = self.play(self.eval_env, seed % 2**31, epsilon=0.0, phases=False)
        self.counters["evaluations"] += 1
        return {"test_win_rate": float(out["won"].mean()), "test_return": float(out["return"].mean()),
                "test_episode_length": float(out["length"].mean())}

    def log_row(self) -> None:
        c = self.counters
        test = self.evaluate()
        row = {"env_steps": c["env_steps"], "episodes": c["episodes"], "updates": c["updates"],
               "epsilon": self.epsilon(), **test,
               "wall_s": self.elapsed + time.perf_counter() - self._started}
        for key in ("return", "won", "length", "loss", "grad_norm", "td_error_abs", "q_taken_mean", "target_mean",
                    "central_loss", "ow_weight_mean", "res_regulariser"):
            values = self.window.get(key)
            name = {"return": "train_return", "won": "train_win_rate", "length": "train_episode_length"}.get(key, key)
            row[name] = float(np.mean(values)) if values else float("nan")
        row.update({k: v for k, v in self.schedule.items()})
        self.metrics.append(row)
        self.phases += self.timer.snapshot(env_steps=c["env_steps"])
        self.window = {}
        c["last_eval_step"] = c["env_steps"]

    def run(self, stop_after: int | None = None) -> bool:
        """Train to the budget; True when finished. `stop_after` (tests) stops after the first checkpoint at or
        beyond that many env steps, as a crash would, leaving the checkpoint behind."""
        self._started = time.perf_counter()
        resumed = self.load()
        q, c, budget = self.q, self.counters, self.cfg["budget"]["env_steps"]
        progress = _progress(budget, c["env_steps"], resumed, self.cfg)
        if c["last_eval_step"] is None:
            self.log_row()  # PyMARL evaluates at step 0
        while c["env_steps"] < budget:
            seed = (self.cfg["seed"] * 1_000_003 + c["rounds"] * q["num_envs"]) % 2**31
            batch, out = self.play(self.env, seed, self.epsilon())
            steps = int(out["length"].sum())
            c["env_steps"] += steps
            c["episodes"] += self.env.num_envs
            c["rounds"] += 1
            for key in ("return", "won", "length"):
                self.window.setdefault(key, []).extend(map(float, out[key]))
            with self.timer.phase("buffer_add"):
                self.buffer.add(batch)
            if self.buffer.can_sample(q["batch_size"]):
                for _ in range(q["updates_per_round"]):
                    self.train_step()
            progress.update(steps)
            if c["env_steps"] - c["last_eval_step"] >= q["eval_every"] or c["env_steps"] >= budget:
                self.log_row()
                last = self.metrics[-1]
                progress.set_postfix(test_win=f"{last['test_win_rate']:.2f}", ret=f"{last['test_return']:.2f}")
                progress.write(f"env_steps {c['env_steps']}: test win rate {last['test_win_rate']:.3f}, test return "
                               f"{last['test_return']:.3f}, train return {last['train_return']:.3f}, "
                               f"epsilon {last['epsilon']:.3f}, wall {last['wall_s']:.0f} s", file=sys.stderr)
            if c["env_steps"] - c["last_checkpoint_step"] >= q["checkpoint_every"] and c["env_steps"] < budget:
                self.save()
                if stop_after is not None and c["env_steps"] >= stop_after:
                    progress.close()
                    return False
        progress.close()
        return True

    def finish(self) -> None:
        self.rundir.write_table("metrics", self.metrics)
        self.rundir.write_table("phases", self.phases)
        self.rundir.write_json("schedule", {**self.schedule, "reference_env_steps": REFERENCE_ENV_STEPS,
                                            "note": "epsilon_anneal_time scaled by budget / reference when "
                                                    "qmix.scale_schedules (papers.md, paper 2 Decisions)"})
        io.write_with(self.rundir.path / "model.pt",
                      lambda tmp: torch.save({k: v for k, v in self.learner.state_dict().items()
                                              if not k.startswith("target.")}, tmp))
        if not self.q["keep_checkpoint"] and self.checkpoint_path.exists():
            self.checkpoint_path.unlink()
        self.env.close()
        self.eval_env.close()


def _tensors(step) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """obs [E, n, obs_dim], state [E, state_dim], avail [E, n, A] of a Step, sharing its numpy memory (read
    only: the SMAX arrays are views of JAX buffers; these tensors are only read, never written)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return (torch.from_numpy(np.stack(step.obs, axis=1)), torch.from_numpy(step.state),
                torch.from_numpy(step.avail_actions))


def _progress(total: int, initial: int, resumed: bool, cfg: dict):
    from tqdm import tqdm

    interactive = sys.stderr.isatty()
    desc = f"{cfg['algo']} {cfg['env'].get('map', '')} seed {cfg['seed']}" + (" (resumed)" if resumed else "")
    return tqdm(total=total, initial=initial, desc=desc, unit="step", mininterval=1 if interactive else 30,
                disable=os.environ.get("EFFMARL_NO_PROGRESS") == "1", file=sys.stderr)


def run(cfg: dict, rundir: RunDir, stop_after: int | None = None) -> None:
    state = QMIXRun(cfg, rundir)
    if state.run(stop_after=stop_after):
        state.finish()


