"""Paper 2's mechanism, measured: sparse value networks mis-estimate their targets (its section 3 and Fig. 5), and
MAST's Soft Mellowmax, hybrid TD(λ) and dual buffer repair them. Per run, over the learner updates logged in the
final FINAL_FRACTION of training (env_steps >= (1 - FINAL_FRACTION) x the run's last logged env step):

    Q    = mean of q_taken_mean   (the mixer's Q_tot of the taken actions over a batch's valid steps)
    G    = mean of return_mean    (the discounted return those replayed steps went on to obtain, Learner.loss)
    bias = Q - G                  (> 0: over-estimation, < 0: under-estimation)

Across seeds: the mean of each with the 95 % Student-t interval of the bias (stats.mean_interval, coverage-tested);
the verdict follows the interval ("over-estimates" where it lies above 0, "under-estimates" below, else "no bias
shown"). G is the return of the replayed behaviour (ε-greedy, older policies), Q the value of the greedy target
policy's mixer, so a small bias is expected even of a perfect critic; the comparison that matters is between
methods trained alike. Runs that did not record return_mean have G and bias NaN and are counted apart."""

from __future__ import annotations

import numpy as np
import pandas as pd

from effmarl.analysis.metrics.mast import ALGO, MAP, METHOD, SPARSITY
from effmarl.analysis.metrics.runs import per_run, run_columns
from effmarl.analysis.metrics.selection import cell_sparsity
from effmarl.analysis.metrics.stats import mean_interval
from effmarl.analysis.metrics.table1 import METHOD_ORDER
from effmarl.schedules import FINAL_FRACTION

Q, G = "q_taken_mean", "return_mean"


def value_bias(metrics: pd.DataFrame, fraction: float = FINAL_FRACTION) -> pd.DataFrame:
    """Per run: `q_taken`, `return_obtained`, `bias` (module doc) and `updates_logged`, the training rows averaged,
    with every configuration column."""
    keys = run_columns(metrics)
    rows = metrics[metrics[Q].notna()] if Q in metrics else metrics.iloc[:0]
    last = rows.groupby(keys)["env_steps"].transform("max")
    late = rows[rows["env_steps"] >= (1 - fraction) * last].copy()
    late[G] = late[G] if G in late else np.nan
    agg = late.groupby(keys).agg(q_taken=(Q, "mean"), return_obtained=(G, "mean"), updates_logged=(Q, "count"))
    agg["bias"] = agg["q_taken"] - agg["return_obtained"]
    return per_run(metrics, agg)


def verdict(lo: float, hi: float) -> str:
    if not np.isfinite([lo, hi]).all():
        return "no interval"
    return "over-estimates" if lo > 0 else "under-estimates" if hi < 0 else "no bias shown"


def value_cells(dense: pd.DataFrame, sweep: pd.DataFrame, baselines: pd.DataFrame | None,
                selection: pd.DataFrame | None) -> pd.DataFrame:
    """Table 1's cells (the sparsity its baselines ran at, as `cell_sparsity` decides; MAST's sweep runs at it; dense):
    one row per (algo, map, method), in Table 1's order, with `sparsity`, `seeds`, `q_taken`, `return_obtained`,
    `bias` (means over seeds), `bias_lo`, `bias_hi` (95 % t-interval), `bias_seeds` (runs that recorded G) and
    `verdict`."""
    cells = cell_sparsity(selection, baselines)[["algo", "map", "sparsity"]].rename(columns={"algo": ALGO, "map": MAP})
    parts = [value_bias(dense).assign(**{METHOD: "dense", "_s": 0.0})]
    for frame, method in ((sweep, "mast"), (baselines, None)):
        if frame is None or frame.empty:
            continue
        runs = value_bias(frame)
        if method:
            runs[METHOD] = method
        runs["_s"] = runs[SPARSITY].astype(float).round(6)
        parts.append(runs.merge(cells.rename(columns={"sparsity": "_s"}), on=[ALGO, MAP, "_s"], how="inner"))
    runs = pd.concat(parts, ignore_index=True)
    rows = []
    for (algo, env_map, method), group in runs.groupby([ALGO, MAP, METHOD], sort=True):
        bias = group["bias"].dropna().to_numpy(dtype=float)
        lo, hi = mean_interval(bias)
        rows.append({"algo": algo, "map": env_map, "method": method, "sparsity": float(group["_s"].iloc[0]),
                     "seeds": len(group), "q_taken": group["q_taken"].mean(),
                     "return_obtained": group["return_obtained"].mean(),
                     "bias": float(bias.mean()) if len(bias) else np.nan, "bias_lo": lo, "bias_hi": hi,
                     "bias_seeds": len(bias), "verdict": verdict(lo, hi) if len(bias) else "return not recorded"})
    order = {m: i for i, m in enumerate(METHOD_ORDER)}  # Table 1's row order
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    return out.sort_values(["algo", "map", "method"], key=lambda c: c.map(order) if c.name == "method" else c,
                           ignore_index=True)
