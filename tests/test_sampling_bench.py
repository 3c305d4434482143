"""`effmarl sampling-bench` with several windows k (the k sweep's time ranking, issue 34): every k a configuration of
its own in one interleaved cycle, every round written to <out>.rounds.parquet; and the readers that quote one
window pick the headline runs' k (metrics.ksweep.bench_at_k, paper1's replay.neighbor_k)."""

from __future__ import annotations

import pandas as pd
import pytest

from effmarl.analysis.metrics.ksweep import bench_at_k, headline_k
from effmarl.profiling import sampling_bench


def test_sampling_bench_with_two_windows_writes_every_storage_and_sampler_round_of_every_rep(tmp_path):
    out = tmp_path / "sampling_bench"
    table = sampling_bench.run(sampling_bench_args(["--agents", "3", "--fill", "500", "--capacity", "1000",
                                                    "--real-steps", "100", "--rounds", "2", "--batch", "64",
                                                    "--k", "1", "16", "--out", str(out), "--profile", "t"]))
    assert set(table["sampler"]) == {"uniform", "neighbor_k1", "neighbor_k16"} and len(table) == 6
    rounds = pd.read_parquet(tmp_path / "sampling_bench.rounds.parquet")
    cells = {(s, sampler, k) for s in ("reference", "contiguous")
             for sampler, k in (("uniform", 0), ("neighbor_k1", 1), ("neighbor_k16", 16))}
    assert {(r.storage, r.sampler, r.k) for r in rounds.itertuples()} == cells
    assert len(rounds) == 2 * len(cells)  # 2 reps of each of the 6 configurations
    assert (rounds.groupby(["storage", "sampler"])["rep"].apply(sorted) == pd.Series([[0, 1]] * 6).values).all()
    assert (rounds["seconds"] > 0).all() and (rounds["n_agents"] == 3).all()
    assert {"run_id", "git_commit", "cfg.study", "cfg.profile"} <= set(rounds.columns)
    assert set(rounds["cfg.study"]) == {"paper1_micro"} and set(rounds["cfg.profile"]) == {"t"}


def sampling_bench_args(argv):
    import argparse

    parser = argparse.ArgumentParser()
    sampling_bench.add_arguments(parser)
    return parser.parse_args(argv)


def test_one_k_as_before_is_a_list_of_one():
    assert sampling_bench_args([]).k == [16]
    assert [name for name, _, _ in sampling_bench.configurations([4, 4, 1])] == ["uniform", "neighbor_k4",
                                                                                   "neighbor_k1"]


def _summary(samplers, profile="t"):
    return pd.DataFrame([{"n_agents": 3, "storage": "reference", "sampler": s, "median_ms": 1.0, "cfg.profile": profile}
                         for s in samplers])


def test_the_headline_k_is_paper1s_neighbor_window_as_the_profile_runs_it():
    assert headline_k("default") == 16 and headline_k(None) == 16  # configs/studies.yaml's paper1 base
    assert headline_k("smoke") == 8  # configs/smoke.yaml sets paper1's replay.neighbor_k to 8


def test_readers_of_the_benchmark_quote_uniform_beside_the_headline_window_only():
    picked = bench_at_k(_summary(["uniform", "neighbor_k1", "neighbor_k16", "neighbor_k64"]))
    assert list(picked["sampler"]) == ["uniform", "neighbor_k16"]
    assert list(bench_at_k(_summary(["uniform", "neighbor_k1", "neighbor_k8"], "smoke"))["sampler"]) == [
        "uniform", "neighbor_k8"]
    assert list(bench_at_k(_summary(["uniform", "neighbor_k4"]))["sampler"]) == ["uniform", "neighbor_k4"]  # one k
    with pytest.raises(ValueError, match="not the headline runs' neighbor_k16"):
        bench_at_k(_summary(["uniform", "neighbor_k1", "neighbor_k4"]))
