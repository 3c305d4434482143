"""Counters of the mini-batch sampling phase alone (paper 1, figure 4): uniform vs neighbor sampling on the
reference and contiguous replay storages, from every counter source this machine has.

Sources (each record names its source; an unavailable one is recorded with the reason, never guessed):
- `perf`: Linux `perf stat` hardware events, where the host exposes a PMU;
- `cachegrind`: valgrind's simulated caches (`--cache-sim=yes`; D1 and last-level data misses);
- `torch_profiler`: PyTorch profiler operator times of the sampling phase (in this process);
- `ncu`: Nsight Compute; recorded as unavailable (no GPU) or not implemented for this CPU-side phase.

The driver process these sources count, its address-space layout per repeat and the tools run over it
(`run_cachegrind`, `run_perf`) are effmarl.profiling.counter_driver; this module turns their counts into
records: (R rounds − 0 rounds) / (sampled transitions) per spec, source and event, each run once per key and
cached, cachegrind's `jobs` at a time.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from effmarl.profiling.counter_driver import (
    CACHE_CONFIG,
    PERF_EVENTS,
    build,
    layout,
    run_cachegrind,
    run_perf,
    sampling_rounds,
)

_DRIVER_RESULTS: dict[str, dict] = {}


def _driver_key(source: str, spec: dict, rounds: int) -> str:
    """The 0-round run does not depend on the sampler: one per (source, storage, fill, ..., repeat); the spec's
    `repeat` and `layout` are part of every key, so each repeat measures its own pair of processes."""
    drop = ("sampler", "k", "rounds") if rounds == 0 else ("rounds",)
    return json.dumps([source, rounds, {k: v for k, v in spec.items() if k not in drop}], sort_keys=True)


def _driver_result(source: str, run, spec: dict, rounds: int) -> dict:
    key = _driver_key(source, spec, rounds)
    if key not in _DRIVER_RESULTS:
        _DRIVER_RESULTS[key] = run(spec, rounds)
    return _DRIVER_RESULTS[key]


def _prefetch(source: str, run, specs: list[dict], jobs: int) -> None:
    """Every driver process the specs need (each spec's R-round run, one 0-round run per storage and repeat),
    `jobs` at a time. Each is a separate process counted on its own, so running them side by side changes no count
    (cachegrind simulates its caches per process); the perf source is left sequential, since real caches are shared."""
    todo = {}
    for spec in specs:
        for rounds in (0, spec["rounds"]):
            todo.setdefault(_driver_key(source, spec, rounds), (spec, rounds))
    todo = {k: v for k, v in todo.items() if k not in _DRIVER_RESULTS}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {key: pool.submit(run, spec, rounds) for key, (spec, rounds) in todo.items()}
        for key, future in futures.items():
            _DRIVER_RESULTS[key] = future.result()


def _difference_records(source: str, spec: dict, run, events: list[str]) -> list[dict]:
    base, full = _driver_result(source, run, spec, 0), _driver_result(source, run, spec, spec["rounds"])
    sampled = spec["rounds"] * len(spec["obs_dims"]) * spec["batch"]
    rows = []
    for event in events:
        if base.get(event) is None or full.get(event) is None:
            rows.append(_record(source, spec, event, None, None, available=False,
                                reason=f"event {event} not counted on this host"))
            continue
        net = full[event] - base[event]
        rows.append(_record(source, spec, event, float(net), net / sampled,
                            extra={"count_with_rounds": float(full[event]),
                                   "count_without_rounds": float(base[event])}))
    return rows


def _record(source, spec, metric, value, per_transition, available=True, reason=None, extra=None) -> dict:
    row = {"source": source, "metric": metric, "repeat": int(spec.get("repeat", 0)),
           "storage": spec["storage"], "sampler": spec["sampler"],
           "k": spec["k"] if spec["sampler"] == "neighbor" else 1, "n_agents": len(spec["obs_dims"]),
           "batch": spec["batch"], "fill": spec["fill"], "rounds": spec["rounds"], "gather": spec["gather"],
           "sampled_transitions": spec["rounds"] * len(spec["obs_dims"]) * spec["batch"], "value": value,
           "per_sampled_transition": per_transition, "available": available, "reason": reason,
           "count_with_rounds": None, "count_without_rounds": None,
           "storage_bytes": spec.get("storage_bytes"), "layout": json.dumps(spec.get("layout"), sort_keys=True),
           "caches": json.dumps(spec.get("caches", CACHE_CONFIG), sort_keys=True)}
    row.update(extra or {})
    return row


_BUILT: dict[str, tuple] = {}  # the last storage torch_profiler_records filled, by its fill


def _fill_key(spec: dict) -> str:
    return json.dumps({k: spec[k] for k in ("storage", "capacity", "fill", "seed", "obs_dims", "n_actions")},
                      sort_keys=True)


def torch_profiler_records(spec: dict) -> list[dict]:
    """Operator self CPU times of the sampling rounds under torch.profiler (the storages' real gather). These run in
    this process, whose layout a repeat does not set: their repeats are plain repetitions of the timing, and
    consecutive specs with the same fill (the two samplers, the repeats) share one filled storage."""
    from torch.profiler import ProfilerActivity, profile, record_function

    from effmarl.replay import make_sampler

    spec_t = {**spec, "gather": "torch"}
    key = _fill_key(spec_t)
    if key not in _BUILT:
        _BUILT.clear()
        _BUILT[key] = build(spec_t)
    storage = _BUILT[key][0]
    sampler = make_sampler({"sampler": spec["sampler"], "neighbor_k": spec["k"]})
    rng = np.random.default_rng(spec["seed"] + 1)
    sampling_rounds(storage, sampler, spec_t, 1, rng)  # warm-up
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("sampling"):
            sampling_rounds(storage, sampler, spec_t, spec["rounds"], rng)
    rows = []
    sampled = spec["rounds"] * len(spec["obs_dims"]) * spec["batch"]
    for event in prof.key_averages():
        name = event.key
        seconds = (event.cpu_time_total if name == "sampling" else event.self_cpu_time_total) * 1e-6
        metric = "sampling_total_s" if name == "sampling" else f"op_self_s:{name}"
        rows.append(_record("torch_profiler", spec_t, metric, seconds, seconds / sampled,
                            extra={"count_with_rounds": float(event.count)}))
    return rows


def measure(specs: list[dict], sources: list[str], jobs: int = 1) -> list[dict]:
    """Records of every source for every spec; cachegrind's driver processes run `jobs` at a time."""
    from effmarl.profiling.tools import probe_all

    probes = probe_all()
    rows = []
    for source in sources:
        probe = probes.get(source, {"available": False, "reason": f"unknown source {source!r}"})
        if source == "ncu" and probe["available"]:
            probe = {"available": False, "reason": "ncu metrics are not collected for the sampling phase, which "
                     "runs on the CPU in these storages"}
        if probe["available"] and source == "cachegrind" and jobs > 1:
            _prefetch(source, run_cachegrind, specs, jobs)
        # the in-process source fills each storage once for all its samplers and repeats
        ordered = sorted(specs, key=_fill_key) if source == "torch_profiler" and probe["available"] else specs
        for spec in ordered:
            if not probe["available"]:
                rows.append(_record(source, spec, "all", None, None, available=False, reason=probe["reason"]))
            elif source == "cachegrind":
                rows += _difference_records(source, spec, run_cachegrind, ["Ir", "Dr", "Dw", "D1m", "DLm",
                                                                            "D1mr", "DLmr"])
            elif source == "perf":
                rows += _difference_records(source, spec, run_perf, list(PERF_EVENTS))
            elif source == "torch_profiler":
                rows += torch_profiler_records(spec)
        _BUILT.clear()
    return rows


def mpe_dims(n_agents: int) -> tuple[list[int], list[int]]:
    """Observation widths and action counts of MPE simple_tag with n_agents (2 obstacles)."""
    from effmarl.envs import make_env

    env = make_env({"backend": "mpe", "scenario": "simple_tag", "n_agents": n_agents, "num_obstacles": 2,
                    "max_cycles": 25}, 1)
    dims = (list(env.spec.obs_dims), list(env.spec.n_actions))
    env.close()
    return dims


def storage_bytes(storage) -> int:
    """Bytes a filled storage holds. Contiguous: the `nbytes` of its arrays. Reference: `sys.getsizeof` of each
    buffer's list, every transition tuple and every object in it (float objects, array headers with their data),
    plus the data of an array a stored view belongs to (an action row of `np.eye`), counted once. The allocator's
    own overhead is not counted, so this is a lower bound of the memory the gather can touch."""
    if not hasattr(storage, "buffers"):
        return int(sum(v.nbytes for v in storage.data.values()))
    total, bases = 0, set()
    for buffer in storage.buffers:
        total += sys.getsizeof(buffer._storage)
        for item in buffer._storage:
            total += sys.getsizeof(item) + sum(sys.getsizeof(x) for x in item)
            for x in item:
                base = getattr(x, "base", None)
                if isinstance(base, np.ndarray) and id(base) not in bases:
                    bases.add(id(base))
                    total += base.nbytes
    return int(total)


def specs_for(agents, storages, samplers, *, batch, k, fill, rounds, gather="numpy", seed=0,
              caches: dict | None = None, repeats: int = 1) -> list[dict]:
    """One driver spec per repeat, N, storage and sampler; repeat r carries `layout(r)` and the same fill
    (`seed`) as every other repeat, and each spec the `storage_bytes` of its filled storage (measured once per
    N and storage, in this process)."""
    specs, sizes, dims = [], {}, {n: mpe_dims(n) for n in agents}
    for repeat in range(repeats):
        for n in agents:
            obs_dims, n_actions = dims[n]
            for storage in storages:
                for sampler in samplers:
                    spec = {"storage": storage, "sampler": sampler, "k": k, "batch": batch, "fill": fill,
                            "capacity": max(fill, 1), "rounds": rounds, "gather": gather, "seed": seed,
                            "obs_dims": obs_dims, "n_actions": n_actions,
                            "caches": {**CACHE_CONFIG, **(caches or {})}, "repeat": repeat,
                            "layout": layout(repeat)}
                    if (n, storage) not in sizes:
                        sizes[(n, storage)] = storage_bytes(build(spec)[0])
                    specs.append({**spec, "storage_bytes": sizes[(n, storage)]})
    return specs


def write(rows: list[dict], out: str, args: dict) -> list[str]:
    import pandas as pd

    from effmarl import io, provenance
    from effmarl.profiling.tools import probe_all

    rec = provenance.record(extra={"counters": args, "sources": probe_all(), "cachegrind_caches": CACHE_CONFIG})
    from effmarl.profiling.sampling_bench import identify

    frame = identify(pd.DataFrame(rows), "counters", args.get("profile", "adhoc"), rec)
    paths = [io.write_parquet(f"{out}.parquet", frame),
             io.write_json(f"{out}.json", {"provenance": rec, "records": json.loads(frame.to_json(orient="records"))})]
    return [str(p) for p in paths]


def summary_lines(rows: list[dict]) -> list[str]:
    """One line per unavailable source, and per cachegrind D1m / DLm configuration the median and range [min, max]
    of its misses per sampled transition over the repeats."""
    lines, values = [], {}
    for r in rows:
        if not r["available"]:
            lines.append(f"{r['source']}: unavailable — {r['reason']}")
        elif r["source"] == "cachegrind" and r["metric"] in ("D1m", "DLm"):
            key = f"cachegrind N={r['n_agents']} {r['storage']}/{r['sampler']}: {r['metric']}"
            lines.append(key)
            values.setdefault(key, []).append(r["per_sampled_transition"])
    out = []
    for line in dict.fromkeys(lines):
        v = values.get(line)
        out.append(line if v is None else f"{line} {float(np.median(v)):.3f} [{min(v):.3f}, {max(v):.3f}] per "
                   f"sampled transition (median [range] over {len(v)} repeats)")
    return out
