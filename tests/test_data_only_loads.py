"""Opening someone else's results never runs their code (issue 26): every file effmarl reads back — checkpoint
payloads, model.pt, masks.pt, parquet tables — loads as data only. A crafted file whose unpickling would run code
(here: create a marker file) is refused in one line by resume, Figure 11 and the sparse benchmark, and the marker
never appears; both training stacks write their run state in a form that loads as data."""

from __future__ import annotations

import ast
import fractions
import json
import pickle
import random
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
import yaml
from conftest import ROOT, run_cli

from effmarl import checkpoints, harness, safeload
from effmarl.cli import main
from effmarl.config import ConfigError

KEY = {"algo": "maddpg", "seed": 1}


class RunsCode:
    """Unpickling this calls open(marker, "w"): the marker file appears if and only if a loader ran the file's code."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def crafted(path: Path, marker: Path, data: dict | None = None) -> Path:
    """A torch file holding `data` (tensors, plausible structure) and an object that runs code when unpickled."""
    torch.save({**(data or {}), "planted": RunsCode(marker)}, path)
    return path


def plant_in_checkpoint(directory: Path, marker: Path) -> Path:
    """Replace a checkpoint's payload by a crafted one and recompute the manifest's sha256 and checksum, as anyone
    can: they detect damage, not tampering."""
    manifest_path = directory / checkpoints.MANIFEST
    manifest = json.loads(manifest_path.read_text())
    payload = directory / manifest["file"]
    crafted(payload, marker, {"w": torch.ones(3)})
    manifest.update(sha256=checkpoints._sha256(payload), bytes=payload.stat().st_size)
    manifest["manifest_sha256"] = checkpoints._manifest_digest(manifest)
    manifest_path.write_text(json.dumps(manifest))
    return payload


def test_the_crafted_payload_runs_code_when_unpickled_with_weights_only_false(tmp_path):
    # the tests below are only meaningful because this payload really does run code in an unrestricted load
    marker = tmp_path / "marker"
    path = crafted(tmp_path / "evil.pt", marker)
    torch.load(path, weights_only=False)
    assert marker.exists()


# ---------------------------------------------------------------- checkpoints (harness.py)
def test_a_crafted_checkpoint_that_would_run_code_is_refused_and_runs_nothing(tmp_path):
    store = checkpoints.CheckpointStore(tmp_path / "checkpoint")
    store.save({"w": torch.zeros(3), "step": 7}, KEY, 4, "episodes")
    marker = tmp_path / "marker"
    payload = plant_in_checkpoint(store.dir, marker)
    planted = payload.read_bytes()
    with pytest.raises(ConfigError) as err:
        store.load(KEY, "budget.episodes", 10)
    (line,) = err.value.lines
    assert err.value.source == str(payload) and line.startswith("unreadable checkpoint (UnpicklingError")
    assert "it names io.open" in line and f"delete {store.dir}" in line
    assert not marker.exists()
    assert payload.read_bytes() == planted  # left as it is


def test_a_checkpoint_that_does_not_load_as_data_is_refused_like_a_damaged_one(tmp_path):
    # an older effmarl's payload holding a Python object that is not data (harmless here, but not allowed)
    old = checkpoints.CheckpointStore(tmp_path / "old" / "checkpoint")
    old.save({"w": torch.zeros(3), "share": fractions.Fraction(1, 3)}, KEY, 4, "episodes")
    # a payload damaged so that its manifest checks out (recomputed) but torch cannot read it
    damaged = checkpoints.CheckpointStore(tmp_path / "damaged" / "checkpoint")
    damaged.save({"w": torch.zeros(3)}, KEY, 4, "episodes")
    manifest = json.loads(damaged.manifest_path.read_text())
    payload = damaged.dir / manifest["file"]
    payload.write_bytes(payload.read_bytes()[:100])
    manifest.update(sha256=checkpoints._sha256(payload), bytes=payload.stat().st_size)
    manifest["manifest_sha256"] = checkpoints._manifest_digest(manifest)
    damaged.manifest_path.write_text(json.dumps(manifest))
    lines = []
    for store in (old, damaged):
        with pytest.raises(ConfigError) as err:
            store.load(KEY, "budget.episodes", 10)
        (line,) = err.value.lines
        assert line.endswith(f"; it was not loaded and is left as it is; to start this run afresh, delete {store.dir}")
        lines.append(line)
    assert all(line.startswith("unreadable checkpoint (") for line in lines), lines
    assert "fractions.Fraction" in lines[0]


def test_the_global_rng_states_are_saved_as_data_and_restore_the_same_draws(tmp_path):
    harness.seed_everything(11)
    torch.save(harness.global_rng_states(), tmp_path / "rng.pt")
    expected = (random.random(), np.random.random(), torch.rand(1).item())
    states = torch.load(tmp_path / "rng.pt", weights_only=True)  # no allowed globals at all: tensors and numbers
    harness.set_global_rng_states(states)
    assert (random.random(), np.random.random(), torch.rand(1).item()) == expected
    # the tuple forms an older effmarl saved (numpy's legacy state, random.getstate()) still restore
    harness.seed_everything(11)
    legacy = {"torch": torch.get_rng_state(), "cuda": None, "numpy_global": np.random.get_state(),
              "python": random.getstate()}
    harness.seed_everything(12)
    harness.set_global_rng_states(legacy)
    assert (random.random(), np.random.random(), torch.rand(1).item()) == expected


RUN = {"study": "t", "algo": "maddpg", "seed": 5, "env": {"backend": "mpe", "n_agents": 3},
       "budget": {"episodes": 2},
       "offpolicy": {"batch_size": 32, "warmup": 50, "update_every": 10, "checkpoint_every": 2, "hidden": [16, 16]},
       "replay": {"buffer_size": 200, "storage": "reference"}}


@pytest.fixture(scope="module")
def stopped_once(tmp_path_factory):
    """A 2-episode off-policy run with the reference storage (openai/maddpg's list of numpy tuples), checkpointed."""
    base = tmp_path_factory.mktemp("stopped")
    (base / "run.yaml").write_text(yaml.safe_dump(RUN))
    proc = run_cli("effmarl", "train", "--config", str(base / "run.yaml"), "--out", str(base / "out"))
    assert proc.returncode == 0, proc.stderr
    return base


@pytest.fixture
def stopped(stopped_once, tmp_path):
    shutil.copytree(stopped_once, tmp_path / "copy")
    return tmp_path / "copy" / "run.yaml", tmp_path / "copy" / "out"


@pytest.mark.slow
def test_an_off_policy_checkpoint_holds_only_data_and_resumes(stopped):
    config, out = stopped
    manifest = json.loads((out / "checkpoint" / checkpoints.MANIFEST).read_text())
    payload = out / "checkpoint" / manifest["file"]
    allowed = {f"{g.__module__}.{g.__qualname__}" for g in safeload.SAFE_GLOBALS}
    assert set(torch.serialization.get_unsafe_globals_in_checkpoint(payload)) <= allowed
    rng = safeload.load_torch(payload)["rng"]
    assert {type(v) for v in rng["numpy_global"].values()} <= {str, int, float, torch.Tensor}
    assert {type(v) for v in rng["python"].values()} <= {int, list, float, type(None)}
    assert manifest["git_commit"] == checkpoints.written_by()
    proc = run_cli("effmarl", "train", "--config", str(config), "--out", str(out), "--set", "budget.episodes=4")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "counters.json").read_text())["resumed_from_episode"] == 2


