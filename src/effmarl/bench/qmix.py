"""`effmarl bench qmix`: the paper-2 engine's speed, measured side by side in one process.

Rows (each a median over `--repeats` timed blocks after a warm-up that also compiles):
  acting      env steps/s of collection alone (learning off, ε = 0.5, `--envs` copies per seed): the Python
              reference runner (one Python step at a time) vs the jitted SMAX runner, 1 seed and S seeds
  training    env steps/s and updates/s of collection + learning, dense and MAST at `--sparsity`, 1 seed and S
              seeds in lockstep, at PyMARL's parallel-runner ratio (one update per collected episode batch) and at
              one update per collected episode; `lockstep_cost` = wall time of S seeds ÷ wall time of 1 seed for
              the same number of rounds
  mask_work   a stacked update of MAST vs dense with the same per-agent layout and MAST's other parts (Soft
              Mellowmax, hybrid TD(λ), dual buffer) switched on in both (1 seed), averaged over blocks of 2·Δm
              updates: the mask work's share (gradient masking, re-zeroing, optimiser-state resets, topology
              evolution every `--delta-m` updates) of a dense update's time
  update      seconds per learner update (sampling, loss, backward, clipping, RMSprop, masks), 1 seed, dense and
              MAST at `--sparsity`, `--envs` updates per round (one per collected episode, the default profile's
              ratio), three unrolls on the same learner and buffer: `reference` (bench.unrolls.reference_unroll,
              the learner before its optimisation), `agent_major` (agent-major products and the hand-written
              recurrence backward over every padded step, bench.unrolls.padded_unroll) and `packed` (the
              default: steps past an episode's end skipped); timed in alternating blocks of `--rounds` rounds (the
              fastest of `--repeats` blocks each: on a shared machine the least disturbed one); `speedup` =
              reference ÷ path; vs_packed_cpu = packed CPU seconds ÷ the path's CPU seconds (core-seconds, so a
              path that uses both cores is not flattered); us_per_agent_timestep = seconds per update ÷ (agents ×
              the mean transitions of a sampled batch); forward_s / backward_step_s: the loop's learner_forward and
              learner_backward (backward, masks, clipping, RMSprop) phases per update in that block
Everything runs through the training loop's own functions (algos/qmix/run.py), on SMAX `--map`, `--device`.
Writes <out>.{csv,md,provenance.json}.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

CAPTION = ("Paper-2 engine benchmark (effmarl bench qmix): acting throughput of the Python and the jitted SMAX "
           "runner, training throughput of 1 and S seeds in lockstep (dense and MAST), and MAST's mask work against "
           "a dense update, measured side by side in one run.")


def _cfg(args, method: str, updates_per_round: int, runner: str, seed: int = 0, mast_parts: bool = False) -> dict:
    """A bench run config; mast_parts switches MAST's non-mask parts (Soft Mellowmax, hybrid TD(λ), dual buffer)
    on whatever the method, so that a dense run differs from a MAST run in its masks alone."""
    from effmarl.config import validate

    parts = {"mellowmax": {"enabled": True}, "mast": {"td_lambda": {"enabled": True},
                                                      "dual_buffer": {"enabled": True}}} if mast_parts else {}
    return validate({**parts, "study": "bench", "algo": "qmix", "seed": seed, "device": args.device,
                     "threads": args.threads,
                     "env": {"backend": "smax", "map": args.map}, "budget": {"env_steps": 10**9},
                     "sparse": {"method": method, "sparsity": args.sparsity, "delta_m": args.delta_m},
                     "qmix": {"num_envs": args.envs, "eval_episodes": args.envs, "runner": runner,
                              "updates_per_round": updates_per_round, "shared_params": False,
                              "batch_size": args.batch_size, "buffer_size": max(5000, args.batch_size),
                              "scale_schedules": False}}, part="run")


def _seeds(cfg: dict, n_seeds: int, root: Path):
    """The training loop's own objects for n_seeds seeds of cfg: (seeds, stack, runner, timer)."""
    import torch

    from effmarl import harness
    from effmarl.algos.qmix.lockstep import SeedStack
    from effmarl.algos.qmix.run import SeedRun
    from effmarl.algos.qmix.runner import make_runner
    from effmarl.profiling.phases import PhaseTimer
    from effmarl.runs import RunDir

    process = harness.Process(cfg["device"])  # the loop's device; its stop signals are not installed here
    timer = PhaseTimer(sync=torch.cuda.synchronize if process.device.type == "cuda" else None)
    runner = make_runner(cfg, n_seeds, process.device, timer)
    cfgs = [{**cfg, "seed": s} for s in range(n_seeds)]
    seeds = [SeedRun(c, RunDir(root / f"seed{c['seed']}", c), runner.spec, process, timer) for c in cfgs]
    return seeds, SeedStack([s.learner for s in seeds]), runner, timer


