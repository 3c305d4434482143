"""FLOPs and size of a QMIX-family learner from its masks, and the per-run accounting files.

The paper's training FLOPs per iteration (batch_size episodes × episode_limit steps), inference FLOPs (the agent
networks, all agents, one step) and size come from sparse/flops.py over the learner's own modules; Tiny's ratios
are taken against the full-width dense model of the same per-agent layout. A method whose sparsity changes
(`flops: history` in effmarl/methods.py, e.g. GMP's dense start) counts its training FLOPs per iteration as the mean
over its updates of each update's masks (SparseTraining.mean_active); inference and size are its final masks'.
"""

from __future__ import annotations

import torch

from effmarl import io
from effmarl.algos.qmix.settings import QmixOptions, QmixSettings
from effmarl.methods import method
from effmarl.runs import RunDir
from effmarl.sparse import flops


def accounting(learner, q: QmixOptions | dict, episode_limit: int, active: dict[str, float] | None = None) -> dict:
    """FLOPs and size from the learner's masks (or `active`, weights per parameter), also as ratios to the dense
    model of the same layout, plus per-layer rows (key "layers"); `q`: the run's qmix options."""
    q = QmixOptions.of(q)
    topology = learner.sparse.topology if learner.sparse else None
    central = learner.variant.central
    copies = learner.n_agents if q.shared_params else 1  # a shared agent network runs once per agent
    out = flops.summary(learner.algo,
                        q.batch_size * episode_limit, {"agent": learner.agent}, {"mixer": learner.mixer}, topology,
                        agent_copies=copies, unrestricted_agent={"central_agent": learner.central_agent} if central
                        else None, unrestricted_mixer={"central_mixer": learner.central_mixer} if central else None,
                        n_agents=learner.n_agents, n_actions=learner.n_actions, active=active)
    parts = out.pop("parts")
    layers = [{"part": part, **row} for part, counted in parts.items() if counted for row in counted["layers"]]
    return {**out, "flops_batch_samples": q.batch_size * episode_limit, "layers": layers}


def write_accounting(rundir: RunDir, learner, settings: QmixSettings, episode_limit: int, full_width=None,
                     unit_types: tuple[str, ...] | None = None, updates: int = 0) -> None:
    """sparsity.parquet (FLOPs and size), layers.parquet (per-layer densities), agent_masks.parquet (active
    weights per agent and layer, with the agent's unit type when the env reports it), topology.parquet (topology
    updates) and masks.pt.
    full_width: for Tiny, a dense learner of the full width, the reference of its ratios; updates: the gradient
    updates the run made (the mean of a `flops: history` method's training FLOPs runs over them)."""
    table = accounting(learner, learner.q, episode_limit)
    if learner.sparse and method(settings.method).flops == "history":
        over = accounting(learner, learner.q, episode_limit, active=learner.sparse.mean_active(updates))
        table.update(train_flops=over["train_flops"], train_flops_ratio=over["train_flops_ratio"])
    if full_width is not None:
        ref = accounting(full_width, full_width.q, episode_limit)
        for key in ("train_flops", "inference_flops", "size"):
            table["dense_" + key] = ref["dense_" + key]
            table[key + "_ratio"] = table[key] / ref["dense_" + key]
    layers = table.pop("layers")
    rundir.write_table("sparsity", [{"method": settings.method, "sparsity": settings.sparsity,
                                     "shared_params": settings.qmix.shared_params, **table}])
    rundir.write_table("layers", layers)
    topology = learner.sparse.topology if learner.sparse else None
    rundir.write_table("agent_masks", [
        {"layer": name, "agent": a, "unit_type": unit_types[a] if unit_types else None, "active": int(n),
         "numel": int(topology.masks[name][a].numel())}
        for name in (topology.masks if topology else {}) if topology.masks[name].dim() == 3
        for a, n in enumerate(topology.agent_counts(name).tolist())])
    history = learner.sparse.history if learner.sparse else []
    rundir.write_table("topology", [{"t": h["t"], "zeta": h["zeta"], "layer": name, **row}
                                    for h in history for name, row in h["layers"].items()])
    if topology:
        io.write_with(rundir.path / "masks.pt", lambda tmp: torch.save(learner.sparse_state(), tmp))
