"""The sparsity probe's table (issue 35): per method and sparsity, each seed's final win rate (paper 2's statistic,
`metrics.mast.final_win_rate`), their mean with its Student-t interval, and mean / dense with its interval, against
the default profile's dense QMIX on SMAX 3m at the same budget (benchmarks/results/qmix_curve_dense_default_250k_3m.csv,
3 seeds). A method "falls below dense" where the whole ratio interval lies under 0.97; "holds" where the whole interval
lies above it; otherwise the verdict is undecided at this many seeds.

    python benchmarks/probe/summarise_probe.py results/probe --out benchmarks/results/sparsity_probe_3m
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from effmarl.analysis.aggregate import run_table
from effmarl.analysis.metrics.mast import final_win_rate
from effmarl.analysis.metrics.stats import mean_interval, ratio_interval

DENSE = Path(__file__).resolve().parents[1] / "results" / "qmix_curve_dense_default_250k_3m.csv"
NAMES = {"mast": "MAST", "static": "SS", "set": "SET", "rigl": "RigL", "dense": "Dense"}
TOLERANCE = 0.97


def dense_runs() -> pd.DataFrame:
    """Dense's per-run statistic from its evaluations (run_id, env_steps, test_win_rate; eval_every 800)."""
    curve = pd.read_csv(DENSE)
    curve["cfg.qmix.eval_every"] = 800
    final = final_win_rate(curve)
    final["method"], final["sparsity"] = "dense", 0.0
    return final[["run_id", "method", "sparsity", "win_rate"]]


def probe_runs(root: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each finished probe run's statistic (a run is finished when its provenance.json exists), and how far each
    unfinished run has got."""
    finished, progress = [], []
    for run in sorted(root.glob("*/*/config.yaml")):
        run = run.parent
        if (run / "provenance.json").is_file():
            frame = run_table(run / "metrics.parquet")
            final = final_win_rate(frame)
            finished.append(final.assign(method=frame["cfg.sparse.method"].iloc[0],
                                         sparsity=float(frame["cfg.sparse.sparsity"].iloc[0]),
                                         seed=int(frame["cfg.seed"].iloc[0]), commit=frame["git_commit"].iloc[0]))
        else:
            progress.append({"run": f"{run.parent.name}/{run.name}"})
    columns = ["run_id", "method", "sparsity", "seed", "win_rate", "commit"]
    runs = pd.concat(finished)[columns] if finished else pd.DataFrame(columns=columns)
    return runs, pd.DataFrame(progress, columns=["run"])


def table(runs: pd.DataFrame, dense: pd.DataFrame) -> pd.DataFrame:
    ref = dense["win_rate"].to_numpy(dtype=float)
    rows = [{"method": "Dense", "sparsity": 0.0, "seeds": len(ref), "per_seed": ref, "mean": ref.mean(),
             "interval": mean_interval(ref), "ratio": 1.0, "ratio_interval": (np.nan, np.nan), "verdict": ""}]
    for (method, sparsity), group in runs.groupby(["method", "sparsity"], sort=True):
        v = group.sort_values("seed")["win_rate"].to_numpy(dtype=float)
        lo, hi = ratio_interval(v, ref)
        verdict = ("falls below dense" if hi < TOLERANCE else "holds (within 3 %)" if lo >= TOLERANCE
                   else "undecided")
        rows.append({"method": NAMES.get(method, method), "sparsity": sparsity, "seeds": len(v), "per_seed": v,
                     "mean": v.mean(), "interval": mean_interval(v), "ratio": v.mean() / ref.mean(),
                     "ratio_interval": (lo, hi), "verdict": verdict})
    return pd.DataFrame(rows)


def markdown(frame: pd.DataFrame, runs: pd.DataFrame, progress: pd.DataFrame) -> str:
    def pair(x):
        return "" if np.isnan(x[0]) else f"[{x[0]:.3f}, {x[1]:.3f}]"

    lines = ["| method | sparsity | seeds | per seed | mean [95 % t-interval] | / dense [95 % interval] | verdict |",
             "|---|---|---|---|---|---|---|"]
    for r in frame.itertuples():
        lines.append(f"| {r.method} | {r.sparsity:.2f} | {r.seeds} | {', '.join(f'{x:.3f}' for x in r.per_seed)} | "
                     f"{r.mean:.3f} {pair(r.interval)} | {r.ratio:.3f} {pair(r.ratio_interval)} | {r.verdict} |")
    commits = ", ".join(sorted(set(runs["commit"].str[:7]))) or "none"
    left = ", ".join(progress["run"]) if len(progress) else "none"
    return "\n".join([*lines, "", f"Probe runs trained at commit(s) {commits}; runs not finished: {left}."])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="the probe's results_dir (results/probe)")
    parser.add_argument("--out", required=True, help="output stem: writes <out>.csv (per run) and <out>_table.md")
    args = parser.parse_args()
    runs, progress = probe_runs(Path(args.results))
    dense = dense_runs()
    frame = table(runs, dense)
    pd.concat([dense.assign(seed=dense["run_id"].str[-1].astype(int), commit="default run"), runs]).to_csv(
        f"{args.out}.csv", index=False)
    Path(f"{args.out}_table.md").write_text(markdown(frame, runs, progress) + "\n")
    print(markdown(frame, runs, progress))


if __name__ == "__main__":
    main()
