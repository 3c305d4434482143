"""Issue 44's budget probe: does MAST's gap to dense on SMAX 3m close with budget? Paper 2's statistic read at several
horizons of the same runs (trained to 1 000 000 env steps, benchmarks/probe/budget_probe.yaml): per run and horizon H,
`metrics.mast.final_win_rate` over its evaluations at x <= H (the last min(20, available) in the final 10 % of H);
per method the mean over seeds with its Student-t interval; MAST / dense and MAST / RigL with Fieller's interval
(`stats.ratio_interval`), the 3 % verdict (`mast.versus_tolerance`, an equivalence: decided by the interval alone) and,
where undecided, the seeds per method that would decide it (`metrics.power`); and the value estimate against the
return obtained, Q - G over the final 10 % of H (`Learner.loss`'s q_taken_mean and return_mean).

Every horizon below the budget has the 1 M budget's schedules (epsilon annealed by 12 500 steps, TD(lambda) from
750 000, the topology's zeta annealed to 0 at 750 000), not those a run of that budget would have: a 1 M run at 250 000
is MAST without its TD(lambda) phase yet. `--own` adds runs of another budget trained with their own schedules (the
default profile's 250 000-step Table-1 runs), read at their end, as a row of their own.

    python benchmarks/probe/summarise_budget.py results/budget --own results/default \
        --out benchmarks/results/budget_probe_3m
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from effmarl.analysis.aggregate import run_table
from effmarl.analysis.metrics.mast import final_win_rate, undecided_text, versus_tolerance
from effmarl.analysis.metrics.power import needed_text, seeds_needed
from effmarl.analysis.metrics.stats import mean_interval, ratio_interval
from effmarl.analysis.metrics.table1 import ratio_verdict

HORIZONS = (250_000, 500_000, 1_000_000)
FINAL = 0.1  # the value statistics' window: the final 10 % of the horizon
NAMES = {"dense": "Dense", "mast": "MAST", "rigl": "RigL", "rlx2": "RLx2", "static": "SS", "set": "SET",
         "tiny": "Tiny"}


def method_of(frame: pd.DataFrame) -> str:
    return str(frame["cfg.sparse.method"].iloc[0])


def at_horizon(frame: pd.DataFrame, horizon: int) -> dict | None:
    """The run's statistic and value bias at `horizon` (None where the run has not reached it)."""
    evals = frame[frame["test_win_rate"].notna()]
    if evals.empty or evals["env_steps"].max() < horizon * 0.999:
        return None
    cut = frame[frame["env_steps"] <= horizon]
    win = float(final_win_rate(cut)["win_rate"].iloc[0])
    late = cut[(cut["env_steps"] >= (1 - FINAL) * horizon) & cut["q_taken_mean"].notna()]
    bias = (late["q_taken_mean"].mean() - late["return_mean"].mean()) if len(late) and "return_mean" in late \
        else np.nan
    return {"win_rate": win, "bias": float(bias)}


def runs_in(root: Path, horizons, own: bool = False) -> pd.DataFrame:
    rows = []
    for metrics in sorted(root.glob("*/*/metrics.parquet")):
        run = metrics.parent
        if not (run / "provenance.json").is_file():
            continue
        frame = run_table(metrics)
        method = method_of(frame)
        sparsity = 0.0 if method == "dense" else round(float(frame["cfg.sparse.sparsity"].iloc[0]), 6)
        budget = int(frame["cfg.budget.env_steps"].iloc[0])
        for horizon in ([budget] if own else horizons):
            value = at_horizon(frame, horizon)
            if value is not None:
                rows.append({"run": f"{root.name}/{run.parent.name}/{run.name}", "method": method,
                             "sparsity": sparsity, "seed": int(frame["cfg.seed"].iloc[0]), "budget": budget,
                             "horizon": horizon, "schedules": "own budget's" if own else f"{budget:,} budget's",
                             "commit": str(frame["git_commit"].iloc[0])[:7], **value})
    return pd.DataFrame(rows)


def _interval(lo, hi, digits: int = 3) -> str:
    return "no interval" if np.isnan(lo) else f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def table(runs: pd.DataFrame, sparsity: float) -> pd.DataFrame:
    out = []
    for (horizon, schedules), at in runs.groupby(["horizon", "schedules"], sort=True):
        values = {m: at[(at["method"] == m) & (np.isclose(at["sparsity"], 0.0 if m == "dense" else sparsity))]
                  .sort_values("seed") for m in ("dense", "mast", "rigl")}
        row = {"horizon": horizon, "schedules": schedules}
        for m, frame in values.items():
            v = frame["win_rate"].to_numpy(dtype=float)
            lo, hi = mean_interval(v)
            row[NAMES[m]] = f"{v.mean():.3f} {_interval(lo, hi)} ({len(v)})" if len(v) else "not run"
            row[f"{NAMES[m]} Q − G"] = f"{np.nanmean(frame['bias']):+.3f}" if frame["bias"].notna().any() else ""
        mast, dense, rigl = (values[m]["win_rate"].to_numpy(dtype=float) for m in ("mast", "dense", "rigl"))
        if len(mast) and len(dense):
            lo, hi = ratio_interval(mast, dense)
            point = mast.mean() / dense.mean()
            verdict = versus_tolerance(point, lo, hi)
            need = np.nan if not verdict.startswith("undecided") else seeds_needed(mast, dense, 0.97)
            row["MAST / dense"] = f"{point:.3f} {_interval(lo, hi)}: {undecided_text(verdict, need, len(mast))}"
        if len(mast) and len(rigl):
            lo, hi = ratio_interval(mast, rigl)
            verdict = ratio_verdict(lo, hi)
            need = needed_text(seeds_needed(mast, rigl, 1.0), len(mast)) if verdict.startswith("undecided") else ""
            text = f"{mast.mean() / rigl.mean():.3f} {_interval(lo, hi)}"
            row["MAST / RigL"] = text if np.isnan(lo) else f"{text}: {verdict}" + (f": {need}" if need else "")
        out.append(row)
    return pd.DataFrame(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="the probe's results directory (results/budget)")
    parser.add_argument("--own", help="a results directory of runs read at their own budget (results/default)")
    parser.add_argument("--sparsity", type=float, default=0.99)
    parser.add_argument("--out", required=True, help="output stem: writes <out>.csv (per run) and <out>_table.md")
    args = parser.parse_args()
    runs = runs_in(Path(args.results), HORIZONS)
    if args.own:
        own = runs_in(Path(args.own), HORIZONS, own=True)
        runs = pd.concat([runs, own[own["method"].isin(["dense", "mast", "rigl"])]], ignore_index=True)
    runs.to_csv(f"{args.out}.csv", index=False)
    frame = table(runs, args.sparsity).fillna("")
    commits = ", ".join(sorted(set(runs["commit"]))) if len(runs) else "none"
    text = (frame.to_markdown(index=False) + f"\n\nRuns trained at commit(s) {commits}; cells give the mean over seeds "
            "[95 % t] (seeds); ratios Fieller's 95 % interval.\n")
    Path(f"{args.out}_table.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
