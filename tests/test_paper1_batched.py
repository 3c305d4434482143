"""Batched MADDPG / MASAC (`offpolicy.learner: batched`) against the per-agent learners: same parameters and
batch -> same gradients of every loss, same parameters after a round, for every agent."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from effmarl.algos import actors, batched, maddpg, masac
from effmarl.algos.batched import BatchedMADDPG, BatchedMASAC
from effmarl.algos.offpolicy_settings import OffPolicySettings
from effmarl.config import validate
from effmarl.envs import make_env
from effmarl.profiling.phases import PhaseTimer
from effmarl.replay import make_storage, stack_batches
from effmarl.train import train

PAIRS = {"maddpg": (maddpg.MADDPG, BatchedMADDPG), "masac": (masac.MASAC, BatchedMASAC)}


def deterministic_gumbel(logits: torch.Tensor, hard: bool = True, temperature: float = 1.0) -> torch.Tensor:
    """Straight-through argmax of softmax(logits): the sampler without its noise, so that the two learners,
    which draw their Gumbel noise in different orders, see the same actions."""
    soft = F.softmax(logits / temperature, dim=-1)
    hard_ = F.one_hot(soft.argmax(-1), soft.shape[-1]).to(soft.dtype)
    return hard_ - soft.detach() + soft


@pytest.fixture(autouse=True)
def no_noise(monkeypatch):
    for module in (actors, maddpg, masac, batched):
        monkeypatch.setattr(module, "gumbel_softmax", deterministic_gumbel)


def config(algo: str, **off) -> dict:
    return validate({"study": "test", "algo": algo, "seed": 0, "env": {"backend": "mpe", "n_agents": 3},
                     "offpolicy": {"hidden": [16, 16], "batch_size": 64, **off},
                     "masac": {"autotune": True}}, part="run")


def filled_storage(spec, n: int = 300, seed: int = 0):
    rng = np.random.default_rng(seed)
    storage = make_storage({"storage": "contiguous", "buffer_size": n, "backend": "torch"}, spec.obs_dims,
                           spec.n_actions)
    eye = np.eye(5, dtype=np.float32)
    for _ in range(n):
        storage.add([rng.standard_normal(d).astype(np.float32) for d in spec.obs_dims],
                    [eye[rng.integers(5)] for _ in spec.obs_dims], rng.standard_normal(spec.n_agents),
                    [rng.standard_normal(d).astype(np.float32) for d in spec.obs_dims],
                    (rng.random(spec.n_agents) < 0.1).astype(np.float32))
    return storage


def spec_of(n_agents: int):
    env = make_env({"backend": "mpe_vec", "n_agents": n_agents}, 1)
    return env.spec


def record_steps(learner, log: list) -> None:
    """Record the (clipped) gradients every `_step` applies."""
    real = learner._step

    def step(optimizer, params, loss):
        params = list(params)
        real(optimizer, params, loss)
        log.append([p.grad.detach().clone() for p in params])
    learner._step = step


def per_agent_grads(stacked: list[torch.Tensor], agent: int, rows: list[int], modules: int) -> list[torch.Tensor]:
    """Stacked grads of `modules` StackedMLPs (each: weights then biases) as agent i's MLP-order grads."""
    out = []
    per = len(stacked) // modules
    for m in range(modules):
        ws, bs = stacked[m * per: m * per + per // 2], stacked[m * per + per // 2: (m + 1) * per]
        for layer, (w, b) in enumerate(zip(ws, bs, strict=True)):
            wi = w[agent][rows] if layer == 0 else w[agent]
            out += [wi.t(), b[agent, 0]]
    return out


def make_pair(algo, cfg, spec):
    seq_cls, bat_cls, settings = *PAIRS[algo], OffPolicySettings.from_config(cfg)
    torch.manual_seed(1)
    seq = seq_cls(settings, spec, torch.device("cpu"))
    torch.manual_seed(1)
    return seq, bat_cls(settings, spec, torch.device("cpu"))


@pytest.mark.parametrize("algo", ["maddpg", "masac"])
@pytest.mark.parametrize("n_agents,groups", [(3, "per_agent"), (6, "shared"), (12, "per_agent")])
def test_same_gradients_as_per_agent_learner(algo, n_agents, groups):
    spec = spec_of(n_agents)
    cfg = config(algo, grad_clip=1e9)              # no clipping: compare raw gradients
    seq, bat = make_pair(algo, cfg, spec)
    storage = filled_storage(spec)
    rng = np.random.default_rng(3)
    g = n_agents if groups == "per_agent" else 1
    indices = rng.integers(0, len(storage), size=(g, 64))
    stacked = storage.gather_stacked(indices)
    stacked = type(stacked)(**{k: v.clone() for k, v in vars(stacked).items()})
    timer = PhaseTimer()
    bat_log: list = []
    record_steps(bat, bat_log)
    bat.update_all(stacked, timer)
    critic_modules = 1 if algo == "maddpg" else 2
    for i in range(n_agents):
        clone = copy.deepcopy(seq)                # every agent's update from the round's starting parameters
        log: list = []
        record_steps(clone, log)
        clone.update(i, storage.gather(indices[i if g > 1 else 0]), timer)
        critic_grads, actor_grads = log
        expect = per_agent_grads(bat_log[0], i, bat.critic_rows, critic_modules)
        for a, b in zip(critic_grads, expect, strict=True):
            torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-6)
        expect = per_agent_grads(bat_log[1], i, bat.actor_rows[i], 1)
        for a, b in zip(actor_grads, expect, strict=True):
            torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-6)
        if algo == "masac":                       # the autotuned entropy coefficient moved alike
            torch.testing.assert_close(bat.log_alpha[i].detach(), clone.log_alpha[i].detach())
    # padded inputs are exactly zero, so their weight rows get exactly zero gradient
    pad = [r for r in range(bat.critic_width) if r not in set(bat.critic_rows)]
    assert pad and all(float(w.abs().max()) == 0.0 for w in (bat_log[0][0][:, pad],))


