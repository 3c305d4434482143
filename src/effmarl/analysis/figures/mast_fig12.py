"""Paper 2, Figure 12: how MAST shares its one budget between agents and unit types.

Per run r (column unit_type of agent_masks.summary.parquet), agent a of its n agents holds A_a = Σ_layers active_a
connections; its share of the run's budget is A_a / Σ_b A_b, and its holding relative to an equal split is
    h_a = n · A_a / Σ_b A_b        (1 for every agent where the budget is split equally).
Per unit type u: H_u = mean_{a of type u} h_a and its share of the budget S_u = Σ_{a of type u} A_a / Σ_b A_b.
Over seeds: the mean of H_u with its 95 % Student-t interval (stats.mean_interval via metrics.mast.sweep_stats).
The agents' own h_a are drawn as dots. Summed actives averaged over agents (the quantity drawn before) equal the
global budget / n by construction, and on a map with one unit type an allocation across types does not exist:
runs with one unit type are not drawn, and the workflow makes this figure only from runs on a map with several
(INPUTS `where_some`). With the optional `allocation` role (study `mast_alloc`: cfg.sparse.allocation
learned|equal|by_type), the win rate of MAST's learned allocation against manual budgets."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional, read_tables
from effmarl.analysis.metrics import (
    LAST_K,
    STATISTIC,
    final_win_rate,
    judge,
    seeds_text,
    shown_runs,
    sweep_stats,
    win_rate_label,
)
from effmarl.analysis.style import bars
from effmarl.config import ConfigError

ALLOCATION = "cfg.sparse.allocation"
ALLOCATION_ORDER = ["learned", "equal", "by_type"]
MAP = "cfg.env.map"
CAPTION = ("Paper 2, Figure 12 on SMAX maps with several unit types: left, what each agent holds of MAST's one "
           "budget in its final masks, as n × its share of the active connections of all n agents' networks "
           "(summed over layers; 1 = an equal split): dots = agents of each run, bar = mean over seeds of the "
           "per-run mean over the agents of a unit type, error bar = 95 % Student-t interval (none for 1 seed), "
           "with the type's share of the budget in its label; right (when given), win rate of MAST's learned "
           "allocation vs manual budgets (equal per agent, by unit type): " + STATISTIC + ". Made only from runs on a "
           "map with several unit types (on one, there is no allocation across types to show).")
REPRODUCES = "Paper 2, Figure 12."
CLAIM = "The budget MAST learns to share between agents and unit types beats fixed manual splits."

OUTPUT = {"group": "mast", "stem": "fig12_allocation"}
# the allocation study's runs where the profile has it, else Table 1's own MAST runs (mast_sweep); either only where
# some run is on a map with several ally unit types (SMAX: 2s3z, 3s5z; tests/test_mast_figure_designs.py checks the
# list against SMAX's scenarios)
INPUTS = {"masks": {"study": ["mast_alloc", "mast_sweep"], "take": "first", "table": "agent_masks",
                    "where_some": {"env.map": ["2s3z", "3s5z"]},
                    "doc": "agent_masks.summary.parquet of MAST runs on a map with several unit types"},
          "allocation": {"study": "mast_alloc", "optional": True, "doc": "metrics.summary.parquet of mast_alloc"}}


def holdings(masks: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per agent, per unit type) of each run of `masks` (rows: run, agent, unit_type, layer, active): per agent
    `active` (Σ layers), `share` = active / the run's total and `held` = n · share; per (run, unit type) `held` =
    the mean of its agents' `held`, `share` = the sum of their shares and `agents`."""
    ident = [c for c in ("cfg.study", "run_id") if c in masks]
    keys = [*ident, *[c for c in (MAP, ALLOCATION) if c in masks]]
    agents = masks.groupby([*keys, "agent", "unit_type"], as_index=False)["active"].sum()
    total = agents.groupby(keys)["active"].transform("sum")
    agents["share"] = agents["active"] / total
    agents["held"] = agents.groupby(keys)["agent"].transform("count") * agents["share"]
    types = agents.groupby([*keys, "unit_type"], as_index=False).agg(
        held=("held", "mean"), share=("share", "sum"), agents=("agent", "count"))
    return agents, types