@pytest.mark.slow
def test_resuming_from_a_crafted_checkpoint_is_refused_in_one_line_and_runs_nothing(stopped):
    config, out = stopped
    marker = out.parent / "marker"
    payload = plant_in_checkpoint(out / "checkpoint", marker)
    proc = run_cli("effmarl", "train", "--config", str(config), "--out", str(out), "--set", "budget.episodes=4")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"effmarl: {payload}: unreadable checkpoint (UnpicklingError")
    assert f"delete {out / 'checkpoint'}" in line
    assert not marker.exists()


# ---------------------------------------------------------------- model and mask files
def test_figure_11_refuses_a_crafted_mask_file_in_one_line_and_runs_nothing(tmp_path, capsys):
    from test_mast_analysis import write
    from test_mast_analysis_figures import masks_summary

    marker = tmp_path / "marker"
    masks = crafted(tmp_path / "masks.pt", marker,
                    {"online": {"topology": {"masks": {"agent.fc1.weight": torch.ones(3, 8, 5, dtype=torch.bool)}}}})
    table = write(masks_summary(), tmp_path / "masks.parquet")
    out = tmp_path / "fig11"
    assert main(["figure", "mast_fig11", f"masks={table}", f"mask_files={masks}", "--out", str(out)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"effmarl: {masks}: not a data-only torch file (UnpicklingError")
    assert not marker.exists() and not list(tmp_path.glob("fig11*"))


def test_the_sparse_benchmark_refuses_a_crafted_run_in_one_line_and_runs_nothing(tmp_path, capsys):
    marker = tmp_path / "marker"
    run = tmp_path / "run"
    run.mkdir()
    crafted(run / "model.pt", marker, {"agent.fc1.weight": torch.zeros(3, 8, 5)})
    crafted(run / "masks.pt", marker)
    assert main(["bench", "sparse", "--run", str(run), "--out", str(tmp_path / "bench")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"effmarl: {run / 'model.pt'}: not a data-only torch file (UnpicklingError")
    assert not marker.exists() and not list(tmp_path.glob("bench*"))


def test_the_data_only_loader_reads_tensors_and_plain_numeric_numpy_arrays_and_nothing_else(tmp_path):
    data = {"w": torch.arange(4.0), "rows": [(np.arange(3, dtype=np.float32), 1.0, "a")], "n": 2**70}
    torch.save(data, tmp_path / "ok.pt")
    back = safeload.load_torch(tmp_path / "ok.pt")
    assert torch.equal(back["w"], data["w"]) and back["n"] == 2**70 and back["rows"][0][1:] == (1.0, "a")
    assert back["rows"][0][0].dtype == np.float32 and back["rows"][0][0].tolist() == [0.0, 1.0, 2.0]
    torch.save({"objects": np.array([1, "x"], dtype=object)}, tmp_path / "objects.pt")
    with pytest.raises(ConfigError, match="not a data-only torch file"):
        safeload.load_torch(tmp_path / "objects.pt")
    with pytest.raises(ConfigError, match=r"cannot be read \(FileNotFoundError"):
        safeload.load_torch(tmp_path / "missing.pt")


# ---------------------------------------------------------------- tables
def test_a_parquet_table_with_a_pickled_extension_type_is_read_as_data_and_runs_nothing(tmp_path):
    from effmarl.analysis.io import read_tables

    marker = tmp_path / "marker"
    # pyarrow < 14.0.1 unpickled the metadata of this extension type on read (CVE-2023-47248)
    meta = {b"ARROW:extension:name": b"arrow.py_extension_type",
            b"ARROW:extension:metadata": pickle.dumps(RunsCode(marker))}
    schema = pa.schema([pa.field("x", pa.int64(), metadata=meta), pa.field("y", pa.float64())])
    pq.write_table(pa.table({"x": [1, 2], "y": [0.5, 1.5]}).cast(schema), tmp_path / "t.parquet")
    frame = read_tables([str(tmp_path / "t.parquet")])
    assert frame["x"].tolist() == [1, 2] and frame["y"].tolist() == [0.5, 1.5]
    assert not marker.exists()


# ---------------------------------------------------------------- no unsafe reader in src/
UNPICKLERS = {("pickle", "load"), ("pickle", "loads"), ("pickle", "Unpickler"), ("cloudpickle", "load"),
              ("cloudpickle", "loads"), ("dill", "load"), ("dill", "loads"), ("joblib", "load"), ("marshal", "load"),
              ("marshal", "loads"), ("shelve", "open"), ("pd", "read_pickle"), ("pandas", "read_pickle"),
              ("yaml", "unsafe_load"), ("yaml", "full_load"), ("yaml", "load_all")}
SAFE_YAML_LOADERS = {"SafeLoader", "CSafeLoader", "_UniqueKeyLoader"}


def _readers(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value,
                                                                                              ast.Name):
            yield node, node.func.value.id, node.func.attr


def test_no_torch_load_pickle_load_or_unsafe_yaml_load_remains_in_src():
    problems = []
    for path in sorted((ROOT / "src" / "effmarl").rglob("*.py")):
        where = path.relative_to(ROOT)
        for node, module, name in _readers(ast.parse(path.read_text(), str(path))):
            keywords = {k.arg: k.value for k in node.keywords}
            at = f"{where}:{node.lineno}"
            if (module, name) == ("torch", "load"):
                only_data = isinstance(keywords.get("weights_only"), ast.Constant) and \
                    keywords["weights_only"].value is True
                if where != Path("src/effmarl/safeload.py") or not only_data:
                    problems.append(f"{at}: torch.load (use effmarl.safeload.load_torch)")
            elif (module, name) in UNPICKLERS:
                problems.append(f"{at}: {module}.{name}")
            elif (module, name) == ("yaml", "load"):
                loader = keywords.get("Loader")
                loader_name = getattr(loader, "attr", getattr(loader, "id", None))
                if loader_name not in SAFE_YAML_LOADERS:
                    problems.append(f"{at}: yaml.load without a safe loader")
            elif (module, name) in (("np", "load"), ("numpy", "load")):
                allow = keywords.get("allow_pickle")
                if not (isinstance(allow, ast.Constant) and allow.value is False):
                    problems.append(f"{at}: np.load without allow_pickle=False")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and any((node.module, a.name) in UNPICKLERS | {("torch", "load")}
                                                        for a in node.names):
                problems.append(f"{where}:{node.lineno}: imports a loader by name")
    assert problems == []


def test_the_yaml_loader_of_the_config_is_a_safe_loader():
    from effmarl import config

    assert issubclass(config._UniqueKeyLoader, yaml.SafeLoader)
