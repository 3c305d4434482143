"""Sampling-phase time per update round, storage × sampler, measured side by side (paper 1's headline).

For each agent count N, the buffers are filled with MPE predator-prey transitions (a random-policy rollout
of simple_tag_v3, replayed with fresh array copies until `--fill` transitions are stored, so every stored
transition owns its arrays as in the original: `effmarl.profiling.prefill`, shared with `effmarl bench
paper1`). Then one "sampling phase of an update round" — `per_agent` batch mode: N times (draw B indices,
gather the batch of all N agents as torch tensors), exactly what effmarl.algos.offpolicy.update_round does —
is timed for every configuration in turn, interleaved (A B C D, B C D A, …) so drift in machine load hits all
of them alike. `--k` takes one or more neighbor windows: every k is a configuration of its own (per storage:
uniform, then neighbor_k{k} for each k), all in one interleaved cycle, so the k sweep's time ranking
(effmarl.analysis.metrics.ksweep) compares windows measured under the same drift. Reported: median and quartiles
of milliseconds per update round, and each median's ratio to reference/uniform (<out>.{csv,md,parquet}); and
every measured round (<out>.rounds.parquet: n_agents, storage, sampler, k — 0 for uniform, which has no window —,
rep, seconds, with the run-identity columns), the k sweep's input.

    effmarl sampling-bench                                 # N = 3 and 12, B = 1024, k = 16
    effmarl sampling-bench --k 1 4 16 64                   # the k sweep's windows, interleaved
    effmarl sampling-bench --agents 3 --fill 5000 --rounds 5   # a quick look
    python benchmarks/sampling_phase.py ...                # the same, writing benchmarks/results/

This is a speed measurement, not a test: run it on a quiet machine and read ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from effmarl.profiling.prefill import DISTINCT, fill, rollout

DEFAULT_OUT = Path("benchmarks") / "results" / "sampling_phase"


def sampling_round(storage, sampler, n_agents: int, batch: int, rng: np.random.Generator, sync) -> float:
    """Seconds for one update round's sampling phase in per_agent mode (device synchronised around it): the
    training loop's own `effmarl.replay.sampling_round`."""
    from effmarl.replay import sampling_round as round_

    sync()
    start = time.perf_counter()
    round_(storage, sampler, rng, batch, n_agents)
    sync()
    return time.perf_counter() - start


def configurations(ks) -> list[tuple[str, int, object]]:
    """(sampler name, k, sampler) of one storage: uniform (k 0: no window), then neighbor_k{k} for each distinct k
    of `ks` (an int or a list), in the order given."""
    from effmarl.replay import NeighborSampler, UniformSampler

    ks = [ks] if isinstance(ks, int) else list(dict.fromkeys(ks))
    return [("uniform", 0, UniformSampler())] + [(f"neighbor_k{k}", int(k), NeighborSampler(int(k))) for k in ks]


def measure(n_agents: int, args):
    import pandas as pd
    import torch

    from effmarl.replay import make_storage

    transitions, spec = rollout(n_agents, min(args.fill, args.real_steps), args.seed)
    storages = {}
    for kind in ("reference", "contiguous"):
        storages[kind] = make_storage({"storage": kind, "buffer_size": args.capacity, "backend": "torch"},
                                      spec.obs_dims, spec.n_actions, device=args.device)
        fill(storages[kind], transitions, args.fill)
    configs = [(kind, name, k, sampler) for kind in ("reference", "contiguous")
               for name, k, sampler in configurations(args.k)]
    rng = np.random.default_rng(args.seed)
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    for storage, _, _, sampler in configs:           # warm-up, not recorded
        sampling_round(storages[storage], sampler, n_agents, args.batch, rng, sync)
    rows = []
    for rep in range(args.rounds):
        for c in range(len(configs)):
            storage, name, k, sampler = configs[(rep + c) % len(configs)]
            secs = sampling_round(storages[storage], sampler, n_agents, args.batch, rng, sync)
            rows.append({"n_agents": n_agents, "storage": storage, "sampler": name, "k": k, "rep": rep,
                         "seconds": secs})
    return pd.DataFrame(rows)


