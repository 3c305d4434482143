"""Tickets (paper 2's Fig. 10, algos/qmix/tickets.py): a winning ticket starts from the source run's final masks over
this run's initialisation (the source's own one at the same seed), a cheating ticket from its masks and trained
weights; a bad source is one line naming sparse.ticket.source, before anything is built."""

from __future__ import annotations

import copy
import json

import pytest
import torch
from test_train_many import tiny_cfg

from effmarl import harness, io
from effmarl.algos.qmix.run import SeedRun, build_learner
from effmarl.algos.qmix.settings import QmixSettings
from effmarl.algos.qmix.tickets import load_ticket
from effmarl.config import ConfigError
from effmarl.profiling.phases import PhaseTimer
from effmarl.qmix_checks import check_config
from effmarl.runs import RunDir

SEED = 3


@pytest.fixture(scope="module")
def spec():
    from effmarl.envs import make_env

    env = make_env(tiny_cfg(SEED)["env"], 1)
    yield env.spec
    env.close()


def fresh_learner(cfg, spec):
    harness.seed_everything(cfg["seed"])
    settings = QmixSettings.from_config(cfg)
    return build_learner(settings, spec, dict(settings.schedule), torch.device("cpu"))


@pytest.fixture(scope="module")
def source(tmp_path_factory, spec):
    """A finished MAST run as its files: masks evolved away from the initial ones, weights moved by 'training'."""
    path = tmp_path_factory.mktemp("source")
    cfg = tiny_cfg(SEED)
    learner = fresh_learner(cfg, spec)
    initial = {"masks": {n: m.clone() for n, m in learner.sparse.topology.masks.items()},
               "weights": {k: v.clone() for k, v in learner.networks().state_dict().items()}}
    learner.sparse.topology.evolve(0.3, "random")
    with torch.no_grad():
        for p in learner.networks().parameters():
            p.add_(torch.randn_like(p))
    learner.sparse.topology.apply_masks()
    torch.save(learner.sparse_state(), path / "masks.pt")
    torch.save(learner.networks().state_dict(), path / "model.pt")
    io.write_json(path / "provenance.json", {"config": cfg})
    return {"path": path, "cfg": cfg, "initial": initial, "masks": learner.sparse.topology.masks,
            "weights": learner.networks().state_dict()}


def ticket_cfg(kind, source_path, seed=SEED, **changes):
    cfg = tiny_cfg(seed, "static")
    cfg["sparse"]["ticket"] = {"kind": kind, "source": str(source_path) if source_path else None}
    for dotted, value in changes.items():
        section, key = dotted.split("__")
        cfg[section][key] = value
    return cfg


def seed_run(cfg, spec, tmp_path):
    return SeedRun(copy.deepcopy(cfg), RunDir(tmp_path / "run", cfg), spec, harness.Process("cpu"), PhaseTimer())


def test_winning_ticket_starts_from_the_source_masks_and_its_initialisation(source, spec, tmp_path):
    learner = seed_run(ticket_cfg("winning", source["path"]), spec, tmp_path).learner
    masks = learner.sparse.topology.masks
    assert masks.keys() == source["masks"].keys()
    assert all(torch.equal(masks[n], source["masks"][n]) for n in masks)  # step 0: the source's final masks
    assert not all(torch.equal(source["initial"]["masks"][n], source["masks"][n]) for n in masks)
    assert all(torch.equal(learner.target_topology.masks[n], masks[n]) for n in masks)
    # the initialisation is the seed's: dense weights (the same for every method at this seed) under the new mask,
    # so wherever the source's initial mask was active too, the weights are the source's initial weights
    dense_cfg = tiny_cfg(SEED, "dense")
    dense_cfg["qmix"]["shared_params"] = False
    dense = fresh_learner(dense_cfg, spec).networks().state_dict()
    for name, weight in learner.networks().state_dict().items():
        expected = dense[name] * masks[name] if name in masks else dense[name]
        assert torch.equal(weight, expected), name
        both = masks[name] & source["initial"]["masks"][name] if name in masks else torch.ones_like(weight, dtype=bool)
        assert torch.equal(weight[both], source["initial"]["weights"][name][both]), name
    # the lottery link holds only at the source's seed: another seed is another initialisation
    other = seed_run(ticket_cfg("winning", source["path"], seed=SEED + 1), spec, tmp_path / "other").learner
    assert not torch.equal(other.agent.fc1.weight, learner.agent.fc1.weight)


