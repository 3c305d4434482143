"""`effmarl train`: run one configured training run into its output directory."""

from __future__ import annotations

import importlib
import random

import numpy as np
import torch

from effmarl.algos import ALGORITHMS
from effmarl.runs import RunDir


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def train(cfg: dict, out_dir: str) -> RunDir:
    """Run the validated run config `cfg`; outputs land in out_dir, provenance.json last."""
    torch.set_num_threads(cfg["threads"])
    seed_everything(cfg["seed"])
    rundir = RunDir(out_dir, cfg)
    module = importlib.import_module(ALGORITHMS[cfg["algo"]])
    module.run(cfg, rundir)
    rundir.finish()
    return rundir
