"""The run harness on its own: checkpoint integrity, resume key, strays, signals, divergence guard, device."""

from __future__ import annotations

import json
import os
import signal
import stat
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from effmarl import checkpoints, harness, io
from effmarl.config import ConfigError

KEY = {"algo": "maddpg", "seed": 1, "offpolicy": {"lr": 0.01}}


def payload(x: float = 1.0) -> dict:
    return {"w": torch.full((64, 64), x), "step": 7, "rng": np.random.default_rng(0).bit_generator.state}


def saved(tmp_path, progress: int = 4, x: float = 1.0) -> checkpoints.CheckpointStore:
    store = checkpoints.CheckpointStore(tmp_path / "checkpoint")
    store.save(payload(x), KEY, progress, "episodes")
    return store


def test_save_then_load_returns_the_same_state_and_progress(tmp_path):
    store = saved(tmp_path)
    state, progress = store.load(KEY, "budget.episodes", 10)
    assert progress == 4 and state["step"] == 7 and torch.equal(state["w"], payload()["w"])
    manifest = json.loads(store.manifest_path.read_text())
    assert manifest["format_version"] == checkpoints.FORMAT_VERSION and len(manifest["sha256"]) == 64
    assert sorted(p.name for p in store.dir.iterdir()) == ["checkpoint.json", manifest["file"]]


def test_a_second_save_replaces_the_first_and_removes_its_payload(tmp_path):
    store = saved(tmp_path, progress=2)
    first = json.loads(store.manifest_path.read_text())["file"]
    store.save(payload(2.0), KEY, 4, "episodes")
    state, progress = store.load(KEY, "budget.episodes", 10)
    assert progress == 4 and float(state["w"][0, 0]) == 2.0
    assert not (store.dir / first).exists() and len(list(store.dir.iterdir())) == 2


def flip(path, offset_from_end: int = 4096, n: int = 16) -> bytes:
    data = bytearray(path.read_bytes())
    at = len(data) - offset_from_end
    data[at:at + n] = bytes(b ^ 0xFF for b in data[at:at + n])
    path.write_bytes(bytes(data))
    return bytes(data)


