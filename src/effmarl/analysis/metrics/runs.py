"""Run identity. A run is (`cfg.study`, `run_id`); every `cfg.*` column is part of its description, so any grid
key (the neighbor window k, the sparsity, the map …) keeps runs apart without a figure having to list it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from effmarl.config import ConfigError

RUN_ID = ["cfg.study", "run_id"]
# Pseudo-studies of measurements that train nothing (the paper-1 sampling benchmark and counters).
MEASUREMENTS = {"paper1_micro"}
# Columns that describe where a run came from rather than what it is (never plotted as an axis).
BOOKKEEPING = {"cfg.study", "cfg.profile", "cfg.threads"}
# What names a run where an output says which runs it was made from (its footer and provenance sidecar).
RUN_COLUMNS = ["run_id", "git_commit", "cfg.study", "cfg.profile"]


def run_columns(frame: pd.DataFrame) -> list[str]:
    """The identity columns present in `frame` (run_id alone for tables without a study column)."""
    return [c for c in RUN_ID if c in frame]


def shown_runs(frame: pd.DataFrame | None) -> pd.DataFrame | None:
    """`frame` for the footer naming the runs, or None where it lacks the run identity columns."""
    return frame if frame is not None and set(RUN_COLUMNS) <= set(frame.columns) and len(frame) else None


def config_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.startswith("cfg.")]


def runs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per run: its identity and every configuration column."""
    cols = list(dict.fromkeys(run_columns(frame) + config_columns(frame)))
    return frame[cols].drop_duplicates(run_columns(frame)).reset_index(drop=True)


def grid_keys(frame: pd.DataFrame) -> list[str]:
    """The configuration columns that tell the runs of `frame` apart (the grid keys), in column order. A column that
    follows from earlier grid keys (MASAC's entropy settings, present only where algo is masac) is not one."""
    table = runs(frame)
    text = table.astype(str)
    kept: list[str] = []
    for column in config_columns(table):
        if column in BOOKKEEPING or text[column].nunique() < 2:
            continue
        if not kept or (text.groupby(kept)[column].nunique() > 1).any():
            kept.append(column)
    return kept


def per_run(frame: pd.DataFrame, values: pd.DataFrame | pd.Series) -> pd.DataFrame:
    """Attach every run's configuration to `values` indexed by the run identity (one row per run)."""
    values = values.to_frame() if isinstance(values, pd.Series) else values
    return runs(frame).merge(values.reset_index(), on=run_columns(frame), how="inner")


def label(row: pd.Series, keys: list[str]) -> str:
    """'algo=maddpg n_agents=3 k=16' from the last dotted part of each key."""
    return " ".join(f"{k.rsplit('.', 1)[-1]}={row[k]}" for k in keys)


def setting_text(value) -> str:
    """250000, 250000.0 and np.int64(250000) alike: a whole float is written as an integer."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value.item() if isinstance(value, np.generic) else value)


def require_alike(frames: dict[str, pd.DataFrame], where: str, settings, keys: tuple[str, ...] = (),
                  why: str = "every method of one comparison must be trained alike") -> None:
    """A one-line ConfigError per `settings` column whose value differs between the runs of `frames` ({name: table},
    e.g. an input role or a study) within one group of `keys` (all runs together when `keys` is empty), naming the
    values and the frames that hold them. The rule every comparison of runs follows, paper 1's and paper 2's."""
    values: dict[tuple, dict[str, dict[str, set]]] = {}
    for name, frame in frames.items():
        if frame is None or frame.empty:
            continue
        present = [c for c in keys if c in frame]
        for group, rows in frame.groupby(present, dropna=False, sort=True) if present else [((), frame)]:
            cell = values.setdefault(group if isinstance(group, tuple) else (group,), {})
            for column in (c for c in settings if c in rows):
                for value in {setting_text(v) for v in rows[column].dropna()}:
                    cell.setdefault(column, {}).setdefault(value, set()).add(name)
    lines = [("/".join(map(str, group)) + ": " if group else "") + f"runs differ in {column}: "
             + "; ".join(f"{value} ({', '.join(sorted(names))})" for value, names in sorted(seen.items()))
             + f" ({why})"
             for group, cell in sorted(values.items(), key=lambda kv: str(kv[0]))
             for column, seen in cell.items() if len(seen) > 1]
    if lines:
        raise ConfigError(lines, where)


def require_one_commit(runs_table: pd.DataFrame | None, where: str) -> None:
    """A one-line ConfigError when the trained runs of `runs_table` (identity columns with `git_commit`; the
    MEASUREMENTS pseudo-studies aside) come from more than one commit, naming each commit and its studies and run
    counts: a learner change alters the runs, so one table or figure compares runs of one code."""
    if runs_table is None or runs_table.empty or "git_commit" not in runs_table:
        return
    trained = runs_table[~runs_table["cfg.study"].isin(MEASUREMENTS)] if "cfg.study" in runs_table else runs_table
    trained = trained.drop_duplicates(run_columns(trained))
    commits = trained.groupby(trained["git_commit"].fillna("unknown").astype(str))
    if len(commits) > 1:
        held = "; ".join(f"{str(commit)[:10]}: " + ", ".join(
            f"{study} ({n} runs)" for study, n in group.groupby("cfg.study").size().items())
            for commit, group in commits)
        raise ConfigError([f"runs of {len(commits)} commits ({held}); retrain them at one commit"], where)
