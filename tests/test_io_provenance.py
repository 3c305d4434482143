"""Atomic outputs and provenance records."""

from __future__ import annotations

import pandas as pd
import pytest

from effmarl import io, provenance
from effmarl.runs import RunDir


def test_atomic_write_leaves_nothing_when_the_writer_fails(tmp_path):
    target = tmp_path / "out" / "table.parquet"

    def crash(tmp):
        tmp.write_bytes(b"half a file")
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError):
        io.write_with(target, crash)
    assert not target.exists()
    assert list(target.parent.iterdir()) == []  # no temporary file left either


def test_atomic_write_replaces_an_existing_file_whole(tmp_path):
    target = tmp_path / "a.json"
    io.write_json(target, {"v": 1})
    io.write_json(target, {"v": 2})
    assert target.read_text().strip().endswith("}") and '"v": 2' in target.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_provenance_names_code_config_packages_hardware_and_seed():
    cfg = {"seed": 7, "algo": "random"}
    rec = provenance.record(cfg, started_at="2026-01-01T00:00:00+00:00")
    assert rec["seed"] == 7
    assert rec["config"] == cfg and rec["config_hash"] == provenance.config_hash(cfg)
    assert rec["packages"]["torch"].startswith("2.13.0")
    assert rec["hardware"]["logical_cores"] >= 1
    assert rec["started_at"] < rec["finished_at"]
    git = rec["git"]
    assert git["source"] == "git" and len(git["commit"]) == 40 and isinstance(git["dirty"], bool)


def test_rundir_writes_provenance_last(tmp_path):
    rundir = RunDir(tmp_path / "run", {"seed": 1})
    rundir.write_table("metrics", [{"episode": 0, "return": 1.5}])
    assert not (rundir.path / "provenance.json").exists()
    rundir.finish()
    assert pd.read_parquet(rundir.path / "metrics.parquet")["return"].tolist() == [1.5]
    assert (rundir.path / "provenance.json").exists()
