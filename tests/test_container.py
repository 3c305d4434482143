"""The built image: its environment is the lock's, and the smoke outputs made in it say they came from it.

The CI step .ci/container.sh builds the Dockerfile, runs `effmarl env-info --json`, `pip freeze --all` and the
smoke workflow inside the image, writes them under a directory and runs this file with EFFMARL_CONTAINER_OUT
naming it. Without that variable (the plain test suite, where no image is built) the image checks skip; the
comparison they rely on is tested here on hand-made inputs, so it runs everywhere.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml

from effmarl.studies import expand_all, load_profile

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(os.environ["EFFMARL_CONTAINER_OUT"]) if os.environ.get("EFFMARL_CONTAINER_OUT") else None
image = pytest.mark.skipif(OUT is None, reason="no built image: .ci/container.sh sets EFFMARL_CONTAINER_OUT")

# In the image but not in the lock: the project itself and the installer's own tools of the base's venv.
NOT_LOCKED = {"effmarl", "pip", "setuptools", "wheel"}


def normalise(name: str) -> str:
    """PEP 503 name normalisation: `PyYAML`, `pyyaml` and `py_yaml` are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_pins(text: str) -> dict[str, str | None]:
    """`name==version` lines (requirements or pip freeze) to {name: public version}; a direct reference
    (`name @ file://…`) maps to None. The local label (torch's `+cpu`) is the build, not the version."""
    pins: dict[str, str | None] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        if " @ " in line:
            pins[normalise(line.split(" @ ", 1)[0])] = None
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9_.-]*)==([^\s;+]+)(\+\S+)?", line)
        if not match:
            raise ValueError(f"not a pinned requirement: {raw!r}")
        pins[normalise(match.group(1))] = match.group(2)
    return pins


def lock_mismatches(lock: dict[str, str | None], installed: dict[str, str | None],
                    not_locked: set[str] = NOT_LOCKED) -> list[str]:
    """Every difference between the lock and an installed set, one line each; empty when they agree."""
    problems = [f"{name}: locked {version}, not installed" for name, version in lock.items() if name not in installed]
    problems += [f"{name}: locked {lock[name]}, installed {version}" for name, version in installed.items()
                 if name in lock and version != lock[name]]
    problems += [f"{name}: installed {version}, not in the lock" for name, version in installed.items()
                 if name not in lock and name not in not_locked]
    return sorted(problems)


def test_pins_are_parsed_with_normalised_names_and_without_local_labels():
    text = "# comment\nPyYAML==6.0.4\ntorch==2.13.0+cpu\njax_lib==0.10.2  # trailing\neffmarl @ file:///effmarl\n"
    assert parse_pins(text) == {"pyyaml": "6.0.4", "torch": "2.13.0", "jax-lib": "0.10.2", "effmarl": None}


def test_unpinned_line_is_an_error_naming_it():
    with pytest.raises(ValueError, match="numpy>=2"):
        parse_pins("numpy>=2\n")


def test_lock_comparison_names_every_difference():
    lock = {"numpy": "2.4.6", "torch": "2.13.0", "jax": "0.10.2"}
    installed = {"numpy": "2.4.6", "torch": "2.12.0", "requests": "2.0", "effmarl": None, "pip": "23.0.1"}
    assert lock_mismatches(lock, installed) == [
        "jax: locked 0.10.2, not installed",
        "requests: installed 2.0, not in the lock",
        "torch: locked 2.13.0, installed 2.12.0",
    ]
    assert lock_mismatches(lock, {**lock, "effmarl": None}) == []


def test_the_repository_lock_parses_and_pins_torch():
    lock = parse_pins((ROOT / "requirements" / "lock.txt").read_text())
    assert lock["torch"] == "2.13.0" and "smac" not in lock


# ---- checks on a built image (the CI step) ------------------------------------------------------------------

def _env_info() -> dict:
    return json.loads((OUT / "env-info.json").read_text())


@image
def test_image_pip_freeze_is_the_lock():
    lock = parse_pins((ROOT / "requirements" / "lock.txt").read_text())
    frozen = parse_pins((OUT / "pip-freeze.txt").read_text())
    assert lock_mismatches(lock, frozen) == []
    assert "effmarl" in frozen


@image
def test_image_python_and_tracked_packages_match_environment_yml_and_lock():
    info = _env_info()
    python = next(d for d in yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
                  if isinstance(d, str) and d.startswith("python="))
    assert info["python"].startswith(python.split("=", 1)[1] + "."), (info["python"], python)
    lock = parse_pins((ROOT / "requirements" / "lock.txt").read_text())
    tracked = {normalise(k): v.split("+")[0] for k, v in info["packages"].items() if k != "effmarl" and v}
    assert tracked and all(lock[name] == version for name, version in tracked.items()), tracked


@image
def test_env_info_ran_in_the_container_built_from_this_commit():
    info = _env_info()
    commit = (OUT / "git-commit.txt").read_text().strip()
    assert info["in_container"] is True
    assert info["project_image"] and commit in info["project_image"], info["project_image"]
    assert info["git"] == {"commit": commit, "dirty": None, "source": "EFFMARL_GIT_COMMIT"}
    assert info["python_executable"].startswith("/opt/venv/"), info["python_executable"]


@image
def test_smoke_outputs_exist_and_provenance_says_container():
    config = load_profile(ROOT / "configs" / "smoke.yaml")
    results = OUT / config["results_dir"]
    figures = OUT / config["figures_dir"]
    commit = (OUT / "git-commit.txt").read_text().strip()
    records = []
    for study, runs in expand_all(config).items():
        for run_id in runs:
            records.append(results / study / run_id / "provenance.json")
    index = json.loads((figures / "index.json").read_text())
    assert index, "figures/index.json lists no outputs"
    for entry in index:  # paths relative to the workflow's directory (/effmarl in the image, OUT here)
        for name in entry["files"]:
            assert (OUT / name).is_file() and (OUT / name).stat().st_size > 0, name
        records.append(OUT / f"{entry['stem']}.provenance.json")
    for path in records:
        rec = json.loads(path.read_text())
        assert rec["in_container"] is True and commit in (rec.get("project_image") or ""), path
        assert rec["git"]["commit"] == commit and rec["git"]["source"] == "EFFMARL_GIT_COMMIT", path
