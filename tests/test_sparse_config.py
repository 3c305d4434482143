"""The schema's `sparse:` and `mellowmax:` sections: defaults, one-line errors, and that SparseTraining reads them."""

from __future__ import annotations

import pytest
from torch import nn

from effmarl.config import ConfigError, validate
from effmarl.sparse import SparseTraining

# validate runs the qmix family's cross-field checks too: a budget in env steps is required
RUN = {"study": "s", "algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "3m"}, "budget": {"env_steps": 100}}


def test_sections_are_filled_only_for_the_value_based_learners():
    cfg = validate({"study": "s", "algo": "random", "seed": 0, "env": {"backend": "mpe"}}, part="run")
    assert "sparse" not in cfg and "mellowmax" not in cfg


def test_defaults_and_errors():
    cfg = validate(dict(RUN), part="run")
    assert cfg["sparse"] == {"method": "dense", "sparsity": 0.9, "er": True, "delta_m": 200, "zeta0": 0.5,
                             "anneal_end": 0.75, "ticket": {"kind": "none", "source": None}, "allocation": "learned",
                             "type_density": {}}
    assert cfg["mellowmax"] == {"enabled": None, "alpha": 1.0, "omega": 10.0, "operator": "soft_mellowmax",
                                "beta": 10.0}  # enabled None: on for method mast
    with pytest.raises(ConfigError, match="sparse.sparsity"):
        validate({**RUN, "sparse": {"sparsity": 1.0}}, part="run")
    with pytest.raises(ConfigError, match="mellowmax.omega"):
        validate({**RUN, "mellowmax": {"omega": 0}}, part="run")


def test_sparse_training_from_validated_config():
    cfg = validate({**RUN, "sparse": {"method": "mast", "sparsity": 0.8, "delta_m": 10},
                    "qmix": {"shared_params": False}}, part="run")  # sparse methods need per-agent networks
    sparse = SparseTraining.from_config(cfg["sparse"], nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 2)), 100)
    assert sparse.schedule.grow == "gradient" and sparse.schedule.delta_m == 10
    assert sparse.topology.density() == pytest.approx(0.2, abs=1 / 80)
