"""Paper 2, Figure 11: where MAST's connections are - the active fraction of every agent network layer per agent
(from agent_masks.summary.parquet: active / numel, mean over seeds), one heat map per algorithm and map; with the
optional `mask_files` (the runs' masks.pt), the first layer (agent.fc1.weight) in detail: the fraction of hidden units
each input feature stays connected to, per agent; without them (or with masks it cannot pool) the heat map's title
says the detail is missing."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from effmarl.analysis.io import mark_evidence, named_inputs, read_tables
from effmarl.analysis.metrics import judge, seeds_text, shown_runs
from effmarl.analysis.style import algo_name, map_name
from effmarl.safeload import load_torch

FIRST = "agent.fc1.weight"
CAPTION = ("Paper 2, Figure 11 on SMAX: MAST's final masks per agent. Heat map = active fraction of each agent "
           "network layer's weights per agent (active / numel), mean over seeds (n = seeds in the title). With the "
           "masks themselves: first layer (agent.fc1.weight), the fraction of hidden units each input feature "
           "(observation, last action, agent id) stays connected to, per agent, mean over the given runs.")
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


def make(inputs: list[str]):
    named = named_inputs(inputs, INPUTS, "figure mast_fig11")
    masks = read_tables(named["masks"])
    if "cfg.sparse.allocation" in masks:  # MAST's own (learned) split between agents, not the manual budgets
        masks = masks[masks["cfg.sparse.allocation"].fillna("learned") == "learned"].copy()
    masks["fraction"] = masks["active"] / masks["numel"]
    keys = [c for c in ("cfg.algo", "cfg.env.map") if c in masks]
    cells = masks[keys].drop_duplicates().values.tolist() if keys else [[]]
    detail = first_layer(named["mask_files"]) if named["mask_files"] else None
    n = len(cells) + (detail is not None)
    fig, axes = plt.subplots(1, n, figsize=(4.6 * n, 3.4), squeeze=False)
    layers = list(dict.fromkeys(masks["layer"]))
    for ax, values in zip(axes[0], cells, strict=False):
        rows = masks[(masks[keys] == values).all(axis=1)] if keys else masks
        grid = rows.pivot_table(index="agent", columns="layer", values="fraction", aggfunc="mean")
        grid = grid[[c for c in layers if c in grid.columns]]
        image = ax.imshow(grid.to_numpy(), aspect="auto", cmap="viridis", vmin=0)
        ax.set_xticks(range(grid.shape[1]), [c.removeprefix("agent.").removesuffix(".weight") for c in grid.columns],
                      rotation=30, ha="right", fontsize=7)
        ax.set_yticks(range(grid.shape[0]), [f"agent {a}" for a in grid.index], fontsize=7)
        ident = [c for c in ("cfg.study", "run_id") if c in rows]
        runs = rows.drop_duplicates(ident) if ident else rows.iloc[:1]  # a single run's own table has no run_id
        where = " on SMAX ".join([algo_name(values[0]), map_name(values[1])]) if len(values) == 2 else ""
        missing = "" if detail is not None else "\n" + (
            "no first-layer detail: no masks.pt given" if not named["mask_files"]
            else "no first-layer detail: the masks.pt files differ in shape or lack agent.fc1")
        ax.set_title(f"MAST-{where} ({seeds_text(len(runs))}){missing}", fontsize=9)
        fig.colorbar(image, ax=ax, label="active fraction")
    if detail is not None:
        ax = axes[0][-1]
        image = ax.imshow(detail, aspect="auto", cmap="viridis", vmin=0, vmax=max(1e-9, float(detail.max())))
        ax.set_xlabel("input feature of agent.fc1")
        ax.set_yticks(range(detail.shape[0]), [f"agent {a}" for a in range(detail.shape[0])], fontsize=7)
        ax.set_title(f"first layer: connected fraction per input ({len(named['mask_files'])} mask file(s))",
                     fontsize=9)
        fig.colorbar(image, ax=ax, label="fraction of hidden units")
    fig.tight_layout()
    mark_evidence(fig, judge(masks, keys))
    return fig, shown_runs(masks)
