"""Paper 1, Figure 1 (numbered as in docs/specification.md) at the resolution of single runs: training-time
breakdown by phase for every run of one paper-1 study, one bar per run.

`update_all_trainers` encloses sampling, target_q, q_loss, p_loss and target_update, so bars stack the eight leaf
phases only; `checkpoint` (saving the run state) is not a training phase and is left out. Each bar is one run, so
no two runs are merged. Bars are grouped by configuration (the study's grid keys other than the seed, named in
words: "MADDPG, 12 agents, reference storage, neighbor sampling"), one bar per seed within a group ("seed 0"); a
k sweep's groups differ by the window k."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_tables
from effmarl.analysis.metrics import LEAF_PHASES, grid_keys, label, phase_seconds, steady_state
from effmarl.analysis.metrics.timed_alone import timed_alone
from effmarl.analysis.style import PHASE_COLORS

CAPTION = ("Paper 1, Figure 1 per run: share of training time per phase (action selection, environment step, "
           "buffer add, and the update phases sampling, target-Q, Q loss, P loss, target update), one bar per run "
           "of the study, grouped by configuration (algorithm, agents, storage, sampler, window k) with one bar per "
           "seed. Phases timed inside the training loop, from the first update round on (the warm-up is left out).")
REPRODUCES = ("Paper 1, Figure 1 (training-time breakdown by phase; figures numbered as in docs/specification.md) "
              "at the resolution of single runs; for the k sweep, one group of bars per window k.")
CLAIM = "Mini-batch sampling is a large part of 'update all trainers', and neighbor sampling shrinks it."
OUTPUT = {"group": "{study}", "stem": "phase_breakdown", "for_each": "paper1*"}
INPUTS = {"phases": {"study": "{study}", "table": "phases", "doc": "phases.summary.parquet of one paper-1 study"}}
SEED = "cfg.seed"
GROUP_GAP = 0.6  # blank bar heights between two configuration groups


def setting_name(key: str, value) -> str:
    """One grid key's value in words: 'MADDPG', '12 agents', 'reference storage', 'neighbor sampling',
    'window k 16', 'seed 1'; any other key as '<its last dotted part, underscores as spaces> <value>'."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    named = {"cfg.algo": lambda v: str(v).upper(), "cfg.env.n_agents": lambda v: f"{v} agents",
             "cfg.replay.storage": lambda v: f"{v} storage", "cfg.replay.sampler": lambda v: f"{v} sampling",
             "cfg.replay.neighbor_k": lambda v: f"window k {v}", SEED: lambda v: f"seed {v}"}
    if key in named:
        return named[key](value)
    return f"{key.rsplit('.', 1)[-1].replace('_', ' ')} {value}"


def wrap_parts(text: str, per_line: int = 2) -> str:
    """A group's name with `per_line` of its comma-separated settings on each line ('MADDPG, 12 agents,' over
    'reference storage, neighbor sampling'), so a setting is never split and every group breaks alike."""
    parts = text.split(", ")
    return ",\n".join(", ".join(parts[i:i + per_line]) for i in range(0, len(parts), per_line))


def breakdown(phases: pd.DataFrame) -> pd.DataFrame:
    """One row per run: the leaf phases' seconds, `label` (the grid keys as key=value), `group` (the grid keys
    other than the seed, in words; 'all runs' where there are none), `member` (the seed in words, or '' where the
    seed is not a grid key), sorted by the configuration keys and then the seed."""
    wide = phase_seconds(steady_state(phases))
    keys = grid_keys(phases) or ["run_id"]
    wide["label"] = wide.apply(label, axis=1, keys=keys)
    config = [k for k in keys if k != SEED]
    wide["group"] = wide.apply(lambda r: ", ".join(setting_name(k, r[k]) for k in config), axis=1) if config \
        else "all runs"
    wide["member"] = wide[SEED].map(lambda v: setting_name(SEED, v)) if SEED in keys else ""
    return wide.sort_values([*config, *([SEED] if SEED in keys else [])]).reset_index(drop=True)


def _positions(wide: pd.DataFrame) -> list[float]:
    """y of each bar: consecutive, with GROUP_GAP between configuration groups."""
    y, out = 0.0, []
    for i, group in enumerate(wide["group"]):
        if i and group != wide["group"].iloc[i - 1]:
            y += GROUP_GAP
        out.append(y)
        y += 1.0
    return out


def make(inputs: list[str]):
    summary = read_tables(named_inputs(inputs, INPUTS, "figure paper1_phases")["phases"])
    wide = breakdown(summary)
    shares = wide[LEAF_PHASES].div(wide[LEAF_PHASES].sum(axis=1), axis=0) * 100
    y = pd.Series(_positions(wide), index=wide.index)
    seeds_shown = (wide["member"] != "").all()
    fig, ax = plt.subplots(figsize=(9, 0.28 * y.iloc[-1] + 1.9))
    left = pd.Series(0.0, index=wide.index)
    for phase in LEAF_PHASES:
        ax.barh(y, shares[phase], left=left, height=0.85, color=PHASE_COLORS[phase], label=phase)
        left += shares[phase]
    if seeds_shown:
        # seeds as tick labels, each configuration's name once, to their left, centred on its bars
        ax.set_yticks(y, wide["member"], fontsize=8)
        for group, rows in y.groupby(wide["group"], sort=False):
            ax.annotate(wrap_parts(group), xy=(0, rows.mean()), xycoords=("axes fraction", "data"),
                        xytext=(-46, 0), textcoords="offset points", ha="right", va="center", fontsize=8,
                        linespacing=1.1)
    else:
        ax.set_yticks(y, [wrap_parts(g, 3) for g in wide["group"]], fontsize=8)
    ax.set_ylim(y.iloc[-1] + 0.7, -0.7)
    ax.set_xlabel("share of training time (%)")
    ax.set_xlim(0, 100)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    ax.set_title("Training time by phase, one bar per run (paper 1, Figure 1)", fontsize=10)
    fig.tight_layout()
    return mark_evidence(fig, timed_alone(summary)), summary
