"""Which of MAST's and RLx2's parts a run switches on is one rule (effmarl/components.py): training, the resources
model and the analysis read it, and each reads the same answer from the same run."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from effmarl import resources
from effmarl.analysis.metrics import removed_components
from effmarl.components import PARTS, mast_components, part_on, switch_field
from effmarl.config import validate

METHODS = ("dense", "rigl", "mast", "rlx2")


def run_cfg(method: str, **switches) -> dict:
    cfg = {"study": "t", "algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "3m"},
           "budget": {"env_steps": 1000}, "sparse": {"method": method, "sparsity": 0.9},
           "qmix": {"shared_params": method == "dense"}}
    for part, enabled in switches.items():
        section = cfg
        for key in PARTS[part][1]:
            section = section.setdefault(key, {})
        section["enabled"] = enabled
    return validate(cfg, part="run")


def test_an_unset_switch_follows_the_method_and_a_set_one_decides_alone():
    for part, (owner, _) in PARTS.items():
        for method in METHODS:
            assert part_on(part, None, method) is (method == owner)
            assert part_on(part, True, method) is True and part_on(part, False, method) is False
    assert switch_field("dual_buffer") == "mast.dual_buffer.enabled"
    assert switch_field("soft_mellowmax") == "mellowmax.enabled"


def test_a_partial_config_reads_as_its_validated_form():
    for method in METHODS:
        partial = {"sparse": {"method": method}}
        assert mast_components(partial) == mast_components(run_cfg(method))
    assert not any(mast_components({}).values())  # no sparse section: dense, every part off


@pytest.mark.parametrize("method", ["mast", "rigl"])
def test_the_analysis_and_the_resources_read_each_run_as_training_does(method):
    """Every combination of MAST's three switches: the analysis's removed components (from the flattened config
    columns) and the resources model's dual buffer (its replay memory) agree with mast_components."""
    names = ("soft_mellowmax", "td_lambda", "dual_buffer")
    rows, expected = [], []
    for values in itertools.product((None, True, False), repeat=3):
        switches = dict(zip(names, values, strict=True))
        cfg = run_cfg(method, **switches)
        on = mast_components(cfg)
        rows.append({"cfg.sparse.method": method, **{f"cfg.{switch_field(p)}": v for p, v in switches.items()}})
        expected.append("+".join(p for p in names if not on[p]) or "none")
        base = resources.episode_bytes("3m") * cfg["qmix"]["buffer_size"]
        assert (resources.qmix_replay_bytes(cfg) > base) is on["dual_buffer"]
    assert list(removed_components(pd.DataFrame(rows))) == expected
