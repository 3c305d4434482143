"""Seeds in lockstep (algos/qmix/lockstep.py) equal separate learners, update by update, and whole runs."""

import copy

import pandas as pd
import pytest
import torch

from effmarl.algos.qmix import Learner, SeedStack
from effmarl.config import validate
from effmarl.envs.base import EnvSpec
from effmarl.replay.episode import empty_batch, episode_scheme

N, OBS, A, STATE = 3, 6, 5, 7


def random_batch(seed, lengths):
    spec = EnvSpec([f"a{i}" for i in range(N)], ["ally"] * N, [OBS] * N, [A] * N, STATE, max(lengths))
    g = torch.Generator().manual_seed(seed)
    b = empty_batch(episode_scheme(spec), len(lengths))
    for k, n in enumerate(lengths):
        b["obs"][k, : n + 1] = torch.randn(n + 1, N, OBS, generator=g)
        b["state"][k, : n + 1] = torch.randn(n + 1, STATE, generator=g)
        avail = torch.rand(n + 1, N, A, generator=g) < 0.6
        avail[..., 0] = True
        b["avail"][k, : n + 1] = avail
        b["actions"][k, :n] = torch.multinomial(avail[:n].reshape(-1, A).float(), 1, generator=g).view(n, N)
        b["reward"][k, :n] = torch.rand(n, generator=g)
        b["filled"][k, :n] = True
        b["terminated"][k, n - 1] = k % 2 == 1
    return b


def learners(algo, method, seeds):
    cfg = validate({"study": "t", "algo": algo, "seed": 0, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": 100}, "sparse": {"method": method, "sparsity": 0.8},
                    "qmix": {"shared_params": method == "dense", "rnn_hidden_dim": 8, "mixing_embed_dim": 4,
                             "hypernet_embed": 8, "central_mixing_embed_dim": 8}}, part="run")
    out = []
    for seed in seeds:
        torch.manual_seed(seed)
        out.append(Learner(algo, cfg["qmix"], N, OBS, A, STATE, seed=seed,
                           sparse={**cfg["sparse"], "delta_m": 2, "zeta0": 0.5},
                           mellowmax={"alpha": 1.0, "omega": 10.0} if method == "mast" else None))
    return out


@pytest.mark.parametrize("vectorised", [True, False], ids=["vmap", "loop"])
@pytest.mark.parametrize("algo,method", [("qmix", "dense"), ("qmix", "mast"), ("ow_qmix", "rigl"),
                                         ("res_qmix", "set")])
def test_stacked_updates_equal_separate_learners(algo, method, vectorised):
    seeds = [0, 1, 2]
    separate = learners(algo, method, seeds)
    alone = [SeedStack([learner]) for learner in separate]  # each seed its own one-seed stack, as a single run
    stacked = SeedStack(learners(algo, method, seeds), vectorised=vectorised)
    kinds = [("one_step", 1, 0.0), ("td_lambda", 1, 0.6), ("one_step", 1, 0.0)]  # two kinds: two vmap groups
    for t in range(1, 6):
        batches = [random_batch(10 * t + s, lengths) for s, lengths in zip(seeds, [(4, 7), (3, 2), (6, 6)],
                                                                             strict=True)]
        total, losses, stats = stacked.losses(batches, kinds, seeds)
        norms = stacked.step(total, seeds, [t] * 3, [t / 10] * 3)
        for s, learner in enumerate(separate):
            total_s, (loss,), (stat,) = alone[s].losses([batches[s]], [kinds[s]], [0])
            torch.testing.assert_close(losses[s], loss, rtol=1e-5, atol=1e-6)
            for key, value in stat.items():
                torch.testing.assert_close(stats[s][key], value, rtol=1e-5, atol=1e-6)
            norm = alone[s].step(total_s, [0], [t], [t / 10])[0]
            torch.testing.assert_close(norms[s], norm, rtol=1e-4, atol=1e-6)
            if t == 3:
                learner.update_targets()
                stacked.update_targets(s)
    for s, learner in enumerate(separate):
        mine = stacked.learners[s].state_dict()
        for key, value in learner.state_dict().items():
            torch.testing.assert_close(mine[key], value, rtol=1e-4, atol=1e-5, msg=key)
        if learner.sparse:  # evolution ran (Δm = 2) and picked the same connections for every seed
            assert len(learner.sparse.history) == 2
            for name, mask in learner.sparse.topology.masks.items():
                assert torch.equal(stacked.learners[s].sparse.topology.masks[name], mask), name
    if separate[0].sparse:
        assert not torch.equal(*(next(iter(lr.sparse.topology.masks.values())) for lr in separate[:2]))


