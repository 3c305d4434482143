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
