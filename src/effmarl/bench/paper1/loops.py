"""`effmarl bench paper1`, section 3: the training loops at paper 1's update ratio, each in a fresh process
(`run_loop`: prefilled buffer, timed episodes and update rounds, peak memory), and their ratios to the paper-faithful
loop, today's loop and the shared-batch loop with one environment copy."""

from __future__ import annotations

import multiprocessing
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from effmarl.profiling.prefill import DISTINCT, fill, rollout

LOOPS = {"paper": {"storage": "reference", "learner": "sequential", "backend": "mpe", "batch_mode": "per_agent"},
         "today": {"storage": "contiguous", "learner": "sequential", "backend": "mpe", "batch_mode": "per_agent"},
         "batched": {"storage": "contiguous", "learner": "batched", "backend": "mpe_vec", "batch_mode": "per_agent"},
         "batched_shared": {"storage": "contiguous", "learner": "batched", "backend": "mpe_vec",
                            "batch_mode": "shared"}}
LOOP_COLUMNS = ("storage", "learner", "backend", "batch_mode", "num_envs", "update")




def loop_variants(args) -> dict[str, dict]:
    """The loops of `--loops`, each with E = 1 and eager updates; batched_shared also with every E of
    `--num-envs` (named batched_shared_e<E>) and, with `--compiled`, each of those with a compiled round."""
    out = {}
    for name in args.loops:
        base = {**LOOPS[name], "num_envs": 1, "update": "eager"}
        copies = args.num_envs if name == "batched_shared" else [1]
        for e in copies:
            tag = name if e == 1 else f"{name}_e{e}"
            out[tag] = {**base, "num_envs": e}
            if args.compiled and name == "batched_shared":
                out[f"{tag}_compiled"] = {**base, "num_envs": e, "update": "compiled"}
    return out


