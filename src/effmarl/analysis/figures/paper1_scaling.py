"""Paper 1, figures 1 and 2 from the training runs' phases tables, vs agent count N: share of training time per
leaf phase (left) and the split of "update all trainers" into sampling / target-Q / Q loss / P loss / target update
(right), one row per algorithm, reference storage with uniform sampling (the paper's baseline; other storages if
it is absent); seconds summed over seeds. A phase has one colour in both columns.

Every bar compares runs of one budget (metrics.require_one_budget refuses runs trained differently, e.g. a long
study's N = 3 runs pooled with a short study's); each panel's title gives the seeds and update rounds per run, and
a figure resting on fewer than MIN_UPDATE_ROUNDS rounds or MIN_SEEDS seeds at some N is stamped illustrative."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from effmarl.analysis.io import named_inputs, read_tables, stamp
from effmarl.analysis.metrics import (
    LEAF_PHASES,
    UPDATE_PHASES,
    evidence,
    require_one_budget,
    shares,
    shortfalls,
    steady_state,
)
from effmarl.analysis.style import PHASE_COLORS

CAPTION = ("Paper 1, Figures 1 and 2: training time by phase vs agent count N (left: share of total training "
           "time; right: share of 'update all trainers' per sub-phase), per algorithm, reference storage with uniform "
           "sampling; phase seconds measured inside the training runs after the warm-up (from the first update "
           "round on) and summed over seeds; every run of the figure has one budget (seeds and update rounds per "
           "run in each title).")
REPRODUCES = "Paper 1, figures 1 and 2 (phase breakdown and update breakdown vs agent count)."
CLAIM = "'Update all trainers' grows from about 35 % (N = 3) to about 85 % (N = 48) of training time."
OUTPUT = {"group": "paper1", "stem": "phase_scaling"}
# one budget at every N: paper1_scale, else paper1 (the paper profile's paper1 has every N)
INPUTS = {"phases": {"study": ["paper1_scale", "paper1"], "table": "phases", "take": "first",
                     "doc": "phases.summary.parquet of the phase-scaling study (one budget at every N)"}}


def baseline_runs(summary: pd.DataFrame) -> pd.DataFrame:
    base = summary[(summary["cfg.replay.storage"] == "reference") & (summary["cfg.replay.sampler"] == "uniform")]
    return base if not base.empty else summary


def _stack(ax, table: pd.DataFrame, phases: list[str], title: str) -> None:
    x = [str(n) for n in table.index]
    bottom = pd.Series(0.0, index=table.index)
    for phase in phases:
        ax.bar(x, table[phase], bottom=bottom, color=PHASE_COLORS[phase], label=phase)
        bottom += table[phase]
    ax.set_ylim(0, 100)
    ax.set_xlabel("agents N")
    ax.set_ylabel("share (%)")
    ax.set_title(title, fontsize=9)


def make(inputs: list[str]):
    summary = read_tables(named_inputs(inputs, INPUTS, "figure paper1_scaling")["phases"])
    base = baseline_runs(steady_state(summary))
    require_one_budget(base, "figure paper1_scaling")
    by = ["cfg.algo", "cfg.env.n_agents"]
    support = evidence(base, by)
    leaf = shares(base, by, LEAF_PHASES, LEAF_PHASES)
    upd = shares(base, by, UPDATE_PHASES, ["update_all_trainers"])
    algos = list(leaf.index.get_level_values(0).unique())
    fig, axes = plt.subplots(len(algos), 2, figsize=(10, 3.2 * len(algos)), squeeze=False)
    for row, algo in zip(axes, algos, strict=True):
        held = support.loc[algo]
        seeds = "/".join(sorted({str(int(v)) for v in held["seeds"]}))
        counts = f"{seeds} seeds, {int(held['update_rounds'].min())} update rounds per run"
        _stack(row[0], leaf.loc[algo], LEAF_PHASES, f"{algo.upper()}: training time by phase ({counts})")
        _stack(row[1], upd.loc[algo], UPDATE_PHASES, f"{algo.upper()}: update all trainers by sub-phase")
    fig.tight_layout()
    stamp(fig, shortfalls(support))
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 0.98), title="phase",
               title_fontsize=7)
    return fig, base
