"""Paper 1: training-time breakdown by phase for every run (algorithm × storage × sampler × N).

Reads a phases summary (results/<study>/phases.summary.parquet). `update_all_trainers` encloses sampling,
target_q, q_loss, p_loss and target_update, so bars stack the eight leaf phases only; `checkpoint` (saving
the run state) is not a training phase and is left out.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from effmarl.analysis.common import read_tables

CAPTION = ("Share of training time per phase (action selection, environment step, buffer add, and the update "
           "phases sampling, target-Q, Q loss, P loss, target update) for each run, by algorithm, replay "
           "storage × sampler and agent count N. Phases timed inside the training loop, from the first update "
           "round on (the warm-up is left out).")

LEAF_PHASES = ["action_selection", "env_step", "buffer_add", "sampling", "target_q", "q_loss", "p_loss",
               "target_update"]
RUN_KEYS = ["cfg.algo", "cfg.env.n_agents", "cfg.replay.storage", "cfg.replay.sampler", "cfg.seed"]


def steady_state(phases: pd.DataFrame) -> pd.DataFrame:
    """Each run's phase rows from its first update round on. The warm-up (no update rounds yet) is a third of a
    default-profile run but under 2 % of the paper's (25 600 of 1.5 M steps), so shares and end-to-end times are
    compared after it. A run with no update round keeps all its rows."""
    run = [k for k in ("cfg.study", "run_id") if k in phases]
    first = phases[phases.phase == "update_all_trainers"].groupby(run)["episode"].min().rename("_first_update")
    first_update = phases.join(first, on=run)["_first_update"].fillna(-1)
    return phases[phases.episode >= first_update]


def run_totals(phases: pd.DataFrame, keys: list[str] = RUN_KEYS) -> pd.DataFrame:
    """Per run (grouped by `keys`): `total` training seconds (sum of the leaf phases) and `update` seconds
    (the enclosing update_all_trainers phase)."""
    keys = [k for k in keys if k in phases]
    leaf = phases[phases.phase.isin(LEAF_PHASES)].groupby(keys)["seconds"].sum().rename("total")
    update = phases[phases.phase == "update_all_trainers"].groupby(keys)["seconds"].sum().rename("update")
    return pd.concat([leaf, update], axis=1).fillna(0.0).reset_index()


def run_label(row) -> str:
    return (f"{row['cfg.algo']} N={row['cfg.env.n_agents']} {row['cfg.replay.storage']}/"
            f"{row['cfg.replay.sampler']} s{row['cfg.seed']}")


def phase_totals(summary: pd.DataFrame) -> pd.DataFrame:
    """Seconds per run and leaf phase, wide: one row per run, one column per phase, plus `label`."""
    leaf = summary[summary.phase.isin(LEAF_PHASES)]
    wide = leaf.pivot_table(index=RUN_KEYS, columns="phase", values="seconds", aggfunc="sum", fill_value=0.0)
    wide = wide.reindex(columns=LEAF_PHASES, fill_value=0.0).reset_index()
    wide["label"] = wide.apply(run_label, axis=1)
    return wide.sort_values(RUN_KEYS)


def make(inputs: list[str]):
    summary = read_tables(inputs)
    wide = phase_totals(steady_state(summary))
    shares = wide[LEAF_PHASES].div(wide[LEAF_PHASES].sum(axis=1), axis=0) * 100
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(wide) + 1.6))
    left = pd.Series(0.0, index=wide.index)
    colors = plt.get_cmap("tab10").colors
    for color, phase in zip(colors, LEAF_PHASES, strict=False):
        ax.barh(wide["label"], shares[phase], left=left, color=color, label=phase)
        left += shares[phase]
    ax.set_xlabel("share of training time (%)")
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    ax.legend(ncol=4, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12 - 1.0 / (len(wide) + 4)))
    ax.set_title("Paper 1: training time by phase")
    fig.tight_layout()
    return fig, summary
