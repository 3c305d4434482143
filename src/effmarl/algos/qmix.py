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

MAST (issue 6; config sections sparse, mellowmax, mast, rlx2; docs/mast.md) switches, each visible below:
  sparse topology — agent (per-agent weights), mixer + hypernetworks and OW-QMIX's central networks under one
             budget (sparse/), masks kept after every step, evolved every Δm updates (static / SET / RigL),
             copied to the targets at every sync; Tiny = a dense network narrowed to the sparse parameter count;
  Soft Mellowmax — per-agent soft_mellowmax over available actions replaces the (double-Q) max in the target;
  hybrid TD(λ) — one-step targets before T0, λ-returns after; RLx2 — n-step targets after a delay;
  dual buffer — batches of b1 + b2 episodes from a large and a small FIFO buffer; RLx2's dynamic window;
  accounting — FLOPs and size from the final masks (sparsity.parquet, layers.parquet, agent_masks.parquet).

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
from effmarl.replay import episode
from effmarl.replay.dual import DualReplay
from effmarl.replay.dynamic import DynamicWindow
from effmarl.replay.episode import EpisodeBuffer, empty_batch, episode_scheme
from effmarl.runs import RunDir
from effmarl.sparse import SparseTraining, flops
from effmarl.sparse.tiny import dense_param_count, tiny_width
from effmarl.targets.mellowmax import soft_mellowmax
from effmarl.targets.returns import discounted_returns, targets
from effmarl.train import seed_everything

NEG = -1e9  # stands for -inf on unavailable actions (finite, so that masked products stay finite)
REFERENCE_ENV_STEPS = 2_000_000  # the paper's budget; shorter budgets scale the ε schedule


def mast_components(cfg: dict) -> dict[str, bool]:
    """Which MAST / RLx2 parts are on: `enabled: null` follows sparse.method, true/false switches a part alone."""
    method = cfg["sparse"]["method"]

    def on(section: dict, default: bool) -> bool:
        return default if section["enabled"] is None else bool(section["enabled"])

    return {"mellowmax": on(cfg["mellowmax"], method == "mast"),
            "td_lambda": on(cfg["mast"]["td_lambda"], method == "mast"),
            "dual_buffer": on(cfg["mast"]["dual_buffer"], method == "mast"),
            "multi_step": on(cfg["rlx2"]["multi_step"], method == "rlx2"),
            "dynamic_buffer": on(cfg["rlx2"]["dynamic_buffer"], method == "rlx2")}


def check_config(cfg: dict) -> None:
    """Cross-field checks the schema cannot express; raises ConfigError before any compute."""
    q, lines = cfg["qmix"], []
    on, method = mast_components(cfg), cfg["sparse"]["method"]
    if method != "dense" and q["shared_params"]:
        lines.append(f"field 'qmix.shared_params': sparse.method {method!r} needs per-agent networks; "
                     "set qmix.shared_params: false")
    if on["td_lambda"] and on["multi_step"]:
        lines.append("field 'mast.td_lambda.enabled': hybrid TD(lambda) and rlx2.multi_step cannot both be on")
    if on["dual_buffer"] and on["dynamic_buffer"]:
        lines.append("field 'mast.dual_buffer.enabled': the dual buffer and rlx2.dynamic_buffer cannot both be on")
    if (on["td_lambda"] or on["multi_step"]) and q["return_kind"] != "one_step":
        lines.append(f"field 'qmix.return_kind': {q['return_kind']!r} conflicts with a hybrid target "
                     "(mast.td_lambda / rlx2.multi_step start from one-step targets); leave it one_step")
    if on["dual_buffer"]:
        d = cfg["mast"]["dual_buffer"]
        small, n_small = q["buffer_size"] // d["size_ratio"], q["batch_size"] - round(
            q["batch_size"] * d["batch_ratio"] / (d["batch_ratio"] + 1))
        if small < max(n_small, q["num_envs"]):
            lines.append(f"field 'mast.dual_buffer.size_ratio': B2 = qmix.buffer_size // {d['size_ratio']} = "
                         f"{small} episodes cannot hold its {n_small} per batch or the {q['num_envs']} per round")
    if on["dynamic_buffer"] and cfg["rlx2"]["dynamic_buffer"]["initial_episodes"] < q["batch_size"]:
        lines.append("field 'rlx2.dynamic_buffer.initial_episodes': smaller than qmix.batch_size")
    if cfg["budget"].get("env_steps") is None:
        lines.append(f"field 'budget.env_steps': required for algo {cfg['algo']!r} (its budget is env steps)")
    if q["batch_size"] > q["buffer_size"]:
        lines.append(f"field 'qmix.batch_size': {q['batch_size']} exceeds qmix.buffer_size {q['buffer_size']}")
    if q["num_envs"] > q["buffer_size"]:
        lines.append(f"field 'qmix.num_envs': {q['num_envs']} exceeds qmix.buffer_size {q['buffer_size']}")
    if lines:
        raise ConfigError(lines, f"run {cfg.get('study', '?')}")


