"""Paper 2, Table 1's sparsity column: the sparsity of every (algorithm, map) cell is chosen, not given - "the highest
admissible sparsity threshold of MAST", the largest swept sparsity at which MAST stays within 3 % of the dense model.
The paper profile runs Table 1's baselines at the chosen sparsity (`sparsity_from: selection`); the default profile
declares 99 % (where the probe found the methods separate; at 3 seeds the 3 % rule is decided by noise) and this
table says which swept sparsities fall within 3 % of dense, with the interval of MAST / dense and the probability
that a MAST run beats a dense run.

One row per (algo, map, swept sparsity) with MAST's and dense's win-rate statistic (the mean over seeds of the per-run
mean of the last K = 20 evaluations, its 95 % t-interval, seeds), `normalised` = MAST / dense with Fieller's interval,
`admissible`
(MAST >= 0.97 x dense: the paper's rule, on the point estimate), `verdict` (whether the interval decides it) and
`chosen`. If no sparsity is admissible the lowest swept one is chosen and stays `admissible=False`. The columns
`algo`, `map`, `sparsity`, `chosen` keep raw config values: the workflow reads them to set the baselines' sparsity."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_tables
from effmarl.analysis.metrics import LAST_K, STATISTIC, judge_runs_each_cell, select_sparsity

CAPTION = ("Paper 2, sparsity selection for Table 1: per algorithm and SMAX map, MAST's win rate at every swept "
           "sparsity against the dense model. Statistic: " + STATISTIC + "; `seeds` = runs behind each "
           "value. `normalised` = MAST mean / dense mean with Fieller's 95 % interval (`normalised_lo`, "
           "`normalised_hi`; Welch's degrees of freedom); "
           "`p_improvement` = the probability that a MAST run beats a dense run (0.5 = no difference). "
           "Admissible: MAST mean >= 0.97 x dense mean (the paper's rule: it rests on the point estimate); "
           "`verdict`: what the interval decides (within 3 % where its whole interval is at or above 0.97, more "
           "than 3 % below where it is under, else undecided, with the seeds that would decide it); chosen: the "
           "highest "
           "admissible sparsity (else the lowest swept, admissible=False). Where dense wins 0 % the rule holds "
           "trivially (see `note`). Where the profile takes Table 1's sparsity from here (paper profile) the chosen "
           "row sets it; where it declares it (default profile: 99 %) the table says which sparsities fall within "
           "3 %.")
REPRODUCES = "Paper 2, Table 1's sparsity column (\"the highest admissible sparsity threshold of MAST\")."
CLAIM = ("Which sparsities keep MAST within 3 % of dense, and how sure that is; in the paper profile it sets the "
         "sparsity at which every baseline of Table 1 is run.")

# The first stage of Table 1 (paper 2): studies with sparsity_from: selection read this table's CSV
# (workflow/rules/runs.smk, run_config_selected) to decide their runs' sparsity.
OUTPUT = {"group": "mast", "stem": "selection"}
INPUTS = {"dense": {"study": "mast_dense", "doc": "metrics.summary.parquet of mast_dense"},
          "sweep": {"study": "mast_sweep",
                    "doc": "metrics.summary.parquet of mast_sweep (method mast, several sparsities)"}}


def make(inputs: list[str], k: int = LAST_K) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, "table mast_selection")
    dense, sweep = read_tables(named["dense"]), read_tables(named["sweep"])
    table = select_sparsity(dense, sweep, k=k)
    table = table.round({c: 4 for c in table.columns if table[c].dtype.kind == "f" and c != "sparsity"})
    verdict = judge_runs_each_cell(sweep, ["cfg.algo", "cfg.env.map", "cfg.sparse.sparsity"], dense)
    return mark_evidence(table, verdict, verdict.rows(table["algo"], table["map"]))
