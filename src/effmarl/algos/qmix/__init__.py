"""Value-based MARL on SMAC-like maps: QMIX, OW-QMIX (WQMIX) and RES-QMIX with PyMARL's defaults, and dynamic sparse
training of all three (paper 2). The variants are one table, effmarl/variants.py (networks, target operator, loss
terms, FLOPs, display name), the sparse-training methods another, effmarl/methods.py (start, topology updates,
masks, cost, FLOPs, display name); the modules below read them. Split the way EPyMARL splits it; each module one job:

  networks.py    the GRU agents and mixers of an algorithm, built in one place; Tiny's narrowed widths
  operators.py   the target operator of each algorithm (double-Q max, OW-QMIX's central Q*, RES's softmax, Soft
                 Mellowmax), chosen once per run
  learner.py     one seed's networks, targets and loss (sparse masks included)
  optim.py       PyMARL's RMSprop, its square root kept off subnormal floats
  lockstep.py    the optimiser step of 1 or S seeds, stacked along a seed axis and updated as one computation
  functional.py  the GRU agent and greedy action as pure JAX functions: what the jitted SMAX runner acts with
  runner.py      episode runners: collect ε-greedy episode batches and evaluate (Python reference; SMAX jitted)
  smax_runner.py the SMAX runner: every seed's episode batch as one jitted JAX program
  settings.py    QmixSettings: the run config resolved once (options, schedules, components, returns); the return
                 each update uses
  tickets.py     random / winning / cheating tickets: masks (and weights) from a finished sparse run
  accounting.py  FLOPs and size from the masks (over the mask history where the sparsity changes), the per-run
                 accounting files
  run.py         the training loop, top to bottom, for one seed or S seeds in lockstep; checkpoints and resume

The cross-field config checks are effmarl/qmix_checks.py's (torch-free: validating a profile imports no learner).
MAST's switches (sparse topology, Soft Mellowmax, hybrid TD(λ), dual buffer; RLx2's multi-step targets and dynamic
buffer) are read from the run config by effmarl/components.py into QmixSettings; docs/mast.md describes them.
"""

from effmarl.algos.qmix.accounting import accounting
from effmarl.algos.qmix.learner import Learner
from effmarl.algos.qmix.lockstep import SeedStack
from effmarl.algos.qmix.networks import build_networks, tiny_hyper
from effmarl.algos.qmix.run import SeedRun, check_lockstep, preflight, run, run_lockstep
from effmarl.algos.qmix.runner import select_actions
from effmarl.algos.qmix.settings import QmixOptions, QmixSettings, effective_schedule, target_kind

__all__ = ["Learner", "QmixOptions", "QmixSettings", "SeedRun", "SeedStack", "accounting", "build_networks",
           "check_lockstep", "effective_schedule", "preflight", "run", "run_lockstep",
           "select_actions", "target_kind", "tiny_hyper"]
