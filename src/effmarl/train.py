"""`effmarl train`: run one configured training run into its output directory, or several runs in one process.

Several runs (`train_many`): runs that are equal but for their seed form a lockstep group (qmix family: trained as
one stacked computation, algos/qmix/lockstep.py); the groups train one after another in this process, so imports,
the SMAX env functions and the jitted episode programs are built once. Every run writes its own run directory and
provenance; a run already finished with the same configuration is skipped, so the same command resumes what a
failure or a stop left unfinished.

One writer per run directory: every entry point here holds the lock of each run directory it writes
(`runs.locked`), taken once the cheap checks have passed and before any compute, until its provenance.json is
written; `train_many` takes all of its directories' locks before its first group, so a command of which one
directory is another process's is refused whole (`RunDirBusy`) and writes nothing.

Interleaved pairs (`train_many(..., interleave=True)`, `effmarl train --interleave`): paper 1's end-to-end timing.
Runs equal but for the sampler (`replay.sampler` uniform vs neighbor, and `replay.neighbor_k`, which only the
neighbor sampler reads) form a pair; a pair trains in one process, one episode round of each in turn
(algos/offpolicy.py `run_interleaved`), so whatever else loads the machine loads both alike. Each run writes what it
writes trained alone; only its phase times differ.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import torch

from effmarl import harness
from effmarl.algos import ALGORITHMS
from effmarl.config import ConfigError
from effmarl.groups import sampler_pairs, seed_groups
from effmarl.harness import Interrupted
from effmarl.runs import RunDir, locked
from effmarl.variants import QMIX_VARIANTS


def train(cfg: dict, out_dir: str) -> RunDir:
    """Run the validated run config `cfg`; outputs land in out_dir, provenance.json last, under out_dir's lock.

    The cross-field checks ran once, in config.validate (which `effmarl train`, the workflow and every config builder
    go through); training trusts the config. What validation cannot see (the device, files a ticket reads, the map's
    unit types) is checked here before the output directory is created.
    """
    harness.resolve_device(cfg["device"])
    module = importlib.import_module(ALGORITHMS[cfg["algo"]])
    if hasattr(module, "preflight"):  # checks that read files (e.g. a ticket's source run)
        module.preflight(cfg)
    with locked([out_dir]):
        torch.set_num_threads(cfg["threads"])
        harness.seed_everything(cfg["seed"])
        rundir = RunDir(out_dir, cfg)
        module.run(cfg, rundir)
        rundir.finish()
    return rundir


def train_lockstep(cfgs: list[dict], out_dirs: list[str]) -> list[RunDir]:
    """Train several seeds of one configuration together in one process (algorithms with `run_lockstep`: the
    qmix family); each seed writes its own run directory, provenance.json last."""
    module = importlib.import_module(ALGORITHMS[cfgs[0]["algo"]])
    if not hasattr(module, "run_lockstep"):
        raise ConfigError([f"field 'algo': {cfgs[0]['algo']!r} cannot train seeds in lockstep (only "
                           f"{', '.join(QMIX_VARIANTS)}); train each run on its own"], "effmarl train")
    module.check_lockstep(cfgs)
    for cfg in cfgs:
        module.preflight(cfg)
    return _train_together(cfgs, out_dirs, module.run_lockstep)


def train_interleaved(cfgs: list[dict], out_dirs: list[str]) -> list[RunDir]:
    """Train runs alternately in one process (algorithms with `run_interleaved`: the off-policy loop of paper 1);
    each writes its own run directory, provenance.json last."""
    module = importlib.import_module(ALGORITHMS[cfgs[0]["algo"]])
    if not hasattr(module, "run_interleaved"):
        raise ConfigError([f"field 'algo': {cfgs[0]['algo']!r} cannot train interleaved pairs (only maddpg and "
                           "masac)"], "effmarl train --interleave")
    return _train_together(cfgs, out_dirs, module.run_interleaved)


def _train_together(cfgs: list[dict], out_dirs: list[str], run) -> list[RunDir]:
    """Several runs in this process: their run directories made, `run(cfgs, rundirs)` trains them (returning which
    finished), and each finished run writes provenance.json last."""
    harness.resolve_device(cfgs[0]["device"])
    with locked(out_dirs):
        torch.set_num_threads(cfgs[0]["threads"])
        rundirs = [RunDir(out, cfg) for cfg, out in zip(cfgs, out_dirs, strict=True)]
        finished = run(cfgs, rundirs)
        for rundir, done in zip(rundirs, finished, strict=True):
            if done:
                rundir.finish()
    return rundirs


def finished_before(cfg: dict, out_dir: str) -> bool:
    """True when out_dir holds a finished run (provenance.json, written last) of exactly this configuration."""
    path = Path(out_dir) / "provenance.json"
    if not path.is_file():
        return False
    try:
        recorded = json.loads(path.read_text()).get("config")
    except (OSError, ValueError):
        return False
    return recorded == json.loads(json.dumps(cfg, default=str))


def train_many(cfgs: list[dict], out_dirs: list[str], interleave: bool = False) -> list[RunDir | Path]:
    """Train several runs in this process: lockstep groups (equal but for the seed) one after another, or with
    `interleave` the interleaved pairs (equal but for the sampler, groups.sampler_pairs) one after another; a pair of
    which one run finished before trains the other alone.

    Every run is checked before any compute (the device, one output directory each, lockstep support of groups of
    several seeds; the cross-field checks ran in config.validate). A group that fails (diverged, refused checkpoint,
    an error) leaves the other groups' runs untouched and the next groups still train; the first failure is raised at
    the end. A stop signal stops at once (the unfinished seeds of the running group checkpoint). A run already
    finished with the same configuration is skipped. Returns each run's RunDir, or its path when it was skipped."""
    dupes = sorted({str(Path(d)) for d in out_dirs if sum(Path(e) == Path(d) for e in out_dirs) > 1})
    if dupes:
        raise ConfigError([f"--out {d} given for more than one run; one output directory per run" for d in dupes],
                          "effmarl train")
    groups = sampler_pairs(cfgs) if interleave else seed_groups(cfgs)
    for group in groups:
        members = [cfgs[i] for i in group]
        for cfg in members:
            harness.resolve_device(cfg["device"])
        module = importlib.import_module(ALGORITHMS[members[0]["algo"]])
        if len(group) > 1 and not interleave:
            if not hasattr(module, "run_lockstep"):
                raise ConfigError([f"field 'algo': {members[0]['algo']!r} cannot train seeds in lockstep (only "
                                   f"{', '.join(QMIX_VARIANTS)}); give each seed its own command"], "effmarl train")
            module.check_lockstep(members)
        for cfg in members:
            if hasattr(module, "preflight"):  # checks that read files (e.g. a ticket's source run)
                module.preflight(cfg)
    with locked(out_dirs):
        return _train_groups(cfgs, out_dirs, groups, interleave)


