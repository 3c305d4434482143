"""Gradual magnitude pruning (sparse.method gmp, Zhu & Gupta 2017): a dense start pruned to the target sparsity by the
cubic schedule between sparse.prune_start and sparse.anneal_end of training, every Δm updates, never regrown; its
training FLOPs are the mean over its updates of each update's masks. Every number here is worked by hand."""

from __future__ import annotations

import pytest
import torch
from test_qmix_learner import OBS, STATE, A, N, random_batch
from torch import nn

from effmarl.algos.qmix import Learner, SeedStack, accounting
from effmarl.config import validate
from effmarl.methods import METHODS
from effmarl.sparse import SparseTopology, SparseTraining, TopologySchedule
from effmarl.sparse.evolution import cubic_sparsity


def gmp_cfg(**sparse) -> dict:
    return validate({"study": "t", "algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "3m"},
                     "budget": {"env_steps": 1000}, "sparse": {"method": "gmp", **sparse},
                     "qmix": {"shared_params": False}}, part="run")


def test_the_cubic_schedule_by_hand():
    # s_f = 0.9 from 0.2 to 0.75 of training: (1 - (t - t0) / (n dt))^3 at the start, a fifth of the way, half way
    assert cubic_sparsity(0.1, 0.9, 0.2, 0.75) == 0.0
    assert cubic_sparsity(0.2, 0.9, 0.2, 0.75) == 0.0
    assert cubic_sparsity(0.31, 0.9, 0.2, 0.75) == pytest.approx(0.9 - 0.9 * 0.8 ** 3)   # 0.4392
    assert cubic_sparsity(0.475, 0.9, 0.2, 0.75) == pytest.approx(0.9 - 0.9 * 0.5 ** 3)  # 0.7875
    assert cubic_sparsity(0.75, 0.9, 0.2, 0.75) == 0.9 and cubic_sparsity(1.0, 0.9, 0.2, 0.75) == 0.9
    assert cubic_sparsity(0.5, 0.9, 0.6, 0.6) == 0.0 and cubic_sparsity(0.6, 0.9, 0.6, 0.6) == 0.9  # one shot


def test_it_prunes_every_delta_m_updates_from_its_start_and_stops_at_the_target():
    s = TopologySchedule(None, 100, 10, 0.5, 0.75, prune="cubic", sparsity=0.9, prune_start=0.2)
    assert [t for t in range(101) if s.due(t)] == [20, 30, 40, 50, 60, 70, 80, 90, 100]
    assert [round(s.target_sparsity(t), 4) for t in (20, 31, 75, 90)] == [0.0, 0.4392, 0.9, 0.9]
    assert s.due(10, progress=0.2) and not s.due(10, progress=0.19)  # the learner's fraction: env steps / budget


def test_the_record_starts_dense_prunes_by_the_cubic_schedule_and_sums_its_flops_over_its_history():
    gmp = METHODS["gmp"]
    assert (gmp.start, gmp.grow, gmp.prune, gmp.flops, gmp.masks) == ("dense", None, "cubic", "history", True)
    assert gmp_cfg()["sparse"]["prune_start"] == 0.2 and gmp_cfg()["sparse"]["anneal_end"] == 0.75


def hand_layer() -> nn.Linear:
    """A 4 x 4 layer whose weights' magnitudes are 1..16 (signs alternate), row-major."""
    layer = nn.Linear(4, 4, bias=False)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([(-1) ** i * (i + 1.0) for i in range(16)]).view(4, 4))
    return layer


def test_pruning_keeps_the_largest_magnitudes_and_never_regrows():
    layer = hand_layer()
    topo = SparseTopology(layer, 0.5, distribution="uniform", dense_start=True)
    assert topo.density() == 1.0 and topo.counts == {"weight": 8}  # dense at first, the target's budget kept
    _, stats = topo.prune_to(0.25)
    assert stats == {"weight": {"active": 16, "drop": 4, "grow": 0}}
    assert torch.equal(topo.masks["weight"], layer.weight.abs() > 0)  # pruned weights are zero ...
    assert topo.masks["weight"].view(-1).tolist() == [False] * 4 + [True] * 12  # ... and they were |w| = 1..4
    changed, stats = topo.prune_to(0.5)
    assert stats["weight"]["drop"] == 4 and changed["weight"].view(-1).tolist() == [False] * 4 + [True] * 4 + \
        [False] * 8
    _, stats = topo.prune_to(0.25)  # a lower sparsity later: nothing comes back
    assert stats["weight"]["drop"] == 0 and int(topo.masks["weight"].sum()) == 8


