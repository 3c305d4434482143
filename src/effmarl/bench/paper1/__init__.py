"""`effmarl bench paper1`: the paper-1 engine measured side by side in one run, for each agent count N.

1. **Sampling per update round** (batch B, k-neighbour windows): storage reference / contiguous × sampler
   uniform / neighbor × batches per-agent (N per round, the original) / shared (one per round); the contiguous
   storage both as today's loop reads it (a list of per-agent batches) and as the batched learner does (one
   stacked `[G, B, …]` gather). Configurations interleaved round by round; medians and ratios to the paper's
   baseline (reference / uniform / per-agent). All call `effmarl.replay.sampling_round`, the training loop's.
2. **Memory floor**: the stacked gather's bytes per round ÷ the streaming-copy bandwidth of an array larger
   than the last-level cache, measured in the same process: how close the gather is to memory speed.
3. **Training loops** at paper 1's update ratio (a round of batch B every 100 env steps): the paper-faithful
   loop (reference storage, per-agent batches, sequential learner, mpe2), today's loop (contiguous storage,
   same otherwise), the batched + vectorised loop (contiguous, per-agent batches as one gather, batched
   learner, `mpe_vec`), and the same with one shared batch per round (other batch semantics, for scale),
   that one also with E = `--num-envs` environment copies (`env.num_envs`: one actor forward and one array
   env step for all copies, the update ratio counted over all copies) and, with `--compiled`, with its update
   round through `torch.compile` (measured, not adopted: docs/paper1.md). Each runs in a fresh process (for
   its own peak memory: VmHWM after a reset, see `run_loop`) with the replay buffer prefilled, and times
   `--episodes` episodes end to end (rounded up to whole lockstep rounds of E episodes; env steps/s) and
   `--rounds` update rounds; `first_round_s` is the warm-up round, compilation included.

A speed measurement, not a test: read ratios, not absolute times. `--device cuda` puts the contiguous storage
and the networks on the GPU (timers synchronise). `--size small` is the workflow step (a couple of minutes).

This module is the command (arguments, sizes, the written tables); sections 1-2 are `sampling.py`, section 3 is
`loops.py`, and both start from buffers filled by `effmarl.profiling.prefill` (as `effmarl sampling-bench`'s do).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from effmarl.bench.paper1.loops import LOOPS, measure_loops, summarise_loops
from effmarl.bench.paper1.sampling import measure_sampling, stream_bandwidth, summarise_sampling

DEFAULT_OUT = Path("benchmarks") / "results" / "bench_paper1"
SIZES = {"small": {"agents": [3, 12], "fill": 5_000, "rounds": 5, "episodes": 8, "stream_mib": 128,
                   "num_envs": [1, 16, 128]},
         "full": {"agents": [3, 12, 48], "fill": 50_000, "rounds": 20, "episodes": 20, "stream_mib": 512,
                  "num_envs": [1, 16, 128]}}
CAPTION = ("Paper-1 engine benchmark (effmarl bench paper1): sampling per update round vs the paper's baseline "
           "and the memory floor; update-round time and end-to-end env steps/s of the paper-faithful loop, today's "
           "loop and the batched learner on the vectorised environment, measured side by side in one run.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--size", choices=sorted(SIZES), default="full",
                        help="small: N 3 and 12, short (the workflow step); full: N 3, 12, 48")
    parser.add_argument("--agents", type=int, nargs="+", help="agent counts (default: by --size)")
    parser.add_argument("--algo", choices=["maddpg", "masac"], default="maddpg")
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--k", type=int, default=16, help="neighbor window length")
    parser.add_argument("--fill", type=int, help="transitions stored for the sampling measurements")
    parser.add_argument("--fill-loop", type=int, default=4096, help="transitions prefilled in each loop's buffer")
    parser.add_argument("--rounds", type=int, help="measured update rounds per configuration")
    parser.add_argument("--episodes", type=int, help="timed episodes (25 steps) per loop")
    parser.add_argument("--loop-reps", type=int, default=1, help="repetitions of each loop, interleaved")
    parser.add_argument("--loops", nargs="+", choices=list(LOOPS), default=list(LOOPS), help="loops to time")
    parser.add_argument("--num-envs", type=int, nargs="+",
                        help="environment copies E of the batched_shared loop (default: by --size)")
    parser.add_argument("--compiled", action="store_true",
                        help="also time batched_shared with its update round through torch.compile")
    parser.add_argument("--stream-mib", type=int, help="array size of the streaming-copy bandwidth")
    parser.add_argument("--sections", nargs="+", choices=["sampling", "loops"], default=["sampling", "loops"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="cpu or cuda: networks and the contiguous storage")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output path without extension")
    parser.add_argument("--profile", default="adhoc", help="workflow profile recorded with the table")


def resolve(args) -> argparse.Namespace:
    for key, value in SIZES[args.size].items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    from effmarl.config import ConfigError

    lines = [f"--agents: {n} is not a positive multiple of 3 (predators 2N/3, prey N/3)"
             for n in args.agents if n < 3 or n % 3]
    lines += [f"--{name.replace('_', '-')}: must be >= 1, got {getattr(args, name)}"
              for name in ("batch", "k", "fill", "fill_loop", "rounds", "episodes", "loop_reps", "stream_mib",
                           "threads") if getattr(args, name) < 1]
    lines += [f"--num-envs: {e} must be >= 1" for e in args.num_envs if e < 1]
    if args.device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            lines.append("--device cuda: torch sees no CUDA GPU")
    if lines:
        raise ConfigError(lines, "effmarl bench paper1")
    return args


def _markdown(frame, columns: list[str]) -> str:
    return frame[columns].round(3).to_markdown(index=False)


def run(args) -> dict:
    """Measure, write <out>.md, <out>.sampling.csv, <out>.loops.csv and <out>.provenance.json."""
    import pandas as pd
    import torch

    from effmarl import io, provenance

    args = resolve(args)
    torch.set_num_threads(args.threads)
    tables, parts = {}, []
    if "sampling" in args.sections:
        raw, row_bytes = [], {}
        for n in args.agents:
            rows, info = measure_sampling(n, args)
            raw += rows
            row_bytes[n] = info["row_bytes"]
        bandwidth = stream_bandwidth(args.stream_mib, args.device)
        frame = pd.DataFrame(raw)
        frame.attrs["batch"] = args.batch
        tables["sampling"] = summarise_sampling(frame, row_bytes, bandwidth)
        parts.append(f"## Sampling phase per update round (B = {args.batch}, k = {args.k}, {args.fill} stored "
                     f"transitions, {args.rounds} interleaved rounds each)\n\nStreaming-copy bandwidth "
                     f"({args.stream_mib} MiB array, same process): {bandwidth / 1e9:.2f} GB/s. x_memory_floor = "
                     f"time ÷ (bytes gathered ÷ that bandwidth).\n\n" + _markdown(tables["sampling"], [
                         "n_agents", "storage", "sampler", "batch_mode", "layout", "median_ms", "q25_ms", "q75_ms",
                         "speedup_vs_paper_baseline", "x_memory_floor"]))
    if "loops" in args.sections:
        raw = pd.DataFrame([row for n in args.agents for row in measure_loops(n, args)])
        tables["loops"] = summarise_loops(raw)
        parts.append(f"## Training loops at paper 1's update ratio ({args.algo}, a round of B = {args.batch} "
                     f"every 100 env steps, {args.episodes} timed episodes, {args.rounds} timed rounds; "
                     f"round_speedup_vs_today compares like batch semantics only in per_agent rows; *_shared_e1: "
                     f"ratios to batched_shared with one environment copy)\n\n"
                     + _markdown(tables["loops"], [
                         "n_agents", "loop", "storage", "learner", "backend", "batch_mode", "num_envs", "update",
                         "first_round_s", "round_ms", "round_speedup_vs_today", "round_speedup_vs_shared_e1",
                         "env_steps_per_s", "end_to_end_vs_paper", "end_to_end_vs_shared_e1",
                         "action_selection_ms_per_step",
                         "env_step_ms_per_step", "buffer_add_ms_per_step", "update_all_trainers_ms_per_step",
                         "peak_rss_mib", "rss_growth_mib"]))
    rec = provenance.record(extra={"benchmark": "bench_paper1", "kind": "benchmark", "name": "bench paper1",
                                   "caption": CAPTION, "args": vars(args)})
    header = (f"# effmarl bench paper1 ({args.size}, device {args.device}, {args.threads} torch thread(s))\n\n"
              f"git {rec['git']['commit']} (dirty: {rec['git']['dirty']}), {rec['hardware']['cpu_model']}, "
              f"torch {torch.__version__}, numpy {np.__version__}, profile {args.profile}.\n")
    out = Path(args.out)
    for name, table in tables.items():
        io.write_text(out.with_name(f"{out.name}.{name}.csv"), table.to_csv(index=False))
    io.write_text(out.with_suffix(".md"), header + "\n" + "\n\n".join(parts) + "\n")
    io.write_json(out.with_name(f"{out.name}.provenance.json"), rec)
    print(header + "\n" + "\n\n".join(parts))
    return tables
