"""Paper 1 analysis: the sampling-per-round table and the phase-breakdown figure on a synthetic summary."""

from __future__ import annotations

import pandas as pd
import pytest

from effmarl.analysis import metrics
from effmarl.analysis.figures import paper1_phases
from effmarl.analysis.tables import paper1_sampling


@pytest.fixture
def phases_summary(tmp_path):
    rows = []
    for storage, sampler, sampling_s in [("reference", "uniform", 2.0), ("reference", "neighbor", 1.5),
                                         ("contiguous", "uniform", 0.2)]:
        run = {"run_id": f"{storage}-{sampler}", "cfg.algo": "maddpg", "cfg.env.n_agents": 3,
               "cfg.replay.storage": storage, "cfg.replay.sampler": sampler, "cfg.seed": 0,
               "cfg.study": "paper1", "cfg.profile": "smoke", "git_commit": "abc"}
        for episode in range(2):  # two episodes of 5 update rounds each
            rows += [{**run, "episode": episode, "phase": "sampling", "seconds": sampling_s / 2, "calls": 15},
                     {**run, "episode": episode, "phase": "update_all_trainers", "seconds": 9.0, "calls": 5},
                     {**run, "episode": episode, "phase": "env_step", "seconds": 1.0, "calls": 25}]
    path = tmp_path / "phases.summary.parquet"
    pd.DataFrame(rows).to_parquet(path)
    return str(path)


def test_sampling_table_per_round_and_change(phases_summary):
    table = paper1_sampling.make([phases_summary]).set_index(["storage", "sampler"])
    assert table.loc[("reference", "uniform"), "update_rounds"] == 10
    assert table.loc[("reference", "uniform"), "sampling_ms_per_round"] == pytest.approx(200.0)
    assert table.loc[("reference", "neighbor"), "change_vs_reference_uniform_%"] == pytest.approx(-25.0)
    assert table.loc[("contiguous", "uniform"), "change_vs_reference_uniform_%"] == pytest.approx(-90.0)


def test_phase_figure_stacks_leaf_phases_only(phases_summary):
    wide = paper1_phases.breakdown(pd.read_parquet(phases_summary))
    assert "update_all_trainers" not in wide.columns and len(wide) == 3
    assert wide.set_index("label").loc["storage=reference sampler=uniform", "sampling"] == pytest.approx(2.0)
    fig, shown = paper1_phases.make([phases_summary])
    assert len(fig.axes) == 1 and len(shown) == 18


def test_steady_state_drops_each_runs_warm_up_episodes():
    def rows(run_id, first_update):
        out = []
        for episode in range(4):
            out.append({"cfg.study": "paper1", "run_id": run_id, "episode": episode, "phase": "env_step",
                        "seconds": 1.0, "calls": 25})
            if episode >= first_update:
                out.append({"cfg.study": "paper1", "run_id": run_id, "episode": episode,
                            "phase": "update_all_trainers", "seconds": 2.0, "calls": 1})
        return out

    phases = pd.DataFrame(rows("early", 1) + rows("late", 3) + rows("never", 99))
    kept = metrics.steady_state(phases)
    assert sorted(kept[kept.run_id == "early"].episode.unique()) == [1, 2, 3]
    assert sorted(kept[kept.run_id == "late"].episode.unique()) == [3]
    assert sorted(kept[kept.run_id == "never"].episode.unique()) == [0, 1, 2, 3]  # no update round: all kept
    totals = metrics.run_totals(kept).set_index("run_id")
    assert totals.loc["late", "total"] == 1.0 and totals.loc["late", "update"] == 2.0
