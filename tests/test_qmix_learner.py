"""The qmix-family learner: available actions, padding, determinism, resume, config checks."""

import copy

import pandas as pd
import pytest
import torch

from effmarl.algos.qmix import Learner, select_actions
from effmarl.config import ConfigError, validate
from effmarl.envs.base import EnvSpec
from effmarl.qmix_checks import check_config
from effmarl.replay.episode import empty_batch, episode_scheme

ALGOS = ["qmix", "ow_qmix", "res_qmix"]
N, OBS, A, STATE, T = 3, 6, 5, 7, 8
SPEC = EnvSpec([f"ally_{i}" for i in range(N)], ["ally"] * N, [OBS] * N, [A] * N, STATE, T)


def run_cfg(algo="qmix", **qmix):
    base = {"study": "t", "algo": algo, "seed": 0, "env": {"backend": "smax", "map": "3m"},
            "budget": {"env_steps": 10}, "qmix": qmix}
    return validate(base, part="run")


def make_learner(algo, **qmix):
    torch.manual_seed(0)
    learner = Learner(algo, run_cfg(algo, **qmix)["qmix"], N, OBS, A, STATE)
    with torch.no_grad():  # different online and target networks, so double Q matters
        for p in learner.target.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return learner


def random_batch(seed=0, lengths=(8, 5, 3, 6), terminated=(False, True, True, False)):
    g = torch.Generator().manual_seed(seed)
    b = empty_batch(episode_scheme(SPEC), len(lengths))
    for k, (n, term) in enumerate(zip(lengths, terminated, strict=True)):
        b["obs"][k, : n + 1] = torch.randn(n + 1, N, OBS, generator=g)
        b["state"][k, : n + 1] = torch.randn(n + 1, STATE, generator=g)
        avail = torch.rand(n + 1, N, A, generator=g) < 0.6
        avail[..., 0] = True
        b["avail"][k, : n + 1] = avail
        b["actions"][k, :n] = torch.multinomial(avail[:n].reshape(-1, A).float(), 1, generator=g).view(n, N)
        b["reward"][k, :n] = torch.rand(n, generator=g)
        b["filled"][k, :n] = True
        b["terminated"][k, n - 1] = term
    return b


def test_select_actions_never_picks_unavailable():
    g = torch.Generator().manual_seed(0)
    q = torch.randn(64, N, A) * 100
    avail = torch.rand(64, N, A) < 0.4
    avail[..., 3] = True
    for eps in (0.0, 0.5, 1.0):
        for _ in range(20):
            acts = select_actions(q, avail, eps, g)
            assert avail.gather(-1, acts.unsqueeze(-1)).all()
    greedy = select_actions(q, avail, 0.0, g)
    torch.testing.assert_close(greedy, q.masked_fill(~avail, -1e9).argmax(-1))


@pytest.mark.parametrize("algo", ALGOS)
def test_unavailable_actions_never_maximised_over(algo, monkeypatch):
    """Targets do not change when the Q-values of unavailable actions change, however large they get."""
    learner = make_learner(algo)
    batch = random_batch()
    last = torch.cat([torch.full_like(batch["actions"][:, :1], -1), batch["actions"][:, :-1]], dim=1)
    from effmarl.nets.rnn_agent import agent_inputs

    inputs = agent_inputs(batch["obs"], last, A)
    outputs = {}
    original = Learner.unroll

    def fake_unroll(agent, x, filled=None):
        return outputs.get(id(agent), original(agent, x, filled))

    monkeypatch.setattr(Learner, "unroll", staticmethod(fake_unroll))
    q_online = original(learner.agent, inputs)
    y = learner.td_targets(batch, inputs, q_online)
    unavailable = ~batch["avail"]
    for agent in [learner.target[name] for name in learner.target if name.endswith("agent")]:
        outputs[id(agent)] = original(agent, inputs).masked_fill(unavailable, 1e6)
    y_big = learner.td_targets(batch, inputs, q_online.masked_fill(unavailable, 1e6))
    torch.testing.assert_close(y, y_big)