@pytest.mark.parametrize("vectorised", [False], ids=["loop"])
def test_a_seeds_update_does_not_depend_on_how_long_the_other_seeds_sampled_episodes_are(vectorised):
    """Seed 0's loss, statistics, gradient norm and updated parameters are bit for bit the same whether seed 1's
    batch is shorter or longer than its own: in lockstep each seed trains as it would alone. Otherwise a seed's
    run depends on which of the other seeds' rounds its updates are paired with, and a resume from periodic
    checkpoints that each seed saved in a different round (a SIGKILLed lockstep run) diverges from the
    uninterrupted run."""
    kind = ("one_step", 1, 0.0)
    own = random_batch(10, [23, 41, 7, 30, 55, 12, 38, 19])
    results = []
    for partner in ([5, 9, 3, 8, 6, 4, 7, 2], [60, 64, 61, 50, 62, 63, 58, 59]):  # shorter, longer than seed 0's
        stack = SeedStack(learners("qmix", "dense", [0, 1]), vectorised=vectorised)
        total, losses, stats = stack.losses([own, random_batch(11, partner)], [kind, kind], [0, 1])
        norms = stack.step(total, [0, 1], [1, 1], [0.0, 0.0])
        results.append((losses[0], stats[0], norms[0], {n: p[0].detach().clone() for n, p in stack.params.items()}))
    (loss_a, stats_a, norm_a, params_a), (loss_b, stats_b, norm_b, params_b) = results
    assert torch.equal(loss_a, loss_b), (loss_a.item(), loss_b.item())
    assert all(torch.equal(stats_a[k], stats_b[k]) for k in stats_a), {k: (stats_a[k].item(), stats_b[k].item())
                                                                       for k in stats_a}
    assert torch.equal(norm_a, norm_b), (norm_a.item(), norm_b.item())
    assert all(torch.equal(params_a[n], params_b[n]) for n in params_a)


def test_seed_state_round_trips_into_another_stack():
    a = SeedStack(learners("qmix", "mast", [0, 1]), vectorised=True)
    batches = [random_batch(s, (3, 5)) for s in (0, 1)]
    total, _, _ = a.losses(batches, [("one_step", 1, 0.0)] * 2, [0, 1])
    a.step(total, [0, 1], [2, 2], [0.1, 0.1])
    single = SeedStack(learners("qmix", "mast", [1]))
    single.load_seed_state(0, a.seed_state(1))  # seed 1 alone now continues as it would have in the pair
    total, losses, _ = a.losses(batches, [("one_step", 1, 0.0)] * 2, [0, 1])
    alone, lone, _ = single.losses(batches[1:], [("one_step", 1, 0.0)], [0])
    torch.testing.assert_close(lone[0], losses[1], rtol=1e-5, atol=1e-6)
    a.step(total, [0, 1], [3, 3], [0.2, 0.2])
    single.step(alone, [0], [3], [0.2])
    for key, value in single.learners[0].state_dict().items():
        torch.testing.assert_close(value, a.learners[1].state_dict()[key], rtol=1e-4, atol=1e-6, msg=key)


