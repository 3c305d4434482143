"""A QMIX-family run's settings, resolved once from its validated config: `QmixSettings.from_config(cfg)` holds the
qmix section's options (`QmixOptions`), the schedules the budget implies, the MAST / RLx2 components that are on,
the returns each update uses and the sparse settings of the learner; the training modules read these objects, not
the config dict. The cross-field checks are effmarl/qmix_checks.py's (`check_config`, run once per run by
config.validate)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from effmarl.components import mast_components
from effmarl.config import Section
from effmarl.schedules import operator_scale, scaled_delta_m, schedule_scale


@dataclass(frozen=True)
class QmixOptions(Section):
    """The run's `qmix:` section, one field per option (the schema documents each; its defaults fill them); also a
    read-only mapping of the same names (config.Section)."""

    num_envs: int
    updates_per_round: int
    runner: str
    batch_size: int
    buffer_size: int
    lr: float
    optim_alpha: float
    optim_eps: float
    grad_norm_clip: float
    gamma: float
    epsilon_start: float
    epsilon_finish: float
    epsilon_anneal_time: int
    scale_schedules: bool
    target_update_interval: int
    double_q: bool
    rnn_hidden_dim: int
    shared_params: bool
    mixing_embed_dim: int
    hypernet_layers: int
    hypernet_embed: int
    ow_w: float
    central_mixing_embed_dim: int
    central_loss: float
    res_beta: float
    res_lambda: float
    eval_every: int
    eval_episodes: int
    checkpoint_every: int
    keep_checkpoint: bool


@dataclass(frozen=True)
class Returns:
    """Which return an update uses (settings.target_kind): hybrid TD(λ) (mast.td_lambda: one-step before
    burn_in_env_steps, λ-returns after), RLx2's delayed multi-step target (rlx2.multi_step: one-step before
    multi_step_delay_env_steps, n-step after), or neither (one-step, PyMARL's QMIX)."""

    td_lambda: bool
    lambda_: float
    burn_in_env_steps: int
    multi_step: bool
    n_step: int
    multi_step_delay_env_steps: int


@dataclass(frozen=True)
class QmixSettings:
    """Everything a QMIX-family training run reads, resolved once from the validated run config.

    schedule: `effective_schedule` (ε, Δm, T0, RLx2's delay; written to schedule.json and every metrics row);
    components: `mast_components` (which MAST / RLx2 parts are on); sparse: the `sparse:` section with the
    effective Δm (the learner's SparseTraining reads it); mellowmax: the operator's parameters when the mellowmax
    component is on, its temperatures (α, ω, β) times the schedule's `operator_scale`, else None;
    dual_buffer / dynamic_buffer: their sections when on, else None."""

    algo: str
    study: str
    seed: int
    device: str
    env: Mapping
    budget_env_steps: int
    qmix: QmixOptions
    schedule: Mapping = field(repr=False)
    components: Mapping
    method: str
    sparsity: float
    sparse: Mapping = field(repr=False)
    mellowmax: Mapping | None
    returns: Returns
    dual_buffer: Mapping | None
    dynamic_buffer: Mapping | None

    @classmethod
    def from_config(cls, cfg: dict) -> QmixSettings:
        """The settings of the validated run config `cfg` (config.validate filled the defaults and ran the checks)."""
        schedule, on = effective_schedule(cfg), mast_components(cfg)
        lam, multi = cfg["mast"]["td_lambda"], cfg["rlx2"]["multi_step"]
        return cls(
            algo=cfg["algo"], study=cfg["study"], seed=cfg["seed"], device=cfg["device"], env=cfg["env"],
            budget_env_steps=cfg["budget"]["env_steps"], qmix=QmixOptions.of(cfg["qmix"]), schedule=schedule,
            components=on, method=cfg["sparse"]["method"], sparsity=cfg["sparse"]["sparsity"],
            sparse={**cfg["sparse"], "delta_m": schedule["delta_m"]},
            mellowmax={"operator": cfg["mellowmax"]["operator"],
                       **{k: cfg["mellowmax"][k] * schedule["operator_scale"] for k in ("alpha", "omega", "beta")}}
            if on["soft_mellowmax"] else None,
            returns=Returns(td_lambda=on["td_lambda"], lambda_=lam["lambda"],
                            burn_in_env_steps=schedule["burn_in_env_steps"], multi_step=on["multi_step"],
                            n_step=multi["n"], multi_step_delay_env_steps=schedule["multi_step_delay_env_steps"]),
            dual_buffer=dict(cfg["mast"]["dual_buffer"]) if on["dual_buffer"] else None,
            dynamic_buffer=dict(cfg["rlx2"]["dynamic_buffer"]) if on["dynamic_buffer"] else None)


def effective_schedule(cfg: dict) -> dict:
    """The schedules actually used. Budgets below 2 M env steps scale the ε schedule and the topology interval Δm
    by budget / 2 M (docs/specification.md, paper 2 Decisions); T0 (hybrid TD(λ)) and RLx2's delay are
    fractions of the budget, so they scale with it by construction. `operator_scale`: the factor on the target
    operators' temperatures, 20 / the backend's largest return (schedules.operator_scale)."""
    q, budget = cfg["qmix"], cfg["budget"]["env_steps"]
    scale = schedule_scale(budget, q["scale_schedules"])
    out = {"schedule_scale": scale, "epsilon_anneal_time": max(1, round(q["epsilon_anneal_time"] * scale)),
           "epsilon_start": q["epsilon_start"], "epsilon_finish": q["epsilon_finish"]}
    if "mellowmax" in cfg:
        out["operator_scale"] = operator_scale(cfg["env"]["backend"], cfg["env"].get("reward_scale", 1.0))
    if "sparse" in cfg:
        out["delta_m"] = scaled_delta_m(cfg["sparse"]["delta_m"], scale)
        out["burn_in_env_steps"] = round(cfg["mast"]["td_lambda"]["burn_in_fraction"] * budget)
        out["multi_step_delay_env_steps"] = round(cfg["rlx2"]["multi_step"]["delay_fraction"] * budget)
    return out


def epsilon(schedule: dict, env_steps: int) -> float:
    """ε-greedy's ε after `env_steps`: linear from epsilon_start to epsilon_finish over epsilon_anneal_time."""
    frac = min(1.0, env_steps / schedule["epsilon_anneal_time"])
    return schedule["epsilon_start"] - frac * (schedule["epsilon_start"] - schedule["epsilon_finish"])


def target_kind(returns: Returns, env_steps: int) -> tuple[str, int, float]:
    """The return used by an update after `env_steps`: hybrid TD(λ) (one-step before T0, λ-returns after) and
    RLx2's delayed multi-step target switch on env steps; with neither on, one-step targets (PyMARL's QMIX)."""
    if returns.td_lambda:
        return ("td_lambda", 1, returns.lambda_) if env_steps >= returns.burn_in_env_steps else ("one_step", 1, 0.0)
    if returns.multi_step:
        after = env_steps >= returns.multi_step_delay_env_steps
        return ("n_step", returns.n_step, 0.0) if after else ("one_step", 1, 0.0)
    return ("one_step", 1, 0.0)
