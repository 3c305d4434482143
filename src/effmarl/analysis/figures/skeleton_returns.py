"""Walking-skeleton figure: episode returns of a uniform random policy on predator-prey, per team, vs N."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from effmarl.analysis.common import read_tables

CAPTION = ("Episode return of a uniform random policy on MPE predator-prey (mpe2 simple_tag_v3), summed "
           "over each team's agents, by number of agents N. The reward floor learning must beat.")


def team_returns(summary: pd.DataFrame) -> pd.DataFrame:
    keys = ["run_id", "cfg.env.n_agents", "cfg.seed", "episode", "team"]
    return summary.groupby(keys, as_index=False)["return"].sum()


def make(inputs: list[str]):
    summary = read_tables(inputs)
    data = team_returns(summary)
    fig, ax = plt.subplots(figsize=(5, 3.2))
    sns.boxplot(data=data, x="cfg.env.n_agents", y="return", hue="team", ax=ax)
    ax.set_xlabel("agents N")
    ax.set_ylabel("team episode return")
    ax.set_title("Random policy on predator-prey")
    fig.tight_layout()
    return fig, summary
