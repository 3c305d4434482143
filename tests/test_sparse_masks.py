"""Masks and topology evolution: exact densities, Erdős–Rényi budgets, sparsity through optimiser steps,
equal drop/grow counts, per-agent masks under one budget, target mask copies, checkpoints."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from effmarl.config import validate
from effmarl.nets.rnn_agent import GRUCell, RNNAgent, StackedLinear, linear_factory
from effmarl.sparse import (
    SparseTopology,
    SparseTraining,
    TopologySchedule,
    cosine_zeta,
    kept_counts,
    layer_densities,
)


class Agent(nn.Module):
    """The paper's agent network shape: fc -> GRU -> fc."""

    def __init__(self, obs=20, hidden=16, actions=6):
        super().__init__()
        self.fc1, self.rnn, self.fc2 = nn.Linear(obs, hidden), nn.GRUCell(hidden, hidden), nn.Linear(hidden, actions)

    def forward(self, x, h):
        h = self.rnn(torch.relu(self.fc1(x)), h)
        return self.fc2(h), h


def sparse_section(**fields) -> dict:
    """A `sparse:` section as a validated run holds it: `fields` and the schema's defaults."""
    return validate({"study": "t", "algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "3m"},
                     "budget": {"env_steps": 100}, "qmix": {"shared_params": fields.get("method") == "dense"},
                     "sparse": fields}, part="run")["sparse"]


def stacked_agents(n=4, obs=20, hidden=16, actions=6) -> RNNAgent:
    """The learner's per-agent agent network (qmix.shared_params: false): StackedLinear layers [n, out, in]."""
    return RNNAgent(obs, actions, hidden, linear_factory(n, shared_params=False))


def layer_counts_of(topo):
    return {ly.name: int(sum(topo.masks[n].sum() for n in ly.params)) for ly in topo.layers}


def test_er_densities_hand_example_and_budget():
    # raw ER densities 0.2 and 0.02; eps = 1010 / (0.2*100 + 0.02*10000) = 4.5909...
    d = layer_densities({"a": ((10, 10), 100), "b": ((100, 100), 10000)}, sparsity=0.9)
    assert d["a"] == pytest.approx(1010 / 220 * 0.2) and d["b"] == pytest.approx(1010 / 220 * 0.02)
    assert d["a"] * 100 + d["b"] * 10000 == pytest.approx(1010)


def test_er_caps_dense_layers_and_redistributes():
    layers = {"tiny": ((2, 2), 4), "mid": ((20, 30), 600), "big": ((300, 200), 60000)}
    d = layer_densities(layers, sparsity=0.5)
    assert d["tiny"] == 1.0 and 0 < d["big"] < d["mid"] <= 1.0
    assert sum(d[k] * layers[k][1] for k in layers) == pytest.approx(0.5 * 60604)
    counts = kept_counts({k: v[1] for k, v in layers.items()}, d, 0.5)
    assert sum(counts.values()) == round(0.5 * 60604) and counts["tiny"] == 4
    assert layer_densities(layers, 0.0) == {k: 1.0 for k in layers}
    assert list(layer_densities(layers, 0.8, "uniform").values()) == pytest.approx([0.2, 0.2, 0.2])


def test_topology_initial_masks_exact_and_biases_dense():
    agent = Agent()
    topo = SparseTopology(agent, 0.9, seed=1)
    assert set(topo.masks) == {"fc1.weight", "rnn.weight_ih", "rnn.weight_hh", "fc2.weight"}
    total = sum(m.numel() for m in topo.masks.values())
    assert sum(int(m.sum()) for m in topo.masks.values()) == round(0.1 * total)
    assert layer_counts_of(topo) == topo.counts
    for name, mask in topo.masks.items():
        assert (dict(agent.named_parameters())[name][~mask] == 0).all()
    assert (agent.fc1.bias != 0).all()


@pytest.mark.parametrize("method", ["set", "rigl"])
@pytest.mark.parametrize("opt_name", ["rmsprop", "adam"])
def test_training_keeps_exact_sparsity_and_zero_weights(method, opt_name):
    torch.manual_seed(0)
    agent = Agent()
    total_updates = 48
    sparse = SparseTraining.from_config(sparse_section(method=method, sparsity=0.8, delta_m=4), agent,
                                        total_updates, seed=3)
    topo = sparse.topology
    counts0 = dict(topo.counts)
    opt = (torch.optim.RMSprop(agent.parameters(), lr=5e-3, alpha=0.99, eps=1e-5) if opt_name == "rmsprop"
           else torch.optim.Adam(agent.parameters(), lr=5e-3))
    params = dict(agent.named_parameters())
    n_evolutions = 0
    for t in range(1, total_updates + 1):
        x, h = torch.randn(8, 20), torch.randn(8, 16)
        q, _ = agent(x, h)
        loss = (q - 1.0).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        before = {n: m.clone() for n, m in topo.masks.items()}
        row = sparse.before_step(opt, t)
        for name, mask in topo.masks.items():
            assert (params[name].grad[~mask] == 0).all()
        if row is not None:
            n_evolutions += 1
            for layer in topo.layers:
                st = row["layers"][layer.name]
                assert st["drop"] == st["grow"]
                flipped = sum(int((before[n] ^ topo.masks[n]).sum()) for n in layer.params)
                assert flipped == 2 * st["drop"]
        torch.nn.utils.clip_grad_norm_(agent.parameters(), 10.0)
        opt.step()
        sparse.after_step()
        assert layer_counts_of(topo) == counts0
        for name, mask in topo.masks.items():
            assert (params[name][~mask] == 0).all()
            for value in opt.state[params[name]].values():
                if torch.is_tensor(value) and value.shape == mask.shape:
                    assert (value[~mask] == 0).all()
    assert n_evolutions == len(range(4, 36, 4))  # every delta_m updates until 75 % of training
    assert topo.density() == pytest.approx(0.2, abs=1 / sum(m.numel() for m in topo.masks.values()))
    assert any(row["layers"]["fc1.weight"]["drop"] > 0 for row in sparse.history)


