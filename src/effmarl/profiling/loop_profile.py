"""What the rest of paper 1's training loop costs at large N, beside the update round (issue 47): the measurement
behind the claims table's verdict on the update share at N = 48.

Two measurements, each of process CPU time in this one process:

- **the environment step's parts**: `steps` steps of mpe2's simple_tag (the training loop's `backend: mpe`) under a
  uniformly random policy, with four of its functions wrapped in CPU-time accumulators — the scenario's `reward`
  (called once per agent per step; an adversary's reward tests every prey against every adversary, so the step
  runs (2N/3)²·(N/3) + (N/3)·(2N/3) collision tests: 16 896 at N = 48, in the original MPE code as in mpe2), the
  world's `step` (the physics), the scenario's `observation` and the whole step (our wrapper's `step`, PettingZoo's
  parallel wrapper included). Each part is reported as its share of the whole step's CPU time, the remainder as
  `rest` (PettingZoo's wrappers, our array gathering). Wrapping ~3N calls per step adds microseconds to a step of
  tens of milliseconds; cProfile, which charges every one of the collision tests' 3·10^6 calls, would not.
- **the sampling phase per update round at two buffer fills**: the reference storage (openai/maddpg's lists of
  tuples) filled with `fills` MPE transitions (effmarl.profiling.prefill, fresh arrays per stored transition as in
  training), one per-agent round (N × [draw B uniform indices, gather all N agents]) per fill in turn, `rounds`
  times with the order flipped every time, after one unrecorded round each: the median milliseconds per round. The
  training runs' buffers hold a few thousand transitions while their rounds run; the paper's replay holds up to 10^6.

    python -m effmarl.profiling.loop_profile --agents 48 --steps 100 --fills 2000 30000 --rounds 3 --out <stem>

writes <stem>.parquet (n_agents, measure: env_step | sampling_ms_per_round, part, fill, value, steps; with the
run-identity columns of a paper1_micro measurement), <stem>.md and <stem>.provenance.json. A speed measurement: the
workflow runs it alone (a timing rule, effmarl.studies.TIMING_RULES).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

PARTS = ("reward", "physics", "observations")


class CpuClock:
    """Accumulated process CPU seconds of the calls of the functions it wraps (`wrap`), by name."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    def wrap(self, name: str, function):
        self.seconds.setdefault(name, 0.0)

        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[name] += time.process_time() - start

        return timed


def env_parts(n_agents: int, steps: int, seed: int = 0) -> dict[str, float]:
    """Shares of the environment step's CPU time: `reward`, `physics`, `observations` and `rest` (summing to 1), and
    `step_ms` (CPU milliseconds per step), over `steps` random-policy steps of mpe2's simple_tag (module doc)."""
    from effmarl.envs import make_env

    env = make_env({"backend": "mpe", "scenario": "simple_tag", "n_agents": n_agents, "num_obstacles": 2,
                    "max_cycles": 25}, 1)
    clock = CpuClock()
    raw = env._envs[0].unwrapped  # mpe2's SimpleEnv: its scenario and world are what a step calls
    raw.scenario.reward = clock.wrap("reward", raw.scenario.reward)
    raw.scenario.observation = clock.wrap("observations", raw.scenario.observation)
    raw.world.step = clock.wrap("physics", raw.world.step)
    step = clock.wrap("step", env.step)
    rng = np.random.default_rng(seed)
    episode = 0
    env.reset(seed=seed)
    reset_s = {name: 0.0 for name in clock.seconds}
    for _ in range(steps):
        if step(rng.integers(0, 5, size=(1, n_agents))).done.all():
            before = dict(clock.seconds)
            episode += 1
            env.reset(seed=seed + episode)  # a reset observes the agents too: not part of a step
            for name in clock.seconds:
                reset_s[name] += clock.seconds[name] - before[name]
    env.close()
    spent = {name: clock.seconds[name] - reset_s[name] for name in clock.seconds}
    total = spent["step"]
    shares = {part: spent[part] / total for part in PARTS}
    shares["rest"] = 1.0 - sum(shares.values())
    return {**shares, "step_ms": 1e3 * total / steps}


