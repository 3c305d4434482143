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
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

DEFAULT_OUT = Path("benchmarks") / "results" / "bench_paper1"
SIZES = {"small": {"agents": [3, 12], "fill": 5_000, "rounds": 5, "episodes": 8, "stream_mib": 128,
                   "num_envs": [1, 16, 128]},
         "full": {"agents": [3, 12, 48], "fill": 50_000, "rounds": 20, "episodes": 20, "stream_mib": 512,
                  "num_envs": [1, 16, 128]}}
LOOPS = {"paper": {"storage": "reference", "learner": "sequential", "backend": "mpe", "batch_mode": "per_agent"},
         "today": {"storage": "contiguous", "learner": "sequential", "backend": "mpe", "batch_mode": "per_agent"},
         "batched": {"storage": "contiguous", "learner": "batched", "backend": "mpe_vec", "batch_mode": "per_agent"},
         "batched_shared": {"storage": "contiguous", "learner": "batched", "backend": "mpe_vec",
                            "batch_mode": "shared"}}
LOOP_COLUMNS = ("storage", "learner", "backend", "batch_mode", "num_envs", "update")
FIELDS = ("obs", "act", "rew", "next_obs", "done")


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
CAPTION = ("Paper-1 engine benchmark (effmarl bench paper1): sampling per update round vs the paper's baseline "
           "and the memory floor; update-round time and end-to-end env steps/s of the paper-faithful loop, today's "
           "loop and the batched learner on the vectorised environment, measured side by side in one run.")


# ------------------------------------------------------------------------------------------- transitions
def rollout(n_agents: int, steps: int, seed: int) -> list[tuple]:
    """`steps` predator-prey transitions of a uniformly random policy (mpe_vec: mpe2's dynamics exactly)."""
    from effmarl.envs import make_env

    env = make_env({"backend": "mpe_vec", "n_agents": n_agents, "num_obstacles": 2, "max_cycles": 25,
                    "scenario": "simple_tag"}, 1)
    rng = np.random.default_rng(seed)
    eye = np.eye(5, dtype=np.float32)
    out, step, episode = [], env.reset(seed=seed), 0
    while len(out) < steps:
        actions = rng.integers(0, 5, size=n_agents)
        nxt = env.step(actions[None])
        out.append(([o[0].copy() for o in step.obs], [eye[a] for a in actions], nxt.rewards[0].copy(),
                    [o[0].copy() for o in nxt.obs], np.full(n_agents, nxt.terminated[0], np.float32)))
        step = nxt
        if nxt.done[0]:
            episode += 1
            step = env.reset(seed=seed + episode)
    return out, env.spec


def fill(storage, transitions: list[tuple], n: int) -> None:
    """Store n transitions, each with its own fresh arrays (as a training loop stores them)."""
    for j in range(n):
        obs, act, rew, nxt, done = transitions[j % len(transitions)]
        storage.add([o.copy() for o in obs], [a.copy() for a in act], rew.copy(), [o.copy() for o in nxt],
                    done.copy())


# ---------------------------------------------------------------------------------------------- sampling
def _sync(device: str):
    import torch

    return torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)


def sampling_configs(k: int) -> list[dict]:
    configs = []
    for storage in ("reference", "contiguous"):
        for sampler in ("uniform", f"neighbor_k{k}"):
            for mode in ("per_agent", "shared"):
                for layout in (("batches",) if storage == "reference" else ("batches", "stacked")):
                    configs.append({"storage": storage, "sampler": sampler, "batch_mode": mode, "layout": layout})
    return configs


def measure_sampling(n_agents: int, args) -> tuple[list[dict], dict]:
    from effmarl.replay import NeighborSampler, UniformSampler, make_storage, sampling_round

    transitions, spec = rollout(n_agents, min(args.fill, 2_000), args.seed)
    storages = {}
    for kind in ("reference", "contiguous"):
        storages[kind] = make_storage({"storage": kind, "buffer_size": args.fill, "backend": "torch"},
                                      spec.obs_dims, spec.n_actions, device=args.device)
        fill(storages[kind], transitions, args.fill)
    samplers = {"uniform": UniformSampler(), f"neighbor_k{args.k}": NeighborSampler(args.k)}
    configs = sampling_configs(args.k)
    rng, sync = np.random.default_rng(args.seed), _sync(args.device)

    def one(c: dict) -> float:
        groups = n_agents if c["batch_mode"] == "per_agent" else 1
        sync()
        start = time.perf_counter()
        sampling_round(storages[c["storage"]], samplers[c["sampler"]], rng, args.batch, groups, layout=c["layout"])
        sync()
        return time.perf_counter() - start

    for c in configs:                                         # warm-up, not recorded
        one(c)
    rows = []
    for rep in range(args.rounds):
        for j in range(len(configs)):
            c = configs[(rep + j) % len(configs)]
            rows.append({"n_agents": n_agents, **c, "rep": rep, "seconds": one(c)})
    data = storages["contiguous"].data
    row_bytes = sum(int(np.prod(data[f].shape[1:])) * 4 for f in FIELDS)
    return rows, {"row_bytes": row_bytes}


def stream_bandwidth(mib: int, device: str, reps: int = 5) -> float:
    """Bytes per second of `dst.copy_(src)` over a `mib`-MiB float32 array (larger than the last-level cache)."""
    import torch

    src = torch.ones(mib * 2**20 // 4, device=device)
    dst = torch.empty_like(src)
    sync, times = _sync(device), []
    dst.copy_(src)
    for _ in range(reps):
        sync()
        start = time.perf_counter()
        dst.copy_(src)
        sync()
        times.append(time.perf_counter() - start)
    return src.numel() * 4 / float(np.median(times))


def summarise_sampling(raw, row_bytes: dict, bandwidth: float):
    import pandas as pd

    keys = ["n_agents", "storage", "sampler", "batch_mode", "layout"]
    g = raw.groupby(keys, sort=False)["seconds"]
    table = pd.DataFrame({"median_ms": g.median() * 1e3, "q25_ms": g.quantile(0.25) * 1e3,
                          "q75_ms": g.quantile(0.75) * 1e3, "rounds": g.size()}).reset_index()
    base = table[(table.storage == "reference") & (table.sampler == "uniform")
                 & (table.batch_mode == "per_agent")].set_index("n_agents")["median_ms"]
    table["speedup_vs_paper_baseline"] = table["n_agents"].map(base) / table["median_ms"]
    groups = np.where(table.batch_mode == "per_agent", table.n_agents, 1)
    table["bytes_per_round"] = groups * raw.attrs["batch"] * table["n_agents"].map(row_bytes)
    table["memory_floor_ms"] = table["bytes_per_round"] / bandwidth * 1e3
    table["x_memory_floor"] = table["median_ms"] / table["memory_floor_ms"]
    return table


# ------------------------------------------------------------------------------------------------- loops
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
    transitions, _ = rollout(cfg["env"]["n_agents"], min(fill_n, 2_000), cfg["seed"])
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


# ------------------------------------------------------------------------------------------------ output
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
