"""The `effmarl` command line: train, validate, aggregate, figure, table, index, env-info, readme-tables."""

from __future__ import annotations

import argparse
import errno
import importlib
import json
import sys
from pathlib import Path

from effmarl.config import ConfigError
from effmarl.harness import RunStopped


def _cmd_train(args) -> int:
    from effmarl.config import load_run_config

    if len(args.config) != len(args.out):
        raise ConfigError([f"--config given {len(args.config)} times but --out {len(args.out)} times: one output "
                           "directory per run"], "command line")
    for out in map(Path, args.out):
        if out.exists() and not out.is_dir():
            raise ConfigError(["--out is an existing file, not a directory"], str(out))
    cfgs = []
    for path in args.config:
        # validated before anything heavy is imported or run; with --set, the cross-field checks run once, after it
        cfg = load_run_config(path, checks=not args.set)
        for override in args.set or []:
            _apply_override(cfg, override)
        if args.set:
            from effmarl.config import validate

            cfg = validate(cfg, part="run", source=f"{path} with --set")
        cfgs.append(cfg)
    from effmarl.train import train, train_many

    if args.interleave:
        rundirs = train_many(cfgs, args.out, interleave=True)
    else:
        rundirs = [train(cfgs[0], args.out[0])] if len(cfgs) == 1 else train_many(cfgs, args.out)
    for rundir in rundirs:
        print(f"run finished: {getattr(rundir, 'path', rundir)}")
    return 0


def _apply_override(cfg: dict, override: str) -> None:
    from effmarl.config import parse_yaml, set_dotted

    if "=" not in override:
        raise ConfigError([f"--set {override!r}: expected KEY=VALUE, e.g. env.n_agents=6"], "command line")
    key, value = override.split("=", 1)
    set_dotted(cfg, key, parse_yaml(value, f"--set {key}"))


def _cmd_validate(args) -> int:
    from effmarl.config import load_yaml, validate
    from effmarl.studies import catalogue_path, expand_all, load_catalogue, load_profile, resolve_profile

    for path in args.configs:
        if args.run:
            validate(load_yaml(path), part="run", source=path)
            print(f"{path}: valid run configuration")
        elif Path(path).resolve() == catalogue_path().resolve():  # every study as declared, expanded together
            cat = load_catalogue(path)
            declared = {"profile": "default", "results_dir": "results/catalogue", "figures_dir": "results/catalogue",
                        "studies": dict.fromkeys(cat)}
            runs = expand_all(validate(resolve_profile(declared, cat, source=path), source=path))
            print(f"{path}: valid study catalogue, {len(cat)} studies, {sum(len(r) for r in runs.values())} runs "
                  "as declared")
        else:
            from effmarl.reuse import copies, reused_profile, sources

            profile = load_profile(path)
            runs = expand_all(profile)
            total = sum(len(r) for r in runs.values())
            copied = copies(profile, runs, sources(reused_profile(profile)))
            reused = sum(not src.startswith(f"{profile['results_dir']}/") for src in copied.values())
            note = (f"; {len(copied)} of them copied, not trained (effmarl.reuse: {reused} from {profile['reuses']} "
                    "if it ran at this commit)" if profile.get("reuses") else
                    f"; {len(copied)} of them copied from an earlier run that trains the same thing") if copied else ""
            print(f"{path}: valid profile, {total} runs in {len(runs)} studies "
                  f"({', '.join(f'{s}: {len(r)}' for s, r in runs.items())}){note}")
    return 0


def _cmd_run_config(args) -> int:
    """The workflow's run_config step: one run's configuration (YAML on stdin, as the profile expanded it) written
    to --out, with the sparsity the MAST selection chose for its (algo, map) when --selection is given. A shell job,
    so Snakemake need not re-read the whole workflow in a new process for each of these small writes."""
    import yaml

    from effmarl import io
    from effmarl.config import parse_yaml
    from effmarl.studies import selected_config

    cfg = parse_yaml(sys.stdin.read(), "stdin")
    if args.selection:
        cfg = selected_config(cfg, args.selection)
    io.write_text(args.out, yaml.safe_dump(cfg, sort_keys=True))
    note = f"sparsity {cfg['sparse']['sparsity']} from {args.selection}; " if args.selection else ""
    print(f"{note}configuration written to {args.out}")
    return 0


def _cmd_reuse_run(args) -> int:
    from effmarl.reuse import reuse_run

    written = reuse_run(args.source, args.config, args.out)
    print(f"{args.out}: {len(written)} files copied from the complete run {args.source} (it trains the same run)")
    return 0


def _cmd_aggregate(args) -> int:
    from effmarl import io
    from effmarl.analysis.aggregate import aggregate

    io.write_parquet(args.out, aggregate(args.tables))
    return 0