def _timed(block, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        block()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def acting(args, root: Path) -> list[dict]:
    from effmarl.algos.qmix.run import collect_round

    rows = []
    for runner in ("python", "jax"):
        for n_seeds in sorted({1, args.seeds}):
            seeds, _, run, _ = _seeds(_cfg(args, "dense", 1, runner), n_seeds, root / f"act-{runner}-{n_seeds}")
            for s in seeds:
                s.counters["env_steps"] = s.schedule["epsilon_anneal_time"] // 2  # ε = 0.5-ish
            active = list(range(n_seeds))
            collect_round(seeds, run, active)  # warm-up (compiles)
            before = sum(s.counters["env_steps"] for s in seeds)
            seconds = _timed(lambda seeds=seeds, run=run, active=active: [collect_round(seeds, run, active)
                                                                           for _ in range(args.rounds)], args.repeats)
            steps = (sum(s.counters["env_steps"] for s in seeds) - before) / args.repeats
            rows.append({"measure": "acting", "runner": runner, "method": "-", "seeds": n_seeds,
                         "updates_per_round": 0, "env_steps_per_s": steps / seconds, "updates_per_s": 0.0,
                         "seconds_per_round": seconds / args.rounds})
    return rows


def training(args, root: Path) -> list[dict]:
    from effmarl.algos.qmix.run import collect_round, update_round

    rows = []
    for method in ("dense", "mast"):
        for ratio in args.updates_per_round or sorted({1, args.envs}):
            per_seed = {}
            for n_seeds in sorted({1, args.seeds}):
                cfg = _cfg(args, method, ratio, "jax")
                seeds, stack, run, timer = _seeds(cfg, n_seeds, root / f"train-{method}-{ratio}-{n_seeds}")
                active = list(range(n_seeds))
                while not seeds[0].buffer.can_sample(cfg["qmix"]["batch_size"]):
                    collect_round(seeds, run, active)

                def block(seeds=seeds, stack=stack, run=run, timer=timer, active=active):
                    for _ in range(args.rounds):
                        collect_round(seeds, run, active)
                        update_round(seeds, stack, timer, active)

                block()  # warm-up
                steps0 = sum(s.counters["env_steps"] for s in seeds)
                updates0 = sum(s.counters["updates"] for s in seeds)
                seconds = _timed(block, args.repeats)
                steps = (sum(s.counters["env_steps"] for s in seeds) - steps0) / args.repeats
                updates = (sum(s.counters["updates"] for s in seeds) - updates0) / args.repeats
                per_seed[n_seeds] = seconds
                rows.append({"measure": "training", "runner": "jax", "method": method, "seeds": n_seeds,
                             "updates_per_round": ratio, "env_steps_per_s": steps / seconds,
                             "updates_per_s": updates / seconds, "seconds_per_round": seconds / args.rounds,
                             "lockstep_cost": seconds / per_seed[1]})
    return rows


def mask_work(args, root: Path) -> list[dict]:
    """Median time of one stacked update (forward, backward, step) for dense and MAST, same layout, 1 seed."""
    from effmarl.algos.qmix.run import collect_round, update_round

    times = {}
    for method in ("dense", "mast"):
        cfg = _cfg(args, method, 1, "jax", mast_parts=True)
        seeds, stack, run, timer = _seeds(cfg, 1, root / f"mask-{method}")
        while not seeds[0].buffer.can_sample(cfg["qmix"]["batch_size"]):
            collect_round(seeds, run, [0])
        update_round(seeds, stack, timer, [0])  # warm-up
        per_block = 2 * args.delta_m  # two topology updates per block: the evolution's cost amortised

        def block(seeds=seeds, stack=stack, timer=timer, per_block=per_block):
            for _ in range(per_block):
                update_round(seeds, stack, timer, [0])

        times[method] = _timed(block, args.repeats) / per_block
    return [{"measure": "mask_work", "runner": "-", "method": m, "seeds": 1, "updates_per_round": 1,
             "env_steps_per_s": float("nan"), "updates_per_s": 1.0 / t, "seconds_per_round": t,
             "mask_work_share": t / times["dense"] - 1.0} for m, t in times.items()]


def update(args, root: Path) -> list[dict]:
    """Seconds (wall and CPU) per update of the reference, the padded agent-major and the packed (the training
    loop's) learner unroll, side by side (alternating blocks)."""
    from contextlib import nullcontext

    from effmarl.algos.qmix.run import collect_round, update_round
    from effmarl.bench.unrolls import padded_unroll, reference_unroll, use_unroll

    rows = []
    for method in ("dense", "mast"):
        cfg = _cfg(args, method, args.envs, "jax")
        seeds, stack, run, timer = _seeds(cfg, 1, root / f"update-{method}")
        template = stack.template  # the stack evaluates every seed's loss through this learner's modules
        contexts = {"reference": lambda t=template: use_unroll(t, reference_unroll),
                    "agent_major": lambda t=template: use_unroll(t, padded_unroll), "packed": nullcontext}
        while not seeds[0].buffer.can_sample(cfg["qmix"]["batch_size"]):
            collect_round(seeds, run, [0])
        for _ in range(args.rounds):  # a buffer of several rounds, as a run samples from
            collect_round(seeds, run, [0])
        alive, transitions = alive_share(seeds[0].buffer, cfg["qmix"]["batch_size"], with_transitions=True)
        agent_steps = transitions * run.spec.n_agents  # agent-timesteps of one sampled batch
        times = {path: [] for path in contexts}  # per block: (wall, cpu, {phase: seconds}) per update
        updates = args.rounds * args.envs
        for repeat in range(args.repeats + 1):  # the first pass is a warm-up
            for path in times:
                with contexts[path]():
                    mark, start, cpu = timer.mark(), time.perf_counter(), time.process_time()
                    for _ in range(args.rounds):
                        update_round(seeds, stack, timer, [0])
                    if repeat:
                        phases = {r["phase"]: r["seconds"] / updates for r in timer.since(mark)}
                        times[path].append(((time.perf_counter() - start) / updates,
                                            (time.process_time() - cpu) / updates, phases))
        best = {path: min(blocks, key=lambda b: b[0]) for path, blocks in times.items()}  # least disturbed block
        for path, (t, cpu, phases) in best.items():
            rows.append({"measure": "update", "runner": "-", "method": method, "seeds": 1,
                         "updates_per_round": args.envs, "env_steps_per_s": float("nan"), "updates_per_s": 1.0 / t,
                         "seconds_per_round": t * args.envs, "path": path, "seconds_per_update": t,
                         "cpu_seconds_per_update": cpu, "us_per_agent_timestep": 1e6 * t / agent_steps,
                         "forward_s": phases.get("learner_forward", float("nan")),
                         "backward_step_s": phases.get("learner_backward", float("nan")),
                         "speedup": best["reference"][0] / t, "vs_packed_cpu": best["packed"][1] / cpu,
                         "alive_share": alive})
    return rows


def alive_share(buffer, batch_size: int, batches: int = 64, with_transitions: bool = False):
    """The share of a sampled batch's agent-network rows (episodes × states, cut to the longest episode) that lie
    inside an episode: the work the packed unroll does of the padded one's (and, with_transitions, the mean number
    of transitions in a sampled batch)."""
    import torch

    from effmarl.replay.episode import state_rows

    generator = torch.Generator().manual_seed(0)
    samples = [buffer.sample(batch_size, generator)["filled"] for _ in range(batches)]
    alive, total = map(sum, zip(*(state_rows(f) for f in samples), strict=True))
    if with_transitions:
        return alive / total, sum(int(f.sum()) for f in samples) / batches
    return alive / total


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--map", default="3m", help="SMAX map (default 3m)")
    parser.add_argument("--envs", type=int, default=8, help="parallel episodes per seed and round (default 8)")
    parser.add_argument("--seeds", type=int, default=8, help="seeds in lockstep (default 8)")
    parser.add_argument("--updates-per-round", type=int, nargs="+",
                        help="training: updates per collection round to measure (default: 1 and --envs)")
    parser.add_argument("--batch-size", type=int, default=32, help="episodes per update (default 32, PyMARL's)")
    parser.add_argument("--sparsity", type=float, default=0.9, help="MAST's sparsity (default 0.9)")
    parser.add_argument("--delta-m", type=int, default=20, help="MAST's topology interval in updates (default 20)")
    parser.add_argument("--rounds", type=int, default=5, help="collection rounds per timed block (default 5)")
    parser.add_argument("--repeats", type=int, default=3, help="timed blocks per measurement (default 3)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto (default cpu)")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's)")
    parser.add_argument("--only", choices=["acting", "training", "mask_work", "update"], action="append",
                        help="measure only these parts (repeatable; default all)")
    parser.add_argument("--profile", default="adhoc", help="workflow profile recorded with the table")
    parser.add_argument("--out", required=True, help="output stem: writes <out>.csv, .md, .provenance.json")


def run(args) -> pd.DataFrame:
    import pandas as pd
    import torch

    from effmarl import io, provenance
    from effmarl.profiling.machine_load import MachineLoad

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    parts = args.only or ["acting", "training", "mask_work"]
    with tempfile.TemporaryDirectory(prefix="effmarl-bench-qmix-") as tmp, MachineLoad() as load:
        rows = [row for part in parts for row in {"acting": acting, "training": training,
                                                   "mask_work": mask_work, "update": update}[part](args,
                                                                                                  Path(tmp))]
    table = pd.DataFrame(rows)
    rec = provenance.record(extra={"benchmark": "bench_qmix", "kind": "benchmark", "name": "bench qmix",
                                   "caption": CAPTION, "machine_load": load.record(),
                                   "args": {k: v for k, v in vars(args).items() if k != "func"}})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    hw = rec["hardware"]
    header = (f"# QMIX engine benchmark: SMAX {args.map}, {args.envs} copies per seed, {args.seeds} seeds in "
              f"lockstep, batch {args.batch_size}, device {args.device}, {args.threads} threads, profile "
              f"{args.profile}\n\n{hw['cpu_model']}, commit "
              f"{rec['git']['commit']}; command: `effmarl bench qmix "
              f"--map {args.map} --envs {args.envs} --seeds {args.seeds} --rounds {args.rounds} --repeats "
              f"{args.repeats} --device {args.device} --threads {args.threads}"
              f"{''.join(f' --only {p}' for p in args.only or [])} --out {args.out}`; {load.text}\n")
    io.write_text(out.with_suffix(".csv"), table.to_csv(index=False))
    io.write_text(out.with_suffix(".md"), header + "\n" + table.to_markdown(index=False, floatfmt=".3g") + "\n")
    io.write_json(out.with_suffix(".provenance.json"), rec)
    return table
