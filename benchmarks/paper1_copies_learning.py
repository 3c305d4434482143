"""Does paper 1's fast loop learn as well with E environment copies as with one? The learning test's configuration
(tests/test_paper1_algos.py: MADDPG and MASAC, 3 agents, batched learner, shared batch, `mpe_vec`, 600 episodes,
one round of batch 256 per 4 transitions counted over all copies) trained with `env.num_envs` = E for several
seeds, against the random policy of the same seeds.

    python benchmarks/paper1_copies_learning.py --out benchmarks/results/paper1_copies_learning
        [--algos maddpg masac] [--copies 1 4 8] [--seeds 0 1 2 3 4] [--jobs 2]

Per run: the predator team's mean return over the run's second half (the learning test's statistic). Per
(algorithm, E): the mean over seeds with its 95 % percentile-bootstrap interval, the ratio of means to E = 1
(stratified bootstrap: seeds resampled within each E), the probability that a run with E copies beats a run
with one (rliable's probability of improvement), and how many runs clear the learning test's bar (random
policy + 5). Every run trains in its own spawned process, single-threaded, `--jobs` at a time; E changes which
episodes are played together, not how many transitions or update rounds a run gets. Writes <out>.csv (one row
per run) and <out>.md (the summary, with the command, commit and machine)."""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from effmarl import provenance
from effmarl.analysis.metrics.stats import bootstrap_ci, probability_of_improvement, ratio_ci
from effmarl.config import validate

TESTS = Path(__file__).resolve().parents[1] / "tests"


def _learning_test():
    """The learning test's module: its configuration, budget, window and bar are the ones measured here."""
    sys.path.insert(0, str(TESTS))
    import test_paper1_algos

    return test_paper1_algos


def run_one(algo: str, copies: int, seed: int) -> dict:
    from effmarl.train import train

    lt = _learning_test()
    if algo == "random":
        cfg = {"study": "bench", "algo": "random", "seed": seed, "env": {"backend": "mpe_vec", "n_agents": 3},
               "budget": {"episodes": lt.LEARN_EPISODES}}
    else:
        cfg = {**lt.learning_config(algo, copies), "seed": seed}
    window = range(lt.LEARN_EPISODES - lt.LAST, lt.LEARN_EPISODES)
    with tempfile.TemporaryDirectory() as tmp:
        train(validate(cfg, part="run"), Path(tmp) / "run")
        returns = lt.predator_returns(Path(tmp) / "run", window)
    return {"algo": algo, "num_envs": copies, "seed": seed, "second_half_return": float(returns.mean())}


def summarise(table: pd.DataFrame, margin: float) -> pd.DataFrame:
    floor = table[table.algo == "random"]["second_half_return"].to_numpy()
    rows = [{"algo": "random", "num_envs": 1, "seeds": len(floor), "mean": floor.mean(),
             "ci95": _interval(*bootstrap_ci(floor))}]
    bar = floor.mean() + margin
    for (algo, copies), runs in table[table.algo != "random"].groupby(["algo", "num_envs"]):
        values = runs["second_half_return"].to_numpy()
        one = table[(table.algo == algo) & (table.num_envs == 1)]["second_half_return"].to_numpy()
        rows.append({"algo": algo, "num_envs": copies, "seeds": len(values), "mean": values.mean(),
                     "ci95": _interval(*bootstrap_ci(values)), "vs_E1": values.mean() / one.mean(),
                     "vs_E1_ci95": _interval(*ratio_ci(values, one, statistic=np.mean)),
                     "P(E run > E=1 run)": probability_of_improvement(values, one),
                     f"runs >= random + {margin:g}": f"{int((values >= bar).sum())}/{len(values)}"})
    return pd.DataFrame(rows)


def _interval(lo, hi) -> str:
    return f"[{lo:.1f}, {hi:.1f}]" if np.isfinite(lo) else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--algos", nargs="+", default=["maddpg", "masac"], choices=["maddpg", "masac"])
    parser.add_argument("--copies", nargs="+", type=int, default=[1, 4, 8])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if 1 not in args.copies:
        parser.error("--copies must include 1 (the ratios are to one copy)")
    lt = _learning_test()
    if any(lt.LEARN_EPISODES % e for e in args.copies):
        parser.error(f"--copies: each must divide the learning test's {lt.LEARN_EPISODES} episodes")
    jobs = [("random", 1, s) for s in args.seeds]
    jobs += [(a, e, s) for s in args.seeds for a in args.algos for e in args.copies]
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=ctx) as pool:
        rows = list(pool.map(run_one, *zip(*jobs, strict=True)))
    table = pd.DataFrame(rows)
    summary = summarise(table, lt.MARGIN)
    rec = provenance.record()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out.with_suffix(".csv"), index=False)
    out.with_suffix(".md").write_text(
        f"# Learning with environment copies: the learning test's configuration, E = "
        f"{', '.join(map(str, args.copies))}, seeds {', '.join(map(str, args.seeds))}\n\n"
        f"Predator team return over the second half of {lt.LEARN_EPISODES} episodes, per run; mean over seeds "
        f"[95 % bootstrap interval]. {rec['hardware']['cpu_model']}, commit {rec['git']['commit']}; command: "
        f"`python benchmarks/paper1_copies_learning.py --out {args.out} --algos {' '.join(args.algos)} --copies "
        f"{' '.join(map(str, args.copies))} --seeds {' '.join(map(str, args.seeds))} --jobs {args.jobs}`\n\n"
        + summary.to_markdown(index=False, floatfmt=".2f") + "\n\nPer run: `" + out.with_suffix(".csv").name + "`\n")
    print(summary.to_string())


if __name__ == "__main__":
    main()
