"""The `effmarl` sub-commands that measure the machine and the code: counters, sampling-bench, bench, env-info."""

from __future__ import annotations

import importlib
import json

from effmarl.config import ConfigError


def _cmd_env_info(args) -> int:
    import torch  # noqa: F401  (provenance.hardware() reports GPUs and CUDA through torch once it is imported)

    from effmarl.profiling.tools import probe_all
    from effmarl.provenance import describe, environment

    info = environment()
    info["counters"] = probe_all()
    if args.json:
        print(json.dumps(info, indent=2, sort_keys=True))
        return 0
    print(describe(info))
    return 0


def _cmd_counters(args) -> int:
    from effmarl.profiling import counters

    if args.jobs < 1:
        raise ConfigError([f"--jobs must be at least 1, got {args.jobs}"], "effmarl counters")
    if args.repeats < 1:
        raise ConfigError([f"--repeats must be at least 1, got {args.repeats}"], "effmarl counters")

    specs = counters.specs_for(args.agents, args.storage, args.sampler, batch=args.batch, k=args.k, fill=args.fill,
                               rounds=args.rounds, gather=args.gather, seed=args.seed,
                               caches=dict(c.split("=", 1) for c in args.cache or []), repeats=args.repeats)
    rows = counters.measure(specs, args.sources, jobs=args.jobs)
    for path in counters.write(rows, args.out, {k: v for k, v in vars(args).items() if k != "func"}):
        print(path)
    print("\n".join(counters.summary_lines(rows)))
    return 0


def _cmd_sampling_bench(args) -> int:
    from effmarl.profiling.sampling_bench import run

    run(args)
    return 0


def _cmd_bench(args) -> int:
    importlib.import_module(args.bench_module).run(args)
    return 0


def _add_bench(sub) -> None:
    """`effmarl bench SECTION …`: one sub-command per benchmark section (effmarl.bench.SECTIONS)."""
    from effmarl.bench import SECTIONS

    p = sub.add_parser("bench", help="benchmarks with provenance: effmarl bench paper1 …")
    sections = p.add_subparsers(dest="section", required=True, metavar="SECTION")
    for name, module_name in SECTIONS.items():
        module = importlib.import_module(module_name)
        q = sections.add_parser(name, help=(module.__doc__ or "").splitlines()[0])
        module.add_arguments(q)
        q.set_defaults(func=_cmd_bench, bench_module=module_name)


def register(sub) -> None:
    """Add this module's sub-commands to `sub` (the effmarl parser's sub-parsers)."""
    p = sub.add_parser("counters", help="cache/hardware counters and operator times of the sampling phase alone")
    p.add_argument("--agents", type=int, nargs="+", default=[3])
    p.add_argument("--storage", nargs="+", default=["reference", "contiguous"], choices=["reference", "contiguous"])
    p.add_argument("--sampler", nargs="+", default=["uniform", "neighbor"], choices=["uniform", "neighbor"])
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--k", type=int, default=16, help="neighbor window length")
    p.add_argument("--fill", type=int, default=20000, help="transitions stored before sampling")
    p.add_argument("--rounds", type=int, default=4, help="sampling rounds (N draws of --batch each) counted")
    p.add_argument("--gather", choices=["numpy", "torch"], default="numpy",
                   help="numpy: the storages' gather without the torch conversion (no torch import under valgrind)")
    p.add_argument("--sources", nargs="+", default=["perf", "cachegrind", "torch_profiler", "ncu"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=1, help="cachegrind driver processes run side by side (default 1)")
    p.add_argument("--repeats", type=int, default=5,
                   help="measurements of each configuration, each with its own address-space layout of both driver "
                        "processes (hash seed, heap/mmap/stack offsets; the same fill); default 5")
    p.add_argument("--cache", action="extend", nargs="+", metavar="LEVEL=size,assoc,line",
                   help="override a simulated cache, e.g. LL=262144,8,64 (default I1/D1 32 KiB, LL 8 MiB)")
    p.add_argument("--out", required=True, help="output path without extension (.parquet and .json)")
    p.add_argument("--profile", default="adhoc", help="workflow profile recorded with the table (cfg.profile)")
    p.set_defaults(func=_cmd_counters)

    from effmarl.profiling.sampling_bench import add_arguments

    p = sub.add_parser("sampling-bench", help="sampling-phase time per update round, storage × sampler × N, "
                       "interleaved A B A B (medians and quartiles)")
    add_arguments(p)
    p.set_defaults(func=_cmd_sampling_bench)

    _add_bench(sub)

    p = sub.add_parser("env-info", help="describe this environment: versions, hardware, counter sources")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_env_info)
