"""Paper 1's end-to-end comparison per pair and per algorithm (issue 34; metrics.end_to_end): hand-made runs whose
per-pair changes and t intervals are computed here by hand.

MADDPG: uniform 20 s, neighbor 16, 18, 17 s (seeds 0-2): changes −20, −10, −15 %; mean −15, s = 5,
t_{2, 0.975} = 4.302653, half-width 4.302653 · 5 / √3 = 12.42: [−27.42, −2.58], below 0: neighbor faster.
MASAC: uniform 20 s, neighbor 26, 18, 22 s: +30, −10, +10 %; mean +10, s = 20, half-width 49.68: [−39.68, 59.68],
contains 0: undecided. Pooled, the six pairs would read −2.5 %, a number neither algorithm has."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from effmarl.analysis.figures import paper1_end_to_end
from effmarl.analysis.metrics.end_to_end import by_algorithm, pair_changes, verdict
from effmarl.analysis.tables import paper1_claims

T_2 = 4.302652729911275  # Student t, 2 degrees of freedom, 0.975 quantile
NEIGHBOR = {"maddpg": (16.0, 18.0, 17.0), "masac": (26.0, 18.0, 22.0)}
LEAF_OTHER = 6.5  # seconds of the leaf phases besides sampling in `_phase_rows`


def _phase_rows(run: dict, total_s: float) -> list[dict]:
    """The phase rows of a run whose leaf phases add up to total_s seconds, on both clocks (wall = process CPU)."""
    sampling = total_s - LEAF_OTHER
    return [{**run, "episode": 1, "phase": p, "seconds": s, "cpu_seconds": s, "calls": c} for p, s, c in (
        ("sampling", sampling, 30), ("update_all_trainers", sampling + 3.0, 10), ("target_q", 1.0, 30),
        ("q_loss", 1.0, 30), ("p_loss", 1.0, 30), ("env_step", 2.0, 100), ("action_selection", 1.0, 100),
        ("buffer_add", 0.5, 100))]


def _phases(study: str = "paper1", unpaired: bool = True) -> pd.DataFrame:
    rows = []
    for algo, neighbor in NEIGHBOR.items():
        for seed, total in enumerate(neighbor):
            for sampler, t in (("uniform", 20.0), ("neighbor", total)):
                run = {"cfg.study": study, "run_id": f"{algo}-{sampler}-{seed}", "cfg.profile": "t",
                       "git_commit": "abc", "cfg.algo": algo, "cfg.env.n_agents": 12, "cfg.replay.storage": "reference",
                       "cfg.replay.sampler": sampler, "cfg.replay.neighbor_k": 16, "cfg.seed": seed}
                rows += _phase_rows(run, t)
    if unpaired:  # a uniform run with no neighbor counterpart (seed 3): it forms no pair
        rows += _phase_rows({**run, "run_id": "maddpg-uniform-3", "cfg.algo": "maddpg", "cfg.seed": 3,
                             "cfg.replay.sampler": "uniform"}, 40.0)
    return pd.DataFrame(rows)


def _totals() -> pd.DataFrame:
    from effmarl.analysis.metrics import run_totals, steady_state

    return run_totals(steady_state(_phases()))


def test_each_pair_is_one_seed_of_one_configuration_and_its_change_is_the_ratio_of_its_two_times():
    pairs = pair_changes(_totals()).set_index(["cfg.algo", "cfg.seed"])
    assert len(pairs) == 6  # the unpaired seed-3 run forms none
    assert pairs.loc[("maddpg", 0), ["uniform", "neighbor"]].tolist() == pytest.approx([20.0, 16.0])
    assert pairs["change_%"].tolist() == pytest.approx([-20.0, -10.0, -15.0, 30.0, -10.0, 10.0])


def test_each_algorithm_gets_its_own_mean_change_and_t_interval_never_pooled():
    rows = by_algorithm(pair_changes(_totals())).set_index("cfg.algo")
    half_maddpg, half_masac = T_2 * 5 / math.sqrt(3), T_2 * 20 / math.sqrt(3)
    assert rows.loc["maddpg", ["pairs", "change_%", "low", "high"]].tolist() == pytest.approx(
        [3, -15.0, -15.0 - half_maddpg, -15.0 + half_maddpg])
    assert rows.loc["masac", ["change_%", "low", "high"]].tolist() == pytest.approx(
        [10.0, 10.0 - half_masac, 10.0 + half_masac])
    assert rows["verdict"].to_dict() == {"maddpg": "neighbor faster", "masac": "undecided"}


@pytest.mark.parametrize(("low", "high", "expected"), [(-3.0, -1.0, "neighbor faster"), (1.0, 3.0, "neighbor slower"),
                                                       (-1.0, 1.0, "undecided"), (0.0, 2.0, "undecided"),
                                                       (math.nan, math.nan, "undecided")])
def test_the_verdict_is_undecided_wherever_the_interval_reaches_zero_or_is_missing(low, high, expected):
    assert verdict(low, high) == expected


def test_the_end_to_end_rows_are_one_per_algorithm_and_an_undecided_one_gives_no_ratio():
    """The published row (+27.10 % [+2.0, +47.7]) was a change of pooled means beside a bootstrap interval over
    per-pair changes that pooled MADDPG and MASAC."""
    rows = [r for r in paper1_claims.training_rows(_phases(), None) if r["claim"].startswith("end-to-end")]
    assert [r["claim"] for r in rows] == ["end-to-end training time, neighbor vs uniform, N=12, MADDPG",
                                          "end-to-end training time, neighbor vs uniform, N=12, MASAC"]
    maddpg, masac = rows
    assert maddpg["ours"] == ("-15.00 % of process CPU time (mean per-pair change over 3 pairs, 95 % t interval "
                              "[-27.4, -2.6] %): neighbor faster; wall clock -15.00 %, neighbor faster")
    assert maddpg["ratio ours/paper"] == f"{-15.0 / -10.2:.2f}"
    assert maddpg["source"] == "paper1: 6 runs in 3 pairs, timed alone"
    assert masac["ours"].endswith(": undecided; wall clock +10.00 %, undecided") and masac["ratio ours/paper"] == ""


def test_the_end_to_end_row_reads_process_cpu_time_so_a_wall_clock_stall_of_one_run_does_not_move_it():
    """A run that waited 40 s for a core (another program on the machine) is 40 s longer on the wall clock only."""
    phases = _phases()
    stalled = (phases["run_id"] == "maddpg-neighbor-0") & (phases["phase"] == "env_step")
    phases.loc[stalled, "seconds"] += 40.0
    maddpg = next(r for r in paper1_claims.training_rows(phases, None) if r["claim"].endswith("MADDPG"))
    assert maddpg["ours"].startswith("-15.00 % of process CPU time") and maddpg["ratio ours/paper"] == "1.47"
    assert maddpg["ours"].endswith("wall clock +51.67 %, undecided")  # (56/20 − 1 − 0.1 − 0.15)/3 = +51.67 %


def test_runs_recorded_without_process_cpu_time_form_no_pair_on_the_claims_clock():
    rows = paper1_claims.training_rows(_phases().drop(columns="cpu_seconds"), None)
    assert rows[0]["claim"] == "end-to-end training time, neighbor vs uniform, N=12"
    assert rows[0]["ours"] == paper1_claims.NOT_MEASURED


def test_runs_of_a_study_not_timed_alone_say_so_in_the_rows_source():
    rows = paper1_claims.training_rows(_phases(study="paper1_reward"), None)
    assert rows[0]["source"].endswith("not timed alone (illustrative)")


@pytest.mark.parametrize(("algos", "stamped"), [(("maddpg",), False), (("maddpg", "masac"), True)])
def test_the_figure_joins_each_pair_and_is_stamped_where_an_algorithms_change_is_undecided(algos, stamped, tmp_path):
    path = tmp_path / "phases.summary.parquet"
    phases = _phases(unpaired=False)
    phases[phases["cfg.algo"].isin(algos)].to_parquet(path)
    fig, _ = paper1_end_to_end.make([f"phases={path}"])
    texts = [t.get_text() for t in fig.texts]
    pair_lines = sum(len(ax.lines) for ax in fig.axes)
    labels = [t.get_text() for ax in fig.axes for t in ax.texts]
    plt.close(fig)
    assert pair_lines == 3 * len(algos)  # one line per pair
    assert labels[0] == "−15.0 % [−27.4, −2.6]"
    stamps = [t for t in texts if t.startswith("ILLUSTRATIVE: neighbor vs uniform undecided")]
    assert bool(stamps) == stamped
    if stamped:
        assert "MASAC reference N = 12" in stamps[0] and "MADDPG" not in stamps[0]
