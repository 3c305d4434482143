"""sparse.allocation (paper 2's Fig. 12, sparse/allocation.py): under equal / by_type every agent's active count in
every per-agent layer is fixed through topology updates and the total equals the learned allocation's; learned
keeps only the total. agent_masks.parquet names each agent's unit type."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from test_qmix_learner import OBS, STATE, A, N, random_batch  # noqa: E402  (the same small batches)

from effmarl.algos.qmix import Learner, QmixSettings, SeedStack
from effmarl.algos.qmix.accounting import write_accounting
from effmarl.config import ConfigError, validate
from effmarl.qmix_checks import check_config
from effmarl.runs import RunDir
from effmarl.sparse.allocation import agent_shares, split_by_agent


def cfg_with(method="set", **sparse):
    return validate({"study": "t", "algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "3m"},
                     "budget": {"env_steps": 100}, "sparse": {"method": method, "sparsity": 0.8, **sparse},
                     "qmix": {"shared_params": method == "dense", "rnn_hidden_dim": 8, "mixing_embed_dim": 4,
                              "hypernet_embed": 8}}, part="run")


def learner(shares, method="set"):
    cfg = cfg_with(method)
    torch.manual_seed(0)
    return Learner("qmix", cfg["qmix"], N, OBS, A, STATE, sparse={**cfg["sparse"], "delta_m": 1}, seed=0,
                   agent_shares=shares)


def per_agent(lr):
    topo = lr.sparse.topology
    return {name: topo.agent_counts(name).tolist() for name, m in topo.masks.items() if m.dim() == 3}


def total(lr):
    return sum(int(m.sum()) for m in lr.sparse.topology.masks.values())


def train_steps(lr, n=3):
    """n gradient updates, each one a topology update (delta_m 1, progress 0: ζ = ζ0)."""
    stack = SeedStack([lr])  # the one owner of the optimiser step, for one seed
    for t in range(1, n + 1):
        total, _, _ = stack.losses([random_batch(seed=t)], [("one_step", 1, 0.0)], [0])
        stack.step(total, [0], [t], [0.0])
    return lr.sparse.history[-1]


@pytest.mark.parametrize("method,shares", [("set", [1.0, 1.0, 1.0]), ("rigl", [1.0, 1.0, 2.0])],
                         ids=["equal-set", "by_type-rigl"])
def test_fixed_budgets_hold_per_agent_through_topology_updates(method, shares):
    fixed, learned = learner(shares, method), learner(None, method)
    assert total(fixed) == total(learned)  # the same global budget
    start = per_agent(fixed)
    for name, counts in start.items():
        assert counts == fixed.sparse.topology.agent_budgets[name]
        if shares[0] == shares[2]:
            assert len(set(counts)) == 1, (name, counts)  # equal: exactly the same count for every agent
        else:  # by_type 1:1:2, each budget the floor of its exact share
            assert counts[0] == counts[1] and 2 * counts[0] <= counts[2] <= 2 * counts[0] + 1, (name, counts)
    learned_start = per_agent(learned)
    assert train_steps(fixed)["layers"]["agent.fc1.weight"]["drop"] > 0  # the topology really changed
    train_steps(learned)
    assert per_agent(fixed) == start and total(fixed) == total(learned)
    assert {n: sum(c) for n, c in per_agent(learned).items()} == {n: sum(c) for n, c in learned_start.items()}
    assert per_agent(learned) != learned_start  # learned: only the totals are kept, the split moves
    # the target networks copy the masks, per-agent counts included
    fixed.update_targets()
    assert all(torch.equal(fixed.target_topology.masks[n], m) for n, m in fixed.sparse.topology.masks.items())


def test_split_moves_the_rounding_to_the_mixer_and_keeps_the_total():
    counts, budgets = split_by_agent({"agent": 100, "mixer": 10}, {"agent": 300, "mixer": 50}, {"agent": 3},
                                     [1.0, 1.0, 1.0])
    assert budgets == {"agent": [33, 33, 33]} and counts == {"agent": 99, "mixer": 11}
    counts, budgets = split_by_agent({"agent": 100, "mixer": 10}, {"agent": 300, "mixer": 50}, {"agent": 3},
                                     [1.0, 1.0, 2.0])
    assert budgets == {"agent": [25, 25, 50]} and counts == {"agent": 100, "mixer": 10}
    with pytest.raises(ValueError, match="can take"):
        split_by_agent({"agent": 100}, {"agent": 300}, {"agent": 3}, [1.0, 1.0, 1.0])


def test_shares_from_the_config_and_the_maps_unit_types():
    from effmarl.envs.smax import functions

    types = functions("2s3z", 120, False, False, True)[1].unit_types
    assert types == ("stalker", "stalker", "zealot", "zealot", "zealot")
    assert functions("3m", 60, False, False, True)[1].unit_types == ("marine",) * 3
    assert agent_shares({"allocation": "learned"}, types, 5) is None
    assert agent_shares({"allocation": "equal"}, types, 5) == [1.0] * 5
    assert agent_shares({"allocation": "by_type", "type_density": {"stalker": 2, "zealot": 1, "marine": 9}},
                        types, 5) == [2.0, 2.0, 1.0, 1.0, 1.0]
    with pytest.raises(ValueError) as err:
        agent_shares({"allocation": "by_type", "type_density": {"stalker": 2}}, types, 5)
    assert err.value.args == ("sparse.type_density", "no weight for unit type(s) zealot of this map")


@pytest.mark.parametrize("sparse,field", [
    ({"method": "dense", "allocation": "equal"}, "sparse.allocation"),
    ({"allocation": "by_type"}, "sparse.type_density"),
    ({"method": "static", "allocation": "equal", "ticket": {"kind": "winning", "source": "x"}}, "sparse.allocation"),
])
def test_bad_allocations_are_one_line(sparse, field):
    with pytest.raises(ConfigError) as err:
        check_config(cfg_with(**{"method": "set", **sparse}))
    assert len(err.value.lines) == 1 and err.value.lines[0].startswith(f"field '{field}'"), err.value.lines


def test_type_density_is_ignored_unless_by_type_so_a_grid_over_allocation_can_carry_it():
    check_config(cfg_with(method="set", allocation="equal", type_density={"marine": 1}))


def test_a_missing_unit_type_is_refused_before_the_run_directory_exists(tmp_path):
    from effmarl.train import train

    cfg = cfg_with(allocation="by_type", type_density={"stalker": 1.0})
    with pytest.raises(ConfigError) as err:
        train(cfg, str(tmp_path / "out"))
    assert err.value.lines == ["field 'sparse.type_density': no weight for unit type(s) marine of this map "
                               "(env.map '3m')"]
    assert not (tmp_path / "out").exists()


def test_agent_masks_name_each_agents_unit_type(tmp_path):
    lr = learner([1.0, 1.0, 2.0])
    cfg = cfg_with()
    write_accounting(RunDir(tmp_path, cfg), lr, QmixSettings.from_config(cfg), 8,
                     unit_types=("stalker", "stalker", "zealot"))
    table = pd.read_parquet(tmp_path / "agent_masks.parquet")
    assert list(table.columns) == ["layer", "agent", "unit_type", "active", "numel"]
    assert table.groupby("agent")["unit_type"].first().tolist() == ["stalker", "stalker", "zealot"]
    by_type = table.groupby(["layer", "unit_type"])["active"].sum()  # per-type connection counts (Figs. 11-12)
    for name, budgets in lr.sparse.topology.agent_budgets.items():
        assert by_type[(name, "zealot")] == budgets[2] and by_type[(name, "stalker")] == budgets[0] + budgets[1]
