"""Run identity. A run is (`cfg.study`, `run_id`); every `cfg.*` column is part of its description, so any grid
key (the neighbor window k, the sparsity, the map …) keeps runs apart without a figure having to list it."""

from __future__ import annotations

import pandas as pd

RUN_ID = ["cfg.study", "run_id"]
# Columns that describe where a run came from rather than what it is (never plotted as an axis).
BOOKKEEPING = {"cfg.study", "cfg.profile", "cfg.threads"}


def run_columns(frame: pd.DataFrame) -> list[str]:
    """The identity columns present in `frame` (run_id alone for tables without a study column)."""
    return [c for c in RUN_ID if c in frame]


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
