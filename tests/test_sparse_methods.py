"""The sparse-training methods are one table (effmarl/methods.py): the schema's enum is the table's names, a new
method is one entry that the schema, the learner, the workflow, the cost model and the analysis accept without
another edit, and no other module writes a list of the methods' names."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from effmarl import resources
from effmarl.analysis.envelope import qmix_kind
from effmarl.analysis.metrics import METHOD_ORDER
from effmarl.analysis.style import method_color, method_name
from effmarl.config import ConfigError, schema, validate
from effmarl.methods import METHODS, Method, method
from effmarl.qmix_checks import check_config

ROOT = Path(__file__).resolve().parents[1]
SMAX = {"study": "s", "algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "3m"},
        "budget": {"env_steps": 400}, "qmix": {"num_envs": 2, "batch_size": 4, "buffer_size": 200}}


def run_cfg(name: str, **sparse) -> dict:
    return validate({**SMAX, "sparse": {"method": name, **sparse},
                     "qmix": {**SMAX["qmix"], "shared_params": name == "dense"}}, part="run")


@pytest.fixture
def toy(monkeypatch):
    """A method `toy`: RigL's topology under another name and colour, registered in the table only."""
    entry = dataclasses.replace(METHODS["rigl"], name="toy", display="Toy", color=9)
    monkeypatch.setitem(METHODS, "toy", entry)
    return entry


def test_the_schemas_method_enums_are_the_tables_names_in_its_order():
    sparse = schema()["$defs"]["sparse"]
    assert sparse["properties"]["method"]["enum"] == list(METHODS)
    assert METHOD_ORDER == list(METHODS)
    (pruned,) = sparse["allOf"]  # the methods whose runs get a pruning schedule's start
    assert pruned["if"]["properties"]["method"]["enum"] == [m for m in METHODS if METHODS[m].prune] == ["gmp"]


def test_only_a_pruned_methods_runs_hold_a_pruning_start():
    assert run_cfg("gmp")["sparse"]["prune_start"] == 0.2
    assert "prune_start" not in run_cfg("rigl")["sparse"] and "prune_start" not in run_cfg("dense")["sparse"]


def test_the_schema_file_leaves_the_enum_to_the_table():
    text = (ROOT / "workflow/schemas/config.schema.yaml").read_text()
    assert re.search(r"method:\n\s+# enum: the sparse-training methods[^\n]*\n\s+enum: \[\]", text)
    assert re.search(r"if: {properties: {method: {enum: \[\]}}, required: \[method\]}\n\s+then: {properties: "
                     r"{prune_start:", text)


def test_a_new_method_is_one_table_entry(toy):
    cfg = run_cfg("toy", sparsity=0.8)
    check_config(cfg)  # a method with masks: per-agent networks, any allocation
    check_config(run_cfg("toy", allocation="equal"))
    assert resources.qmix_seconds(cfg) == resources.qmix_seconds(run_cfg("rigl", sparsity=0.8))  # priced alike
    assert qmix_kind(cfg) == "baseline"
    assert (method_name("toy"), method_color("toy")) == ("Toy", plt.get_cmap("tab10").colors[9])
    from test_qmix_variants import workflow_train_outputs

    assert "masks.pt" in workflow_train_outputs()(cfg)
    assert "masks.pt" not in workflow_train_outputs()(run_cfg("tiny"))


def test_a_method_the_table_lacks_is_refused_naming_the_known_ones():
    with pytest.raises(ConfigError, match="field 'sparse.method': 'toy' is not allowed; allowed values: 'dense'"):
        run_cfg("toy")
    with pytest.raises(KeyError, match="'toy' is not a sparse-training method"):
        method("toy")


def test_what_has_masks_follows_from_how_a_method_starts_and_changes():
    assert [m for m in METHODS if METHODS[m].masks] == [m for m in METHODS if m not in ("dense", "tiny")]
    assert not Method("x", "X", 0, "dense").masks and not Method("x", "X", 0, "narrow").masks
    assert Method("x", "X", 0, "sparse").masks


@pytest.mark.parametrize(("fields", "problem"), [
    ({"start": "half"}, "start 'half' is not one of"),
    ({"start": "sparse", "cost": "cheap"}, "cost 'cheap' is not one of"),
    ({"start": "dense", "grow": "random"}, "only a sparse start regrows"),
])
def test_an_entry_that_contradicts_itself_is_refused(fields, problem):
    with pytest.raises(ValueError, match=problem):
        Method("x", "X", 0, **fields)


def test_each_method_keeps_the_colour_the_figures_drew_it_in_and_no_two_share_one():
    # tab10 by the place in Table 1's order, as the figures coloured the paper's seven methods before the table
    assert {m: METHODS[m].color for m in ("dense", "tiny", "static", "set", "rigl", "rlx2", "mast")} == \
        {"dense": 0, "tiny": 1, "static": 2, "set": 3, "rigl": 4, "rlx2": 5, "mast": 6}
    assert len({m.color for m in METHODS.values()}) == len(METHODS)


# Modules that name two or more methods together on purpose: the table itself. (A comparison of two roles - MAST
# against dense - names methods, not a list of them; such pairs hold "mast".)
NAMED_ON_PURPOSE = {"src/effmarl/methods.py"}


def test_no_module_but_the_table_lists_the_methods():
    names = "|".join(METHODS)
    listed = re.compile(rf"""["']({names})["']\s*,\s*["']({names})["']""")
    found = []
    for path in [*ROOT.glob("src/effmarl/**/*.py"), *ROOT.glob("workflow/**/*.smk"), ROOT / "Snakefile"]:
        rel = path.relative_to(ROOT).as_posix()
        if rel in NAMED_ON_PURPOSE:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            found += [f"{rel}:{number}: {line.strip()}" for m in listed.finditer(line) if "mast" not in m.groups()]
    assert found == []
