"""Paper 2, Figure 12: how MAST shares its budget between unit types - the active connections of an agent's networks
(summed over its layers) per unit type, IQM over seeds with a 95 % bootstrap interval (column unit_type of
agent_masks.summary.parquet; absent -> one type "all"); with the optional `allocation` role (study `mast_alloc`:
cfg.sparse.allocation learned|equal|by_type), the win rate of MAST's learned allocation against manual budgets."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional, read_tables
from effmarl.analysis.metrics import LAST_K, final_win_rate, judge, seed_stats, seeds_text, shown_runs
from effmarl.analysis.style import bars

ALLOCATION = "cfg.sparse.allocation"
ALLOCATION_ORDER = ["learned", "equal", "by_type"]
CAPTION = ("Paper 2, Figure 12 on SMAX: left, active connections per agent (summed over the agent network's layers) "
           "by unit type in MAST's final masks - mean over the agents of a type per run, then IQM over seeds with a "
           "95 % percentile-bootstrap interval (none for 1 seed), n = seeds; right (when given), win rate of MAST's "
           "learned allocation vs manual budgets (equal per agent, by unit type): IQM over seeds of the per-run "
           "mean test win rate of the last min(20, available) evaluations in the final 10 % of training, 95 % "
           "interval.")
REPRODUCES = "Paper 2, Figure 12."
CLAIM = "The budget MAST learns to share between agents and unit types beats fixed manual splits."

OUTPUT = {"group": "mast", "stem": "fig12_allocation"}
# the allocation study's runs where the profile has it, else Table 1's own MAST runs (mast_sweep)
INPUTS = {"masks": {"study": ["mast_alloc", "mast_sweep"], "take": "first", "table": "agent_masks",
                    "doc": "agent_masks.summary.parquet of the MAST runs"},
          "allocation": {"study": "mast_alloc", "optional": True, "doc": "metrics.summary.parquet of mast_alloc"}}


def make(inputs: list[str], k: int = LAST_K):
    named = named_inputs(inputs, INPUTS, "figure mast_fig12")
    masks = read_tables(named["masks"])
    if "unit_type" not in masks:
        masks["unit_type"] = "all"
    masks["unit_type"] = masks["unit_type"].fillna("all").astype(str)
    if "run_id" not in masks:  # a single run's own table
        masks["run_id"] = "run"
    ident = [c for c in ("cfg.study", "run_id") if c in masks]
    if ALLOCATION not in masks:
        masks[ALLOCATION] = "learned"
    masks[ALLOCATION] = masks[ALLOCATION].fillna("learned")
    keys = ["unit_type", ALLOCATION]  # seeds are counted per unit type and allocation, never across allocations
    per_agent = masks.groupby([*ident, "agent", *keys], as_index=False)["active"].sum()
    per_run = per_agent.groupby([*ident, *keys], as_index=False)["active"].mean()
    stats = seed_stats(per_run, keys, value="active")
    stats["order"] = stats[ALLOCATION].map({v: i for i, v in enumerate(ALLOCATION_ORDER)}).fillna(99)
    stats = stats.sort_values(["order", "unit_type"]).reset_index(drop=True)
    labels = [t if len(stats[ALLOCATION].unique()) == 1 else f"{t}\n{a}"
              for t, a in zip(stats["unit_type"], stats[ALLOCATION], strict=True)]
    allocation = read_optional(named["allocation"])
    n = 1 + (allocation is not None)
    fig, axes = plt.subplots(1, n, figsize=(4.6 * n, 3.4), squeeze=False)
    ax = axes[0][0]
    bars(ax, stats, labels)
    ax.set_ylim(0, float(max(stats["iqm_hi"].max(skipna=True) if stats["iqm_hi"].notna().any() else 0,
                             stats["iqm"].max())) * 1.2 + 1)
    ax.set_ylabel("active connections per agent")
    ax.set_xlabel("unit type" if len(stats[ALLOCATION].unique()) == 1 else "unit type / budget allocation")
    ax.set_title(f"MAST's budget per unit type ({seeds_text(stats['seeds'])})", fontsize=9)
    shown = [shown_runs(masks)]
    if allocation is not None:
        ax = axes[0][1]
        if ALLOCATION not in allocation:
            allocation[ALLOCATION] = "learned"
        a = seed_stats(final_win_rate(allocation, k), [ALLOCATION])
        a["order"] = a[ALLOCATION].map({v: i for i, v in enumerate(ALLOCATION_ORDER)}).fillna(99)
        a = a.sort_values("order")
        bars(ax, a, list(a[ALLOCATION]))
        ax.set_ylim(0, 1.1)
        ax.set_ylabel(f"win rate (IQM, final 10 %, <= {k} evals)")
        ax.set_xlabel("budget allocation")
        ax.set_title(f"learned vs manual allocation ({seeds_text(a['seeds'])})", fontsize=9)
        shown.append(shown_runs(allocation))
    fig.tight_layout()
    mark_evidence(fig, judge([(masks, keys), (allocation, [ALLOCATION])]))
    shown = [s for s in shown if s is not None]
    return fig, (pd.concat(shown, ignore_index=True) if shown else None)
