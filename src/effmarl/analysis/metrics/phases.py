"""Paper-1 phase metrics from a phases table (one row per run, episode and phase: seconds, calls): the warm-up
cut, per-run totals and per-phase seconds, sampling time per update round, and phase shares. Every per-run value
is computed per run identity (study, run_id) and carries the run's whole configuration."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.metrics.runs import per_run, require_alike, run_columns
from effmarl.profile_checks import PAPER1_COMPARABLE_SETTINGS

# `update_all_trainers` encloses the five update sub-phases; `checkpoint` (saving run state) is not training.
LEAF_PHASES = ["action_selection", "env_step", "buffer_add", "sampling", "target_q", "q_loss", "p_loss",
               "target_update"]
UPDATE_PHASES = ["sampling", "target_q", "q_loss", "p_loss", "target_update"]
# Evidence for a phase share vs N (paper 1, figures 1-2): below this, a figure says it is illustrative.
MIN_UPDATE_ROUNDS, MIN_SEEDS = 20, 2


def require_one_budget(phases: pd.DataFrame, where: str) -> None:
    """One line per setting of PAPER1_COMPARABLE_SETTINGS (budget, warm-up, update interval, batch, lr …) whose
    value differs between the runs of `phases`, naming the values and the studies that hold them: phase shares or
    times of runs trained differently are not pooled into one bar or compared across bars."""
    frames = {str(study): rows for study, rows in phases.groupby("cfg.study")} if "cfg.study" in phases else {
        "runs": phases}
    require_alike(frames, where, [f"cfg.{p}" for p in PAPER1_COMPARABLE_SETTINGS],
                  why="phase shares compare runs of one budget and update-round count")


def evidence(phases: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per group of `by`: `runs`, `seeds` (distinct cfg.seed) and the fewest `update_rounds` of a run (calls of
    update_all_trainers), the numbers a phase-share bar rests on."""
    keys = run_columns(phases)
    rounds = phases[phases.phase == "update_all_trainers"].groupby(keys)["calls"].sum().rename("update_rounds")
    table = per_run(phases, rounds.to_frame()) if len(rounds) else per_run(phases, pd.Series(
        0, index=phases.drop_duplicates(keys).set_index(keys).index, name="update_rounds"))
    seed = "cfg.seed" if "cfg.seed" in table else keys[-1]
    return table.groupby(by).agg(runs=(keys[-1], "size"), seeds=(seed, "nunique"),
                                 update_rounds=("update_rounds", "min"))


def shortfalls(evidence_table: pd.DataFrame) -> list[str]:
    """What makes an `evidence` table illustrative: fewer than MIN_UPDATE_ROUNDS update rounds or MIN_SEEDS seeds."""
    out = []
    if len(evidence_table) and evidence_table["update_rounds"].min() < MIN_UPDATE_ROUNDS:
        out.append(f"{int(evidence_table['update_rounds'].min())} update rounds per run (< {MIN_UPDATE_ROUNDS})")
    if len(evidence_table) and evidence_table["seeds"].min() < MIN_SEEDS:
        out.append(f"{int(evidence_table['seeds'].min())} seed(s) at some N (< {MIN_SEEDS})")
    return out


def steady_state(phases: pd.DataFrame) -> pd.DataFrame:
    """Each run's phase rows from its first update round on. The warm-up (no update rounds yet) is a third of a
    default-profile run but under 2 % of the paper's (25 600 of 1.5 M steps), so shares and end-to-end times are
    compared after it. A run with no update round keeps all its rows."""
    run = run_columns(phases)
    first = phases[phases.phase == "update_all_trainers"].groupby(run)["episode"].min().rename("_first_update")
    first_update = phases.join(first, on=run)["_first_update"].fillna(-1)
    return phases[phases.episode >= first_update]


def phase_seconds(phases: pd.DataFrame, names: list[str] = LEAF_PHASES) -> pd.DataFrame:
    """Seconds per run and phase, wide (one column per name in `names`), with every configuration column."""
    sel = phases[phases.phase.isin(names)]
    wide = sel.pivot_table(index=run_columns(phases), columns="phase", values="seconds", aggfunc="sum",
                           fill_value=0.0).reindex(columns=names, fill_value=0.0)
    wide.columns.name = None
    return per_run(phases, wide)


def run_totals(phases: pd.DataFrame) -> pd.DataFrame:
    """Per run: `total` training seconds (sum of the leaf phases) and `update` seconds (the enclosing
    update_all_trainers phase), with every configuration column."""
    keys = run_columns(phases)
    leaf = phases[phases.phase.isin(LEAF_PHASES)].groupby(keys)["seconds"].sum().rename("total")
    update = phases[phases.phase == "update_all_trainers"].groupby(keys)["seconds"].sum().rename("update")
    return per_run(phases, pd.concat([leaf, update], axis=1).fillna(0.0))


def sampling_per_round(phases: pd.DataFrame, clock: str = "seconds") -> pd.DataFrame:
    """Per run: update rounds and the sampling phase's milliseconds per update round on `clock` (`seconds`, wall, or
    `cpu_seconds`, the process's CPU time; a run whose sampling rows lack it gets NaN)."""
    keys = run_columns(phases)
    calls = phases[phases.phase == "update_all_trainers"].groupby(keys)["calls"].sum()
    rows = phases[phases.phase == "sampling"]
    rows = rows if clock in rows else rows.assign(**{clock: float("nan")})
    seconds = rows.groupby(keys)[clock].agg(lambda v: v.sum() if v.notna().all() else float("nan"))
    values = pd.DataFrame({"update_rounds": calls, "sampling_ms_per_round": 1e3 * seconds / calls})
    return per_run(phases, values)


def thousands(value) -> str:
    """A whole number with a space between thousands: 50 000."""
    return f"{int(value):,}".replace(",", " ")


def round_fill(runs: pd.DataFrame) -> tuple[int, int] | None:
    """(fewest, most) transitions the replay buffers of `runs` (any table with their configuration columns) held while
    update rounds ran: a run's first round comes at the first multiple of offpolicy.update_every at or above its
    warm-up, its last at the last multiple within budget.episodes x env.max_cycles x env.num_envs env steps, each
    held at replay.buffer_size. None where a setting is missing."""
    need = ["cfg.offpolicy.update_every", "cfg.offpolicy.warmup", "cfg.budget.episodes", "cfg.env.max_cycles",
            "cfg.replay.buffer_size"]
    if runs.empty or not set(need) <= set(runs):
        return None
    every, cap = runs["cfg.offpolicy.update_every"], runs["cfg.replay.buffer_size"]
    copies = runs["cfg.env.num_envs"].fillna(1) if "cfg.env.num_envs" in runs else 1
    steps = runs["cfg.budget.episodes"] * runs["cfg.env.max_cycles"] * copies
    first = (-(-runs["cfg.offpolicy.warmup"] // every) * every).clip(upper=cap)
    last = (steps // every * every).clip(upper=cap)
    return int(first.min()), int(last.max())


def shares(phases: pd.DataFrame, by: list[str], names: list[str], total: list[str]) -> pd.DataFrame:
    """% of the summed seconds of the `total` phases, for each phase in `names`, per group of `by` (seconds
    summed over the group's runs)."""
    sec = phases.pivot_table(index=by, columns="phase", values="seconds", aggfunc="sum", fill_value=0.0)
    sec = sec.reindex(columns=sorted(set(names) | set(total)), fill_value=0.0)
    return sec[names].div(sec[total].sum(axis=1), axis=0) * 100
