"""The N = 12 reward probe's table (issue 34): for each budget up to the probe's, the claims table's own reward row
(`tables.paper1_claims.reward_row`: neighbor − uniform final predators' return over seed pairs with its paired
Student-t interval, and each sampler's margin over the random policy's return at N = 12) computed on the runs' first
`budget` episodes, as if they had been trained that long (no schedule depends on the budget in paper 1's loop).

    python benchmarks/probe/summarise_reward_n12.py results/probe_p1 --out benchmarks/results/paper1_reward_n12
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from effmarl.analysis.metrics.rewards import final_rewards, learned_cells, random_floor
from effmarl.analysis.tables.paper1_claims import reward_row

N = 12


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="the probe's results_dir (paper1_reward/, skeleton/)")
    parser.add_argument("--budgets", type=int, nargs="+", default=[200, 400, 600, 800])
    parser.add_argument("--out", type=Path, required=True, help="output stem: <out>.md and <out>.csv")
    args = parser.parse_args()
    metrics = pd.read_parquet(args.results / "paper1_reward" / "metrics.summary.parquet")
    random = pd.read_parquet(args.results / "skeleton" / "metrics.summary.parquet")
    floor = random_floor(random, N)
    rows = []
    for budget in args.budgets:
        upto = metrics[metrics["episode"] < budget]
        cells = learned_cells(final_rewards(upto, team="predator"), floor[0], ["cfg.replay.sampler"])
        row = reward_row(upto, random, N)
        rows.append({"episodes": budget, "runs": upto["run_id"].nunique(),
                     **{f"{c['cfg.replay.sampler']} mean [t low]": f"{c['mean']:.1f} [{c['low']:.1f}]"
                        for _, c in cells.iterrows()},
                     "both clear the random policy": bool(cells["learned"].all()) and len(cells) == 2,
                     "reward row (neighbor − uniform)": row["ours"]})
    table = pd.DataFrame(rows)
    runs = sorted(metrics["run_id"].unique())
    commits = sorted(set(metrics["git_commit"])) if "git_commit" in metrics else []
    header = (f"# N = {N} reward probe (issue 34)\n\nMADDPG on MPE simple_tag, N = {N}, paper1_reward's settings "
              f"(lr 1e-3, batch 256 every 4 steps after 500 transitions, contiguous storage), batched learner; "
              f"{len(runs)} runs ({', '.join(runs)}) at commit(s) {', '.join(c[:7] for c in commits)}; the random "
              f"policy's predators' return at N = {N}: {floor[0]:.1f} over {floor[1]} episodes. Each row: the runs' "
              f"first `episodes` episodes, the last 20 % of them per run (paper 1's final return).\n\n"
              f"    python benchmarks/probe/summarise_reward_n12.py {args.results} --out {args.out}\n\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out.with_suffix(".csv"), index=False)
    args.out.with_suffix(".md").write_text(header + table.to_markdown(index=False) + "\n")
    print(header + table.to_markdown(index=False))


if __name__ == "__main__":
    main()