@pytest.mark.parametrize("algo", ALGOS)
def test_padding_never_contributes_to_the_loss(algo):
    learner = make_learner(algo)
    batch = random_batch()
    garbage = copy.deepcopy(batch)
    g = torch.Generator().manual_seed(9)
    lengths = batch["filled"].sum(1)
    for k, n in enumerate(lengths.tolist()):
        garbage["obs"][k, n + 1:] = torch.randn_like(garbage["obs"][k, n + 1:]) * 50
        garbage["state"][k, n + 1:] = torch.randn_like(garbage["state"][k, n + 1:]) * 50
        garbage["avail"][k, n + 1:] = torch.rand(garbage["avail"][k, n + 1:].shape, generator=g) < 0.5
        garbage["actions"][k, n:] = torch.randint(0, A, garbage["actions"][k, n:].shape, generator=g)
        garbage["reward"][k, n:] = 77.0
        garbage["terminated"][k, n:] = torch.rand(T - n, generator=g) < 0.5
    grads = []
    for b in (batch, garbage):
        learner.zero_grad()
        loss, _ = learner.loss(b, ("td_lambda", 1, 0.6))
        loss.backward()
        grads.append((loss.detach(), [p.grad.clone() for p in learner.online_parameters()]))
    torch.testing.assert_close(grads[0][0], grads[1][0])
    for a, b in zip(grads[0][1], grads[1][1], strict=True):
        torch.testing.assert_close(a, b)


def test_ow_weights_and_res_regulariser_are_reported():
    _, stats = make_learner("ow_qmix").loss(random_batch())
    assert 0.1 <= stats["ow_weight_mean"] <= 1.0 and stats["central_loss"] >= 0
    _, stats = make_learner("res_qmix").loss(random_batch())
    assert stats["res_regulariser"] >= 0


def test_the_return_statistic_is_the_mean_discounted_return_obtained_from_each_valid_step():
    """Rewards 1, 0, 2 (episode 0, γ = 0.5) and 4 (episode 1): returns-to-go 1 + 0.5·(0 + 0.5·2) = 1.5, 0 + 0.5·2 = 1,
    2 and 4; their mean over the 4 valid steps is 8.5 / 4 = 2.125 (padding counts for nothing)."""
    batch = random_batch(lengths=(3, 1), terminated=(True, True))
    batch["reward"].zero_()
    batch["reward"][0, :3] = torch.tensor([1.0, 0.0, 2.0])
    batch["reward"][1, 0] = 4.0
    _, stats = make_learner("qmix", gamma=0.5).loss(batch)
    assert float(stats["return_mean"]) == pytest.approx(2.125)


def test_config_errors_name_the_field():
    cfg = run_cfg()
    del cfg["budget"]["env_steps"]
    with pytest.raises(ConfigError, match="budget.env_steps"):
        check_config(cfg)
    with pytest.raises(ConfigError, match="qmix.batch_size"):
        check_config(run_cfg(batch_size=64, buffer_size=32))
    with pytest.raises(ConfigError, match="qmix.double_q"):
        run_cfg(double_q="yes")
    with pytest.raises(ConfigError, match="env.map"):
        validate({"study": "t", "algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "2c_vs_64zg"},
                  "budget": {"env_steps": 5}}, part="run")


def test_a_return_option_set_at_its_old_qmix_address_is_refused_naming_where_it_lives_now():
    for key, now in (("td_lambda", "mast.td_lambda"), ("n_step", "rlx2.multi_step"), ("return_kind", "mast.td_lambda")):
        with pytest.raises(ConfigError) as err:
            run_cfg(**{key: 0.6 if key == "td_lambda" else 3 if key == "n_step" else "td_lambda"})
        assert len(err.value.lines) == 1 and f"field 'qmix.{key}'" in err.value.lines[0] and now in err.value.lines[0]
    with pytest.raises(ConfigError, match="field 'qmix': unknown key"):  # an unknown key keeps the general message
        run_cfg(n_stpe=3)


def test_lambda_returns_come_from_mast_td_lambda_for_any_method():
    from effmarl.algos.qmix import QmixSettings, target_kind
    cfg = run_cfg()
    cfg = validate({**{k: cfg[k] for k in ("study", "algo", "seed", "env", "budget")},
                    "mast": {"td_lambda": {"enabled": True, "lambda": 0.8, "burn_in_fraction": 0}}}, part="run")
    assert cfg["sparse"]["method"] == "dense"
    assert target_kind(QmixSettings.from_config(cfg).returns, 0) == ("td_lambda", 1, 0.8)
    assert target_kind(QmixSettings.from_config(run_cfg()).returns, 0) == ("one_step", 1, 0.0)