def _load_entry(registry: dict, name: str, kind: str):
    if name not in registry:
        raise ConfigError([f"unknown {kind} {name!r}; known: {', '.join(sorted(registry))}"], f"effmarl {kind}")
    return importlib.import_module(registry[name])


def _cmd_figure(args) -> int:
    from effmarl.analysis.figures import FIGURES
    from effmarl.analysis.io import check_named_inputs, check_out_stem, save_figure

    check_out_stem(args.out)
    module = _load_entry(FIGURES, args.name, "figure")
    check_named_inputs(args.inputs, module, f"figure {args.name}")
    variants = list(getattr(module, "OUTPUT", {}).get("variants", ()))
    if args.variant is not None and args.variant not in variants:
        raise ConfigError([f"--variant {args.variant!r}: figure {args.name} has "
                           + (f"variants {', '.join(variants)}" if variants else "none")], "effmarl figure")
    if variants and args.variant is None:
        raise ConfigError([f"--variant is required: one of {', '.join(variants)}"], f"effmarl figure {args.name}")
    fig, shown = module.make(args.inputs, variant=args.variant) if variants else module.make(args.inputs)
    for path in save_figure(fig, args.out, args.inputs, shown, name=args.name, caption=module.CAPTION):
        print(path)
    return 0


def _cmd_table(args) -> int:
    from effmarl.analysis.io import check_named_inputs, check_out_stem, save_table
    from effmarl.analysis.tables import TABLES

    check_out_stem(args.out)
    module = _load_entry(TABLES, args.name, "table")
    check_named_inputs(args.inputs, module, f"table {args.name}")
    for path in save_table(module.make(args.inputs), args.out, args.inputs, name=args.name,
                           caption=module.CAPTION):
        print(path)
    return 0


def _cmd_index(args) -> int:
    from effmarl.analysis.index import write_index
    from effmarl.analysis.io import check_out_stem

    check_out_stem(args.out)
    for path in write_index(args.outputs, args.out, json.loads(args.left_out) if args.left_out else None):
        print(path)
    return 0


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


def _cmd_costs(args) -> int:
    if args.estimate:
        from effmarl.analysis.envelope import write as estimate

        paths = estimate(args.estimate, args.published, args.dry_run, args.cores, args.out)
        print(paths[1].read_text(), end="")
        return 0
    from effmarl.analysis.costs import write

    missing = [f"--{name} is required (or --estimate PROFILE)" for name in ("results", "figures")
               if getattr(args, name) is None]
    if missing:
        raise ConfigError(missing, "effmarl costs")
    for path in write(args.results, args.figures, args.out, args.wall_s, args.note):
        print(path)
    return 0


