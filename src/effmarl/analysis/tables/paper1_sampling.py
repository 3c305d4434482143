"""Paper 1: sampling-phase time per update round for each run, and its change against reference/uniform
storage × sampler of the same algorithm, N and seed (the paper's −26.66 % / −27.39 % claims)."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.common import read_tables
from effmarl.analysis.figures.paper1_phases import RUN_KEYS

CAPTION = ("Mini-batch sampling phase per update round (ms, measured inside training runs) by algorithm, N, "
           "replay storage and sampler; change relative to reference storage with uniform sampling.")


def make(inputs: list[str]) -> pd.DataFrame:
    summary = read_tables(inputs)
    totals = summary.pivot_table(index=RUN_KEYS, columns="phase", values=["seconds", "calls"], aggfunc="sum")
    table = pd.DataFrame({
        "update_rounds": totals[("calls", "update_all_trainers")],
        "sampling_ms_per_round": 1e3 * totals[("seconds", "sampling")] / totals[("calls", "update_all_trainers")],
    }).reset_index()
    keys = ["cfg.algo", "cfg.env.n_agents", "cfg.seed"]
    base = table[(table["cfg.replay.storage"] == "reference") & (table["cfg.replay.sampler"] == "uniform")]
    table = table.merge(base[keys + ["sampling_ms_per_round"]].rename(
        columns={"sampling_ms_per_round": "base"}), on=keys, how="left")
    table["change_vs_reference_uniform_%"] = 100 * (table["sampling_ms_per_round"] / table["base"] - 1)
    table = table.drop(columns="base").rename(columns=lambda c: c.removeprefix("cfg.").removeprefix("replay."))
    return table.round(3)
