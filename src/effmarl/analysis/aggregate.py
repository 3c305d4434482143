"""Aggregate one table from many runs into a tidy (long-format) study table.

Each row keeps the run's id and its configuration flattened into `cfg.*` columns, plus the commit and
profile the run was produced with, so any figure can group by any configured axis and say which runs it
shows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd


def flatten(cfg: dict, prefix: str = "cfg") -> dict:
    flat = {}
    for key, value in cfg.items():
        name = f"{prefix}.{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, name))
        elif isinstance(value, list):
            flat[name] = json.dumps(value)
        else:
            flat[name] = value
    return flat


def run_table(table_path: str | Path) -> pd.DataFrame:
    """One run's table, with the run's identity and configuration columns attached."""
    table_path = Path(table_path)
    run_dir = table_path.parent
    prov = json.loads((run_dir / "provenance.json").read_text())
    frame = pd.read_parquet(table_path)
    frame["run_id"] = run_dir.name
    frame["git_commit"] = prov["git"]["commit"]
    for column, value in flatten(prov["config"]).items():
        frame[column] = value
    return frame


def aggregate(table_paths: list[str | Path]) -> pd.DataFrame:
    if not table_paths:
        raise ValueError("aggregate needs at least one run table")
    return pd.concat([run_table(p) for p in table_paths], ignore_index=True)
