"""The default profile's paper-1 design (issue 47): the end-to-end rows rest on 4 interleaved pairs per algorithm at
N = 12 on the paper's storage, the update shares on 3 runs at N = 3, 12, 24 and 48, and the sampling rows on pairs of
both storages at N = 3 and 12."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

DEFAULT = str(Path(__file__).resolve().parents[1] / "configs" / "default.yaml")


def test_the_default_profile_rests_the_end_to_end_rows_on_four_pairs_and_the_shares_on_three_runs_per_n():
    from effmarl.groups import process_groups
    from effmarl.studies import expand_all, load_profile

    profile = load_profile(DEFAULT)
    runs = expand_all(profile)
    pairs: dict[str, int] = {}
    for study, ids in process_groups(profile, runs).values():
        cfg = runs[study][ids[0]]
        if len(ids) == 2 and cfg["env"].get("n_agents") == 12 and cfg["replay"]["storage"] == "reference":
            pairs[cfg["algo"]] = pairs.get(cfg["algo"], 0) + 1
    assert pairs == {"maddpg": 4, "masac": 4}, pairs
    scale = pd.Series([c["env"]["n_agents"] for c in runs["paper1_scale"].values()]).value_counts().to_dict()
    assert scale == {3: 3, 12: 3, 24: 3, 48: 3}, scale


@pytest.mark.parametrize("n", [3, 12])
def test_the_default_profile_times_both_storages_at_both_agent_counts_as_interleaved_pairs(n):
    from effmarl.groups import process_groups
    from effmarl.studies import expand_all, load_profile

    profile = load_profile(DEFAULT)
    runs = expand_all(profile)
    cells = {(runs[s][ids[0]]["replay"]["storage"]) for s, ids in process_groups(profile, runs).values()
             if len(ids) == 2 and runs[s][ids[0]]["env"].get("n_agents") == n}
    assert cells == {"reference", "contiguous"}