def summarise(raw):
    import pandas as pd

    g = raw.groupby(["n_agents", "storage", "sampler"], sort=False)["seconds"]
    table = pd.DataFrame({"median_ms": g.median() * 1e3, "q25_ms": g.quantile(0.25) * 1e3,
                          "q75_ms": g.quantile(0.75) * 1e3, "rounds": g.size()}).reset_index()
    base = table[(table.storage == "reference") & (table.sampler == "uniform")].set_index("n_agents")["median_ms"]
    table["ratio_to_reference_uniform"] = table["median_ms"] / table["n_agents"].map(base)
    table["reduction_vs_reference_uniform_%"] = 100 * (1 - table["ratio_to_reference_uniform"])
    return table.round(3)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agents", type=int, nargs="+", default=[3, 12])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--k", type=int, nargs="+", default=[16], help="neighbor window(s) k; each one a "
                        "configuration of its own, all interleaved (the k sweep's time ranking reads them)")
    parser.add_argument("--headline-k", type=int, default=None, help="the headline runs' window (the workflow "
                        "passes studies.headline_k of the profile), marked `headline` in the tables with uniform; "
                        "default: the only --k, else the catalogue's paper1 window")
    parser.add_argument("--fill", type=int, default=50_000, help="transitions stored before measuring")
    parser.add_argument("--capacity", type=int, default=1_000_000)
    parser.add_argument("--real-steps", type=int, default=DISTINCT, help="distinct MPE transitions generated, "
                        "at most (the fill replays them)")
    parser.add_argument("--rounds", type=int, default=30, help="measured update rounds per configuration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="where batches (and the contiguous storage) live")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output path without extension")
    parser.add_argument("--profile", default="adhoc", help="workflow profile recorded with the table (cfg.profile)")


def headline_window(args) -> int:
    """--headline-k, which must be one of --k; without it the only --k, else the catalogue's paper1 window
    (studies.headline_k)."""
    from effmarl.config import ConfigError
    from effmarl.studies import headline_k

    k = args.headline_k if args.headline_k is not None else args.k[0] if len(set(args.k)) == 1 else headline_k()
    if k not in args.k:
        raise ConfigError([f"--headline-k {k} is not among the measured windows --k {' '.join(map(str, args.k))}"],
                          "effmarl sampling-bench")
    return k


def identify(table, run_id: str, profile: str, rec: dict):
    """The run-identity columns figures name their source by (as a study table's): a micro-measurement is
    one 'run' of the pseudo-study paper1_micro."""
    return table.assign(run_id=run_id, git_commit=rec["git"]["commit"], **{"cfg.study": "paper1_micro",
                                                                           "cfg.profile": profile})


def run(args):
    """Measure, write <out>.{csv,md,parquet,rounds.parquet,provenance.json}, return the summary table."""
    import pandas as pd
    import torch

    from effmarl import io, provenance

    torch.set_num_threads(args.threads)
    headline = headline_window(args)
    raw = pd.concat([measure(n, args) for n in args.agents], ignore_index=True)
    table = summarise(raw).assign(fill=args.fill)  # the buffers' fill, which the claims quote beside the median
    for frame in (raw, table):  # what the benchmark's readers quote: uniform beside the headline runs' window
        frame["headline"] = frame["sampler"].isin(["uniform", f"neighbor_k{headline}"])
    rec = provenance.record(extra={"benchmark": "sampling_phase", "args": vars(args)})
    header = (f"Sampling phase per update round (per_agent batch mode: N × [draw {args.batch} indices, gather all "
              f"N agents]), neighbor windows k = {', '.join(map(str, args.k))}, buffers holding {args.fill} MPE "
              f"simple_tag transitions, {args.rounds} interleaved rounds per configuration, "
              f"{args.threads} torch thread(s), device {args.device}.\n"
              f"git {rec['git']['commit']} (dirty: {rec['git']['dirty']}), {rec['hardware']['cpu_model']}, "
              f"torch {torch.__version__}, numpy {np.__version__}.\n")
    out = Path(args.out)
    io.write_text(out.with_suffix(".csv"), table.to_csv(index=False))
    io.write_text(out.with_suffix(".md"), header + "\n" + table.to_markdown(index=False) + "\n")
    io.write_json(out.with_suffix(".provenance.json"), rec)
    io.write_parquet(out.with_suffix(".parquet"), identify(table, "sampling_bench", args.profile, rec))
    io.write_parquet(out.with_suffix(".rounds.parquet"), identify(raw, "sampling_bench", args.profile, rec))
    print(header)
    print(table.to_markdown(index=False))
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    run(parser.parse_args(argv))
