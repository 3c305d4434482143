"""Paper 1: training-time breakdown by phase for every run of one paper-1 study, one bar per run.

`update_all_trainers` encloses sampling, target_q, q_loss, p_loss and target_update, so bars stack the eight leaf
phases only; `checkpoint` (saving the run state) is not a training phase and is left out. Each bar is one run,
labelled by the study's grid keys (a k sweep's bars differ by k), so no two runs are merged."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from effmarl.analysis.common import PHASE_COLORS, named_inputs, read_tables
from effmarl.analysis.metrics import LEAF_PHASES, grid_keys, label, phase_seconds, steady_state

CAPTION = ("Share of training time per phase (action selection, environment step, buffer add, and the update "
           "phases sampling, target-Q, Q loss, P loss, target update), one bar per run of the study, labelled by "
           "its grid keys. Phases timed inside the training loop, from the first update round on (the warm-up is "
           "left out).")
INPUTS = {"phases": "phases.summary.parquet of one paper-1 study"}


def breakdown(phases: pd.DataFrame) -> pd.DataFrame:
    """One row per run: the leaf phases' seconds, `label` (the grid keys) and sorted by the grid keys."""
    wide = phase_seconds(steady_state(phases))
    keys = grid_keys(phases) or ["run_id"]
    wide["label"] = wide.apply(label, axis=1, keys=keys)
    return wide.sort_values(keys).reset_index(drop=True)


def make(inputs: list[str]):
    summary = read_tables(named_inputs(inputs, INPUTS, "figure paper1_phases")["phases"])
    wide = breakdown(summary)
    shares = wide[LEAF_PHASES].div(wide[LEAF_PHASES].sum(axis=1), axis=0) * 100
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(wide) + 1.4))
    left = pd.Series(0.0, index=wide.index)
    for phase in LEAF_PHASES:
        ax.barh(wide["label"], shares[phase], left=left, color=PHASE_COLORS[phase], label=phase)
        left += shares[phase]
    ax.set_xlabel("share of training time (%)")
    ax.set_xlim(0, 100)
    ax.tick_params(axis="y", labelsize=7)
    ax.invert_yaxis()
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    ax.set_title("Paper 1: training time by phase")
    fig.tight_layout()
    return fig, summary