@pytest.mark.parametrize("algo", ["maddpg", "masac"])
def test_same_parameters_after_a_round(algo):
    """With the default clipping, Adam and the Polyak update: agent i's networks after one batched round equal
    agent i's networks after its own per-agent update from the same start. (Tolerance 1e-4: Adam's first step
    is lr·g/(|g| + 1e-8), which turns the float difference of a near-zero gradient (the two learners sum in
    different orders) into up to ~lr·1e-3; measured 1.5e-5 for MASAC on an AMD EPYC, CPU-dependent. A wrong
    update moves a parameter by up to lr = 1e-2, 100x the tolerance.)"""
    spec = spec_of(6)
    cfg = config(algo)
    seq, bat = make_pair(algo, cfg, spec)
    for i in range(6):
        start = bat.agent_state(i)
        assert torch.equal(start["actor"]["net.0.weight"], seq.actors[i].net[0].weight)
    storage = filled_storage(spec)
    indices = np.random.default_rng(5).integers(0, len(storage), size=(6, 64))
    bat.update_all(storage.gather_stacked(indices), PhaseTimer())
    for i in range(6):
        clone = copy.deepcopy(seq)
        clone.update(i, storage.gather(indices[i]), PhaseTimer())
        got = bat.agent_state(i)
        nets = {"actor": clone.actors[i]}
        if algo == "maddpg":
            nets |= {"critic": clone.critics[i], "target_actor": clone.target_actors[i],
                     "target_critic": clone.target_critics[i]}
        for name, module in nets.items():
            for key, value in module.state_dict().items():
                torch.testing.assert_close(got[name][key], value, rtol=1e-4, atol=1e-4, msg=f"{name} {key}")
        if algo == "masac":
            for k in range(2):
                for key, value in clone.target_critics[i][k].state_dict().items():
                    torch.testing.assert_close(got["target_critics"][k][key], value, rtol=1e-4, atol=1e-4)


def test_stacked_gather_equals_per_agent_batches():
    spec = spec_of(6)
    storage = filled_storage(spec)
    rng = np.random.default_rng(0)
    indices = rng.integers(0, len(storage), size=(6, 32))
    stacked = storage.gather_stacked(indices)
    expected = stack_batches([storage.gather(row) for row in indices])
    for key in ("obs", "act", "rew", "next_obs", "done"):
        assert torch.equal(getattr(stacked, key), getattr(expected, key)), key
    assert stacked.obs.shape == (6, 32, 6, max(spec.obs_dims))


def tiny(algo: str, learner: str, **replay) -> dict:
    return validate({"study": "test", "algo": algo, "seed": 7, "env": {"backend": "mpe_vec", "n_agents": 3},
                     "budget": {"episodes": 6},
                     "offpolicy": {"batch_size": 32, "warmup": 50, "update_every": 10, "checkpoint_every": 2,
                                   "hidden": [16, 16], "learner": learner},
                     "masac": {"autotune": algo == "masac"},
                     "replay": {"buffer_size": 120, **replay}}, part="run")


@pytest.mark.parametrize("algo", ["maddpg", "masac"])
def test_batched_training_run_phases_and_resume(tmp_path, algo):
    cfg = tiny(algo, "batched", storage="contiguous")
    train(copy.deepcopy(cfg), tmp_path / "a")
    phases = pd.read_parquet(tmp_path / "a" / "phases.parquet").groupby("phase")["calls"].sum()
    # one sampling phase (all N batches as one gather) and one pass of each update phase per round
    assert phases["sampling"] == phases["q_loss"] == phases["update_all_trainers"] > 0
    m = pd.read_parquet(tmp_path / "a" / "metrics.parquet")
    assert len(m) == 18 and np.isfinite(m["return"]).all()
    # stopped after 4 episodes (a checkpoint) and continued to 6: the same run as 6 in one go
    short = copy.deepcopy(cfg)
    short["budget"]["episodes"] = 4
    train(short, tmp_path / "b")
    train(copy.deepcopy(cfg), tmp_path / "b")
    pd.testing.assert_frame_equal(m, pd.read_parquet(tmp_path / "b" / "metrics.parquet"))


@pytest.mark.parametrize("algo", ["maddpg", "masac"])
def test_untrained_agents_do_not_move(algo):
    spec = spec_of(3)
    _, bat = make_pair(algo, config(algo), spec)
    bat.set_trained([0, 1])                       # the two predators; the prey keeps its initial policy
    before = bat.agent_state(2)
    storage = filled_storage(spec)
    bat.update_all(storage.gather_stacked(np.random.default_rng(0).integers(0, 300, (3, 64))), PhaseTimer())
    after = bat.agent_state(2)
    for key, value in before["actor"].items():
        assert torch.equal(after["actor"][key], value), key
    assert not torch.equal(bat.agent_state(0)["actor"]["net.0.weight"],
                           make_pair(algo, config(algo), spec)[1].agent_state(0)["actor"]["net.0.weight"])


def test_batched_learner_with_reference_storage_and_partial_teams(tmp_path):
    cfg = tiny("maddpg", "batched", storage="reference")
    cfg["offpolicy"]["train_teams"] = ["predator"]
    train(cfg, tmp_path)
    calls = pd.read_parquet(tmp_path / "phases.parquet").groupby("phase")["calls"].sum()
    assert calls["sampling"] == calls["update_all_trainers"] > 0
