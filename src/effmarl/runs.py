"""A run's output directory: results/<study>/<run_id>/ with tables, JSON and provenance.

provenance.json is written last, so its presence marks a run that finished.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from effmarl import io, provenance


class RunDir:
    def __init__(self, path: str | Path, config: dict):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.config = config
        self.started_at = provenance.utc_now()

    @property
    def checkpoint_dir(self) -> Path:
        return self.path / "checkpoint"

    def write_table(self, name: str, rows: list[dict] | pd.DataFrame) -> Path:
        frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
        return io.write_parquet(self.path / f"{name}.parquet", frame)

    def write_json(self, name: str, obj) -> Path:
        return io.write_json(self.path / f"{name}.json", obj)

    def finish(self, **extra) -> Path:
        rec = provenance.record(self.config, started_at=self.started_at, extra=extra or None)
        return io.write_json(self.path / "provenance.json", rec)
