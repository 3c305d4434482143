"""A paper-1 run's settings (MADDPG, MASAC: the off-policy loop of algos/offpolicy.py), resolved once from its
validated config: `OffPolicySettings.from_config(cfg)` holds the offpolicy, replay and masac sections as frozen
options; the loop, the learners and the replay read these objects, not the config dict (plain Python: no torch)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from effmarl.config import Section


@dataclass(frozen=True)
class OffPolicyOptions(Section):
    """The run's `offpolicy:` section, one field per option (the schema documents each)."""

    lr: float
    gamma: float
    batch_size: int
    hidden: list[int]
    update_every: int
    warmup: int
    tau: float
    grad_clip: float
    actor_reg: float
    train_teams: list[str]
    checkpoint_every: int
    learner: str


@dataclass(frozen=True)
class ReplayOptions(Section):
    """The run's `replay:` section: storage and its backend, sampler (neighbor_k), batch mode, capacity."""

    storage: str
    backend: str
    sampler: str
    neighbor_k: int
    batch_mode: str
    buffer_size: int


@dataclass(frozen=True)
class MasacOptions(Section):
    """The run's `masac:` section: the entropy temperature (fixed or tuned) and its target."""

    alpha: float
    autotune: bool
    alpha_lr: float
    target_entropy_ratio: float


@dataclass(frozen=True)
class OffPolicySettings:
    """Everything the off-policy loop of a MADDPG / MASAC run reads, resolved once from the validated run config
    (config.validate filled the defaults and ran the cross-field checks). masac: None for MADDPG."""

    algo: str
    study: str
    seed: int
    device: str
    env: Mapping
    budget_episodes: int
    offpolicy: OffPolicyOptions
    replay: ReplayOptions
    masac: MasacOptions | None

    @classmethod
    def from_config(cls, cfg: Mapping) -> OffPolicySettings:
        """The settings of the validated run config `cfg`; an OffPolicySettings is returned as it is."""
        if isinstance(cfg, cls):
            return cfg
        return cls(algo=cfg["algo"], study=cfg["study"], seed=cfg["seed"], device=cfg["device"], env=cfg["env"],
                   budget_episodes=cfg["budget"]["episodes"], offpolicy=OffPolicyOptions.of(cfg["offpolicy"]),
                   replay=ReplayOptions.of(cfg["replay"]),
                   masac=MasacOptions.of(cfg["masac"]) if "masac" in cfg else None)
