"""Walking-skeleton figure: episode returns of a uniform random policy on predator-prey, per team, vs N."""

from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

from effmarl.analysis.io import named_inputs, read_tables
from effmarl.analysis.metrics import team_returns

CAPTION = ("Episode return of a uniform random policy on MPE predator-prey (mpe2 simple_tag_v3), summed "
           "over each team's agents, by number of agents N, on a symmetric-log axis (returns grow with N and the "
           "prey's are negative, so a linear axis would flatten N ≤ 12). The reward floor learning must beat.")
REPRODUCES = "No paper figure: the walking skeleton of the workflow, and the reward floor for paper 1's learners."
CLAIM = "Any learned policy of figure 6 (reward curves) must beat these returns."
OUTPUT = {"group": "skeleton", "stem": "random_returns"}
INPUTS = {"metrics": {"study": "skeleton", "doc": "metrics.summary.parquet of the skeleton study"}}


def make(inputs: list[str]):
    summary = read_tables(named_inputs(inputs, INPUTS, "figure skeleton_returns")["metrics"])
    data = team_returns(summary)
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    sns.boxplot(data=data, x="cfg.env.n_agents", y="return", hue="team", ax=ax)
    ax.set_yscale("symlog", linthresh=1.0)
    ax.axhline(0, color="0.6", lw=0.6)
    ax.set_xlabel("agents N")
    ax.set_ylabel("team episode return (symlog)")
    ax.set_title("Random policy on predator-prey")
    fig.tight_layout()
    return fig, summary