def sampling_at_fills(n_agents: int, fills: list[int], rounds: int, batch: int = 1024, seed: int = 0) -> dict[int,
                                                                                                         float]:
    """Median CPU milliseconds of one per-agent sampling round (uniform draws) on the reference storage at each fill,
    the fills measured in turn, the order flipped every round (module doc)."""
    from effmarl.profiling.prefill import DISTINCT, fill, rollout
    from effmarl.replay import UniformSampler, make_storage, sampling_round

    transitions, spec = rollout(n_agents, min(max(fills), DISTINCT), seed)
    storages = {}
    for size in fills:
        storages[size] = make_storage({"storage": "reference", "buffer_size": max(fills), "backend": "torch"},
                                      spec.obs_dims, spec.n_actions)
        fill(storages[size], transitions, size)
    sampler, rng = UniformSampler(), np.random.default_rng(seed)
    times: dict[int, list[float]] = {size: [] for size in fills}
    for size in fills:  # warm-up, not recorded
        sampling_round(storages[size], sampler, rng, batch, n_agents)
    order = list(fills)
    for _ in range(rounds):
        for size in order:
            start = time.process_time()
            sampling_round(storages[size], sampler, rng, batch, n_agents)
            times[size].append(time.process_time() - start)
        order.reverse()
    return {size: 1e3 * float(np.median(values)) for size, values in times.items()}


def measure(agents: list[int], steps: int, fills: list[int], rounds: int, batch: int, seed: int) -> list[dict]:
    rows = []
    for n in agents:
        parts = env_parts(n, steps, seed)
        rows += [{"n_agents": n, "measure": "env_step", "part": part, "fill": 0, "value": parts[part],
                  "steps": steps} for part in (*PARTS, "rest")]
        rows.append({"n_agents": n, "measure": "env_step_ms", "part": "step", "fill": 0, "value": parts["step_ms"],
                     "steps": steps})
        rows += [{"n_agents": n, "measure": "sampling_ms_per_round", "part": "uniform", "fill": size, "value": ms,
                  "steps": 0} for size, ms in sampling_at_fills(n, fills, rounds, batch, seed).items()]
    return rows


def main(argv: list[str] | None = None) -> None:
    import pandas as pd
    import torch

    from effmarl import io, provenance
    from effmarl.profiling.sampling_bench import identify

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, nargs="+", default=[48])
    parser.add_argument("--steps", type=int, default=100, help="environment steps profiled")
    parser.add_argument("--fills", type=int, nargs="+", default=[2000, 30000], help="buffer fills of the sampling "
                        "rounds (transitions)")
    parser.add_argument("--rounds", type=int, default=3, help="measured sampling rounds per fill")
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--profile", default="adhoc", help="workflow profile recorded with the table (cfg.profile)")
    parser.add_argument("--out", required=True, help="output path without extension")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    rows = measure(args.agents, args.steps, sorted(set(args.fills)), args.rounds, args.batch, args.seed)
    rec = provenance.record(extra={"measurement": "loop_profile", "args": vars(args)})
    table = identify(pd.DataFrame(rows), "loop_profile", args.profile, rec)
    out = Path(args.out)
    io.write_parquet(out.with_suffix(".parquet"), table)
    io.write_json(out.with_suffix(".provenance.json"), rec)
    text = (f"Paper 1's loop beside the update round (effmarl.profiling.loop_profile): process CPU time, "
            f"{args.steps} random-policy steps of simple_tag per N, sampling rounds (per_agent, uniform, batch "
            f"{args.batch}, reference storage) at fills {', '.join(map(str, sorted(set(args.fills))))}, "
            f"{args.rounds} interleaved rounds each.\ngit {rec['git']['commit']}, {rec['hardware']['cpu_model']}.\n\n"
            + pd.DataFrame(rows).to_markdown(index=False, floatfmt=".4g") + "\n")
    io.write_text(out.with_suffix(".md"), text)
    print(text)


if __name__ == "__main__":
    main()
