"""Paper 1's loop with E environment copies (`env.num_envs`): E = 1 is the original one-environment loop, the
buffer holds every copy's transitions, and the update ratio counts env steps over all copies."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import torch

from effmarl import harness
from effmarl.algos import offpolicy
from effmarl.algos.batched import BatchedMADDPG, BatchedMASAC
from effmarl.algos.maddpg import MADDPG
from effmarl.config import ConfigError, validate
from effmarl.train import train


def config(backend="mpe_vec", copies=1, episodes=4, learner="batched", storage="contiguous", **off) -> dict:
    return validate({"study": "test", "algo": "maddpg", "seed": 3,
                     "env": {"backend": backend, "n_agents": 3, "num_envs": copies},
                     "budget": {"episodes": episodes},
                     "offpolicy": {"batch_size": 16, "warmup": 40, "update_every": 10, "checkpoint_every": 0,
                                   "hidden": [8, 8], "learner": learner, **off},
                     "replay": {"storage": storage, "batch_mode": "shared", "buffer_size": 200}}, part="run")


def original_episode(loop: offpolicy.Loop, state: offpolicy.TrainState) -> np.ndarray:
    """openai/maddpg train.py's loop as the code stood before environment copies: one environment, one
    transition added per step, a round when the step count is a multiple of update_every."""
    off, n = loop.settings.offpolicy, loop.spec.n_agents
    step = loop.env.reset(seed=harness.episode_seed(loop.settings.seed, state.episode))
    obs, returns, done = [o[0] for o in step.obs], np.zeros(n), False
    while not done:
        actions, onehots = state.learner.act([o[None] for o in obs])
        step = loop.env.step(actions)
        next_obs = [o[0] for o in step.obs]
        state.storage.add(obs, [h[0] for h in onehots], step.rewards[0], next_obs, np.full(n, step.terminated[0]))
        obs, done = next_obs, bool(step.done[0])
        returns += step.rewards[0]
        state.env_steps += 1
        if len(state.storage) >= off["warmup"] and state.env_steps % off["update_every"] == 0:
            offpolicy.update_round(state, loop.sampler, off["batch_size"], "shared", loop.trained, loop.timer)
    return returns


def _run(cfg: dict, make_learner, episode_fn) -> tuple[list, offpolicy.TrainState]:
    harness.seed_everything(cfg["seed"])
    loop, state = offpolicy.build(cfg, make_learner)
    returns = []
    for _ in range(cfg["budget"]["episodes"] // loop.env.num_envs):
        returns.append(episode_fn(loop, state))
        state.episode += loop.env.num_envs
    return returns, state


@pytest.mark.parametrize("backend,learner,storage,make_learner", [
    ("mpe", "sequential", "reference", MADDPG), ("mpe_vec", "batched", "contiguous", BatchedMASAC)])
def test_one_copy_loop_is_the_original_one_environment_loop(backend, learner, storage, make_learner):
    cfg = config(backend, 1, episodes=5, learner=learner, storage=storage)
    if make_learner is BatchedMASAC:
        cfg = validate({**copy.deepcopy(cfg), "algo": "masac"}, part="run")
    new_returns, new = _run(cfg, make_learner, offpolicy.play_episode)
    old_returns, old = _run(cfg, make_learner, original_episode)
    np.testing.assert_array_equal(np.concatenate(new_returns), np.stack(old_returns))
    assert new.update_rounds == old.update_rounds > 0 and new.env_steps == old.env_steps == 125
    for a, b in zip(new.learner.state_dict().values(), old.learner.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


class Recorder:
    """Wraps an environment and keeps every step's observations, actions and rewards (copies first axis)."""

    def __init__(self, env):
        self.env, self.num_envs, self.spec, self.log = env, env.num_envs, env.spec, []

    def reset(self, seed=None):
        self.last = self.env.reset(seed=seed)
        return self.last

    def step(self, actions):
        nxt = self.env.step(actions)
        self.log.append((self.last, np.array(actions), nxt))
        self.last = nxt
        return nxt

    def close(self):
        self.env.close()


