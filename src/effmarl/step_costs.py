"""The measured cost model: what an env step, an update round and a learner update cost, read from one table.

The table is benchmarks/results/step_cost.csv, one row per measured point (a short real `effmarl train` run at paper
settings, one core, torch/BLAS/XLA held to one thread). The package reads it as package data (src/effmarl/
step_cost.csv links to it, as studies.yaml links to the catalogue), so the installed package of the container image
and of cluster jobs sees the same file as a checkout. Re-measuring it is one command:

    python benchmarks/step_cost.py --out benchmarks/results/step_cost        # every point, ~30 min on one free core
    python benchmarks/step_cost.py --only maddpg_48 --out benchmarks/results/step_cost   # some, keeping the rest

Paper 1 (MADDPG / MASAC on MPE simple_tag), seconds per env step s(N) (act + env + buffer add) and per update round
r(N) (batch 1024): MADDPG on the reference storage is measured at N = 3, 12, 24, 48, every (algo, storage) at 3 and
12. With I(points, N) the log-log interpolation over the measured N (outside them the nearest segment's slope),

    s(algo, storage, N) = I(s_ref, N) · I(s_mine / s_ref, N)       r(...) likewise, × batch / 1024

(ref = MADDPG, reference storage; at a measured N it is the measurement itself). A random-policy run is priced as
MADDPG's steps on the contiguous storage (RANDOM_AS). A run's footprint before its replay grows: the largest peak
resident memory of the short runs measured at N (mpe_peak_mb, log-log interpolated over N).

Paper 2 (the QMIX family on SMAX, at 8 episode copies and 8 updates per round): per measured map, QMIX's acting
seconds per env step (act_s), seconds per learner update (update_s) and env steps per episode (episode_len);
relative update costs on 3m, each max(1, measured ratio) (no discount: the machine is shared and a late job is lost
work): each variant against the family's base (variants.BASE_VARIANT), per-agent networks against shared, MAST
against dense per-agent. A variant with per-agent networks is priced by its own measured per-agent point where there
is one (OW-QMIX's per-agent update costs less against QMIX's than its shared one does: the ratio is not the
product), else by its shared factor x the base's per-agent factor. A variant not measured is priced as the dearest
measured one.

effmarl.resources turns these into SLURM requests, effmarl.analysis.envelope into a profile's estimate.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources

from effmarl.variants import BASE_VARIANT

TABLE = "step_cost.csv"     # package data: a link to benchmarks/results/step_cost.csv
QMIX_ENVS_MEASURED = 8      # episode copies per round (and updates per round) of the paper-2 points
ROUND_BATCH = 1024          # the paper-1 points' batch
REFERENCE = ("maddpg", "reference")
RANDOM_AS = ("maddpg", "contiguous")
FACTOR_MAP = "3m"           # the map the relative paper-2 costs are measured on


@dataclass(frozen=True)
class StepCosts:
    """The table's prices (module doc): paper 1 per (algo, storage) {N: (step_s, round_s)} and per N the peak memory
    of a short run (MB); paper 2 per map act_s, update_s, episode_len, and the relative update costs."""
    offpolicy: dict[tuple[str, str], dict[int, tuple[float, float]]]
    mpe_peak_mb: dict[int, float]
    act_s: dict[str, float]
    update_s: dict[str, float]
    episode_len: dict[str, float]
    variant_factor: dict[str, float]
    per_agent_factor: float
    per_agent_variant_factor: dict[str, float]
    sparse_factor: float


def interpolate(points: dict[int, float], n: float) -> float:
    """Log-log interpolation over measured points {x: y}; outside them the nearest segment's slope."""
    xs = sorted(points)
    if n in points or len(xs) == 1:
        return points.get(n, points[xs[0]])
    lo, hi = (xs[0], xs[1]) if n < xs[0] else (xs[-2], xs[-1]) if n > xs[-1] else \
        max((a, b) for a, b in zip(xs, xs[1:], strict=False) if a < n)
    slope = math.log(points[hi] / points[lo]) / math.log(hi / lo)
    return points[lo] * (n / lo) ** slope


