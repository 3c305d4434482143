"""The `effmarl` sub-commands of runs and their workflow: train, validate, run-config, reuse-run, carry-runs,
aggregate."""

from __future__ import annotations

import sys
from pathlib import Path

from effmarl.config import ConfigError


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
            from effmarl.reuse import from_reused, planned

            profile = load_profile(path)
            runs = expand_all(profile)
            total = sum(len(r) for r in runs.values())
            copied = planned(profile, runs)
            reused = from_reused(profile, copied)
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


def _cmd_carry_runs(args) -> int:
    from effmarl.carry import carry

    runs, records, training = carry(args.source, args.dest)
    print(f"{args.dest}: {len(runs)} complete runs and {len(records)} benchmark records copied from {args.source}"
          + (f"; {len(training)} runs still training left behind (their checkpoints do not travel)" if training
             else ""))
    return 0


def _cmd_aggregate(args) -> int:
    from effmarl import io
    from effmarl.analysis.aggregate import aggregate

    io.write_parquet(args.out, aggregate(args.tables))
    return 0


def register(sub) -> None:
    """Add this module's sub-commands to `sub` (the effmarl parser's sub-parsers)."""
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

    p = sub.add_parser("carry-runs", help="copy the complete runs and the jobs' benchmark records of a results tree "
                       "to another (to keep finished work when a machine is given back, and to put it back before "
                       "the workflow resumes; effmarl.carry)")
    p.add_argument("--from", dest="source", required=True, help="a results tree, e.g. results/extended")
    p.add_argument("--to", dest="dest", required=True, help="where the complete runs go, the same layout")
    p.set_defaults(func=_cmd_carry_runs)

    p = sub.add_parser("aggregate", help="concatenate one table of many runs into a tidy study table")
    p.add_argument("tables", nargs="+", help="results/<study>/<run_id>/<table>.parquet files")
    p.add_argument("--out", required=True)
    p.set_defaults(func=_cmd_aggregate)
