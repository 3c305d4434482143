"""Throughput of the batched SMAX environment alone (no learner): env steps per second at several batch
sizes, measured interleaved (A B C A B C ...) in one process so that load from other jobs hits all alike.

    python benchmarks/smax_env_throughput.py --map 3m --num-envs 1 8 32 --rounds 3 --steps 200

Counts only the steps of copies still in their episode (finished copies are frozen but still computed).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from effmarl.envs import make_env


def measure(env, steps: int, rng: np.random.Generator, seed: int) -> tuple[int, float]:
    step = env.reset(seed=seed)
    live, t0 = 0, time.perf_counter()
    active = np.ones(env.num_envs, bool)
    for _ in range(steps):
        av = step.avail_actions
        actions = (rng.random(av.shape) * av).argmax(-1)  # uniform over available actions
        step = env.step(actions)
        live += int(active.sum())
        active &= ~step.done
        if not active.any():
            seed += env.num_envs
            step = env.reset(seed=seed)
            active[:] = True
    return live, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map", default="3m")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=200, help="env calls per measurement")
    args = parser.parse_args()
    envs = {n: make_env({"backend": "smax", "map": args.map}, num_envs=n) for n in args.num_envs}
    rng = np.random.default_rng(0)
    for env in envs.values():  # compile and warm up
        measure(env, 5, rng, 0)
    totals = {n: [0, 0.0] for n in envs}
    for r in range(args.rounds):
        for n, env in envs.items():
            live, secs = measure(env, args.steps, rng, 1000 * r)
            totals[n][0] += live
            totals[n][1] += secs
    print("| num_envs | env steps/s (live copies) | env calls/s |")
    print("|---:|---:|---:|")
    for n, (live, secs) in totals.items():
        print(f"| {n} | {live / secs:.0f} | {args.rounds * args.steps / secs:.0f} |")


if __name__ == "__main__":
    main()
