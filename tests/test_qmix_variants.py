"""The QMIX family's variants are one table (effmarl/variants.py): a new variant is one entry, and the schema, the
workflow, the resources model and the analysis accept it without another edit; no other module matches the
variants' names."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from effmarl import resources
from effmarl.analysis.style import algo_name
from effmarl.config import ConfigError, validate
from effmarl.groups import process_groups
from effmarl.methods import METHODS
from effmarl.studies import expand_all, expand_study
from effmarl.variants import QMIX_VARIANTS

ROOT = Path(__file__).resolve().parents[1]
SMAX = {"algo": "qmix", "env": {"backend": "smax", "map": "3m"}, "budget": {"env_steps": 400},
        "qmix": {"num_envs": 2, "batch_size": 4, "buffer_size": 200}}


@pytest.fixture
def toy(monkeypatch):
    """A variant `toy` that reuses qmix's networks, operator and FLOPs formula, registered in the table only (not
    measured: priced as the dearest measured variant)."""
    entry = dataclasses.replace(QMIX_VARIANTS["qmix"], name="toy", display="Toy-QMIX")
    monkeypatch.setitem(QMIX_VARIANTS, "toy", entry)
    return entry


def workflow_train_outputs():
    """common.smk's train_outputs, read from the rule file as Snakemake runs it (its Python helpers)."""
    text = (ROOT / "workflow/rules/common.smk").read_text()
    source = text[text.index("QMIX_FAMILY ="):text.index("def train_kind")]
    namespace = {"QMIX_VARIANTS": QMIX_VARIANTS, "METHODS": METHODS}
    exec(source, namespace)  # noqa: S102 - the repository's own rule file
    return namespace["train_outputs"]


def test_a_new_qmix_variant_is_one_table_entry(toy):
    with pytest.raises(ConfigError):  # the table, not the schema file, says which algorithms exist
        validate({**SMAX, "study": "s", "algo": "toy_unregistered", "seed": 0}, part="run")
    cfg = validate({**SMAX, "study": "s", "algo": "toy", "seed": 0}, part="run")
    assert cfg["qmix"]["rnn_hidden_dim"] > 0 and cfg["sparse"]["method"] == "dense"  # the family's defaults filled

    qmix_cfg = validate({**SMAX, "study": "s", "seed": 0}, part="run")
    assert resources.qmix_seconds(cfg) > resources.qmix_seconds(qmix_cfg)  # not measured: as the dearest variant
    assert resources.for_run(cfg)["runtime"] > 0

    assert algo_name("toy") == "Toy-QMIX"

    runs = expand_study("s", {"base": SMAX, "grid": {"algo": ["qmix", "toy"], "seed": [0, 1]}}, "smoke")
    assert sorted({c["algo"] for c in runs.values()}) == ["qmix", "toy"]
    profile = {"profile": "smoke", "results_dir": "R", "figures_dir": "F",
               "studies": {"s": {"base": {**SMAX, "algo": "toy", "device": "cuda"}, "grid": {"seed": [0, 1]},
                                 "seeds_per_process": 2}}}
    assert [ids for _, ids in process_groups(profile, expand_all(profile)).values()] == [["seed-0", "seed-1"]]
    assert "model.pt" in workflow_train_outputs()(cfg)


def test_a_toy_variant_trains_through_qmix_functions(toy):
    """The learner resolves the entry: the toy variant's learner is qmix's, parameters, loss and statistics alike."""
    import torch

    from effmarl.algos.qmix.learner import Learner
    from effmarl.algos.qmix.operators import double_q_max
    from effmarl.envs.base import EnvSpec
    from effmarl.replay.episode import empty_batch, episode_scheme

    n, obs, actions, state, limit = 3, 6, 5, 7, 8
    spec = EnvSpec([f"ally_{i}" for i in range(n)], ["ally"] * n, [obs] * n, [actions] * n, state, limit)
    g = torch.Generator().manual_seed(0)
    batch = empty_batch(episode_scheme(spec), 2)
    for k, steps in enumerate((8, 5)):
        batch["obs"][k, : steps + 1] = torch.randn(steps + 1, n, obs, generator=g)
        batch["state"][k, : steps + 1] = torch.randn(steps + 1, state, generator=g)
        batch["avail"][k, : steps + 1] = True
        batch["actions"][k, :steps] = torch.randint(actions, (steps, n), generator=g)
        batch["reward"][k, :steps] = torch.rand(steps, generator=g)
        batch["filled"][k, :steps] = True

    def learner(algo):
        torch.manual_seed(0)
        q = validate({**SMAX, "study": "s", "algo": algo, "seed": 0}, part="run")["qmix"]
        return Learner(algo, q, n, obs, actions, state)

    ours, theirs = learner("toy"), learner("qmix")
    assert ours.operator is double_q_max and list(ours.networks()) == ["agent", "mixer"]
    (loss, stats), (ref, ref_stats) = ours.loss(batch), theirs.loss(batch)
    assert torch.equal(loss, ref) and stats.keys() == ref_stats.keys()


# Modules that legitimately name variants: the table itself, and paper 2's per-algorithm figures and claims
# (Figs. 13-15 are one module with one output per named algorithm, each declaring the runs it draws; the claims
# table quotes the paper's per-algorithm averages).
NAMED_ON_PURPOSE = {"src/effmarl/variants.py", "src/effmarl/analysis/figures/mast_curves.py",
                    "src/effmarl/analysis/tables/mast_claims.py"}


def test_no_module_but_the_table_matches_the_variants_names():
    quoted = re.compile(r"""["'](qmix|ow_qmix|res_qmix)["']""")
    found = []
    for path in [*ROOT.glob("src/effmarl/**/*.py"), *ROOT.glob("workflow/**/*.smk")]:
        rel = path.relative_to(ROOT).as_posix()
        if rel in NAMED_ON_PURPOSE:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            # "qmix" is also the config section's name (cfg["qmix"]) and the bench's study: only a comparison or
            # a collection of algorithm names counts
            for match in quoted.finditer(line):
                if match.group(1) != "qmix" or re.search(r"""algo\W{0,4}\s*(==|!=|in)\s*\(?["']qmix""", line):
                    found.append(f"{rel}:{number}: {line.strip()}")
    assert found == []
