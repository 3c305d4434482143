"""MAST Table 1 (our form): per algorithm, map and method - sparsity, size, training and inference FLOPs as
fractions of the dense model (from the runs' final masks), and the final test win rate (mean ± std over seeds)."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.common import ALGO_NAMES, METHOD_NAMES, METHOD_ORDER, named_inputs, read_tables
from effmarl.analysis.metrics import final_win_rates

LAST = 3  # evaluations averaged per run for the final win rate

CAPTION = ("Methods at one global sparsity on SMAX maps. Every method, the dense reference included, uses "
           "per-agent (unshared) agent networks stacked as one tensor per layer, so size and FLOPs compare like for "
           "like; ratios are to that dense per-agent model (the paper prints their inverse, e.g. 0.1 = 10x fewer). "
           "Size counts weights (biases excluded); training FLOPs per iteration and inference FLOPs (agent networks) "
           "follow the paper's formulas on the actual final masks. Win rate: mean test win rate of the last "
           f"{LAST} evaluations of each run (the paper uses the last 20), mean ± std over seeds.")

INPUTS = {"metrics": "metrics.summary.parquet of the MAST study",
          "sparsity": "sparsity.summary.parquet of the MAST study (FLOPs and size from the final masks)"}


def make(inputs: list[str]) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, "table mast_methods")
    runs = final_win_rates(read_tables(named["metrics"]), LAST).merge(
        read_tables(named["sparsity"])[["run_id", "size", "size_ratio", "train_flops_ratio", "inference_flops_ratio"]],
        on="run_id")
    keys = ["cfg.algo", "cfg.env.map", "cfg.sparse.method"]
    table = runs.groupby(keys, as_index=False).agg(
        sparsity=("cfg.sparse.sparsity", "first"), size=("size", "mean"), size_ratio=("size_ratio", "mean"),
        train_flops_ratio=("train_flops_ratio", "mean"), inference_flops_ratio=("inference_flops_ratio", "mean"),
        win_rate=("win_rate", "mean"), win_rate_std=("win_rate", "std"), seeds=("run_id", "count"))
    table["sparsity"] = table["sparsity"].where(table["cfg.sparse.method"] != "dense", 0.0)
    table["order"] = table["cfg.sparse.method"].map({m: i for i, m in enumerate(METHOD_ORDER)})
    table = table.sort_values(["cfg.algo", "cfg.env.map", "order"]).drop(columns="order")
    table["cfg.algo"] = table["cfg.algo"].map(ALGO_NAMES).fillna(table["cfg.algo"])
    table["cfg.sparse.method"] = table["cfg.sparse.method"].map(METHOD_NAMES).fillna(table["cfg.sparse.method"])
    table = table.rename(columns={"cfg.algo": "algorithm", "cfg.env.map": "map", "cfg.sparse.method": "method"})
    return table.round({"size_ratio": 4, "train_flops_ratio": 4, "inference_flops_ratio": 4, "win_rate": 3,
                        "win_rate_std": 3, "size": 0})