# ---- whole runs ------------------------------------------------------------------------------------------------
def short_cfg(seed, method="mast"):
    return validate({"study": "t", "algo": "qmix", "seed": seed, "env": {"backend": "smax", "map": "3m"},
                     "budget": {"env_steps": 160}, "sparse": {"method": method, "sparsity": 0.8, "delta_m": 2},
                     "qmix": {"num_envs": 2, "eval_episodes": 2, "batch_size": 4, "buffer_size": 200,
                              "eval_every": 40, "checkpoint_every": 1000, "target_update_interval": 4,
                              "shared_params": method == "dense"}}, part="run")


@pytest.mark.slow
def test_lockstep_run_equals_separate_runs(tmp_path):
    from effmarl.algos.qmix import run, run_lockstep
    from effmarl.runs import RunDir

    cfgs = [short_cfg(3), short_cfg(4)]
    assert all(run_lockstep(copy.deepcopy(cfgs), [RunDir(tmp_path / f"lock{c['seed']}", c) for c in cfgs]))
    for cfg in cfgs:
        assert run(copy.deepcopy(cfg), RunDir(tmp_path / f"alone{cfg['seed']}", cfg))
        lock = pd.read_parquet(tmp_path / f"lock{cfg['seed']}" / "metrics.parquet").drop(columns=["wall_s"])
        alone = pd.read_parquet(tmp_path / f"alone{cfg['seed']}" / "metrics.parquet").drop(columns=["wall_s"])
        pd.testing.assert_frame_equal(lock, alone, rtol=1e-4)
        assert (lock["eval_step"] % 40 == 0).all() and lock["updates"].iloc[-1] > 0
        masks = [torch.load(tmp_path / f"{k}{cfg['seed']}" / "masks.pt") for k in ("lock", "alone")]
        for name, mask in masks[0]["online"]["topology"]["masks"].items():
            assert torch.equal(mask, masks[1]["online"]["topology"]["masks"][name])
    first, second = (pd.read_parquet(tmp_path / f"lock{s}" / "metrics.parquet") for s in (3, 4))
    assert not first["train_return"].equals(second["train_return"])  # the seeds really differ


