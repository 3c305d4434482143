"""Summarise a qmix-family run: the evaluation curve and, from the same run's phase timings, the batched
environment's own throughput beside the learner's, so the reader sees which one bounds training.

    python benchmarks/summarise_qmix.py results/bench/qmix_smax_3m --stem benchmarks/results/qmix_smax_3m

writes <stem>.csv (the curve) and <stem>.md (curve, throughput, command, provenance).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

LEARNER = ["sampling", "learner_forward", "learner_backward", "target_update"]
ACTING = ["env_step", "action_selection", "buffer_add"]


def throughput(metrics: pd.DataFrame, phases: pd.DataFrame) -> pd.DataFrame:
    seconds = phases.groupby("phase")["seconds"].sum()
    steps, updates = int(metrics["env_steps"].iloc[-1]), int(metrics["updates"].iloc[-1])
    learner_s = float(seconds.reindex(LEARNER).fillna(0).sum())
    acting_s = float(seconds.reindex(ACTING).fillna(0).sum())
    rows = [
        ("batched SMAX env alone (env_step phase)", steps / seconds["env_step"], "env steps/s"),
        ("acting: env + action selection + buffer add", steps / acting_s, "env steps/s"),
        ("learner: sampling + forward + backward + target update", updates / learner_s, "updates/s"),
        ("learner, at this run's update ratio", steps / learner_s, "env steps/s"),
        ("whole run, wall clock (incl. evaluation, checkpoints)", steps / metrics["wall_s"].iloc[-1], "env steps/s"),
    ]
    table = pd.DataFrame(rows, columns=["what", "rate", "unit"])
    table["rate"] = table["rate"].round(1)
    shares = (seconds / seconds.sum() * 100).round(1).rename("share_%").reset_index()
    return table, shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--stem", required=True)
    args = parser.parse_args()
    run = Path(args.run_dir)
    metrics = pd.read_parquet(run / "metrics.parquet")
    phases = pd.read_parquet(run / "phases.parquet")
    prov = json.loads((run / "provenance.json").read_text())
    curve = metrics[["env_steps", "episodes", "updates", "epsilon", "test_win_rate", "test_return",
                     "test_episode_length", "train_return", "train_win_rate", "loss", "wall_s"]].round(4)
    stem = Path(args.stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    curve.to_csv(stem.with_suffix(".csv"), index=False)
    rates, shares = throughput(metrics, phases)
    cfg = prov["config"]
    best = curve.loc[curve["test_win_rate"].idxmax()]
    hw = prov["hardware"]
    lines = [
        f"# {cfg['algo']} on SMAX {cfg['env']['map']}: benchmark run",
        "",
        f"Command: `benchmarks/run_qmix_smax_3m.sh` (= `nice -n 10 effmarl train --config "
        f"benchmarks/qmix_smax_3m.yaml --out {run}`), commit {prov['git']['commit']}"
        f"{' (dirty)' if prov['git']['dirty'] else ''}, seed {cfg['seed']}, "
        f"{hw['cpu_model']}, {hw['usable_cores']} cores shared with other jobs, torch threads {hw['torch_threads']}.",
        "",
        f"Final test win rate {curve['test_win_rate'].iloc[-1]:.3f} at {int(curve['env_steps'].iloc[-1])} env steps; "
        f"best {best['test_win_rate']:.3f} at {int(best['env_steps'])} steps "
        f"({cfg['qmix']['eval_episodes']} greedy episodes per evaluation). Wall time {curve['wall_s'].iloc[-1]:.0f} s.",
        "",
        "## Evaluation curve",
        "",
        curve.to_markdown(index=False),
        "",
        "## Throughput (one run, from its phase timings)",
        "",
        rates.to_markdown(index=False),
        "",
        "Share of timed phases:",
        "",
        shares.to_markdown(index=False),
        "",
    ]
    stem.with_suffix(".md").write_text("\n".join(lines))
    print(stem.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
