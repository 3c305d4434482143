"""FLOPs and size accounting against numbers worked out by hand from the paper's formulas; the Tiny width."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from effmarl.nets.rnn_agent import StackedLinear
from effmarl.sparse import SparseTopology
from effmarl.sparse.flops import count, summary, training_flops
from effmarl.sparse.tiny import tiny_width_for, weight_count


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.rnn, self.fc2 = nn.Linear(4, 3), nn.GRUCell(3, 2), nn.Linear(2, 5)


def keep_first(shape, k):
    m = torch.zeros(shape, dtype=torch.bool)
    m.view(-1)[:k] = True
    return m


def test_dense_counts_by_hand():
    c = count(Tiny())
    # fc1: (2*4-1)*3 = 21; GRU: 3*2*(2*(2+3)-1) = 54; fc2: (2*2-1)*5 = 15
    assert [r["dense_forward_flops"] for r in c["layers"]] == [21, 54, 15]
    assert c["forward_flops"] == c["dense_forward_flops"] == 90
    # sizes: 4*3 = 12; 3*2*(2+3) = 30; 2*5 = 10
    assert c["size"] == c["dense_size"] == 52
    assert count(Tiny(), copies=3)["forward_flops"] == 270  # a shared network run by 3 agents


def test_sparse_counts_by_hand_with_per_layer_densities():
    net = Tiny()
    topo = SparseTopology(net, 0.5, seed=0)
    topo.set_mask("fc1.weight", keep_first((3, 4), 6))  # d = 0.5 -> 0.5*21 = 10.5
    topo.set_mask("rnn.weight_ih", keep_first((6, 3), 6))  # GRU as one [6, 5] matrix: (6 + 9)/30 = 0.5
    topo.set_mask("rnn.weight_hh", keep_first((6, 2), 9))  # -> 0.5*54 = 27
    topo.set_mask("fc2.weight", keep_first((5, 2), 2))  # d = 0.2 -> 0.2*15 = 3
    c = count(net, topo)
    assert [r["forward_flops"] for r in c["layers"]] == pytest.approx([10.5, 27.0, 3.0])
    assert c["forward_flops"] == pytest.approx(40.5) and c["dense_forward_flops"] == 90
    assert c["size"] == 6 + 15 + 2 == 23 and c["dense_size"] == 52


def test_stacked_agents_count_each_agents_own_mask():
    layer = StackedLinear(2, 4, 3)  # the learner's per-agent layer: weight [2 agents, 3 out, 4 in]
    topo = SparseTopology(layer, 0.5, seed=0)
    mask = torch.zeros(2, 3, 4, dtype=torch.bool)
    mask[0] = True  # agent 0 dense (12), agent 1 keeps 3 of 12
    mask[1].view(-1)[:3] = True
    topo.set_mask("weight", mask)
    c = count(layer, topo)
    assert c["dense_forward_flops"] == 42  # 2 agents * 21
    assert c["forward_flops"] == pytest.approx(21 + 21 * 3 / 12)  # 26.25
    assert c["size"] == 15 and c["dense_size"] == 24


def test_training_formulas_by_hand():
    assert training_flops("qmix", 2, 90, 20) == 880  # 2*4*(90+20)
    assert training_flops("ow_qmix", 2, 90, 20, f_unrestricted_agent=10, f_unrestricted_mix=5) == 780
    assert training_flops("res", 2, 90, 20, n_agents=3, n_actions=5) == 2040  # 2*(360 + 33*20)
    with pytest.raises(ValueError):
        training_flops("res", 2, 90, 20)


def test_summary_normalises_to_dense():
    agent, mixer = Tiny(), nn.Sequential(nn.Linear(3, 4))  # mixer: (2*3-1)*4 = 20 dense
    topo = SparseTopology({"agent": agent, "mixer": mixer}, 0.5, seed=0)
    topo.set_mask("agent.fc1.weight", keep_first((3, 4), 6))
    topo.set_mask("agent.rnn.weight_ih", keep_first((6, 3), 6))
    topo.set_mask("agent.rnn.weight_hh", keep_first((6, 2), 9))
    topo.set_mask("agent.fc2.weight", keep_first((5, 2), 2))
    topo.set_mask("mixer.0.weight", keep_first((4, 3), 3))  # d = 0.25 -> 5
    s = summary("qmix", 2, {"agent": agent}, {"mixer": mixer}, topo, agent_copies=3)
    assert s["dense_train_flops"] == 2 * 4 * (270 + 20)
    assert s["train_flops"] == pytest.approx(2 * 4 * (3 * 40.5 + 5))
    assert s["inference_flops"] == pytest.approx(121.5) and s["dense_inference_flops"] == 270
    assert s["size"] == 3 * 23 + 3 and s["dense_size"] == 3 * 52 + 12
    assert s["inference_flops_ratio"] == pytest.approx(0.45)


def test_tiny_width_search():
    """Tiny's width (sparse.tiny.tiny_width_for, as networks.tiny_hyper calls it) over real modules whose weights
    number 10h + 6h^2 + 5h: the closest width, ties and shortfalls to the smaller network."""
    def build(h):
        return {"net": nn.Sequential(nn.Linear(10, h), nn.GRUCell(h, h), nn.Linear(h, 5))}

    assert weight_count(build, 16) == 1776 and weight_count(build, 17) == 1989
    assert tiny_width_for(build, 1776, 64) == 16
    assert tiny_width_for(build, 1800, 64) == 16  # 1776 (24 short) vs 1989 (189 over)
    assert tiny_width_for(build, 1900, 64) == 17  # 124 short vs 89 over
    assert tiny_width_for(build, 1, 64) == 1
    assert tiny_width_for(build, 10**9, 64) == 64  # never wider than max_width
