"""Write tests/data/profile_runs.json: every profile's runs as sorted [study, run id, sha256 of the run config].

The record `tests/test_profile_studies.py` compares each profile's expansion against. Regenerate it only when a
profile changes on purpose (a study added, a budget changed), from the repository root:

    python tests/data/make_profile_runs.py
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).with_name("profile_runs.json")


def profile_runs(path: Path) -> list[list[str]]:
    """[study, run id, sha256 of json.dumps(run config, sort_keys=True)] of every run the profile expands to, sorted;
    the profile loaded and validated as the Snakefile does."""
    from effmarl.studies import expand_all, load_profile

    runs = expand_all(load_profile(path))
    return sorted([study, rid, hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()]
                  for study, by_id in runs.items() for rid, cfg in by_id.items())


def all_profiles() -> dict[str, list[list[str]]]:
    return {path.name: profile_runs(path) for path in sorted((ROOT / "configs").glob("*.yaml"))
            if path.name != "studies.yaml"}


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    profiles = all_profiles()
    OUT.write_text("{\n" + ",\n".join(
        f"{json.dumps(name)}: [\n" + ",\n".join(json.dumps(row) for row in rows) + "\n]"
        for name, rows in profiles.items()) + "\n}\n")
    print(f"wrote {OUT}")