# ---- end to end on SMAX 3m (short runs; the jit compilation is cached on disk after the first) ----------
def short_cfg(algo, **qmix):
    settings = {"num_envs": 2, "eval_episodes": 2, "batch_size": 2, "buffer_size": 8, "eval_every": 40,
                "checkpoint_every": 50, "target_update_interval": 4, "keep_checkpoint": True, **qmix}
    cfg = validate({"study": "t", "algo": algo, "seed": 3, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": 120}, "qmix": settings}, part="run")
    return cfg


def train_to(cfg, path, stop_after=None):
    from effmarl.algos import qmix
    from effmarl.runs import RunDir

    qmix.run(copy.deepcopy(cfg), RunDir(path, cfg), stop_after=stop_after)


def comparable(path):
    metrics = pd.read_parquet(path / "metrics.parquet").drop(columns=["wall_s"])
    model = torch.load(path / "model.pt")
    return metrics, model


@pytest.mark.slow
@pytest.mark.parametrize("algo", ALGOS)
def test_runs_are_deterministic_on_cpu(algo, tmp_path):
    cfg = short_cfg(algo)
    train_to(cfg, tmp_path / "a")
    train_to(cfg, tmp_path / "b")
    (ma, wa), (mb, wb) = comparable(tmp_path / "a"), comparable(tmp_path / "b")
    pd.testing.assert_frame_equal(ma, mb)
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)
    assert ma["env_steps"].iloc[-1] >= 120 and ma["updates"].iloc[-1] > 0
    assert {"test_win_rate", "test_return", "train_return", "epsilon", "loss"} <= set(ma.columns)
    phases = set(pd.read_parquet(tmp_path / "a" / "phases.parquet")["phase"])
    assert {"acting", "buffer_add", "sampling", "learner_forward", "learner_backward",  # SMAX: the jitted runner
            "target_update", "evaluation", "checkpoint"} <= phases
    metrics = pd.read_parquet(tmp_path / "a" / "metrics.parquet")
    assert (metrics["eval_step"] % 40 == 0).all() and metrics["eval_step"].is_monotonic_increasing


@pytest.mark.slow
@pytest.mark.parametrize("method", ["dense", "mast"])
def test_resumed_run_equals_uninterrupted(method, tmp_path):
    cfg = short_cfg("qmix", shared_params=method == "dense")
    if method != "dense":  # masks, topology RNG and evolution history, dual buffer and hybrid targets resume too
        cfg["sparse"].update(method=method, delta_m=2)
        cfg["qmix"].update(batch_size=4, buffer_size=100)  # B2 = 2 episodes, batches of 3 + 1
        cfg["mast"]["td_lambda"]["burn_in_fraction"] = 0.5
    train_to(cfg, tmp_path / "full")
    train_to(cfg, tmp_path / "crash", stop_after=50)
    assert (tmp_path / "crash" / "checkpoint" / "checkpoint.json").exists()
    assert not (tmp_path / "crash" / "metrics.parquet").exists()
    train_to(cfg, tmp_path / "crash")  # resumes from the checkpoint
    (ma, wa), (mb, wb) = comparable(tmp_path / "full"), comparable(tmp_path / "crash")
    pd.testing.assert_frame_equal(ma, mb)
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    if method != "dense":
        sa, sb = torch.load(tmp_path / "full" / "masks.pt"), torch.load(tmp_path / "crash" / "masks.pt")
        for part in ("online", "target"):
            masks_a, masks_b = sa[part]["topology"]["masks"] if part == "online" else sa[part]["masks"], (
                sb[part]["topology"]["masks"] if part == "online" else sb[part]["masks"])
            assert all(torch.equal(masks_a[k], masks_b[k]) for k in masks_a)
        assert sa["online"]["history"] == sb["online"]["history"] and sa["online"]["history"]


@pytest.mark.slow
def test_checkpoint_of_another_config_is_refused_and_a_budget_change_is_not(tmp_path):
    from effmarl.algos import qmix
    from effmarl.runs import RunDir

    cfg = short_cfg("qmix")
    assert not qmix.run(copy.deepcopy(cfg), RunDir(tmp_path, cfg), stop_after=50)
    other = short_cfg("qmix", lr=0.001)
    with pytest.raises(ConfigError, match="different configuration"):
        qmix.run(other, RunDir(tmp_path, other))
    lower = copy.deepcopy(cfg)
    lower["budget"]["env_steps"] = 20  # below the steps already trained: refused, not silently exceeded
    with pytest.raises(ConfigError, match="budget.env_steps"):
        qmix.run(lower, RunDir(tmp_path, lower))
    longer = copy.deepcopy(cfg)
    longer["budget"]["env_steps"] = 200  # a larger budget resumes from the checkpoint and trains on
    assert qmix.run(longer, RunDir(tmp_path, longer))
    metrics = pd.read_parquet(tmp_path / "metrics.parquet")
    assert metrics["env_steps"].iloc[-1] >= 200 and metrics["eval_step"].iloc[-1] == 200