def test_cheating_ticket_starts_from_the_source_weights(source, spec, tmp_path):
    learner = seed_run(ticket_cfg("cheating", source["path"]), spec, tmp_path).learner
    for name, weight in learner.networks().state_dict().items():
        assert torch.equal(weight, source["weights"][name]), name
        assert torch.equal(learner.target.state_dict()[name], weight), name
    assert all(torch.equal(m, source["masks"][n]) for n, m in learner.sparse.topology.masks.items())
    assert learner.sparse.schedule.grow is None  # static: the mask stays fixed


def test_random_ticket_is_the_static_random_mask(spec, tmp_path):
    plain = seed_run(tiny_cfg(SEED, "static"), spec, tmp_path / "a").learner
    random = seed_run(ticket_cfg("random", None), spec, tmp_path / "b").learner
    assert all(torch.equal(plain.sparse.topology.masks[n], m) for n, m in random.sparse.topology.masks.items())


def one_line(cfg, spec=None) -> str:
    with pytest.raises(ConfigError) as err:
        check_config(cfg)
        load_ticket(cfg, spec)
    assert len(err.value.lines) == 1, err.value.lines
    return err.value.lines[0]


def test_bad_tickets_are_one_line_naming_the_field(source, spec, tmp_path):
    assert "'sparse.ticket.kind'" in one_line(ticket_cfg("winning", source["path"], sparse__method="mast"))
    assert "'sparse.ticket.source'" in one_line(ticket_cfg("winning", None))
    assert "'sparse.ticket.source'" in one_line(ticket_cfg("random", source["path"]))
    assert "not a directory" in one_line(ticket_cfg("winning", tmp_path / "nowhere"))

    def broken(name, change):
        path = tmp_path / name
        path.mkdir()
        for f in ("masks.pt", "model.pt", "provenance.json"):
            (path / f).write_bytes((source["path"] / f).read_bytes())
        change(path)
        return path

    dense = broken("dense", lambda p: io.write_json(p / "provenance.json", {"config": {
        **source["cfg"], "sparse": {**source["cfg"]["sparse"], "method": "dense"}}}))
    assert "has no masks" in one_line(ticket_cfg("winning", dense), spec)
    wide = broken("wide", lambda p: io.write_json(p / "provenance.json", {"config": {
        **source["cfg"], "qmix": {**source["cfg"]["qmix"], "rnn_hidden_dim": 16}}}))
    assert "qmix.rnn_hidden_dim 16 differs" in one_line(ticket_cfg("winning", wide), spec)
    unfinished = broken("unfinished", lambda p: (p / "provenance.json").unlink())
    assert "not a finished run" in one_line(ticket_cfg("winning", unfinished), spec)
    no_model = broken("no_model", lambda p: (p / "model.pt").unlink())
    assert "model.pt is missing" in one_line(ticket_cfg("cheating", no_model), spec)
    assert load_ticket(ticket_cfg("winning", no_model), spec)["weights"] is None  # winning needs no model.pt

    def narrow_mask(p):
        state = torch.load(p / "masks.pt")
        state["online"]["topology"]["masks"]["agent.fc1.weight"] = torch.ones(3, 8, 5, dtype=torch.bool)
        torch.save(state, p / "masks.pt")

    line = one_line(ticket_cfg("winning", broken("shape", narrow_mask)), spec)
    assert line.startswith("field 'sparse.ticket.source'") and "agent.fc1.weight has shape (3, 8, 5)" in line


def test_a_ticket_source_whose_files_would_run_code_is_refused_in_one_line_and_runs_nothing(source, spec, tmp_path):
    from test_data_only_loads import crafted

    marker = tmp_path / "marker"
    for name in ("masks.pt", "model.pt"):
        path = tmp_path / name
        path.mkdir()
        for f in ("masks.pt", "model.pt", "provenance.json"):
            (path / f).write_bytes((source["path"] / f).read_bytes())
        crafted(path / name, marker, torch.load(source["path"] / name))
        line = one_line(ticket_cfg("cheating", path), spec)
        assert line.startswith("field 'sparse.ticket.source'") and f"{name} cannot be read (UnpicklingError" in line
    assert not marker.exists()


def test_a_bad_source_is_refused_before_the_run_directory_exists(tmp_path):
    from effmarl.train import train

    out = tmp_path / "out"
    with pytest.raises(ConfigError, match="sparse.ticket.source"):
        train(ticket_cfg("cheating", tmp_path / "nowhere"), str(out))
    assert not out.exists()
    assert json.dumps(ticket_cfg("none", None)["sparse"]["ticket"]) == '{"kind": "none", "source": null}'
