"""MAST wired into the qmix-family learner: masks at budget in online and target networks, the Soft Mellowmax
target, hybrid TD(λ) switching at T0, dual-buffer batch composition, Tiny's width, FLOPs outputs, RLx2 parts."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import pandas as pd
import pytest
import torch
from test_qmix_learner import OBS, SPEC, STATE, A, N, T, random_batch  # noqa: E402  (the same small batches)

from effmarl.algos.qmix import Learner, QmixSettings, SeedStack, accounting, target_kind, tiny_hyper
from effmarl.components import mast_components
from effmarl.config import ConfigError, validate
from effmarl.nets.rnn_agent import RNNAgent, agent_inputs, linear_factory
from effmarl.qmix_checks import check_config
from effmarl.replay.dual import DualReplay
from effmarl.replay.dynamic import DynamicWindow
from effmarl.replay.episode import EpisodeBuffer, concat, empty_batch, episode_scheme
from effmarl.sparse import flops
from effmarl.sparse.masks import sparsifiable_weights
from effmarl.sparse.tiny import sparsifiable_count
from effmarl.targets.mellowmax import soft_mellowmax
from effmarl.targets.returns import lambda_returns, one_step


def run_cfg(algo="qmix", method="mast", budget=1000, **sections):
    base = {"study": "t", "algo": algo, "seed": 0, "env": {"backend": "smax", "map": "3m"},
            "budget": {"env_steps": budget}, "sparse": {"method": method, "sparsity": 0.9},
            "qmix": {"shared_params": method == "dense"}, **sections}
    return validate(base, part="run")


def make_learner(algo="qmix", method="mast", delta_m=2, mellowmax=None):
    torch.manual_seed(0)
    cfg = run_cfg(algo, method)
    return Learner(algo, cfg["qmix"], N, OBS, A, STATE, sparse={**cfg["sparse"], "delta_m": delta_m},
                   mellowmax=mellowmax, seed=0)


def step(stack, batch, t, progress):
    """One optimiser step of a one-seed stack (lockstep.SeedStack owns every run's step) on `batch`."""
    total, _, _ = stack.losses([batch], [("one_step", 1, 0.0)], [0])
    stack.step(total, [0], [t], [progress])


def inputs_of(batch):
    last = torch.cat([torch.full_like(batch["actions"][:, :1], -1), batch["actions"][:, :-1]], dim=1)
    return agent_inputs(batch["obs"], last, A)


# ---- masks -------------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("algo", ["qmix", "ow_qmix", "res_qmix"])
def test_every_layer_stays_at_budget_in_online_and_target_networks(algo):
    learner = make_learner(algo, "rigl")
    topo = learner.sparse.topology
    names = set(topo.masks)
    assert any(n.startswith("agent.") for n in names) and any(n.startswith("mixer.") for n in names)
    if algo == "ow_qmix":  # OW-QMIX's unrestricted networks are sparse too, under the same budget
        assert any(n.startswith("central_agent.") for n in names)
        assert any(n.startswith("central_mixer.") for n in names)
    total = sum(m.numel() for m in topo.masks.values())
    assert sum(int(m.sum()) for m in topo.masks.values()) == round(0.1 * total)
    first = {n: m.clone() for n, m in topo.masks.items()}
    stack = SeedStack([learner])
    for t in range(1, 13):
        step(stack, random_batch(seed=t), t, t / 40)
        if t % 4 == 0:
            learner.update_targets()
        for tp, params in ((topo, dict(learner.named_parameters())), (learner.target_topology, None)):
            for layer in tp.layers:
                active = sum(int(tp.masks[n].sum()) for n in layer.params)
                assert active == topo.counts[layer.name], layer.name
            for name, mask in tp.masks.items():
                weight = params[name] if params else tp.params[name]
                assert not weight[~mask].any(), name  # inactive weights exactly zero
                if params:
                    assert not stack.params[name].grad[0][~mask].any(), name  # and their gradients
    assert any(not torch.equal(first[n], topo.masks[n]) for n in first)  # the topology did evolve
    assert len(learner.sparse.history) == 6  # every Δm = 2 updates while ζ > 0
    for row in learner.sparse.history:
        assert all(s["drop"] == s["grow"] for s in row["layers"].values())
    # after a sync the target's masks equal the online masks
    learner.update_targets()
    for name, mask in topo.masks.items():
        assert torch.equal(learner.target_topology.masks[name], mask)
        torch.testing.assert_close(learner.target_topology.params[name], topo.params[name])


def test_target_keeps_its_masks_between_syncs():
    learner = make_learner("qmix", "rigl", delta_m=1)
    before = {n: m.clone() for n, m in learner.target_topology.masks.items()}
    step(SeedStack([learner]), random_batch(), 1, 0.0)
    assert any(not torch.equal(before[n], learner.sparse.topology.masks[n]) for n in before)
    assert all(torch.equal(before[n], learner.target_topology.masks[n]) for n in before)


def test_dense_and_tiny_have_no_topology_and_sparse_methods_need_per_agent_networks():
    assert make_learner("qmix", "dense").sparse is None
    with pytest.raises(ConfigError, match="qmix.shared_params"):
        check_config(validate({**run_cfg(), "qmix": {"shared_params": True}}, part="run"))


# ---- Soft Mellowmax target ---------------------------------------------------------------------------------
@pytest.mark.parametrize("algo", ["qmix", "ow_qmix", "res_qmix"])
def test_soft_mellowmax_target_ignores_unavailable_actions(algo, monkeypatch):
    mm = {"alpha": 1.0, "omega": 10.0}
    learner = make_learner(algo, mellowmax=mm)
    batch = random_batch()
    inputs = inputs_of(batch)
    q_online = learner.unroll(learner.agent, inputs).detach()
    y = learner.td_targets(batch, inputs, q_online)
    original, outputs = Learner.unroll, {}
    monkeypatch.setattr(Learner, "unroll", staticmethod(
        lambda agent, x, filled=None: outputs.get(id(agent), original(agent, x, filled))))
    for name in [n for n in learner.target if n.endswith("agent")]:
        agent = learner.target[name]
        outputs[id(agent)] = original(agent, inputs).masked_fill(~batch["avail"], 1e6)
    y_big = learner.td_targets(batch, inputs, q_online.masked_fill(~batch["avail"], 1e6))
    torch.testing.assert_close(y, y_big)
    if algo == "qmix":  # and it is the target mixer over each agent's Soft Mellowmax, one-step by default
        v = learner.target["mixer"](soft_mellowmax(original(learner.target["agent"], inputs), batch["avail"], **mm),
                                    batch["state"])
        expected = one_step(batch["reward"], batch["terminated"], v, 0.99) * batch["filled"]
        torch.testing.assert_close(y, expected)


# ---- hybrid TD(λ) --------------------------------------------------------------------------------------------
def test_hybrid_td_lambda_switches_exactly_at_t0():
    cfg = run_cfg(budget=2000)  # T0 = 0.375 · 2000 = 750 env steps
    learner = make_learner(mellowmax={"alpha": 1.0, "omega": 10.0})
    run = SimpleNamespace(settings=QmixSettings.from_config(cfg), counters={"env_steps": 0})
    assert run.settings.returns.burn_in_env_steps == 750
    batch = random_batch()
    inputs = inputs_of(batch)
    v = learner.target["mixer"](soft_mellowmax(learner.unroll(learner.target["agent"], inputs), batch["avail"]),
                                batch["state"])
    for steps, expected in ((0, one_step(batch["reward"], batch["terminated"], v, 0.99) * batch["filled"]),
                            (749, one_step(batch["reward"], batch["terminated"], v, 0.99) * batch["filled"]),
                            (750, lambda_returns(batch["reward"], batch["terminated"], batch["filled"], v, 0.99, 0.6)),
                            (1999, lambda_returns(batch["reward"], batch["terminated"], batch["filled"], v, 0.99,
                                                  0.6))):
        run.counters["env_steps"] = steps
        kind = target_kind(run.settings.returns, run.counters['env_steps'])
        y = learner.td_targets(batch, inputs, learner.unroll(learner.agent, inputs).detach(), kind)
        torch.testing.assert_close(y, expected)
    # RLx2: one-step before its delay, n-step after
    cfg = run_cfg(method="rlx2", budget=2000)
    run.settings = QmixSettings.from_config(cfg)  # RLx2's delay: 0.1 · 2000 = 200 env steps
    run.counters["env_steps"] = 199
    assert target_kind(run.settings.returns, run.counters['env_steps']) == ("one_step", 1, 0.0)
    run.counters["env_steps"] = 200
    assert target_kind(run.settings.returns, run.counters['env_steps']) == ("n_step", 3, 0.0)


def test_components_follow_the_method_and_switch_alone():
    assert mast_components(run_cfg(method="mast")) == {"soft_mellowmax": True, "td_lambda": True, "dual_buffer": True,
                                                       "multi_step": False, "dynamic_buffer": False}
    assert not any(mast_components(run_cfg(method="rigl")).values())
    ablation = run_cfg(method="rigl", mellowmax={"enabled": True})
    assert mast_components(ablation)["soft_mellowmax"] and not mast_components(ablation)["dual_buffer"]
    no_dual = run_cfg(method="mast", mast={"dual_buffer": {"enabled": False}})
    assert not mast_components(no_dual)["dual_buffer"] and mast_components(no_dual)["td_lambda"]
    assert mast_components(run_cfg(method="rlx2"))["multi_step"]
    with pytest.raises(ConfigError, match="mast.td_lambda.lambda"):
        run_cfg(mast={"td_lambda": {"lambda": 1.5}})
    with pytest.raises(ConfigError, match="mast.td_lambda.enabled"):
        check_config(run_cfg(method="rlx2", mast={"td_lambda": {"enabled": True}}))
    with pytest.raises(ConfigError, match="mast.dual_buffer.size_ratio"):
        check_config(run_cfg(qmix={"shared_params": False, "buffer_size": 100}))


# ---- buffers -----------------------------------------------------------------------------------------------
def marked_episodes(start, count, length):
    b = empty_batch(episode_scheme(SPEC), count)
    b["filled"][:, :length] = True
    b["reward"][:, 0] = torch.arange(start, start + count, dtype=torch.float32)
    return b


def test_dual_buffer_batches_are_exactly_b1_plus_b2():
    scheme = episode_scheme(SPEC)
    dual = DualReplay.build(lambda c: EpisodeBuffer(scheme, c), 500, ratio=50, split=(3, 1), concat=concat)
    assert dual.small.capacity == 10
    for k in range(0, 200, 8):
        dual.add(marked_episodes(k, 8, length=3 if k < 192 else 6))  # the newest episodes are the longest
    g = torch.Generator().manual_seed(0)
    for _ in range(20):
        batch = dual.sample(32, g)
        ids = batch["reward"][:, 0]
        assert batch["reward"].shape == (32, 6)  # padded to the longest of both parts
        assert len(set(ids[:24].tolist())) == 24 and len(set(ids[24:].tolist())) == 8
        assert (ids[24:] >= 190).all()  # b2 = 8 from B2, which holds only the 10 newest episodes
        assert batch["filled"].sum(1).tolist() == [6 if i >= 192 else 3 for i in ids.tolist()]


def test_dynamic_window_shrinks_and_grows():
    buf = DynamicWindow(EpisodeBuffer(episode_scheme(SPEC), 100), initial=40, maximum=100, threshold=0.3,
                        shrink=10, grow=20, minimum=8)
    for k in range(0, 64, 8):
        buf.add(marked_episodes(k, 8, 2))
    assert len(buf) == 40
    assert buf.oldest(3)["reward"][:, 0].tolist() == [24.0, 25.0, 26.0]
    g = torch.Generator().manual_seed(0)
    assert (buf.sample(32, g)["reward"][:, 0] >= 24).all()
    buf.adjust(0.5)
    assert len(buf) == 30
    buf.adjust(0.1)
    assert buf.window == 50 and len(buf) == 50


def test_policy_distance_is_zero_for_greedy_actions():
    learner = make_learner("qmix", "rlx2")
    batch = random_batch()
    q = learner.unroll(learner.agent, inputs_of(batch))
    assert 0.0 < learner.policy_distance(batch) <= 1.0
    # actions chosen greedily step by step (inputs depend on the previous action)
    greedy = copy.deepcopy(batch)
    for t in range(T):
        q = learner.unroll(learner.agent, inputs_of(greedy))
        greedy["actions"][:, t] = q[:, t].masked_fill(~greedy["avail"][:, t], -1e9).argmax(-1)
    assert learner.policy_distance(greedy) == 0.0


# ---- Tiny and FLOPs ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("hypernet_layers", [1, 2])
def test_tiny_matches_the_sparse_parameter_count_within_one_width_unit(hypernet_layers):
    q = run_cfg(method="tiny", qmix={"shared_params": False, "hypernet_layers": hypernet_layers})["qmix"]
    full = Learner("qmix", q, N, OBS, A, STATE, sparse=run_cfg(method="rigl")["sparse"])
    sparse_params = sum(int(m.sum()) for m in full.sparse.topology.masks.values())
    narrow, info = tiny_hyper("qmix", q, N, OBS, A, STATE, 0.9)
    assert info["tiny_target_params"] == sparse_params
    tiny = Learner("qmix", narrow, N, OBS, A, STATE)
    nets = {"agent": tiny.agent, "mixer": tiny.mixer}
    params = dict((f"{k}.{n}", p) for k, m in nets.items() for n, p in m.named_parameters())
    count = sum(params[n].numel() for n in sparsifiable_weights(nets))
    assert count == info["tiny_params"]
    h = info["tiny_width"]
    for other in (h - 1, h + 1):
        other_q, _ = tiny_hyper("qmix", q, N, OBS, A, STATE, 0.9)
        other_q = {**other_q, "rnn_hidden_dim": other, "mixing_embed_dim": max(1, round(32 * other / 64)),
                   "hypernet_embed": max(1, round(64 * other / 64))}
        other_l = Learner("qmix", other_q, N, OBS, A, STATE)
        nets = {"agent": other_l.agent, "mixer": other_l.mixer}
        ps = dict((f"{k}.{n}", p) for k, m in nets.items() for n, p in m.named_parameters())
        other_count = sum(ps[n].numel() for n in sparsifiable_weights(nets))
        assert abs(count - sparse_params) <= abs(other_count - sparse_params)


def test_tiny_ow_qmix_counts_the_central_networks_it_would_sparsify():
    q = run_cfg(algo="ow_qmix", method="tiny", qmix={"shared_params": False})["qmix"]
    full = Learner("ow_qmix", q, N, OBS, A, STATE, sparse=run_cfg("ow_qmix", "rigl")["sparse"])
    narrow, info = tiny_hyper("ow_qmix", q, N, OBS, A, STATE, 0.9)
    assert info["tiny_target_params"] == sum(int(m.sum()) for m in full.sparse.topology.masks.values())
    tiny = Learner("ow_qmix", narrow, N, OBS, A, STATE)
    assert sparsifiable_count(dict(tiny.networks().items())) == info["tiny_params"]
    assert narrow["central_mixing_embed_dim"] < q["central_mixing_embed_dim"]


def test_flops_of_the_per_agent_agent_by_hand():
    agent = RNNAgent(10, 5, 8, linear_factory(3, shared_params=False))
    rows = {r.name: r for r in flops.layer_counts({"agent": agent})}
    assert rows["agent.fc1"].dense_forward_flops == 3 * (2 * 10 - 1) * 8
    assert rows["agent.rnn"].kind == "gru" and rows["agent.rnn"].dense_forward_flops == 3 * 3 * 8 * (2 * 16 - 1)
    assert rows["agent.fc2"].dense_forward_flops == 3 * (2 * 8 - 1) * 5
    assert set(rows) == {"agent.fc1", "agent.rnn", "agent.fc2"}  # the GRU's ih/hh are not counted twice


# ---- end to end on SMAX 3m ----------------------------------------------------------------------------------
def short_cfg(method, **extra):
    settings = {"num_envs": 2, "eval_episodes": 2, "batch_size": 4, "buffer_size": 200, "eval_every": 40,
                "checkpoint_every": 50, "target_update_interval": 4, "keep_checkpoint": True,
                "shared_params": method == "dense"}
    return validate({"study": "t", "algo": "qmix", "seed": 3, "env": {"backend": "smax", "map": "3m"},
                     "budget": {"env_steps": 120}, "qmix": settings,
                     "sparse": {"method": method, "delta_m": 2}, **extra}, part="run")


@pytest.mark.slow
def test_mast_run_writes_accounting_equal_to_flops_on_the_saved_masks(tmp_path):
    from effmarl.algos import qmix
    from effmarl.runs import RunDir

    cfg = short_cfg("mast")
    qmix.run(copy.deepcopy(cfg), RunDir(tmp_path, cfg))
    table = pd.read_parquet(tmp_path / "sparsity.parquet").iloc[0]
    learner = Learner("qmix", cfg["qmix"], 3, *_dims(), sparse=cfg["sparse"], seed=cfg["seed"])
    learner.load_sparse_state(torch.load(tmp_path / "masks.pt"))
    expected = flops.summary("qmix", cfg["qmix"]["batch_size"] * 60, {"agent": learner.agent},
                             {"mixer": learner.mixer}, learner.sparse.topology, n_agents=3, n_actions=9)
    for key in ("train_flops", "inference_flops", "size", "train_flops_ratio", "size_ratio"):
        assert table[key] == pytest.approx(expected[key], rel=1e-12), key
    assert table["size"] == round(0.1 * table["dense_size"])
    assert accounting(learner, cfg["qmix"], 60)["size"] == table["size"]
    agents = pd.read_parquet(tmp_path / "agent_masks.parquet")
    for layer, rows in agents.groupby("layer"):
        assert rows["active"].sum() == int(learner.sparse.topology.masks[layer].sum())
    metrics = pd.read_parquet(tmp_path / "metrics.parquet")
    assert metrics["density"].iloc[-1] == pytest.approx(0.1, abs=1e-4)
    assert metrics["topology_updates"].iloc[-1] > 0


def _dims():
    """obs_dim, n_actions, state_dim of SMAX 3m as the learner sees them."""
    from effmarl.envs import make_env

    cfg = validate({"study": "t", "algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": 1}}, part="run")
    spec = make_env(cfg["env"], 1).spec
    return spec.obs_dims[0], max(spec.n_actions), spec.state_dim
