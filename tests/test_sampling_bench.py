"""`effmarl sampling-bench` with several windows k (the k sweep's time ranking, issue 34): every k a configuration of
its own in one interleaved cycle, every round written to <out>.rounds.parquet; and the readers that quote one
window pick the one the benchmark marked headline (studies.headline_k: paper1's replay.neighbor_k)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from effmarl.analysis.metrics.ksweep import bench_at_k
from effmarl.cli import main as cli_main
from effmarl.profiling import sampling_bench
from effmarl.studies import headline_k, load_profile

ROOT = Path(__file__).resolve().parents[1]


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
    # no --headline-k with two windows: the catalogue's paper1 window, 16, is marked beside uniform
    assert set(rounds.loc[rounds["headline"], "sampler"]) == set(table.loc[table["headline"], "sampler"]) == {
        "uniform", "neighbor_k16"}


def sampling_bench_args(argv):
    import argparse

    parser = argparse.ArgumentParser()
    sampling_bench.add_arguments(parser)
    return parser.parse_args(argv)


def test_one_k_as_before_is_a_list_of_one():
    assert sampling_bench_args([]).k == [16]
    assert [name for name, _, _ in sampling_bench.configurations([4, 4, 1])] == ["uniform", "neighbor_k4",
                                                                                   "neighbor_k1"]


def test_the_headline_k_is_paper1s_neighbor_window_as_the_profile_runs_it():
    assert headline_k() == 16  # configs/studies.yaml's paper1 base
    assert headline_k(load_profile(ROOT / "configs" / "default.yaml")) == 16
    assert headline_k(load_profile(ROOT / "configs" / "smoke.yaml")) == 8  # the smoke profile sets paper1's window to 8


def test_readers_of_the_benchmark_quote_uniform_beside_the_window_it_marked_headline():
    table = pd.DataFrame({"sampler": ["uniform", "neighbor_k1", "neighbor_k16", "neighbor_k64"],
                          "headline": [True, False, True, False]})
    assert list(bench_at_k(table)["sampler"]) == ["uniform", "neighbor_k16"]
    one_window = pd.DataFrame({"sampler": ["uniform", "neighbor_k4"]})  # an older table: no mark, quoted whole
    assert list(bench_at_k(one_window)["sampler"]) == ["uniform", "neighbor_k4"]


def test_a_headline_window_the_benchmark_did_not_measure_is_refused_before_measuring(tmp_path, capsys):
    assert cli_main(["sampling-bench", "--agents", "3", "--k", "1", "4", "--headline-k", "16", "--out",
                     str(tmp_path / "b")]) == 2
    assert "--headline-k 16 is not among the measured windows --k 1 4" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
