"""Paper 2, Table 1: per algorithm x map x method (Dense, Tiny, SS, SET, RigL, RLx2, MAST) at the cell's sparsity -
sparsity, total size (weights), size and training / inference FLOPs as fractions of the dense model (from each run's
sparsity.parquet; dense is the 1.0 reference), the normalised win rate (mean / dense mean, Fieller's interval, and the
3 % verdict it decides), the raw win rate (mean with its 95 % t-interval, and std) and the seeds behind each
cell. The cell's sparsity is the one its baselines ran at (metrics.cell_sparsity): declared by the default profile
(99 %), or the selection's choice where a profile takes it from there (the paper profile's `sparsity_from:
selection`); MAST rows are mast_sweep runs at it, and the `selection` CSV says whether MAST is within 3 % of dense
there (by its rule, on the point estimate) and which sparsity the 3 % rule would choose. Below the cells: per
algorithm and method, the average over maps of the FLOPs ratios (`map` = "average"), the paper's "10x / 9x / 8x
average training-FLOPs reduction"."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional, read_tables
from effmarl.analysis.metrics import LAST_K, STATISTIC, flops_averages, judge_each_cell, table1_cells
from effmarl.analysis.style import algo_name, map_name, method_name

CAPTION = ("Paper 2, Table 1 on SMAX (not SMAC: compare dense vs sparse within SMAX). Per algorithm, map and method "
           "at the cell's sparsity, the one its baselines ran at (declared: 99 % in the default profile; chosen in "
           "the paper profile: the highest MAST sparsity within 3 % of dense); `selection_admissible` = MAST within "
           "3 % of dense at that sparsity by the selection table's rule (mean >= 0.97 x dense mean: it rests on the "
           "point estimate), `selected_sparsity` = the sparsity that rule chooses. Size and FLOPs as "
           "fractions of the dense per-agent model (the paper prints reductions; `train_flops_reduction` = 1/ratio); "
           "win rate: " + STATISTIC + ", ± std; normalised = mean / dense mean (empty where dense wins 0 %) with "
           "Fieller's 95 % interval of that ratio (`normalised_lo`, `normalised_hi`; Welch's degrees of freedom), "
           "`vs_dense` = the 3 % verdict, an equivalence question decided by that interval alone (within 3 % where "
           "its lower end clears 0.97, more than 3 % below where its upper end is under 0.97, else undecided, with "
           "the seeds per method that would decide it at the measured spread: `seeds_needed`, 80 % power), and "
           "`p_improvement` = the probability that a run of the method beats a dense run (Mann-Whitney U / n·m; "
           "0.5 = no difference); `seeds` = runs per cell. Rows with map 'average' average the "
           "ratios over the maps listed.")
REPRODUCES = "Paper 2, Table 1."
CLAIM = ("Up to 20x fewer FLOPs (10x / 9x / 8x on average for QMIX / WQMIX / RES) and 5-20x smaller models at "
         "under 3 % win-rate loss (within SMAX).")

OUTPUT = {"group": "mast", "stem": "table1"}
INPUTS = {"dense": {"study": "mast_dense", "doc": "metrics.summary.parquet of mast_dense"},
          "sweep": {"study": "mast_sweep",
                    "doc": "metrics.summary.parquet of mast_sweep (MAST rows: its runs at the chosen sparsity)"},
          "baselines": {"study": "mast_table1", "doc": "metrics.summary.parquet of mast_table1 (tiny, static, set, "
                                                       "rigl, rlx2 at the chosen sparsity)"},
          "selection": {"output": "mast/tables/selection.csv", "doc": "the CSV of table mast_selection"},
          "sparsity": {"study": ["mast_sweep", "mast_table1"], "table": "sparsity",
                       "doc": "sparsity.summary.parquet of mast_sweep and of mast_table1 (any number; dense needs "
                              "none)"}}

SHOWN = ["algorithm", "map", "method", "sparsity", "size", "size_ratio", "train_flops_ratio", "inference_flops_ratio",
         "train_flops_reduction", "normalised", "normalised_lo", "normalised_hi", "vs_dense", "seeds_needed",
         "p_improvement", "mean", "mean_lo", "mean_hi", "std", "seeds", "selection_admissible", "selected_sparsity"]


def cells(inputs: list[str], name: str, k: int = LAST_K) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, name)
    return table1_cells(read_tables(named["dense"]), read_tables(named["sweep"]), read_optional(named["baselines"]),
                        read_optional(named["sparsity"]), pd.read_csv(named["selection"][0]), k=k)


def display(table: pd.DataFrame) -> pd.DataFrame:
    out = table.assign(algorithm=table["algo"].map(algo_name), map=table["map"].map(map_name),
                       method=table["method"].map(method_name))
    return out


def make(inputs: list[str], k: int = LAST_K) -> pd.DataFrame:
    table = cells(inputs, "table mast_table1", k)
    averages = flops_averages(table).assign(map="average")
    averages["sparsity"] = float("nan")
    out = pd.concat([display(table)[SHOWN], display(averages).reindex(columns=SHOWN + ["maps"])], ignore_index=True)
    out["maps"] = out["maps"].fillna("")
    out = out.round({c: 4 for c in SHOWN if c not in ("size", "seeds", "sparsity")} | {"size": 0})
    verdict = evidence(inputs, table, "table mast_table1")
    rows = (verdict.rows(table["algo"], table["map"])
            + [verdict.of(a) for a in averages["algo"]])
    return mark_evidence(out, verdict, rows)


def evidence(inputs: list[str], table: pd.DataFrame, name: str):
    """Table 1's verdicts (metrics.judge_each_cell): whole and per (algorithm, map) cell and algorithm (its average
    rows): each cell's seeds, its own dense's plateau, the budget of its runs."""
    named = named_inputs(inputs, INPUTS, name, required=False)
    frames = {role: read_optional(named[role]) for role in ("dense", "sweep", "baselines")}
    return judge_each_cell(table, frames["dense"], *frames.values())
