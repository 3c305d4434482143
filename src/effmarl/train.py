"""`effmarl train`: run one configured training run into its output directory."""

from __future__ import annotations

import importlib

import torch

from effmarl import harness
from effmarl.algos import ALGORITHMS
from effmarl.config import cross_checks
from effmarl.runs import RunDir

seed_everything = harness.seed_everything  # kept for callers that import it from here


def train(cfg: dict, out_dir: str) -> RunDir:
    """Run the validated run config `cfg`; outputs land in out_dir, provenance.json last.

    Everything that can reject the run (cross-field checks, the device) is checked before the output
    directory is created.
    """
    cross_checks(cfg, f"run {cfg['study']}")
    harness.resolve_device(cfg["device"])
    torch.set_num_threads(cfg["threads"])
    harness.seed_everything(cfg["seed"])
    rundir = RunDir(out_dir, cfg)
    module = importlib.import_module(ALGORITHMS[cfg["algo"]])
    module.run(cfg, rundir)
    rundir.finish()
    return rundir


def train_lockstep(cfgs: list[dict], out_dirs: list[str]) -> list[RunDir]:
    """Train several seeds of one configuration together in one process (algorithms with `run_lockstep`: the
    qmix family); each seed writes its own run directory, provenance.json last."""
    module = importlib.import_module(ALGORITHMS[cfgs[0]["algo"]])
    if not hasattr(module, "run_lockstep"):
        from effmarl.config import ConfigError

        raise ConfigError([f"field 'algo': {cfgs[0]['algo']!r} cannot train seeds in lockstep (only qmix, ow_qmix, "
                           "res_qmix); train each run on its own"], "effmarl train")
    for cfg in cfgs:
        cross_checks(cfg, f"run {cfg['study']} seed {cfg['seed']}")
    module.check_lockstep(cfgs)
    harness.resolve_device(cfgs[0]["device"])
    torch.set_num_threads(cfgs[0]["threads"])
    rundirs = [RunDir(out, cfg) for cfg, out in zip(cfgs, out_dirs, strict=True)]
    finished = module.run_lockstep(cfgs, rundirs)
    for rundir, done in zip(rundirs, finished, strict=True):
        if done:
            rundir.finish()
    return rundirs
