"""Every profile expands to exactly the runs it expanded to when the record was made: the same studies, run ids and
run configurations (sha256 of each validated run config), so moving or restating studies cannot change what a
profile trains without this test saying which runs changed.

The record is tests/data/profile_runs.json; regenerate it when a profile changes on purpose (a study added, a
budget or a grid changed), from the repository root: `python tests/data/make_profile_runs.py`.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def _maker():
    spec = importlib.util.spec_from_file_location("make_profile_runs", DATA / "make_profile_runs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _differences(recorded: list[list[str]], now: list[list[str]]) -> list[str]:
    old = {(study, rid): digest for study, rid, digest in recorded}
    new = {(study, rid): digest for study, rid, digest in now}
    lines = [f"missing {s}/{r}" for s, r in old.keys() - new.keys()]
    lines += [f"new {s}/{r}" for s, r in new.keys() - old.keys()]
    lines += [f"changed config {s}/{r}" for s, r in old.keys() & new.keys() if old[(s, r)] != new[(s, r)]]
    return sorted(lines)


def test_every_profile_expands_to_the_recorded_runs():
    recorded = json.loads((DATA / "profile_runs.json").read_text())
    now = _maker().all_profiles()
    assert sorted(now) == sorted(recorded), "the profiles are not the recorded ones"
    for name in recorded:
        differences = _differences(recorded[name], now[name])
        assert not differences, f"{name}: {len(differences)} runs differ: {differences[:10]}"
        assert now[name] == recorded[name]
