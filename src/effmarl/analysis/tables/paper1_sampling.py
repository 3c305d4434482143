"""Paper 1, Figure 3 measured inside training (figures numbered as in docs/specification.md): sampling-phase time
per update round for each run of one paper-1 study, and its change against the reference storage drawing uniformly
(uniform sampling, or neighbor k = 1, which draws what uniform draws) with the same other grid keys (algorithm, N,
seed …). Its first line (the `evidence` column of the .csv) says whether the runs were timed alone (a timing study:
each run a workflow job with the machine to itself) or are illustrative (trained beside other jobs):
metrics.timed_alone."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_tables
from effmarl.analysis.metrics import change_pct, grid_keys, sampling_per_round
from effmarl.analysis.metrics.timed_alone import timed_alone

CAPTION = ("Paper 1, Figure 3 measured inside training: mini-batch sampling phase per update round (ms), one row per "
           "run, by the study's grid keys (algorithm, N, replay storage, sampler, neighbor window k, seed); change "
           "relative to the reference storage with uniform draws (uniform, or neighbor k = 1) and the same other keys. "
           "The first line says whether the runs were timed alone (each a workflow job with the machine to itself) "
           "or the times are illustrative (runs trained beside other jobs).")
REPRODUCES = ("Paper 1, Figure 3's numbers (figures numbered as in docs/specification.md), measured inside "
              "training rather than in the micro-benchmark.")
CLAIM = "Neighbor sampling cuts the sampling phase by 26.66 % (N = 3) and 27.39 % (N = 12)."
OUTPUT = {"group": "{study}", "stem": "sampling_per_round", "for_each": "paper1*"}
INPUTS = {"phases": {"study": "{study}", "table": "phases", "doc": "phases.summary.parquet of one paper-1 study"}}
SHOWN = ["cfg.algo", "cfg.env.n_agents", "cfg.replay.storage", "cfg.replay.sampler", "cfg.replay.neighbor_k",
         "cfg.seed"]
DRAW = ["cfg.replay.storage", "cfg.replay.sampler", "cfg.replay.neighbor_k"]


def per_round(phases: pd.DataFrame) -> pd.DataFrame:
    table = sampling_per_round(phases)
    grid = grid_keys(phases)
    keys = [k for k in SHOWN if k in table] + [k for k in grid if k not in SHOWN]
    uniform_draws = table["cfg.replay.sampler"] == "uniform"
    if "cfg.replay.neighbor_k" in table:
        uniform_draws |= (table["cfg.replay.sampler"] == "neighbor") & (table["cfg.replay.neighbor_k"] == 1)
    base = table[(table["cfg.replay.storage"] == "reference") & uniform_draws]
    match = [g for g in grid if g not in DRAW]
    if match:
        base = base.groupby(match)["sampling_ms_per_round"].mean().rename("base").reset_index()
        table = table.merge(base, on=match, how="left")
    else:
        table["base"] = base["sampling_ms_per_round"].mean() if len(base) else float("nan")
    table["change_vs_reference_uniform_%"] = change_pct(table["sampling_ms_per_round"], table["base"])
    table = table.sort_values(keys)[[*keys, "update_rounds", "sampling_ms_per_round", "change_vs_reference_uniform_%"]]
    return table.rename(columns=lambda c: c.removeprefix("cfg.").removeprefix("replay.").removeprefix("env."))


def make(inputs: list[str]) -> pd.DataFrame:
    phases = read_tables(named_inputs(inputs, INPUTS, "table paper1_sampling")["phases"])
    return mark_evidence(per_round(phases).round(3).reset_index(drop=True), timed_alone(phases))