def _train_groups(cfgs: list[dict], out_dirs: list[str], groups: list[list[int]], interleave: bool) -> list:
    """`train_many`'s groups, one after another, under its locks."""
    out: list[RunDir | Path | None] = [None] * len(cfgs)
    failure = None
    for group in groups:
        todo = [i for i in group if not finished_before(cfgs[i], out_dirs[i])]
        for i in set(group) - set(todo):
            out[i] = Path(out_dirs[i])
            print(f"effmarl: {out_dirs[i]}: already finished with this configuration; skipped", file=sys.stderr)
        if not todo:
            continue
        try:
            if len(todo) == 1:
                out[todo[0]] = train(cfgs[todo[0]], out_dirs[todo[0]])
            else:
                together = train_interleaved if interleave else train_lockstep
                dirs = together([cfgs[i] for i in todo], [out_dirs[i] for i in todo])
                for i, rundir in zip(todo, dirs, strict=True):
                    out[i] = rundir
        except (Interrupted, KeyboardInterrupt):
            raise
        except Exception as exc:  # this group's runs stay unfinished (their checkpoints resume them)
            print(f"effmarl: runs {', '.join(out_dirs[i] for i in todo)} failed: {' '.join(str(exc).split())[:300]}"
                  "; the other groups continue", file=sys.stderr)
            failure = failure or exc
    if failure is not None:
        raise failure
    return out