def test_rigl_drops_smallest_weights_and_grows_largest_gradients():
    lin = nn.Linear(5, 4, bias=False)
    topo = SparseTopology(lin, 0.5, params=["weight"])
    mask = torch.zeros(4, 5, dtype=torch.bool)
    mask[:2] = True  # rows 0-1 active (10 weights)
    topo.set_mask("weight", mask)
    with torch.no_grad():
        lin.weight[:2] = torch.arange(1.0, 11.0).view(2, 5)  # |w| 1..10: the two smallest are (0,0), (0,1)
    lin.weight.grad = torch.zeros(4, 5)
    lin.weight.grad[3, 4], lin.weight.grad[2, 1], lin.weight.grad[2, 0] = -9.0, 5.0, 1.0
    lin.weight.grad[0, 0] = 100.0  # active: never a growth candidate
    changed, stats = topo.evolve(0.2, grow="gradient")  # k = floor(0.2 * 10) = 2
    assert stats["weight"] == {"active": 10, "drop": 2, "grow": 2}
    m = topo.masks["weight"]
    assert not m[0, 0] and not m[0, 1] and m[3, 4] and m[2, 1] and int(m.sum()) == 10
    assert lin.weight[3, 4] == 0 and lin.weight[2, 1] == 0 and lin.weight[0, 0] == 0
    assert int(changed["weight"].sum()) == 4


def test_set_grows_only_among_previously_inactive():
    lin = nn.Linear(10, 10)
    topo = SparseTopology(lin, 0.7, params=["weight"], seed=5)
    before = topo.masks["weight"].clone()
    changed, stats = topo.evolve(0.5, grow="random")
    grown = topo.masks["weight"] & ~before
    dropped = before & ~topo.masks["weight"]
    assert int(grown.sum()) == int(dropped.sum()) == stats["weight"]["grow"] == 15
    assert torch.equal(changed["weight"], grown | dropped)


def test_gradient_growth_needs_gradients():
    lin = nn.Linear(4, 4)
    topo = SparseTopology(lin, 0.5, params=["weight"])
    with pytest.raises(RuntimeError, match="dense gradient"):
        topo.evolve(0.5, grow="gradient")


def test_stacked_agents_get_own_masks_under_one_budget():
    torch.manual_seed(0)
    net = stacked_agents(n=4)
    topo = SparseTopology(net, 0.9, seed=2)
    fc1 = topo.masks["fc1.weight"]
    assert fc1.shape == (4, 16, 20)
    assert not torch.equal(fc1[0], fc1[1])
    counts = topo.agent_counts("fc1.weight")
    assert int(counts.sum()) == topo.counts["fc1.weight"]
    # growth follows the gradient: make only agent 0's inactive weights matter; its share grows, budget constant
    for _ in range(3):
        net.fc1.weight.grad = torch.zeros_like(net.fc1.weight)
        net.fc1.weight.grad[0] = 1.0 + torch.rand(16, 20)
        for n in ("rnn.ih.weight", "rnn.hh.weight", "fc2.weight"):
            dict(net.named_parameters())[n].grad = torch.rand_like(dict(net.named_parameters())[n])
        topo.evolve(0.3, grow="gradient")
    after = topo.agent_counts("fc1.weight")
    assert int(after.sum()) == int(counts.sum()) and after[0] > counts[0]


def test_stacked_layers_equal_per_agent_torch_layers():
    """The learner's per-agent layers (StackedLinear, and the GRUCell built from two) given each agent's torch
    Linear and GRUCell weights compute what those torch layers compute, agent by agent ([..., n, in] layout)."""
    torch.manual_seed(0)
    lins = [nn.Linear(5, 3) for _ in range(2)]
    cells = [nn.GRUCell(3, 4) for _ in range(2)]
    linear, cell = StackedLinear(2, 5, 3), GRUCell(3, 4, linear_factory(2, shared_params=False))
    with torch.no_grad():
        for a in range(2):
            linear.weight[a], linear.bias[a] = lins[a].weight, lins[a].bias
            cell.ih.weight[a], cell.ih.bias[a] = cells[a].weight_ih, cells[a].bias_ih
            cell.hh.weight[a], cell.hh.bias[a] = cells[a].weight_hh, cells[a].bias_hh
    x, h = torch.randn(7, 2, 5), torch.randn(7, 2, 4)
    y = linear(x)
    for a in range(2):
        torch.testing.assert_close(y[:, a], lins[a](x[:, a]))
        torch.testing.assert_close(cell(y, h)[:, a], cells[a](y[:, a], h[:, a]))


