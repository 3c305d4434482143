"""The `effmarl` command line: the parser, built from the sub-command modules (runs: train, validate, run-config,
reuse-run, carry-runs, aggregate; outputs: figure, table, index, readme-tables, costs; measure: counters,
sampling-bench, bench, env-info), and `main`, which turns every error into one line and an exit status."""

from __future__ import annotations

import argparse
import errno
import sys

from effmarl.config import ConfigError
from effmarl.harness import RunStopped


def build_parser() -> argparse.ArgumentParser:
    from effmarl.cli import measure, outputs, runs

    parser = argparse.ArgumentParser(prog="effmarl", description=__doc__)
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in (runs, outputs, measure):
        group.register(sub)
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
