"""Summarise the MAST benchmark: dense vs RigL vs MAST QMIX runs side by side - win-rate curves, final win rates,
FLOPs and size ratios from the final masks, and each run's wall time.

    python benchmarks/summarise_mast.py results/bench/mast_smax_3m --stem benchmarks/results/mast_smax_3m

RUN_ROOT holds one run directory per method (dense/, rigl/, mast/). Writes <stem>.csv (curves, long format),
<stem>.png (curves) and <stem>.md (tables, command, provenance).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

LAST = 3  # evaluations averaged for the final win rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--stem", type=Path, required=True)
    args = parser.parse_args()
    runs = [d for d in sorted(args.root.iterdir()) if (d / "provenance.json").exists()]
    order = {"dense": 0, "tiny": 1, "static": 2, "set": 3, "rigl": 4, "rlx2": 5, "mast": 6}
    runs.sort(key=lambda d: order.get(d.name, 99))
    curves, rows = [], []
    for run in runs:
        metrics = pd.read_parquet(run / "metrics.parquet")
        sparsity = pd.read_parquet(run / "sparsity.parquet").iloc[0]
        schedule = json.loads((run / "schedule.json").read_text())
        curves.append(metrics.assign(method=run.name)[["method", "env_steps", "updates", "test_win_rate",
                                                       "test_return", "train_return", "loss", "wall_s"]])
        rows.append({"method": run.name, "sparsity": 0.0 if run.name == "dense" else sparsity["sparsity"],
                     "size (weights)": int(sparsity["size"]), "size ratio": sparsity["size_ratio"],
                     "train FLOPs ratio": sparsity["train_flops_ratio"],
                     "inference FLOPs ratio": sparsity["inference_flops_ratio"],
                     f"final win rate (last {LAST} evals)": metrics["test_win_rate"].tail(LAST).mean(),
                     "best win rate": metrics["test_win_rate"].max(),
                     "env steps": int(metrics["env_steps"].iloc[-1]), "updates": int(metrics["updates"].iloc[-1]),
                     "topology updates": int(metrics["topology_updates"].iloc[-1]) if "topology_updates" in metrics
                     else 0, "wall s": round(float(metrics["wall_s"].iloc[-1])),
                     "components": ", ".join(k for k, v in schedule["components"].items() if v) or "-"})
    curve = pd.concat(curves, ignore_index=True)
    table = pd.DataFrame(rows)
    args.stem.parent.mkdir(parents=True, exist_ok=True)
    curve.to_csv(args.stem.with_suffix(".csv"), index=False)

    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for method, data in curve.groupby("method", sort=False):
        ax.plot(data["env_steps"], data["test_win_rate"], marker="o", ms=3, label=method)
    ax.set_xlabel("environment steps")
    ax.set_ylabel("test win rate (32 greedy episodes)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("QMIX on SMAX 3m, 90 % sparsity, per-agent networks")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.stem.with_suffix(".png"), dpi=120)

    prov = json.loads((runs[0] / "provenance.json").read_text())
    schedule = json.loads((runs[-1] / "schedule.json").read_text())
    curve["evaluation"] = curve.groupby("method", sort=False).cumcount()  # runs evaluate at nearby, not equal, steps
    wide = curve.pivot_table(index="evaluation", columns="method", values="test_win_rate", sort=False)
    wide.insert(0, "env_steps (approx.)", curve.groupby("evaluation")["env_steps"].min().round(-3).astype(int))
    lines = ["# Dense vs RigL vs MAST QMIX on SMAX 3m at 90 % sparsity: benchmark runs", "",
             "Command: `benchmarks/run_mast_smax_3m.sh` (= for m in dense rigl mast: `nice -n 10 effmarl train "
             "--config benchmarks/mast_smax_3m.yaml --out results/bench/mast_smax_3m/$m --set sparse.method=$m`, "
             "dense and rigl side by side, then mast), then "
             f"`python benchmarks/summarise_mast.py {args.root} --stem {args.stem}`.",
             f"Commit {prov.get('git', {}).get('commit', '?')}, seed 0, 2 shared CPU cores, torch threads 1.", "",
             "Every method uses per-agent (unshared) agent networks, the dense reference included, so sizes and "
             "FLOPs compare like for like. Ratios are sparse / dense of that same layout, from the final masks "
             "with the paper's formulas (size = weights, biases excluded; training FLOPs per iteration of "
             "batch 32 episodes x 60 steps; inference = the agent networks).",
             f"Schedules scaled to the 100 000-step budget (x{schedule['schedule_scale']}): epsilon anneal "
             f"{schedule['epsilon_anneal_time']} steps, delta_m {schedule['delta_m']} updates, MAST's T0 "
             f"{schedule['burn_in_env_steps']} env steps.", "",
             "## Summary", "", table.to_markdown(index=False, floatfmt=".4g"), "",
             "## Test win rate by evaluation", "", "![curves](" + args.stem.with_suffix(".png").name + ")", "",
             wide.reset_index(drop=True).to_markdown(index=False, floatfmt=".3g"), ""]
    args.stem.with_suffix(".md").write_text("\n".join(lines))
    print(table.to_string())


if __name__ == "__main__":
    main()