def loop_config(spec: dict, n_agents: int, args) -> dict:
    from effmarl.config import validate

    copies = spec["num_envs"]
    episodes = -(-args.episodes // copies) * copies
    # room for the prefill, the warm-up and the timed episodes: a 1e6-slot buffer of N = 48 transitions would
    # reserve 26 GB for observations alone (sampling reads only the filled part, so capacity changes no timing)
    capacity = min(1_000_000, args.fill_loop + (episodes + copies) * 25)
    return validate({"study": "bench", "algo": args.algo, "seed": args.seed, "device": args.device,
                     "threads": args.threads,
                     "env": {"backend": spec["backend"], "n_agents": n_agents, "num_envs": copies},
                     "budget": {"episodes": episodes},
                     "offpolicy": {"batch_size": args.batch, "warmup": args.batch, "update_every": 100,
                                   "checkpoint_every": 0, "learner": spec["learner"]},
                     "replay": {"storage": spec["storage"], "batch_mode": spec["batch_mode"],
                                "buffer_size": capacity}},
                    part="run")


def _rss_mib(field: str) -> float | None:
    """VmRSS (now) or VmHWM (peak since start or the last reset) of this process, MiB (Linux)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _reset_peak_rss() -> bool:
    """Reset the peak-RSS mark (Linux >= 4.0), so the peak counts the loop, not the imports before it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return _rss_mib("VmHWM") is not None
    except OSError:
        return False


def run_loop(cfg: dict, fill_n: int, rounds: int, compiled: bool = False) -> dict:
    """In a fresh process: build the loop of `cfg`, prefill its buffer, time its episodes and update rounds
    (`compiled`: the batched learner's round through torch.compile). Peak memory: the process's VmHWM after
    resetting it once imports and networks are in (Linux clear_refs), else ru_maxrss since start."""
    import torch

    from effmarl import harness
    from effmarl.algos import offpolicy

    torch.set_num_threads(cfg["threads"])
    harness.seed_everything(cfg["seed"])
    loop, state = offpolicy.build(cfg, offpolicy.LEARNERS[cfg["algo"], cfg["offpolicy"]["learner"]])
    transitions, _ = rollout(cfg["env"]["n_agents"], min(fill_n, DISTINCT), cfg["seed"])
    fill(state.storage, transitions, fill_n)
    rss_built, reset = _rss_mib("VmRSS"), _reset_peak_rss()     # imports and networks are in; the buffer is not
    off, copies = cfg["offpolicy"], loop.env.num_envs
    if compiled:
        state.learner.compile_update()
    mode = cfg["replay"]["batch_mode"]
    begin = time.perf_counter()                               # warm-up round (compilation) and episode, not timed
    offpolicy.update_round(state, loop.sampler, off["batch_size"], mode, loop.trained, loop.timer)
    first_round = time.perf_counter() - begin
    offpolicy.play_episode(loop, state)
    state.env_steps = 0
    loop.timer.snapshot()
    start = time.perf_counter()
    for _ in range(cfg["budget"]["episodes"] // copies):
        offpolicy.play_episode(loop, state)
        state.episode += copies
    wall = time.perf_counter() - start
    phases = {r["phase"]: r for r in loop.timer.snapshot()}
    sync, round_times = (torch.cuda.synchronize if loop.device.type == "cuda" else (lambda: None)), []
    for _ in range(rounds):                                   # update rounds alone, for their distribution
        sync()
        begin = time.perf_counter()
        offpolicy.update_round(state, loop.sampler, off["batch_size"], mode, loop.trained, loop.timer)
        sync()
        round_times.append(time.perf_counter() - begin)
    out = {"env_steps": state.env_steps, "wall_s": wall, "first_round_s": first_round,
           "round_ms": float(np.median(round_times)) * 1e3,
           "round_ms_q25": float(np.quantile(round_times, 0.25)) * 1e3,
           "round_ms_q75": float(np.quantile(round_times, 0.75)) * 1e3,
           "peak_rss_mib": _rss_mib("VmHWM") if reset else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "rss_before_fill_mib": rss_built,
           "peak_device_mib": (torch.cuda.max_memory_allocated() / 2**20 if loop.device.type == "cuda" else None)}
    for name in ("action_selection", "env_step", "buffer_add", "update_all_trainers", "sampling", "target_q",
                 "q_loss", "p_loss", "target_update"):
        row = phases.get(name)
        out[f"{name}_ms_per_step"] = (row["seconds"] / state.env_steps * 1e3) if row else 0.0
    loop.env.close()
    return out


def measure_loops(n_agents: int, args) -> list[dict]:
    """Every loop in its own spawned process, one after another, repeated `--loop-reps` times interleaved."""
    rows = []
    ctx = multiprocessing.get_context("spawn")
    variants = loop_variants(args)
    names = list(variants)
    for rep in range(args.loop_reps):
        for loop in names[rep % len(names):] + names[: rep % len(names)]:
            spec = variants[loop]
            with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
                result = pool.submit(run_loop, loop_config(spec, n_agents, args), args.fill_loop, args.rounds,
                                     spec["update"] == "compiled").result()
            rows.append({"n_agents": n_agents, "loop": loop, **spec, "rep": rep, **result})
    return rows


def summarise_loops(raw):
    import pandas as pd

    table = raw.groupby(["n_agents", "loop", *LOOP_COLUMNS], sort=False).median(
        numeric_only=True).reset_index().drop(columns=["rep"])
    table["env_steps_per_s"] = table["env_steps"] / table["wall_s"]
    base = table.set_index(["n_agents", "loop"])

    def of(loop: str, column: str):
        """Each row's N mapped to `loop`'s `column` at that N (NaN where that loop was not measured)."""
        rows = base.xs(loop, level="loop")[column] if loop in base.index.get_level_values("loop") else {}
        return table["n_agents"].map(rows).astype(float)

    table["end_to_end_vs_paper"] = table["env_steps_per_s"] / of("paper", "env_steps_per_s")
    table["round_speedup_vs_today"] = of("today", "round_ms") / table["round_ms"]
    # the issue-24 targets: against the fastest loop before environment copies (shared batch, mpe_vec, E = 1)
    table["end_to_end_vs_shared_e1"] = table["env_steps_per_s"] / of("batched_shared", "env_steps_per_s")
    table["round_speedup_vs_shared_e1"] = of("batched_shared", "round_ms") / table["round_ms"]
    table["rss_growth_mib"] = table["peak_rss_mib"] - table["rss_before_fill_mib"]
    return pd.DataFrame(table)