def test_flipped_bytes_in_the_tensor_data_are_refused_naming_the_file(tmp_path):
    store = saved(tmp_path)
    file = store.dir / json.loads(store.manifest_path.read_text())["file"]
    # inside the 64x64 float tensor's bytes (the zip's data record, well before its directory at the end)
    corrupted = flip(file, offset_from_end=file.stat().st_size // 2)
    assert torch.load(file, weights_only=False)["step"] == 7  # torch alone would load it silently
    with pytest.raises(ConfigError) as err:
        store.load(KEY, "budget.episodes", 10)
    (line,) = err.value.lines
    assert err.value.source == str(file) and "sha256 does not match" in line and f"delete {store.dir}" in line
    assert file.read_bytes() == corrupted  # never overwritten, never removed
    store.clean()
    assert file.read_bytes() == corrupted


@pytest.mark.parametrize("edit,expected", [
    (lambda m: {**m, "progress": 1}, r"manifest \(its checksum does not match\)"),
    (lambda m: {**m, "format_version": 99}, None),  # recomputed digest: refused by the version check
])
def test_a_tampered_or_newer_manifest_is_refused(tmp_path, edit, expected):
    store = saved(tmp_path)
    m = edit(json.loads(store.manifest_path.read_text()))
    if expected is None:
        m["manifest_sha256"] = checkpoints._manifest_digest(m)
        expected = "format version 99"
    store.manifest_path.write_text(json.dumps(m))
    with pytest.raises(ConfigError, match=expected):
        store.load(KEY, "budget.episodes", 10)


def test_a_truncated_manifest_is_refused(tmp_path):
    store = saved(tmp_path)
    store.manifest_path.write_text(store.manifest_path.read_text()[:40])
    with pytest.raises(ConfigError, match="corrupted checkpoint manifest"):
        store.load(KEY, "budget.episodes", 10)


def test_a_checkpoint_without_manifest_from_an_older_version_is_refused(tmp_path):
    (tmp_path / "checkpoint").mkdir()
    torch.save({"x": 1}, tmp_path / "checkpoint" / "state.pt")
    with pytest.raises(ConfigError, match="without a checksum manifest"):
        checkpoints.CheckpointStore(tmp_path / "checkpoint").load(KEY, "budget.episodes", 10)


def test_resume_key_lets_budget_threads_profile_change_and_names_other_fields():
    cfg = {"algo": "maddpg", "seed": 1, "budget": {"episodes": 4}, "threads": 1, "profile": "smoke",
           "offpolicy": {"lr": 0.01, "gamma": 0.95}}
    other = {**cfg, "budget": {"episodes": 9}, "threads": 2, "profile": "adhoc"}
    assert checkpoints.resume_key(cfg) == checkpoints.resume_key(other)
    changed = {**cfg, "seed": 2, "offpolicy": {"lr": 0.5, "gamma": 0.95}}
    differences = checkpoints.key_differences(checkpoints.resume_key(cfg), checkpoints.resume_key(changed))
    assert differences == ["offpolicy.lr", "seed"]


def test_another_configuration_is_refused_listing_the_fields(tmp_path):
    store = saved(tmp_path)
    with pytest.raises(ConfigError, match=r"different configuration \(fields offpolicy.lr differ"):
        store.load({**KEY, "offpolicy": {"lr": 0.5}}, "budget.episodes", 10)


def test_a_checkpoint_past_a_lowered_budget_is_refused(tmp_path):
    store = saved(tmp_path, progress=4)
    with pytest.raises(ConfigError, match="past budget.episodes 3"):
        store.load(KEY, "budget.episodes", 3)
    assert store.load(KEY, "budget.episodes", 4)[1] == 4  # equal budget: resumes (and finishes at once)


def test_a_kill_between_payload_and_manifest_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    store = saved(tmp_path, progress=2)

    def killed(*a, **k):
        raise KeyboardInterrupt("killed before the commit")

    monkeypatch.setattr(io, "write_json", killed)
    with pytest.raises(KeyboardInterrupt):
        store.save(payload(3.0), KEY, 4, "episodes")
    monkeypatch.undo()
    assert len([p for p in store.dir.iterdir() if p.suffix == ".pt"]) == 2  # the new payload, uncommitted
    removed = store.clean()
    assert [p.name for p in removed] == ["state-000000001.pt"]
    state, progress = store.load(KEY, "budget.episodes", 10)
    assert progress == 2 and float(state["w"][0, 0]) == 1.0


def test_stray_temporary_files_are_removed_and_nothing_else(tmp_path):
    (tmp_path / ".metrics.parquet.abc123_x.tmp").write_text("half")
    (tmp_path / "keep.tmp").write_text("not ours")
    (tmp_path / "metrics.parquet").write_text("done")
    removed = checkpoints.remove_strays(tmp_path)
    assert [p.name for p in removed] == [".metrics.parquet.abc123_x.tmp"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.tmp", "metrics.parquet"]


def test_outputs_honour_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        path = io.write_text(tmp_path / "a.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


class Counter:
    def __init__(self):
        self.value = torch.zeros(3)

    def state_dict(self):
        return {"value": self.value.clone()}

    def load_state_dict(self, state):
        self.value = state["value"]


def make_run(tmp_path, **cfg):
    rundir = SimpleNamespace(path=tmp_path, checkpoint_dir=tmp_path / "checkpoint")
    return harness.Run({"device": "cpu", "seed": 0, **cfg}, rundir, budget_field="budget.episodes", budget=10,
                       unit="episodes")


def test_sigterm_is_held_until_the_safe_point_then_saves_and_stops(tmp_path):
    state = Counter()
    with make_run(tmp_path) as run:
        run.checkpoint_due(state, 1, periodic=False)  # nothing requested, nothing saved
        assert not (tmp_path / "checkpoint").exists()
        os.kill(os.getpid(), signal.SIGTERM)
        assert run.stop_requested  # the process is still here: the handler only noted it
        state.value += 5
        with pytest.raises(harness.Interrupted) as err:
            run.checkpoint_due(state, 2, periodic=False)
    assert err.value.exit_code == 128 + signal.SIGTERM and "SIGTERM at 2 episodes" in str(err.value)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL or callable(signal.getsignal(signal.SIGTERM))
    fresh = Counter()
    assert make_run(tmp_path).restore(fresh) == 2 and torch.equal(fresh.value, torch.full((3,), 5.0))


def test_a_second_signal_stops_at_once(tmp_path):
    before = signal.getsignal(signal.SIGINT)  # the default handler, or SIG_IGN in a job started in the background
    with make_run(tmp_path):
        os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(harness.Interrupted, match="second signal"):
            os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is before  # restored


def test_guard_names_phase_step_parameter_and_value():
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    tree = {"actors": [net], "log_alpha": torch.zeros(1)}
    harness.guard_finite("update_all_trainers", 100, tree)  # finite: passes
    with torch.no_grad():
        net[2].bias[1] = float("inf")
    with pytest.raises(harness.Diverged) as err:
        harness.guard_finite("update_all_trainers", 100, tree)
    msg = str(err.value)
    assert "phase update_all_trainers at step 100" in msg and "actors.0.2.bias holds inf" in msg
    assert err.value.exit_code == 3
    with pytest.raises(harness.Diverged, match="q_loss at step 7: critic loss is nan"):
        harness.check_value("q_loss", 7, "critic loss", torch.tensor(float("nan")))
    harness.check_value("q_loss", 7, "critic loss", 0.5)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this host has a GPU")
def test_cuda_without_a_gpu_is_one_line_naming_the_field():
    with pytest.raises(ConfigError, match="field 'device': 'cuda' requested but torch sees no CUDA GPU"):
        harness.resolve_device("cuda")
    assert harness.resolve_device("auto").type == "cpu"


STREAM_7_1 = 934434611  # harness.stream_rng(7, 1)'s first draw below 2**30, as published paper-1 runs drew it


def test_paper1s_published_reset_seeds_stay_and_evaluations_never_replay_a_training_start():
    """Paper 1's published runs were played with these reset seeds and sampler stream (pinned values: a change of
    the derivation changes every paper-1 episode); an evaluation episode of any of 1000 seeds never starts where a
    training episode (up to 100_003 per seed) of any of them does."""
    assert [harness.episode_seed(3, e) for e in (0, 5)] == [300_009, 300_014]
    assert int(harness.stream_rng(7, 1).integers(1 << 30)) == STREAM_7_1
    last_training = max(harness.episode_seed(s, 100_002) for s in range(1000))
    assert min(harness.evaluation_seed(s, 0) for s in range(1000)) > last_training


def record_resets(monkeypatch) -> list[list[int]]:
    """The seeds every environment copy is reset with, one list per reset, in order: `env.reset(seed)` of the
    env adapters (copy j gets seed + j, the adapters' contract) and the copy seeds the jitted SMAX program
    resets with (a row per seed)."""
    from effmarl.algos.qmix import smax_runner
    from effmarl.envs.mpe import MPEPredatorPrey
    from effmarl.envs.mpe_vec import VectorPredatorPrey
    from effmarl.envs.smax import SMAXEnv

    resets: list[list[int]] = []
    for cls in (MPEPredatorPrey, VectorPredatorPrey, SMAXEnv):
        def reset(self, seed=None, _real=cls.reset):
            if seed is not None:
                resets.append([seed + j for j in range(self.num_envs)])
            return _real(self, seed)
        monkeypatch.setattr(cls, "reset", reset)
    build = smax_runner.build_rollout

    def recording_build(*args):
        program = build(*args)

        def run(params, copy_seeds, env_seed, epsilon):
            resets.extend(np.asarray(copy_seeds).astype(int).tolist())
            return program(params, copy_seeds, env_seed, epsilon)
        return run

    monkeypatch.setattr(smax_runner, "build_rollout", recording_build)
    return resets


STACKS = {  # paper 1's loop and the random policy on 2 MPE copies, the QMIX family on SMAX (its jitted runner)
    "random": {"env": {"backend": "mpe", "n_agents": 3, "num_envs": 2}, "budget": {"episodes": 4}},
    "maddpg": {"env": {"backend": "mpe", "n_agents": 3, "num_envs": 2}, "budget": {"episodes": 4},
               "offpolicy": {"batch_size": 16, "warmup": 40, "update_every": 10, "checkpoint_every": 0,
                             "hidden": [8, 8]}},
    "qmix": {"env": {"backend": "smax", "map": "3m"}, "budget": {"env_steps": 60},
             "qmix": {"num_envs": 2, "eval_episodes": 3, "batch_size": 2, "buffer_size": 8, "eval_every": 30,
                      "checkpoint_every": 1000, "target_update_interval": 4, "rnn_hidden_dim": 8,
                      "mixing_embed_dim": 4, "hypernet_embed": 8}},
}


@pytest.mark.parametrize("algo", [pytest.param(a, marks=pytest.mark.slow) if a == "qmix" else a  # a QMIX run
                                  for a in STACKS])
def test_every_stack_resets_its_episodes_with_the_seeds_the_harness_derives(tmp_path, monkeypatch, algo):
    """One derivation: every stack — the random policy, paper 1's off-policy loop, the QMIX family — resets its
    training episodes 0, 1, 2, … (the copies of a round: consecutive episodes) with harness.episode_seed, and the
    QMIX family its evaluation episodes with harness.evaluation_seed, through the harness (a stack that restated a
    formula inline would make no call). The expected seeds come from the harness's functions alone."""
    import pandas as pd

    from effmarl.config import validate
    from effmarl.train import train

    returned = set()

    def recorded(real):
        def derive(seed, index):
            returned.add(value := real(seed, index))
            return value
        return derive

    for name in ("episode_seed", "evaluation_seed"):
        monkeypatch.setattr(harness, name, recorded(getattr(harness, name)))
    resets = record_resets(monkeypatch)
    cfg = validate({"study": "seeds", "algo": algo, "seed": 4, **STACKS[algo]}, part="run")
    train(cfg, tmp_path / algo)
    monkeypatch.undo()  # from here on the harness's own functions

    metrics = pd.read_parquet(tmp_path / algo / "metrics.parquet")
    if algo == "qmix":
        copies, evaluation_copies = cfg["qmix"]["num_envs"], cfg["qmix"]["eval_episodes"]
        episodes, evaluations = int(metrics["episodes"].iloc[-1]), int(metrics["test_win_rate"].notna().sum())
    else:
        copies, evaluation_copies = cfg["env"]["num_envs"], None
        episodes, evaluations = int(metrics["episode"].max()) + 1, 0
    training = [seed for r in resets if len(r) == copies for seed in r]
    evaluation = [seed for r in resets if len(r) == evaluation_copies for seed in r]
    assert episodes > copies and (algo != "qmix" or evaluations >= 2)
    assert training == [harness.episode_seed(4, e) for e in range(episodes)]
    assert evaluation == [harness.evaluation_seed(4, i) for i in range(evaluations * (evaluation_copies or 0))]
    assert {r[0] for r in resets} <= returned  # every reset's first seed came from a call of the harness


def test_guard_does_not_stop_finite_parameters_whose_sum_overflows():
    harness.guard_finite("update_all_trainers", 1, [torch.full((4,), 3e38), torch.full((4,), 3e38)])
