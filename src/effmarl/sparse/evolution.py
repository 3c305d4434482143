"""Topology evolution schedule (static, SET, RigL / RLx2 / MAST, gradual magnitude pruning) and the few calls a
learner makes. Which schedule a method follows is its entry in effmarl/methods.py (`grow`, `prune`).

Drop and grow: ζ_t = ζ0/2 · (1 + cos(π·t / (anneal_end·T))) for t < anneal_end·T, else 0 (RigL's cosine decay), where
t counts gradient updates and T is the run's total number of updates. The topology changes every Δm updates while
ζ_t > 0.

Gradual magnitude pruning (Zhu & Gupta 2017), from a dense start (s_i = 0) to the target sparsity s_f:
s_t = s_f + (s_i − s_f)·(1 − (t − t0)/(nΔt))³ for t0 ≤ t ≤ t0 + nΔt, with t0 = prune_start·T, t0 + nΔt = anneal_end·T
and Δt = Δm; s_i before t0, s_f after. Every Δm updates from t0 on, each layer's smallest-|w| weights are pruned to
what s_t leaves it (SparseTopology.prune_to); nothing regrows.

Learner integration (t = index of this gradient update, starting at 1):

    sparse = SparseTraining.from_config(settings.sparse, {"agent": agent, "mixer": mixer}, total_updates, seed)
    target_topology = sparse.topology.bind({"agent": target_agent, "mixer": target_mixer})
    ...
    loss.backward()
    sparse.before_step(optimizer, t)   # evolution step? RigL reads the dense .grad here; then masks gradients
    clip_grad_norm_(...); optimizer.step()
    sparse.after_step()                # re-zero inactive weights
    ... when the target is synchronised: target.load_state_dict(online.state_dict());
        sparse.topology.copy_masks_to(target_topology)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch

from effmarl.methods import method
from effmarl.sparse.masks import ModuleLike, SparseTopology


def cubic_sparsity(fraction: float, final: float, start: float, end: float, initial: float = 0.0) -> float:
    """GMP's sparsity when `fraction` of training is done: `initial` until `start`, `final` from `end` on, the cubic
    s_f + (s_i − s_f)·(1 − (fraction − start)/(end − start))³ between (an `end` at or before `start`: `final` from
    `start` on)."""
    if fraction < start:
        return initial
    if fraction >= end:
        return final
    return final + (initial - final) * (1.0 - (fraction - start) / (end - start)) ** 3


def cosine_zeta(t: float, total_updates: float, zeta0: float, anneal_end: float) -> float:
    """Fraction of active weights to drop (and regrow) at update t."""
    end = anneal_end * total_updates
    if t >= end or end <= 0:
        return 0.0
    return 0.5 * zeta0 * (1.0 + math.cos(math.pi * t / end))


@dataclass
class TopologySchedule:
    """When and how a topology changes; the numbers are the run's `sparse:` section (the schema's defaults)."""
    grow: str | None  # None (static), "random" (SET) or "gradient" (RigL and its descendants): its method's entry
    total_updates: int
    delta_m: int
    zeta0: float
    anneal_end: float
    prune: str | None = None            # "cubic" (GMP): its method's entry; None: the sparsity is fixed
    sparsity: float | None = None       # with prune: the target s_f
    prune_start: float | None = None    # with prune: the fraction of training at which pruning starts

    def fraction(self, t: int, progress: float | None = None) -> float:
        """The fraction of training done at update t: `progress` where given (see zeta), else t / T."""
        return progress if progress is not None else t / self.total_updates

    def target_sparsity(self, t: int, progress: float | None = None) -> float:
        """GMP's s_t at update t (cubic_sparsity from a dense start)."""
        return cubic_sparsity(self.fraction(t, progress), self.sparsity, self.prune_start, self.anneal_end)

    def zeta(self, t: int, progress: float | None = None) -> float:
        """ζ at update t; with `progress` (fraction of the training budget done, e.g. env steps / budget, for
        learners whose number of updates is not known in advance) the cosine runs over progress instead of t/T."""
        if progress is not None:
            return cosine_zeta(progress, 1.0, self.zeta0, self.anneal_end)
        return cosine_zeta(t, self.total_updates, self.zeta0, self.anneal_end)

    def due(self, t: int, progress: float | None = None) -> bool:
        if self.prune is not None:  # from t0 on (prune_to leaves a layer already at its count alone)
            return t > 0 and t % self.delta_m == 0 and self.fraction(t, progress) >= self.prune_start
        return self.grow is not None and t > 0 and t % self.delta_m == 0 and self.zeta(t, progress) > 0.0