def make(inputs: list[str], k: int = LAST_K):
    named = named_inputs(inputs, INPUTS, "figure mast_fig12")
    masks = read_tables(named["masks"])
    if "run_id" not in masks:  # a single run's own table
        masks["run_id"] = "run"
    for column, default in ((MAP, "map"), (ALLOCATION, "learned")):
        masks[column] = masks[column].fillna(default) if column in masks else default
    masks["unit_type"] = masks["unit_type"].astype("string") if "unit_type" in masks else pd.NA
    ident = [c for c in ("cfg.study", "run_id") if c in masks]
    several = masks.dropna(subset=["unit_type"]).groupby(ident)["unit_type"].transform("nunique") > 1
    masks = masks.dropna(subset=["unit_type"])[several]
    if masks.empty:
        raise ConfigError(["no run with agents of several unit types: an allocation across unit types cannot be "
                           "shown (on one type every agent's mean holding is the budget / n by construction)"],
                          "effmarl figure mast_fig12")
    agents, types = holdings(masks)
    keys = [MAP, ALLOCATION, "unit_type"]  # seeds counted per map, allocation and type, never across them
    stats = sweep_stats(types, keys, value="held")
    shares = types.groupby(keys)["share"].mean()
    stats["order"] = stats[ALLOCATION].map({v: i for i, v in enumerate(ALLOCATION_ORDER)}).fillna(99)
    stats = stats.sort_values([MAP, "order", "unit_type"]).reset_index(drop=True)
    several_allocations = stats[ALLOCATION].nunique() > 1
    labels = [f"{m}: {t}" + (f"\n{a}" if several_allocations else "") + f"\n{shares[(m, a, t)]:.0%} of budget"
              for m, a, t in zip(stats[MAP], stats[ALLOCATION], stats["unit_type"], strict=True)]
    allocation = read_optional(named["allocation"])
    n = 1 + (allocation is not None)
    fig, axes = plt.subplots(1, n, figsize=(max(4.6, 1.3 * len(stats) + 1.5) + 4.6 * (n - 1), 3.6), squeeze=False)
    ax = axes[0][0]
    bars(ax, stats, labels, value="mean", lo="lo", hi="hi")
    for i, (m, a, t) in enumerate(zip(stats[MAP], stats[ALLOCATION], stats["unit_type"], strict=True)):
        held = agents[(agents[MAP] == m) & (agents[ALLOCATION] == a) & (agents["unit_type"] == t)]["held"]
        ax.plot(i + np.linspace(-0.25, 0.25, len(held)), held, "o", color="0.15", markersize=3, alpha=0.6,
                label="one agent of one run" if i == 0 else None)
    ax.axhline(1.0, color="0.4", linestyle=":", linewidth=1, label="equal split")
    top = np.nanmax([stats["hi"].max(skipna=True), stats["mean"].max(), agents["held"].max()])
    ax.set_ylim(0, float(top) * 1.25)
    ax.set_ylabel("held / equal split (n × share of budget)", fontsize=8)
    ax.set_xlabel("map: unit type" + (" / budget allocation" if several_allocations else ""))
    ax.set_title(f"what each agent holds of MAST's budget ({seeds_text(stats['seeds'])})", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    shown = [shown_runs(masks)]
    if allocation is not None:
        ax = axes[0][1]
        if ALLOCATION not in allocation:
            allocation[ALLOCATION] = "learned"
        a = sweep_stats(final_win_rate(allocation, k), [ALLOCATION])
        a["order"] = a[ALLOCATION].map({v: i for i, v in enumerate(ALLOCATION_ORDER)}).fillna(99)
        a = a.sort_values("order")
        bars(ax, a, list(a[ALLOCATION]), value="mean", lo="lo", hi="hi")
        ax.set_ylim(0, 1.1)
        ax.set_ylabel(win_rate_label(k), fontsize=8)
        ax.set_xlabel("budget allocation")
        ax.set_title(f"learned vs manual allocation ({seeds_text(a['seeds'])})", fontsize=9)
        shown.append(shown_runs(allocation))
    fig.tight_layout()
    mark_evidence(fig, judge([(masks, [MAP, ALLOCATION, "unit_type"]), (allocation, [ALLOCATION])]))
    shown = [s for s in shown if s is not None]
    return fig, (pd.concat(shown, ignore_index=True) if shown else None)