def _cmd_readme_tables(args) -> int:
    from effmarl.readme_tables import run

    stale, empty = run(args.files, args.published, args.check)
    for name in empty:
        print(f"{name}: no <!-- published:NAME --> block", file=sys.stderr)
    if args.check:
        for name in stale:
            print(f"{name}: its tables differ from {args.published}; run effmarl readme-tables without --check")
        return 1 if stale else 0
    for name in stale:
        print(name)
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="effmarl", description=__doc__)
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="run one training run from a run configuration, or several in one process "
                       "(--config and --out once per run): runs equal but for the seed train in lockstep (qmix "
                       "family), the groups one after another")
    p.add_argument("--config", required=True, action="append", help="run configuration (YAML, schema $defs/run)")
    p.add_argument("--out", required=True, action="append", help="output directory, e.g. results/<study>/<run_id>")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a field, e.g. seed=3")
    p.add_argument("--interleave", action="store_true", help="train runs equal but for replay.sampler (one uniform, "
                   "one neighbor) as interleaved pairs: one episode of each in turn, for paper 1's end-to-end timing")
    p.set_defaults(func=_cmd_train)

    p = sub.add_parser("validate", help="check profiles (configs/<profile>.yaml), the study catalogue "
                       "(configs/studies.yaml) or run configurations")
    p.add_argument("configs", nargs="+")
    p.add_argument("--run", action="store_true", help="the files are run configurations, not profiles")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("run-config", help="write one run's configuration (YAML on stdin) for the workflow, "
                       "optionally with the sparsity a MAST selection table chose")
    p.add_argument("--out", required=True, help="results/<study>/<run_id>/config.yaml")
    p.add_argument("--selection", help="figures/mast/tables/selection.csv (sparsity_from: selection)")
    p.set_defaults(func=_cmd_run_config)

    p = sub.add_parser("reuse-run", help="copy a complete run into a run directory whose configuration trains the "
                       "same run (the workflow's reuse rules, effmarl.reuse)")
    p.add_argument("--source", required=True, help="the complete run directory (with provenance.json)")
    p.add_argument("--config", required=True, help="results/<study>/<run_id>/config.yaml of the run it stands for")
    p.add_argument("--out", required=True, help="results/<study>/<run_id>")
    p.set_defaults(func=_cmd_reuse_run)

    p = sub.add_parser("aggregate", help="concatenate one table of many runs into a tidy study table")
    p.add_argument("tables", nargs="+", help="results/<study>/<run_id>/<table>.parquet files")
    p.add_argument("--out", required=True)
    p.set_defaults(func=_cmd_aggregate)

    for name, func, what in (("figure", _cmd_figure, "PDF + PNG"), ("table", _cmd_table, "CSV + Markdown")):
        p = sub.add_parser(name, help=f"make one {name} ({what}) from study tables")
        p.add_argument("name", help=f"which {name}")
        p.add_argument("inputs", nargs="+", help="input tables (e.g. results/<study>/summary.parquet)")
        p.add_argument("--out", required=True, help="output path without extension")
        if name == "figure":
            p.add_argument("--variant", help="which output of a module with several (mast_curves: the algorithm)")
        p.set_defaults(func=func)

    p = sub.add_parser("index", help="list regenerated figures and tables with captions and source runs")
    p.add_argument("outputs", nargs="+", help="figure and table files (their .provenance.json sidecars are read)")
    p.add_argument("--out", required=True, help="output path without extension (.md and .json are written)")
    p.add_argument("--left-out", help="JSON list of {kind, name, stem, reason}: declared outputs the profile does "
                   "not make (effmarl.outputs.left_out), listed with the reason")
    p.set_defaults(func=_cmd_index)

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

    p = sub.add_parser("readme-tables", help="regenerate the tables README.md and docs/ quote from published/ "
                       "(the blocks between <!-- published:NAME --> comments)")
    p.add_argument("files", nargs="+", help="Markdown files, e.g. README.md docs/results.md docs/costs.md")
    p.add_argument("--published", default="published/default", help="the published run (default: %(default)s)")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 naming each file that differs")
    p.set_defaults(func=_cmd_readme_tables)

    p = sub.add_parser("costs", help="what a finished workflow run cost, from its jobs' Snakemake benchmark files; "
                                     "with --estimate, what a profile will cost (an estimate)")
    p.add_argument("--results", help="the run's results_dir")
    p.add_argument("--figures", help="the run's figures_dir")
    p.add_argument("--estimate", metavar="PROFILE", help="estimate PROFILE's job time and makespan instead "
                   "(effmarl.analysis.envelope says from which files)")
    p.add_argument("--published", default="published/default",
                   help="with --estimate: the published run whose costs tables price the jobs (default: %(default)s)")
    p.add_argument("--dry-run", help="with --estimate: the output of `snakemake -n --quiet rules --configfile "
                   "PROFILE` (counts the figure, table and aggregate jobs)")
    p.add_argument("--cores", type=int, nargs="+", default=[2, 16], help="with --estimate: makespans on these core "
                   "counts (default: %(default)s)")
    p.add_argument("--wall-s", type=float, help="the whole run's wall seconds, measured around snakemake")
    p.add_argument("--note", default="", help="a sentence on how the run was made (profile, date)")
    p.add_argument("--out", required=True, help="output stem: writes <out>.md, .csv, .provenance.json")
    p.set_defaults(func=_cmd_costs)
    return parser


def _one_line(exc: BaseException) -> str:
    """An unexpected error as one line: an OSError names its file; anything else its type and message."""
    if isinstance(exc, OSError) and exc.errno is not None:
        where = f"{exc.filename}: " if exc.filename else ""
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):  # effmarl.io names the file whatever the writer said
            full = "no space left on device (the disk is full)" if exc.errno == errno.ENOSPC else \
                "disk quota exceeded"
            return f"{where}{full}; free space and run the command again"
        return f"{where}{exc.strerror or exc}"
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


def main(argv: list[str] | None = None) -> int:
    """Dispatch to the subcommand; every error is one line on stderr and an exit status != 0
    (2: bad input, 3: diverged, 128 + signal: stopped by a signal, 1: anything else); --debug re-raises."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ConfigError as exc:
        if args.debug:
            raise
        for line in exc.lines:
            print(f"effmarl: {exc.source}: {line}", file=sys.stderr)
        return 2
    except RunStopped as exc:
        if args.debug:
            raise
        print(f"effmarl: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("effmarl: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        print(f"effmarl: {_one_line(exc)} (effmarl --debug {args.command} ... shows the traceback)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