def test_module_list_group_is_one_layer():
    agents = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])
    topo = SparseTopology(agents, 0.75, params=[], groups={"fc": [f"{i}.weight" for i in range(3)]}, seed=0)
    assert [ly.name for ly in topo.layers] == ["fc"] and topo.counts["fc"] == 48
    assert sum(int(topo.masks[f"{i}.weight"].sum()) for i in range(3)) == 48


def test_target_copies_masks_and_checkpoint_roundtrip():
    online, target = Agent(), Agent()
    modules = {"agent": online}
    topo = SparseTopology(modules, 0.8, seed=4)
    target.load_state_dict(online.state_dict())
    ttopo = topo.bind({"agent": target})
    for name, mask in topo.masks.items():
        assert torch.equal(ttopo.masks[name], mask) and ttopo.masks[name] is not mask
    online.fc1.weight.grad = torch.randn_like(online.fc1.weight)
    topo.evolve(0.5, grow="random")
    assert not torch.equal(ttopo.masks["agent.fc1.weight"], topo.masks["agent.fc1.weight"])
    with torch.no_grad():
        target.fc1.weight.fill_(1.0)
    topo.copy_masks_to(ttopo)
    assert torch.equal(ttopo.masks["agent.fc1.weight"], topo.masks["agent.fc1.weight"])
    assert (target.fc1.weight[~topo.masks["agent.fc1.weight"]] == 0).all()

    state = topo.state_dict()
    clone = Agent()
    fresh = SparseTopology({"agent": clone}, 0.8, seed=99)
    clone.load_state_dict(online.state_dict())  # resume order: build, then load weights and topology state
    fresh.load_state_dict(state)
    for name in topo.masks:
        assert torch.equal(fresh.masks[name], topo.masks[name])
    assert torch.equal(fresh.evolve(0.5, "random")[0]["agent.fc1.weight"], topo.evolve(0.5, "random")[0][
        "agent.fc1.weight"])  # the generator state travels with the checkpoint (same weights -> same update)


def test_schedule():
    assert cosine_zeta(0, 1000, 0.5, 0.75) == 0.5
    assert cosine_zeta(375, 1000, 0.5, 0.75) == pytest.approx(0.25)
    assert cosine_zeta(750, 1000, 0.5, 0.75) == 0.0 and cosine_zeta(900, 1000, 0.5, 0.75) == 0.0
    s = TopologySchedule("gradient", total_updates=1000, delta_m=200, zeta0=0.5, anneal_end=0.75)
    assert [t for t in range(1001) if s.due(t)] == [200, 400, 600]
    assert not any(TopologySchedule(None, 1000, 200, 0.5, 0.75).due(t) for t in range(1001))
    assert SparseTraining.from_config({}, Agent(), 10) is None
    assert SparseTraining.from_config(sparse_section(method="dense"), Agent(), 10) is None
    assert SparseTraining.from_config(sparse_section(method="tiny"), Agent(), 10) is None
    assert SparseTraining.from_config(sparse_section(method="static", sparsity=0.5), Agent(), 10).schedule.grow is None


def test_the_schedule_reads_the_sparse_section_the_schema_filled():
    sparse = SparseTraining.from_config(sparse_section(method="rigl"), Agent(), 1000)
    assert (sparse.topology.sparsity, sparse.topology.distribution) == (0.9, "er")
    assert (sparse.schedule.delta_m, sparse.schedule.zeta0, sparse.schedule.anneal_end) == (200, 0.5, 0.75)


def test_er_budget_property_random_layers():
    gen = torch.Generator().manual_seed(0)
    for _ in range(200):
        n_layers = int(torch.randint(1, 6, (1,), generator=gen))
        layers = {}
        for i in range(n_layers):
            out, inp, agents = (int(v) for v in torch.randint(1, 300, (3,), generator=gen))
            layers[f"l{i}"] = ((out, inp), out * inp * (1 + agents % 8))
        sparsity = [0.0, 0.3, 0.5, 0.9, 0.95, 0.99][int(torch.randint(0, 6, (1,), generator=gen))]
        d = layer_densities(layers, sparsity)
        sizes = {k: v[1] for k, v in layers.items()}
        total = sum(sizes.values())
        assert all(0.0 < x <= 1.0 + 1e-12 for x in d.values())
        assert sum(d[k] * sizes[k] for k in layers) == pytest.approx((1 - sparsity) * total, rel=1e-9)
        target = round((1 - sparsity) * total)
        if target >= n_layers:
            counts = kept_counts(sizes, d, sparsity)
            assert sum(counts.values()) == target and all(1 <= counts[k] <= sizes[k] for k in counts)