@pytest.mark.parametrize("storage", ["contiguous", "reference"])
def test_buffer_holds_every_copys_transitions_in_copy_order(storage):
    """E = 3 copies, 25 steps: slot (3t + j) mod capacity holds copy j's step t (the ring wraps at 50)."""
    cfg = config(copies=3, episodes=3, storage=storage, warmup=50, update_every=1000)
    cfg["replay"]["buffer_size"] = 50
    harness.seed_everything(0)
    loop, state = offpolicy.build(cfg, BatchedMADDPG)
    loop.env = Recorder(loop.env)
    offpolicy.play_episode(loop, state)
    assert len(state.storage) == 50 and state.storage.write_pos == 75 % 50 and state.update_rounds == 0
    for t, (before, actions, after) in enumerate(loop.env.log):
        for j in range(3):
            slot = 3 * t + j
            if slot < 75 - 50:
                continue                                   # overwritten by the last 25 transitions
            batch = state.storage.gather(np.array([slot % 50]))
            for i in range(3):
                np.testing.assert_array_equal(batch.obs[i][0].numpy(), before.obs[i][j])
                np.testing.assert_array_equal(batch.next_obs[i][0].numpy(), after.obs[i][j])
                assert batch.act[i][0].argmax().item() == actions[j, i] and batch.act[i][0].sum().item() == 1
                assert batch.rew[i][0].item() == after.rewards[j, i] and batch.done[i][0].item() == 0.0


def test_update_rounds_count_env_steps_over_all_copies(tmp_path):
    """E = 8, 2 lockstep rounds of 25 steps: 8t env steps (and stored transitions) after step t, warm (≥ 40)
    from t = 5 on, a round per multiple of 10 crossed from then on: ⌊400/10⌋ − ⌊32/10⌋ = 37 rounds."""
    train(config(copies=8, episodes=16), tmp_path)
    m = pd.read_parquet(tmp_path / "metrics.parquet")
    assert sorted(m.episode.unique()) == list(range(16)) and len(m) == 16 * 3
    assert m.env_steps.max() == 400 and m.update_rounds.max() == 37
    # rows of one lockstep round carry that round's counters: copies 0-7 after 200 steps
    assert (m[m.episode < 8].env_steps == 200).all()


def test_copy_j_of_a_round_starts_as_a_one_copy_run_starts_episode_e_plus_j():
    from effmarl.envs import make_env

    seed = harness.episode_seed(3, 4)
    many = make_env({"backend": "mpe_vec", "n_agents": 3, "num_envs": 4})
    first = many.reset(seed=seed)
    for j in range(4):
        one = make_env({"backend": "mpe_vec", "n_agents": 3}).reset(seed=harness.episode_seed(3, 4 + j))
        for a, b in zip(first.obs, one.obs, strict=True):
            np.testing.assert_array_equal(a[j], b[0])


def test_copy_count_errors_are_one_line_naming_the_field():
    with pytest.raises(ConfigError, match="field 'budget.episodes': 10 is not a multiple of env.num_envs 4"):
        config(copies=4, episodes=10)
    with pytest.raises(ConfigError, match="field 'env.num_envs': 400 copies store more"):
        config(copies=400, episodes=400)
    with pytest.raises(ConfigError, match="qmix.num_envs"):
        validate({"study": "x", "algo": "qmix", "seed": 0, "env": {"backend": "mpe_vec", "num_envs": 2},
                  "budget": {"env_steps": 100}}, part="run")
    with pytest.raises(ConfigError, match=r"field 'env': unknown key\(s\) 'num_envs'"):   # SMAX: qmix's copies
        validate({"study": "x", "algo": "random", "seed": 0, "env": {"backend": "smax", "num_envs": 2}}, part="run")
