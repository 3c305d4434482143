"""Paper 2, Figure 11: where MAST's connections are - the active fraction of every agent network layer per agent
(from agent_masks.summary.parquet: active / numel, mean over seeds), one heat map per algorithm, map and sparsity; with
the optional `mask_files` (the runs' masks.pt), below each, the first layer (agent.fc1.weight) in detail: the fraction
of hidden units each input feature stays connected to, per agent, from the files of that sparsity only; without them
(or with masks it cannot pool) the heat map's title says the detail is missing."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import yaml

from effmarl.analysis.io import mark_evidence, named_inputs, read_tables
from effmarl.analysis.metrics import judge, seeds_text, shown_runs
from effmarl.analysis.style import algo_name, map_name
from effmarl.config import ConfigError
from effmarl.safeload import load_torch

FIRST = "agent.fc1.weight"
CAPTION = ("Paper 2, Figure 11 on SMAX: MAST's final masks per agent, one column per algorithm, map and sparsity "
           "(runs of different sparsities are never pooled). Heat map = active fraction of each agent network "
           "layer's weights per agent (active / numel), mean over seeds (n = seeds in the title). Below, with the "
           "masks themselves: first layer (agent.fc1.weight), the fraction of hidden units each input feature "
           "(observation, last action, agent id) stays connected to, per agent, mean over that column's runs.")
REPRODUCES = "Paper 2, Figure 11 (and the mask figures 19-25 in our form)."
CLAIM = "MAST gives different agents different topologies and concentrates connections on informative inputs."

OUTPUT = {"group": "mast", "stem": "fig11_first_layer_masks"}
# the allocation study's runs where the profile has it, else Table 1's own MAST runs (mast_sweep; the default
# profile sweeps only Table 1's sparsity)
INPUTS = {"masks": {"study": ["mast_alloc", "mast_sweep"], "take": "first", "table": "agent_masks",
                    "doc": "agent_masks.summary.parquet of the MAST runs"},
          # the first-layer detail the caption describes: the masks of MAST's own (learned) allocation
          "mask_files": {"study": ["mast_alloc", "mast_sweep"], "take": "first", "run_file": "masks.pt",
                         "where": {"sparse.allocation": "learned"}, "optional": True,
                         "doc": "masks.pt files of MAST runs of one configuration"}}


def first_layer(paths: list[str]) -> np.ndarray | None:
    """[agents, inputs]: per agent and input feature, the fraction of fc1's output units connected, mean over files."""
    found = []
    for path in paths:  # data only: a shared results/ may hold a crafted masks.pt (effmarl.safeload)
        masks = load_torch(path, map_location="cpu")["online"]["topology"]["masks"]
        if FIRST in masks:
            m = masks[FIRST].float()
            found.append((m.mean(dim=-2) if m.dim() == 3 else m.mean(dim=0, keepdim=True)).numpy())
    shapes = {f.shape for f in found}
    return np.mean(found, axis=0) if found and len(shapes) == 1 else None


SPARSITY = "cfg.sparse.sparsity"


def file_sparsity(path: str) -> float | None:
    """The sparsity a masks.pt's run was configured with (its run directory's config.yaml), or None without one."""
    config = Path(path).parent / "config.yaml"
    if not config.is_file():
        return None
    sparse = (yaml.safe_load(config.read_text()) or {}).get("sparse", {})
    return round(float(sparse["sparsity"]), 6) if "sparsity" in sparse else None


def details(paths: list[str], sparsities: list[float | None]) -> dict:
    """{sparsity: first-layer detail} of the mask files, each pooled only with files of its own sparsity (never across
    sparsities: a 0.9 run's masks averaged with a 0.99 run's describe neither). Where the masks table holds one
    sparsity (or none), files without a config.yaml belong to it; where it holds several, a file whose sparsity is
    unknown is refused."""
    own = {path: file_sparsity(path) for path in paths}
    unknown = [path for path, sp in own.items() if sp is None]
    if unknown and len(sparsities) > 1:
        raise ConfigError([f"{unknown[0]}: no config.yaml beside it to say its sparsity, and the masks table holds "
                           f"sparsities {', '.join(f'{s:g}' for s in sparsities)}: Figure 11 draws each apart"],
                          "figure mast_fig11")
    groups: dict = {}
    for path, sp in own.items():
        groups.setdefault(sp if sp is not None else sparsities[0], []).append(path)
    return {sp: first_layer(group) for sp, group in groups.items()}