def parse(rows: list[dict[str, str]], source: str = TABLE) -> StepCosts:
    """The prices in the table's rows (csv.DictReader's strings); one line naming the file for a missing point."""
    offpolicy: dict[tuple[str, str], dict[int, tuple[float, float]]] = {}
    peak: dict[int, float] = {}
    act, update, length, dense_3m, method_3m, per_agent_3m = {}, {}, {}, {}, {}, {}
    for row in rows:
        if row["env"].startswith("mpe N="):
            n = int(row["env"].removeprefix("mpe N="))
            offpolicy.setdefault((row["algo"], row["storage"]), {})[n] = (float(row["step_s"]), float(row["round_s"]))
            peak[n] = max(peak.get(n, 0.0), float(row["maxrss_mb"]))
        elif row["method"] == "dense":
            if row["algo"] == BASE_VARIANT:
                act[row["env"]], update[row["env"]] = float(row["act_s"]), float(row["update_s"])
                length[row["env"]] = float(row["episode_len"])
            if row["env"] == FACTOR_MAP:
                dense_3m[row["algo"]] = float(row["update_s"])
        elif row["env"] == FACTOR_MAP and row["method"] == "dense per-agent":
            per_agent_3m[row["algo"]] = float(row["update_s"])
        elif row["algo"] == BASE_VARIANT and row["env"] == FACTOR_MAP:
            method_3m[row["method"]] = float(row["update_s"])
    needed = {f"{REFERENCE[0]} on the {REFERENCE[1]} storage": REFERENCE in offpolicy,
              f"{BASE_VARIANT} dense on {FACTOR_MAP}": BASE_VARIANT in dense_3m,
              f"{BASE_VARIANT} 'dense per-agent' and 'mast per-agent' on {FACTOR_MAP}":
                  BASE_VARIANT in per_agent_3m and "mast per-agent" in method_3m}
    missing = [what for what, present in needed.items() if not present]
    if missing:
        raise ValueError(f"{source}: no measured point for {', '.join(missing)} (benchmarks/step_cost.py)")
    base = dense_3m[BASE_VARIANT]
    per_agent = {algo: max(1.0, cost / base) for algo, cost in per_agent_3m.items()}
    return StepCosts(offpolicy, peak, act, update, length,
                     variant_factor={algo: max(1.0, cost / base) for algo, cost in dense_3m.items()},
                     per_agent_factor=per_agent[BASE_VARIANT], per_agent_variant_factor=per_agent,
                     sparse_factor=max(1.0, method_3m["mast per-agent"] / per_agent_3m[BASE_VARIANT]))


@cache
def measured() -> StepCosts:
    """The prices of the measured table (read once per process)."""
    with resources.files("effmarl").joinpath(TABLE).open() as f:
        return parse(list(csv.DictReader(f)))


def offpolicy_costs(algo: str, storage: str, n: int, batch: int = ROUND_BATCH,
                    costs: StepCosts | None = None) -> tuple[float, float]:
    """Paper 1: (seconds per env step, seconds per update round of `batch`) of `algo` on `storage` with N agents."""
    table = (costs or measured()).offpolicy
    if (algo, storage) not in table:
        raise ValueError(f"{TABLE}: no measured point for {algo} on the {storage} storage (benchmarks/step_cost.py)")
    ref, mine = table[REFERENCE], table[(algo, storage)]
    common = sorted(set(ref) & set(mine))
    out = []
    for i in (0, 1):
        base = interpolate({k: v[i] for k, v in ref.items()}, n)
        out.append(base if mine is ref else base * interpolate({k: mine[k][i] / ref[k][i] for k in common}, n))
    return out[0], out[1] * batch / ROUND_BATCH


def qmix_factor(algo: str, costs: StepCosts | None = None, shared: bool = True) -> float:
    """Paper 2: a variant's learner update against the base variant's with shared networks (the dearest measured
    one if not measured); with per-agent networks (`shared` False) its own per-agent point's, else that x the base's
    per-agent factor (module doc)."""
    costs = costs or measured()
    if not shared and algo in costs.per_agent_variant_factor:
        return costs.per_agent_variant_factor[algo]
    factors = costs.variant_factor
    return factors.get(algo, max(factors.values())) * (1.0 if shared else costs.per_agent_factor)
