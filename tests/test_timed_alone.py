"""In-training times say whether they were taken alone (issue 34): the sampling-per-round table's first line and the
phase-breakdown figure's stamp follow the study catalogue's `timing` flag (metrics.timed_alone), on hand-made
summaries."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from effmarl.analysis.figures import paper1_phases
from effmarl.analysis.io import save_table
from effmarl.analysis.metrics.timed_alone import timed_alone
from effmarl.analysis.tables import paper1_sampling
from effmarl.studies import load_catalogue

CATALOGUE = {"timed": {"doc": "d", "base": {}, "timing": True}, "shared": {"doc": "d", "base": {}}}


def _summary(tmp_path, study: str) -> str:
    rows = []
    for sampler, sampling_s in [("uniform", 2.0), ("neighbor", 1.5)]:
        run = {"run_id": sampler, "cfg.algo": "maddpg", "cfg.env.n_agents": 3, "cfg.replay.storage": "reference",
               "cfg.replay.sampler": sampler, "cfg.seed": 0, "cfg.study": study, "cfg.profile": "smoke",
               "git_commit": "abc"}
        rows += [{**run, "episode": 0, "phase": "sampling", "seconds": sampling_s, "calls": 30},
                 {**run, "episode": 0, "phase": "update_all_trainers", "seconds": 9.0, "calls": 10},
                 {**run, "episode": 0, "phase": "env_step", "seconds": 1.0, "calls": 25}]
    path = tmp_path / f"{study}.phases.summary.parquet"
    pd.DataFrame(rows).to_parquet(path)
    return str(path)


def test_runs_are_timed_alone_only_when_every_study_they_come_from_is_a_timing_study():
    assert not timed_alone(["timed"], CATALOGUE).illustrative
    assert timed_alone(["timed", "shared"], CATALOGUE).shared == ("shared",)
    assert timed_alone(["timed", "shared"], CATALOGUE).illustrative
    assert timed_alone(["unknown"], CATALOGUE).illustrative  # a study the catalogue does not know is not vouched for
    assert timed_alone([], CATALOGUE).illustrative


def test_the_catalogue_times_paper_ones_timing_studies_alone_and_the_reward_and_k_sweep_studies_side_by_side():
    catalogue = load_catalogue()
    assert timed_alone(["paper1", "paper1_scale", "paper1_ksweep"], catalogue).alone == ("paper1", "paper1_scale")
    assert timed_alone(["paper1_reward"], catalogue).illustrative
    assert timed_alone(["paper1_ksweep"], catalogue).illustrative  # its time ranking is the sampling benchmark's


@pytest.mark.parametrize(("study", "first_words"), [("paper1", "timed alone: each run of paper1 "),
                                                    ("paper1_reward", "illustrative: the runs of paper1_reward ")])
def test_the_sampling_table_says_in_its_first_line_whether_its_runs_were_timed_alone(study, first_words, tmp_path):
    path = _summary(tmp_path, study)
    table = paper1_sampling.make([path])
    assert set(table["evidence"]) == {table.attrs["evidence"]} and table.attrs["evidence"].startswith(first_words)
    assert table.set_index("sampler").loc["uniform", "sampling_ms_per_round"] == pytest.approx(200.0)
    save_table(table, tmp_path / "out", [path], name="paper1_sampling", caption="c")
    assert (tmp_path / "out.md").read_text().splitlines()[0] == f"**{table.attrs['evidence']}**"


@pytest.mark.parametrize(("study", "stamped"), [("paper1", False), ("paper1_reward", True)])
def test_the_phase_breakdown_of_runs_trained_beside_other_jobs_is_stamped_illustrative(study, stamped, tmp_path):
    fig, _ = paper1_phases.make([_summary(tmp_path, study)])
    texts = [t.get_text() for t in fig.texts]
    plt.close(fig)
    assert any(t.startswith("illustrative: the runs of paper1_reward") for t in texts) == stamped