@pytest.mark.slow
@pytest.mark.parametrize("n_seeds", [1, 2])
def test_sigterm_saves_every_seed_at_the_rounds_end_and_the_resumed_run_equals_the_uninterrupted_one(
        tmp_path, monkeypatch, n_seeds):
    """The harness's safe point for 1 seed and for S seeds in one process: SIGTERM during a round is noted, every
    unfinished seed saves at the round's end, then the process stops (exit 128 + 15, one line); the same command
    resumes each seed to what an uninterrupted run writes."""
    import importlib
    import json
    import os
    import signal

    from effmarl import harness
    from effmarl.runs import RunDir

    loop = importlib.import_module("effmarl.algos.qmix.run")  # the module (the package's `run` is the function)
    cfgs = []
    for seed in (3, 4)[:n_seeds]:
        cfg = short_cfg(seed, "dense")
        cfg["budget"]["env_steps"], cfg["qmix"]["eval_every"] = 250, 125  # > 2 rounds of 2 × 60 steps
        cfgs.append(cfg)

    def train(name):
        return loop.run_lockstep(copy.deepcopy(cfgs), [RunDir(tmp_path / f"{name}{c['seed']}", c) for c in cfgs])

    assert all(train("whole"))
    collect, rounds = loop.collect_round, []

    def collect_then_signal(seeds, runner, active):
        rounds.append(len(rounds))
        if len(rounds) == 2:  # arrives mid-round: the round finishes, then the safe point acts on it
            os.kill(os.getpid(), signal.SIGTERM)
        return collect(seeds, runner, active)

    monkeypatch.setattr(loop, "collect_round", collect_then_signal)
    with pytest.raises(harness.Interrupted) as err:
        train("stopped")
    monkeypatch.undo()
    assert err.value.exit_code == 128 + signal.SIGTERM and len(rounds) == 2
    assert "stopped by SIGTERM at the end of a collection round" in str(err.value) and "\n" not in str(err.value)
    for cfg in cfgs:
        run_dir = tmp_path / f"stopped{cfg['seed']}"
        manifest = json.loads((run_dir / "checkpoint" / "checkpoint.json").read_text())
        assert 0 < manifest["progress"] < 250 and not (run_dir / "metrics.parquet").exists()
    assert all(train("stopped"))  # the same command again
    for cfg in cfgs:
        whole, resumed = (pd.read_parquet(tmp_path / f"{k}{cfg['seed']}" / "metrics.parquet").drop(columns=["wall_s"])
                          for k in ("whole", "stopped"))
        pd.testing.assert_frame_equal(whole, resumed)
        a, b = (torch.load(tmp_path / f"{k}{cfg['seed']}" / "model.pt") for k in ("whole", "stopped"))
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_seeds_killed_after_periodic_checkpoints_of_different_rounds_resume_to_the_uninterrupted_run(
        tmp_path, monkeypatch):
    """Each seed in lockstep saves its periodic checkpoint once it has run checkpoint_every env steps since its last,
    which for seeds of different episode lengths falls in different rounds. A kill that saves nothing (SIGKILL,
    power loss) after such checkpoints, then the same command again, must still give every seed the uninterrupted
    run's metrics and model bit for bit (the SIGTERM test above has every seed save in one round)."""
    import importlib

    from effmarl.runs import RunDir

    loop = importlib.import_module("effmarl.algos.qmix.run")
    cfgs = []
    for seed in (3, 4, 5):
        cfg = short_cfg(seed, "dense")
        cfg["budget"]["env_steps"] = 600
        cfg["qmix"].update(eval_every=100, checkpoint_every=100)
        cfgs.append(cfg)

    def train(name):
        return loop.run_lockstep(copy.deepcopy(cfgs), [RunDir(tmp_path / f"{name}{c['seed']}", c) for c in cfgs])

    saves, save = [], loop.SeedRun.checkpoint_due  # (rounds done, seed) of each periodic checkpoint

    def recorded(self):
        saved = save(self)
        if saved:
            saves.append((self.counters["rounds"], self.settings.seed))
        return saved

    monkeypatch.setattr(loop.SeedRun, "checkpoint_due", recorded)
    assert all(train("whole"))
    monkeypatch.undo()

    def latest(done):  # each seed's last checkpoint (rounds done) once `done` rounds are done
        return [max((r for r, s in saves if s == c["seed"] and r <= done), default=None) for c in cfgs]

    kill = next(done + 1 for done in range(1, max(r for r, _ in saves) + 1)
                if None not in latest(done) and len(set(latest(done))) > 1)
    print("periodic checkpoints (rounds done, seed):", saves, "; killed before round", kill,
          "with the seeds' checkpoints at rounds", latest(kill - 1))

    class Killed(Exception):
        pass

    collect, calls = loop.collect_round, []

    def collect_or_die(seeds, runner, active):
        calls.append(None)
        if len(calls) == kill:
            raise Killed  # as SIGKILL: no safe point, nothing saved
        return collect(seeds, runner, active)

    monkeypatch.setattr(loop, "collect_round", collect_or_die)
    with pytest.raises(Killed):
        train("killed")
    monkeypatch.undo()
    assert all(train("killed"))  # the same command again: each seed from its own last periodic checkpoint
    for cfg in cfgs:
        whole, resumed = (pd.read_parquet(tmp_path / f"{k}{cfg['seed']}" / "metrics.parquet").drop(columns=["wall_s"])
                          for k in ("whole", "killed"))
        pd.testing.assert_frame_equal(whole, resumed, check_exact=True, obj=f"seed {cfg['seed']} metrics")
        a, b = (torch.load(tmp_path / f"{k}{cfg['seed']}" / "model.pt") for k in ("whole", "killed"))
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), f"seed {cfg['seed']} model"