def make(inputs: list[str]):
    """One column per (algorithm, map, sparsity) of the MAST runs: the per-layer heat map above, the first-layer
    detail of the same runs below (where masks.pt files are given): runs of different sparsities are never pooled."""
    named = named_inputs(inputs, INPUTS, "figure mast_fig11")
    masks = read_tables(named["masks"])
    if "cfg.sparse.allocation" in masks:  # MAST's own (learned) split between agents, not the manual budgets
        masks = masks[masks["cfg.sparse.allocation"].fillna("learned") == "learned"].copy()
    masks["fraction"] = masks["active"] / masks["numel"]
    if SPARSITY in masks:
        masks[SPARSITY] = masks[SPARSITY].astype(float).round(6)
    keys = [c for c in ("cfg.algo", "cfg.env.map", SPARSITY) if c in masks]
    cells = sorted(masks[keys].drop_duplicates().values.tolist()) if keys else [[]]
    sparsities = sorted(masks[SPARSITY].unique().tolist()) if SPARSITY in masks else [None]
    found = details(named["mask_files"], sparsities) if named["mask_files"] else {}
    rows = 2 if any(d is not None for d in found.values()) else 1
    fig, axes = plt.subplots(rows, len(cells), figsize=(4.6 * len(cells), 3.4 * rows), squeeze=False)
    layers = list(dict.fromkeys(masks["layer"]))
    for col, values in enumerate(cells):
        ax, cell = axes[0][col], dict(zip(keys, values, strict=True))
        rows_of = masks[(masks[keys] == values).all(axis=1)] if keys else masks
        grid = rows_of.pivot_table(index="agent", columns="layer", values="fraction", aggfunc="mean")
        grid = grid[[c for c in layers if c in grid.columns]]
        image = ax.imshow(grid.to_numpy(), aspect="auto", cmap="viridis", vmin=0)
        ax.set_xticks(range(grid.shape[1]), [c.removeprefix("agent.").removesuffix(".weight") for c in grid.columns],
                      rotation=30, ha="right", fontsize=7)
        ax.set_yticks(range(grid.shape[0]), [f"agent {a}" for a in grid.index], fontsize=7)
        ident = [c for c in ("cfg.study", "run_id") if c in rows_of]
        runs = rows_of.drop_duplicates(ident) if ident else rows_of.iloc[:1]  # a single run's table has no run_id
        where = (" on SMAX ".join([algo_name(cell["cfg.algo"]), map_name(cell["cfg.env.map"])])
                 if "cfg.env.map" in cell else "")
        at = f", sparsity {cell[SPARSITY]:g}" if SPARSITY in cell else ""
        detail = found.get(cell.get(SPARSITY, sparsities[0]))
        missing = "" if detail is not None else "\n" + (
            "no first-layer detail: no masks.pt given" if not named["mask_files"]
            else "no first-layer detail: no masks.pt of this sparsity, or they differ in shape or lack agent.fc1")
        ax.set_title(f"MAST-{where}{at} ({seeds_text(len(runs))}){missing}", fontsize=9)
        fig.colorbar(image, ax=ax, label="active fraction")
        if rows == 2:
            ax = axes[1][col]
            if detail is None:
                ax.set_axis_off()
                continue
            image = ax.imshow(detail, aspect="auto", cmap="viridis", vmin=0, vmax=max(1e-9, float(detail.max())))
            ax.set_xlabel("input feature of agent.fc1")
            ax.set_yticks(range(detail.shape[0]), [f"agent {a}" for a in range(detail.shape[0])], fontsize=7)
            ax.set_title(f"first layer{at}: connected fraction per input", fontsize=9)
            fig.colorbar(image, ax=ax, label="fraction of hidden units")
    fig.tight_layout()
    mark_evidence(fig, judge(masks, keys))
    return fig, shown_runs(masks)
