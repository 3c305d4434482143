"""The `effmarl` sub-commands that make outputs from runs: figure, table, index, readme-tables, costs."""

from __future__ import annotations

import importlib
import json
import sys

from effmarl.config import ConfigError


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


def register(sub) -> None:
    """Add this module's sub-commands to `sub` (the effmarl parser's sub-parsers)."""
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
