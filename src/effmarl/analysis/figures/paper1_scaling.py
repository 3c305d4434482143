"""Paper 1, figures 1, 2 and 5 from the training runs' phases tables, vs agent count N:
`paper1_scaling` — share of training time per leaf phase (left) and the split of "update all trainers" into
sampling / target-Q / Q loss / P loss / target update (right), one row per algorithm, reference storage with
uniform sampling (the paper's baseline; other storages if it is absent); seconds summed over seeds.
`end_to_end` (used by paper1_end_to_end) — training time per run, uniform vs neighbor."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from effmarl.analysis.common import read_tables
from effmarl.analysis.figures.paper1_phases import LEAF_PHASES, steady_state

CAPTION = ("Training time by phase vs agent count N (left: share of total training time; right: share of "
           "'update all trainers' per sub-phase), per algorithm, reference storage with uniform sampling; "
           "phase seconds measured inside the training runs after the warm-up (from the first update round on) "
           "and summed over seeds.")

UPDATE_PHASES = ["sampling", "target_q", "q_loss", "p_loss", "target_update"]


def baseline_runs(summary: pd.DataFrame) -> pd.DataFrame:
    base = summary[(summary["cfg.replay.storage"] == "reference") & (summary["cfg.replay.sampler"] == "uniform")]
    return base if not base.empty else summary


def shares(summary: pd.DataFrame, phases: list[str], total: list[str]) -> pd.DataFrame:
    """% of the sum of `total` phases per (algo, N), for each of `phases`."""
    sec = summary.pivot_table(index=["cfg.algo", "cfg.env.n_agents"], columns="phase", values="seconds",
                              aggfunc="sum", fill_value=0.0)
    sec = sec.reindex(columns=sorted(set(phases) | set(total)), fill_value=0.0)
    return sec[phases].div(sec[total].sum(axis=1), axis=0) * 100


def _stack(ax, table: pd.DataFrame, phases: list[str], title: str) -> None:
    x = [str(n) for n in table.index]
    bottom = pd.Series(0.0, index=table.index)
    for color, phase in zip(plt.get_cmap("tab10").colors, phases, strict=False):
        ax.bar(x, table[phase], bottom=bottom, color=color, label=phase)
        bottom += table[phase]
    ax.set_ylim(0, 100)
    ax.set_xlabel("agents N")
    ax.set_ylabel("share (%)")
    ax.set_title(title, fontsize=9)


def make(inputs: list[str]):
    summary = read_tables(inputs)
    base = baseline_runs(steady_state(summary))
    leaf = shares(base, LEAF_PHASES, LEAF_PHASES)
    upd = shares(base, UPDATE_PHASES, ["update_all_trainers"])
    algos = list(leaf.index.get_level_values(0).unique())
    fig, axes = plt.subplots(len(algos), 2, figsize=(9, 3.2 * len(algos) + 0.8), squeeze=False)
    for row, algo in zip(axes, algos, strict=True):
        _stack(row[0], leaf.loc[algo], LEAF_PHASES, f"{algo}: training time by phase")
        _stack(row[1], upd.loc[algo], UPDATE_PHASES, f"{algo}: update all trainers by sub-phase")
    axes[-1][0].legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    axes[-1][1].legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    fig.tight_layout()
    return fig, base
