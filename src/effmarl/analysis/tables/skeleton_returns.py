"""Walking-skeleton table: mean and spread of the random policy's team returns, per N and team."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.io import named_inputs, read_tables
from effmarl.analysis.metrics import team_returns

CAPTION = "Random-policy team episode return on predator-prey: mean, standard deviation, episodes."
REPRODUCES = "No paper table: the numbers behind the skeleton figure."
CLAIM = "The reward floor paper 1's learners must beat."
OUTPUT = {"group": "skeleton", "stem": "random_returns"}
INPUTS = {"metrics": {"study": "skeleton", "doc": "metrics.summary.parquet of the skeleton study"}}


def make(inputs: list[str]) -> pd.DataFrame:
    summary = read_tables(named_inputs(inputs, INPUTS, "table skeleton_returns")["metrics"])
    data = team_returns(summary)
    table = (data.groupby(["cfg.env.n_agents", "team"])["return"]
             .agg(mean="mean", std="std", episodes="count").reset_index()
             .rename(columns={"cfg.env.n_agents": "N"}))
    return table.round(3)
