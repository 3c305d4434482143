"""`effmarl bench paper1`, sections 1 and 2: the sampling phase per update round for every storage × sampler ×
batch mode × layout, interleaved round by round, against the paper's baseline and the memory floor (a streaming
copy's bandwidth in the same process)."""

from __future__ import annotations

import time

import numpy as np

from effmarl.profiling.prefill import DISTINCT, fill, rollout

FIELDS = ("obs", "act", "rew", "next_obs", "done")


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

    transitions, spec = rollout(n_agents, min(args.fill, DISTINCT), args.seed)
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