def effective_schedule(cfg: dict) -> dict:
    """The schedules actually used. Budgets below 2 M env steps scale the ε schedule and the topology interval Δm
    by budget / 2 M (papers.md Decision); T0 (hybrid TD(λ)) and RLx2's delay are fractions of the budget, so
    they scale with it by construction."""
    q, budget = cfg["qmix"], cfg["budget"]["env_steps"]
    scale = min(1.0, budget / REFERENCE_ENV_STEPS) if q["scale_schedules"] else 1.0
    out = {"schedule_scale": scale, "epsilon_anneal_time": max(1, round(q["epsilon_anneal_time"] * scale)),
           "epsilon_start": q["epsilon_start"], "epsilon_finish": q["epsilon_finish"]}
    if "sparse" in cfg:
        out["delta_m"] = max(1, round(cfg["sparse"]["delta_m"] * scale))
        out["burn_in_env_steps"] = round(cfg["mast"]["td_lambda"]["burn_in_fraction"] * budget)
        out["multi_step_delay_env_steps"] = round(cfg["rlx2"]["multi_step"]["delay_fraction"] * budget)
    return out


def tiny_hyper(q: dict, n_agents: int, in_dim: int, n_actions: int, state_dim: int,
               sparsity: float) -> tuple[dict, dict]:
    """Tiny: the qmix settings of a dense per-agent model whose weight count matches the sparse model's.
    Every width (GRU hidden h, mixer embedding, hypernetwork and OW-QMIX central widths) shrinks by the same
    factor h / rnn_hidden_dim; h comes from sparse/tiny.py's width search. (OW-QMIX's central networks are
    outside this count, so a Tiny OW-QMIX's central nets shrink by the same factor only.)"""
    h0 = q["rnn_hidden_dim"]

    def scaled(width: int):
        return lambda h: max(1, round(width * h / h0))

    embed, hyper = scaled(q["mixing_embed_dim"]), scaled(q["hypernet_embed"])
    spec = [("linear", in_dim, "h"), ("gru", "h", "h"), ("linear", "h", n_actions)] * n_agents
    if q["hypernet_layers"] == 2:
        spec += [("linear", state_dim, hyper), ("linear", hyper, lambda h: embed(h) * n_agents),
                 ("linear", state_dim, hyper), ("linear", hyper, embed)]
    else:
        spec += [("linear", state_dim, lambda h: embed(h) * n_agents), ("linear", state_dim, embed)]
    spec += [("linear", state_dim, embed), ("linear", state_dim, embed), ("linear", embed, 1)]
    target = round((1.0 - sparsity) * dense_param_count(spec, h0))  # the sparse model's exact budget
    h = tiny_width(spec, target)
    narrow = {**q, "rnn_hidden_dim": h, "mixing_embed_dim": embed(h), "hypernet_embed": hyper(h),
              "central_mixing_embed_dim": scaled(q["central_mixing_embed_dim"])(h)}
    return narrow, {"tiny_width": h, "tiny_target_params": target, "tiny_params": dense_param_count(spec, h)}


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
    """Networks, target networks and the optimiser of one qmix-family algorithm, and its update.

    sparse: the run's `sparse:` section with the effective delta_m (None or method dense/tiny: no masks);
    mellowmax: {"alpha", "omega"} when Soft Mellowmax replaces the max in the target, else None."""

    def __init__(self, algo: str, q: dict, n_agents: int, obs_dim: int, n_actions: int, state_dim: int, *,
                 sparse: dict | None = None, mellowmax: dict | None = None, seed: int = 0, device="cpu"):
        super().__init__()
        self.algo, self.q, self.n_agents, self.n_actions, self.mellowmax = algo, q, n_agents, n_actions, mellowmax
        linear = linear_factory(n_agents, q["shared_params"])
        in_dim = input_dim(obs_dim, n_actions, n_agents)
        self.agent = RNNAgent(in_dim, n_actions, q["rnn_hidden_dim"], linear)
        self.mixer = QMixer(n_agents, state_dim, q["mixing_embed_dim"], q["hypernet_embed"], q["hypernet_layers"])
        if algo == "ow_qmix":
            self.central_agent = RNNAgent(in_dim, n_actions, q["rnn_hidden_dim"], linear)
            self.central_mixer = CentralFFMixer(n_agents, state_dim, q["central_mixing_embed_dim"])
        self.to(device)
        networks = nn.ModuleDict({k: m for k, m in self.named_children()})
        # MAST: one sparse topology (one budget, ER densities) over every network; None when dense or Tiny.
        # ζ follows the env-step progress passed at each update, so the number of updates need not be known.
        self.sparse = SparseTraining.from_config(sparse or {}, networks, total_updates=0, seed=seed)
        self.target = copy.deepcopy(networks)
        self.target.requires_grad_(False)
        self.target_topology = self.sparse.topology.bind(self.target) if self.sparse else None
        self.optimiser = torch.optim.RMSprop(self.online_parameters(), lr=q["lr"], alpha=q["optim_alpha"],
                                             eps=q["optim_eps"])

    def online_parameters(self) -> list[nn.Parameter]:
        return [p for name, p in self.named_parameters() if not name.startswith("target.")]

    def update_targets(self) -> None:
        for name, module in self.target.items():
            module.load_state_dict(getattr(self, name).state_dict())
        if self.sparse:  # target networks copy the masks
            self.sparse.topology.copy_masks_to(self.target_topology)

    def step(self, loss: torch.Tensor, t: int, progress: float) -> torch.Tensor:
        """One optimiser step on `loss` (update number t, fraction `progress` of the budget done); returns the
        gradient norm before clipping. Sparse: evolve on schedule, mask gradients, re-zero inactive weights."""
        self.optimiser.zero_grad()
        loss.backward()
        if self.sparse:
            self.sparse.before_step(self.optimiser, t, progress)  # RigL reads the dense gradient here
        grad_norm = nn.utils.clip_grad_norm_(self.online_parameters(), self.q["grad_norm_clip"])
        self.optimiser.step()
        if self.sparse:
            self.sparse.after_step()
        return grad_norm

    def sparse_state(self) -> dict | None:
        if not self.sparse:
            return None
        return {"online": self.sparse.state_dict(), "target": self.target_topology.state_dict()}

    def load_sparse_state(self, state: dict | None) -> None:
        if self.sparse:
            self.sparse.load_state_dict(state["online"])
            self.target_topology.load_state_dict(state["target"])

    @torch.no_grad()
    def policy_distance(self, batch: dict[str, torch.Tensor]) -> float:
        """Fraction of the batch's agent-steps whose stored action differs from the current greedy action."""
        last = torch.cat([torch.full_like(batch["actions"][:, :1], -1), batch["actions"][:, :-1]], dim=1)
        qs = self.unroll(self.agent, agent_inputs(batch["obs"], last, self.n_actions))[:, :-1]
        greedy = qs.masked_fill(~batch["avail"][:, :-1], NEG).argmax(-1)
        differ = (greedy != batch["actions"][:, :-1]) & batch["filled"].unsqueeze(-1)
        return float(differ.sum()) / max(1, int(batch["filled"].sum()) * self.n_agents)

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
    def td_targets(self, batch: dict[str, torch.Tensor], inputs: torch.Tensor, q_all: torch.Tensor,
                   kind: tuple[str, int, float] | None = None) -> torch.Tensor:
        """Targets y [B, T]: bootstrap values V(s_t) for t = 0..T from the target networks, then the returns
        of `kind` = (return kind, n, λ) (default: qmix.return_kind, qmix.n_step, qmix.td_lambda)."""
        q, avail, states = self.q, batch["avail"], batch["state"]
        kind = kind or (q["return_kind"], q["n_step"], q["td_lambda"])
        q_target = self.unroll(self.target["agent"], inputs)
        source = q_all if q["double_q"] else q_target
        greedy = source.masked_fill(~avail, NEG).argmax(-1)                       # [B, T+1, n]
        if self.mellowmax:  # MAST: each agent's Soft Mellowmax over its available actions replaces the max
            mm = self.mellowmax
            if self.algo == "ow_qmix":
                central = soft_mellowmax(self.unroll(self.target["central_agent"], inputs), avail, **mm)
                values = self.target["central_mixer"](central, states)
            else:  # qmix, and res_qmix (Soft Mellowmax takes the place of RES's operator; docs/mast.md)
                values = self.target["mixer"](soft_mellowmax(q_target, avail, **mm), states)
        elif self.algo == "ow_qmix":
            central_target = self.unroll(self.target["central_agent"], inputs)
            at_greedy = central_target.gather(-1, greedy.unsqueeze(-1)).squeeze(-1)
            values = self.target["central_mixer"](at_greedy, states)
        elif self.algo == "res_qmix":
            values = self.res_values(q_all, q_target, avail, greedy, states)
        else:
            values = self.target["mixer"](q_target.gather(-1, greedy.unsqueeze(-1)).squeeze(-1), states)
        return targets(kind[0], batch["reward"], batch["terminated"], batch["filled"], values, q["gamma"],
                       kind[1], kind[2])

    def loss(self, batch: dict[str, torch.Tensor],
             kind: tuple[str, int, float] | None = None) -> tuple[torch.Tensor, dict]:
        q = self.q
        rewards, mask, actions, states = batch["reward"], batch["filled"], batch["actions"], batch["state"]
        last = torch.cat([torch.full_like(actions[:, :1], -1), actions[:, :-1]], dim=1)
        inputs = agent_inputs(batch["obs"], last, self.n_actions)

        q_all = self.unroll(self.agent, inputs)                                   # [B, T+1, n, A]
        chosen = q_all[:, :-1].gather(-1, actions[:, :-1].unsqueeze(-1)).squeeze(-1)
        q_tot = self.mixer(chosen, states[:, :-1])                                # [B, T]
        y = self.td_targets(batch, inputs, q_all.detach(), kind)

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
        self.on = mast_components(cfg)
        self.env = make_env(cfg["env"], self.q["num_envs"])
        self.eval_env = make_env(cfg["env"], self.q["eval_episodes"])
        spec = self.spec = self.env.spec
        self.n_agents, self.n_actions = spec.n_agents, max(spec.n_actions)
        dims = (spec.n_agents, spec.obs_dims[0], self.n_actions, spec.state_dim)
        sparse_cfg = {**cfg["sparse"], "delta_m": self.schedule["delta_m"]}
        net_q = self.q
        if sparse_cfg["method"] == "tiny":  # a dense network narrowed to the sparse model's parameter count
            in_dim = input_dim(spec.obs_dims[0], self.n_actions, spec.n_agents)
            net_q, tiny = tiny_hyper(self.q, spec.n_agents, in_dim, self.n_actions, spec.state_dim,
                                     sparse_cfg["sparsity"])
            self.schedule.update(tiny)
        mm = self.on["mellowmax"] and {"alpha": cfg["mellowmax"]["alpha"], "omega": cfg["mellowmax"]["omega"]}
        self.learner = Learner(cfg["algo"], net_q, *dims, sparse=sparse_cfg, mellowmax=mm or None, seed=cfg["seed"],
                               device=self.device)
        self.scheme = episode_scheme(spec)
        self.buffer = self.make_buffer()
        self.generator = torch.Generator().manual_seed(cfg["seed"])
        self.timer = PhaseTimer(sync=torch.cuda.synchronize if self.device.type == "cuda" else None)
        self.counters = {"env_steps": 0, "episodes": 0, "rounds": 0, "updates": 0, "evaluations": 0,
                         "last_target_update_episode": 0, "last_eval_step": None, "last_checkpoint_step": 0}
        self.window: dict[str, list[float]] = {}  # training stats since the last metrics row
        self.metrics: list[dict] = []
        self.phases: list[dict] = []
        self.elapsed = 0.0  # wall seconds of training before this process (resume)

    def make_buffer(self):
        """The episode buffer; MAST's dual buffer (B1 + B2) or RLx2's dynamic window when switched on."""
        q, scheme, device = self.q, self.scheme, self.device
        if self.on["dual_buffer"]:
            d = self.cfg["mast"]["dual_buffer"]
            return DualReplay.build(lambda capacity: EpisodeBuffer(scheme, capacity, device), q["buffer_size"],
                                    ratio=d["size_ratio"], split=(d["batch_ratio"], 1), concat=episode.concat)
        if self.on["dynamic_buffer"]:
            d = self.cfg["rlx2"]["dynamic_buffer"]
            return DynamicWindow(EpisodeBuffer(scheme, q["buffer_size"], device), d["initial_episodes"],
                                 q["buffer_size"], d["threshold"], d["shrink_episodes"], d["grow_episodes"],
                                 minimum=q["batch_size"])
        return EpisodeBuffer(scheme, q["buffer_size"], device)

    def target_kind(self) -> tuple[str, int, float]:
        """The return used by this update: hybrid TD(λ) (one-step before T0, λ-returns after) and RLx2's delayed
        multi-step target switch on env steps; otherwise qmix.return_kind."""
        q, steps = self.q, self.counters["env_steps"]
        if self.on["td_lambda"]:
            after = steps >= self.schedule["burn_in_env_steps"]
            return ("td_lambda", 1, self.cfg["mast"]["td_lambda"]["lambda"]) if after else ("one_step", 1, 0.0)
        if self.on["multi_step"]:
            after = steps >= self.schedule["multi_step_delay_env_steps"]
            return ("n_step", self.cfg["rlx2"]["multi_step"]["n"], 0.0) if after else ("one_step", 1, 0.0)
        return q["return_kind"], q["n_step"], q["td_lambda"]

    # ---- state ---------------------------------------------------------------------------------------
    @property
    def checkpoint_path(self) -> Path:
        return self.rundir.checkpoint_dir / "state.pt"

    def state_dict(self) -> dict:
        return {"config_hash": config_hash(self.cfg), "learner": self.learner.state_dict(),
                "optimiser": self.learner.optimiser.state_dict(), "buffer": self.buffer.state_dict(),
                "sparse": self.learner.sparse_state(),
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
        self.learner.load_sparse_state(state["sparse"])  # masks, evolution history, topology RNG
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
        learner, q, c = self.learner, self.q, self.counters
        with self.timer.phase("sampling"):
            batch = self.buffer.sample(q["batch_size"], self.generator)
        with self.timer.phase("learner_forward"):
            kind = self.target_kind()
            loss, stats = learner.loss(batch, kind)
        with self.timer.phase("learner_backward"):
            progress = c["env_steps"] / self.cfg["budget"]["env_steps"]
            grad_norm = learner.step(loss, c["updates"] + 1, progress)
        c["updates"] += 1
        stats["lambda_returns"] = float(kind[0] != "one_step")
        if self.on["dynamic_buffer"] and c["updates"] % self.cfg["rlx2"]["dynamic_buffer"]["check_every"] == 0:
            with self.timer.phase("sampling"):
                oldest = self.buffer.oldest(self.cfg["rlx2"]["dynamic_buffer"]["check_episodes"])
                distance = learner.policy_distance(oldest)
                self.buffer.adjust(distance)
            stats.update(policy_distance=distance, buffer_window=self.buffer.window)
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
                    "central_loss", "ow_weight_mean", "res_regulariser", "lambda_returns", "policy_distance",
                    "buffer_window"):
            values = self.window.get(key)
            name = {"return": "train_return", "won": "train_win_rate", "length": "train_episode_length"}.get(key, key)
            row[name] = float(np.mean(values)) if values else float("nan")
        row.update({k: v for k, v in self.schedule.items()})
        if self.learner.sparse:
            row.update(density=self.learner.sparse.topology.density(),
                       topology_updates=len(self.learner.sparse.history))
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
                                            "components": self.on, "method": self.cfg["sparse"]["method"],
                                            "note": "epsilon_anneal_time and delta_m scaled by budget / reference "
                                                    "when qmix.scale_schedules; T0 and RLx2's delay are fractions "
                                                    "of the budget (papers.md, paper 2 Decisions)"})
        io.write_with(self.rundir.path / "model.pt",
                      lambda tmp: torch.save({k: v for k, v in self.learner.state_dict().items()
                                              if not k.startswith("target.")}, tmp))
        self.write_accounting()
        if not self.q["keep_checkpoint"] and self.checkpoint_path.exists():
            self.checkpoint_path.unlink()
        self.env.close()
        self.eval_env.close()


    def write_accounting(self) -> None:
        """FLOPs and size from the final masks (sparsity.parquet), per-layer densities (layers.parquet), active
        weights per agent and layer (agent_masks.parquet), topology updates (topology.parquet), masks.pt."""
        learner, method = self.learner, self.cfg["sparse"]["method"]
        table = accounting(learner, self.q, self.spec.episode_limit)
        if method == "tiny":  # ratios against the full-width dense model of the same per-agent layout
            ref = accounting(Learner(self.cfg["algo"], self.q, self.n_agents, self.spec.obs_dims[0], self.n_actions,
                                     self.spec.state_dim), self.q, self.spec.episode_limit)
            for key in ("train_flops", "inference_flops", "size"):
                table["dense_" + key] = ref["dense_" + key]
                table[key + "_ratio"] = table[key] / ref["dense_" + key]
        layers = table.pop("layers")
        self.rundir.write_table("sparsity", [{"method": method, "sparsity": self.cfg["sparse"]["sparsity"],
                                              "shared_params": self.q["shared_params"], **table}])
        self.rundir.write_table("layers", layers)
        topology = learner.sparse.topology if learner.sparse else None
        self.rundir.write_table("agent_masks", [
            {"layer": name, "agent": a, "active": int(n), "numel": int(topology.masks[name][a].numel())}
            for name in (topology.masks if topology else {}) if topology.masks[name].dim() == 3
            for a, n in enumerate(topology.agent_counts(name).tolist())])
        history = learner.sparse.history if learner.sparse else []
        self.rundir.write_table("topology", [{"t": h["t"], "zeta": h["zeta"], "layer": name, **row}
                                             for h in history for name, row in h["layers"].items()])
        if topology:
            io.write_with(self.rundir.path / "masks.pt", lambda tmp: torch.save(learner.sparse_state(), tmp))


def accounting(learner: Learner, q: dict, episode_limit: int) -> dict:
    """The paper's training FLOPs per iteration (batch_size episodes × episode_limit steps), inference FLOPs
    (the agent networks, all agents, one step) and size, from the learner's masks, also as ratios to the dense
    model of the same layout, plus per-layer rows."""
    topology = learner.sparse.topology if learner.sparse else None
    central = learner.algo == "ow_qmix"
    copies = learner.n_agents if q["shared_params"] else 1  # a shared agent network runs once per agent
    out = flops.summary({"qmix": "qmix", "ow_qmix": "ow_qmix", "res_qmix": "res"}[learner.algo],
                        q["batch_size"] * episode_limit, {"agent": learner.agent}, {"mixer": learner.mixer}, topology,
                        agent_copies=copies, unrestricted_agent={"central_agent": learner.central_agent} if central
                        else None, unrestricted_mixer={"central_mixer": learner.central_mixer} if central else None,
                        n_agents=learner.n_agents, n_actions=learner.n_actions)
    parts = out.pop("parts")
    layers = [{"part": part, **row} for part, counted in parts.items() if counted for row in counted["layers"]]
    return {**out, "flops_batch_samples": q["batch_size"] * episode_limit, "layers": layers}


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


