"""`effmarl bench paper1` at a tiny size: every section runs and its tables hold what they claim."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from effmarl.bench import paper1
from effmarl.cli import main


@pytest.fixture(scope="module")
def bench(smoke_workflow):
    """The smoke workflow's `bench_paper1` step (configs/smoke.yaml `bench.paper1`: N = 3, batch 64, fill 300,
    2 rounds, 4 episodes, E = 1 and 2 copies), the same command a user's workflow runs."""
    return smoke_workflow["figures"] / "bench" / "bench_paper1"


@pytest.fixture(scope="module")
def sampling(tmp_path_factory):
    """`effmarl bench paper1 --sections sampling` at the smoke size (N = 3, batch 64, fill 300, 2 rounds): the
    section the workflow leaves out (its sampling-phase measurement is paper1_sampling_bench)."""
    out = tmp_path_factory.mktemp("bench_paper1") / "bench_paper1"
    assert main(["bench", "paper1", "--size", "small", "--agents", "3", "--batch", "64", "--fill", "300",
                 "--rounds", "2", "--stream-mib", "8", "--sections", "sampling", "--out", str(out)]) == 0
    return out


@pytest.mark.slow
def test_the_workflow_runs_bench_paper1s_loops_only(bench):
    assert (bench.parent / "bench_paper1.loops.csv").is_file()
    assert not (bench.parent / "bench_paper1.sampling.csv").exists()


def test_sampling_table(sampling):
    assert "Streaming-copy bandwidth" in sampling.with_suffix(".md").read_text()
    table = pd.read_csv(f"{sampling}.sampling.csv")
    assert len(table) == len(paper1.sampling.sampling_configs(16)) == 12 and (table["rounds"] == 2).all()
    base = table[(table.storage == "reference") & (table.sampler == "uniform") & (table.batch_mode == "per_agent")]
    assert base["speedup_vs_paper_baseline"].tolist() == [1.0]
    # bytes per round by hand: N = 3, obs width 14 (predators), 5 actions: obs + next_obs 2·3·14, act 3·5,
    # rew and done 3 each -> 105 float32 = 420 bytes a transition; per-agent rounds gather 3 batches of 64
    per_agent = table[table.batch_mode == "per_agent"]["bytes_per_round"].unique().tolist()
    shared = table[table.batch_mode == "shared"]["bytes_per_round"].unique().tolist()
    assert per_agent == [3 * 64 * 420] and shared == [64 * 420]
    assert np.allclose(table["x_memory_floor"], table["median_ms"] / table["memory_floor_ms"])


@pytest.mark.slow
def test_loops_table_and_provenance(bench):
    loops = pd.read_csv(f"{bench}.loops.csv")
    assert loops["loop"].tolist() == ["paper", "today", "batched", "batched_shared", "batched_shared_e2"]
    assert loops["backend"].tolist() == ["mpe", "mpe", "mpe_vec", "mpe_vec", "mpe_vec"]
    assert loops["num_envs"].tolist() == [1, 1, 1, 1, 2] and (loops["update"] == "eager").all()
    # 4 episodes: 4 rounds of one copy or 2 lockstep rounds of two copies, 100 env steps either way
    assert (loops["env_steps"] == 4 * 25).all() and (loops["env_steps_per_s"] > 0).all()
    assert loops.set_index("loop").loc["paper", "end_to_end_vs_paper"] == 1.0
    assert loops.set_index("loop").loc["today", "round_speedup_vs_today"] == 1.0
    assert loops.set_index("loop").loc["batched_shared", "end_to_end_vs_shared_e1"] == 1.0
    # one update round per 100 env steps: 100 timed steps hold exactly one round
    assert (loops["update_all_trainers_ms_per_step"] > 0).all()
    md = bench.with_suffix(".md").read_text()
    assert "| batched" in md and "Streaming-copy bandwidth" not in md  # the workflow runs the loops section only
    rec = json.loads(bench.with_name(f"{bench.name}.provenance.json").read_text())
    assert rec["benchmark"] == "bench_paper1" and rec["git"]["commit"]


def test_cuda_without_gpu_is_one_line_error(tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert main(["bench", "paper1", "--device", "cuda", "--out", str(tmp_path / "x")]) == 2
    assert "--device cuda" in capsys.readouterr().err


def test_bad_options_are_one_line_errors(tmp_path, capsys):
    assert main(["bench", "paper1", "--agents", "3", "4", "--rounds", "0", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert any("--agents: 4" in line for line in err) and any("--rounds: must be >= 1" in line for line in err)