def test_agents_with_fixed_budgets_are_pruned_each_within_its_own_slice():
    from effmarl.nets.rnn_agent import StackedLinear

    layer = StackedLinear(2, 2, 4)  # two agents, [2, 4, 2]: 8 weights each
    with torch.no_grad():  # agent 0's weights all larger than agent 1's: a shared ranking would prune agent 1 only
        layer.weight.copy_(torch.cat([torch.arange(9.0, 17.0), torch.arange(1.0, 9.0)]).view(2, 4, 2))
    topo = SparseTopology({"l": layer}, 0.5, distribution="uniform", agent_shares=[1.0, 1.0], dense_start=True)
    topo.prune_to(0.5)
    assert topo.agent_counts("l.weight").tolist() == [4, 4]
    assert topo.masks["l.weight"].view(2, -1).tolist() == [[False] * 4 + [True] * 4] * 2


def test_the_mean_of_active_weights_over_a_history_by_hand():
    layer = hand_layer()
    sparse = SparseTraining(SparseTopology(layer, 0.5, distribution="uniform", dense_start=True),
                            TopologySchedule(None, 10, 2, 0.5, 1.0, prune="cubic", sparsity=0.5, prune_start=0.0))
    sparse.history = [{"t": 2, "layers": {"weight": {"active": 16, "drop": 4, "grow": 0}}},
                      {"t": 4, "layers": {"weight": {"active": 12, "drop": 4, "grow": 0}}}]
    sparse.topology.prune_to(0.5)  # the final masks: 8 weights
    # updates 1-2 dense (16), 3-4 at 12, 5-10 at 8: (2 x 16 + 2 x 12 + 6 x 8) / 10
    assert sparse.mean_active(10) == {"weight": pytest.approx(10.4)}
    assert sparse.mean_active(0) == {"weight": 8}


def test_a_gmp_learner_prunes_to_the_static_budget_and_counts_its_dense_start_in_its_training_flops():
    cfg = gmp_cfg(sparsity=0.8)
    static = Learner("qmix", cfg["qmix"], N, OBS, A, STATE, sparse={**cfg["sparse"], "method": "static"})
    torch.manual_seed(0)
    learner = Learner("qmix", cfg["qmix"], N, OBS, A, STATE, sparse={**cfg["sparse"], "delta_m": 1}, seed=0)
    assert learner.sparse.topology.density() == 1.0
    stack, masks = SeedStack([learner]), []
    for t in range(1, 11):  # progress t / 10: dense to 0.2, then the cubic schedule, the target from 0.75 on
        total, _, _ = stack.losses([random_batch(seed=t)], [("one_step", 1, 0.0)], [0])
        stack.step(total, [0], [t], [t / 10])
        masks.append({n: m.clone() for n, m in learner.sparse.topology.masks.items()})
    assert [row["t"] for row in learner.sparse.history] == [3, 4, 5, 6, 7, 8]  # t = 2 is s = 0: nothing to prune
    for earlier, later in zip(masks, masks[1:], strict=False):  # never regrown: each mask within the one before
        assert not any(bool((later[n] & ~earlier[n]).any()) for n in earlier)
    # at the end, the budget a static sparse start holds from its first update, layer by layer
    assert {n: int(m.sum()) for n, m in learner.sparse.topology.masks.items()} == \
        {n: int(m.sum()) for n, m in static.sparse.topology.masks.items()}
    final = accounting(learner, learner.q, 60)
    over = accounting(learner, learner.q, 60, active=learner.sparse.mean_active(10))
    assert final["train_flops_ratio"] == pytest.approx(accounting(static, static.q, 60)["train_flops_ratio"])
    assert final["train_flops_ratio"] < over["train_flops_ratio"] < 1.0  # dearer to train than its final masks