class SparseTraining:
    """A topology plus its schedule; two calls per gradient update keep training exactly sparse."""

    def __init__(self, topology: SparseTopology, schedule: TopologySchedule):
        self.topology, self.schedule = topology, schedule
        self.history: list[dict] = []  # one row per topology change: t, zeta, and active/drop/grow counts per layer

    @classmethod
    def from_config(cls, sparse_cfg: Mapping, modules: ModuleLike, total_updates: int, seed: int = 0,
                    masks: Mapping[str, torch.Tensor] | None = None,
                    agent_shares: Sequence[float] | None = None) -> SparseTraining | None:
        """From the run config's validated `sparse:` section (empty: dense); None for a method without masks (dense,
        Tiny: effmarl/methods.py). `masks`: the initial masks to install instead of random ones (a ticket);
        `agent_shares`: fixed per-agent budgets of the stacked layers (sparse/allocation.py; None: learned)."""
        if not sparse_cfg or not method(sparse_cfg["method"]).masks:
            return None
        entry = method(sparse_cfg["method"])
        topology = SparseTopology(modules, sparse_cfg["sparsity"],
                                  distribution="er" if sparse_cfg["er"] else "uniform", seed=seed,
                                  masks=masks, agent_shares=agent_shares, dense_start=entry.start == "dense")
        schedule = TopologySchedule(entry.grow, total_updates, sparse_cfg["delta_m"], sparse_cfg["zeta0"],
                                    sparse_cfg["anneal_end"], entry.prune, sparse_cfg["sparsity"],
                                    sparse_cfg["prune_start"] if entry.prune else None)
        return cls(topology, schedule)

    def before_step(self, optimizer: torch.optim.Optimizer, t: int, progress: float | None = None) -> dict | None:
        """After backward, before clipping and optimizer.step(): evolve the topology if due (RigL ranks growth by
        the dense gradient still in .grad) or prune it (GMP; a row only where weights were pruned, its `zeta` the
        fraction of the active weights pruned), reset the optimiser state where the mask changed, mask gradients.
        `progress` (optional): fraction of training done, for the schedules (see TopologySchedule.zeta)."""
        row = None
        if self.schedule.due(t, progress) and self.schedule.prune is not None:
            sparsity = self.schedule.target_sparsity(t, progress)
            changed, stats = self.topology.prune_to(sparsity)
            dropped, active = sum(s["drop"] for s in stats.values()), sum(s["active"] for s in stats.values())
            if dropped:
                self.topology.reset_optimizer_state(optimizer, changed)
                row = {"t": t, "zeta": dropped / active, "sparsity": sparsity, "layers": stats}
                self.history.append(row)
        elif self.schedule.due(t, progress):
            zeta = self.schedule.zeta(t, progress)
            changed, stats = self.topology.evolve(zeta, self.schedule.grow)
            self.topology.reset_optimizer_state(optimizer, changed)
            row = {"t": t, "zeta": zeta, "layers": stats}
            self.history.append(row)
        self.topology.mask_gradients()
        return row

    def mean_active(self, updates: int) -> dict[str, float]:
        """Each sparsified weight's active count averaged over the run's `updates` gradient updates: update t trained
        under the masks before the topology change at t (its row's `active`), those after the last change under the
        final masks. One parameter per layer (the learner's topology); the counts of a fixed sparsity."""
        if any(len(layer.params) != 1 for layer in self.topology.layers):
            raise ValueError("mean_active counts one parameter per layer")
        final = {layer.name: int(self.topology.masks[layer.name].sum()) for layer in self.topology.layers}
        if updates <= 0:
            return dict(final)
        total, last = dict.fromkeys(final, 0), 0
        for row in self.history:
            for name, stats in row["layers"].items():
                total[name] += (row["t"] - last) * stats["active"]
            last = row["t"]
        return {name: (total[name] + (updates - last) * final[name]) / updates for name in final}

    def after_step(self) -> None:
        self.topology.apply_masks()

    def state_dict(self) -> dict:
        return {"topology": self.topology.state_dict(), "history": list(self.history)}

    def load_state_dict(self, state: Mapping) -> None:
        self.topology.load_state_dict(state["topology"])
        self.history = list(state["history"])
