"""The QMIX family's variants, one table: everything else (schema enum, training module and cross-field checks,
networks, target operator, extra loss terms, FLOPs, display name, the workflow's and the analysis's
lists) reads it.

Adding a variant is one `Variant` entry in `QMIX_VARIANTS` plus its own functions (a target operator in
algos/qmix/operators.py when it reuses none, a FLOPs formula here).
The table is plain Python (no torch, no jax), so the schema, the workflow and the figure modules can read it;
the learner resolves the names below inside algos/qmix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# The networks a variant can build (algos/qmix/networks.py): PyMARL's GRU agent and QMIX's hypernetwork mixer,
# and OW-QMIX's central GRU agent and unrestricted feed-forward central mixer Q*.
QMIX_NETWORKS = ("agent", "mixer")
CENTRAL_NETWORKS = ("agent", "mixer", "central_agent", "central_mixer")


def qmix_flops(batch: int, f_agent: float, f_mix: float, f_unrestricted_agent: float, f_unrestricted_mix: float,
               n_agents: int | None, n_actions: int | None) -> float:
    return batch * 4 * (f_agent + f_mix)


def ow_qmix_flops(batch: int, f_agent: float, f_mix: float, f_unrestricted_agent: float, f_unrestricted_mix: float,
                  n_agents: int | None, n_actions: int | None) -> float:
    return batch * (3 * f_agent + 3 * f_mix + 4 * f_unrestricted_agent + 4 * f_unrestricted_mix)


def res_qmix_flops(batch: int, f_agent: float, f_mix: float, f_unrestricted_agent: float, f_unrestricted_mix: float,
                   n_agents: int | None, n_actions: int | None) -> float:
    if n_agents is None or n_actions is None:
        raise ValueError("RES training FLOPs need n_agents and n_actions")
    return batch * (4 * f_agent + (3 + 2 * n_agents * n_actions) * f_mix)


@dataclass(frozen=True)
class Variant:
    """One QMIX-family algorithm (config field `algo`).

    networks:    the networks it builds, in build order (networks.py); with "central_agent"/"central_mixer" the
                 central ones are counted as the unrestricted networks of its FLOPs and their Q* takes the
                 per-agent operator's values (operators.py)
    operator:    its target operator: a function name in algos/qmix/operators.py
    losses:      extra loss terms besides the squared TD error: "ow_weighting" (OW-QMIX's weighted TD error and
                 central Q* loss, qmix.ow_w and qmix.central_loss), "res_regulariser" (RES's regulariser towards
                 the discounted return, qmix.res_lambda)
    train_flops: the paper's FLOPs of one training iteration (sparse/flops.py) from the forward FLOPs per sample
                 of its networks (agent, mixer and, for central variants, the unrestricted ones)
    display:     its name in figures and tables
    aliases:     other names of it that training_flops accepts (the paper's)
    """
    name: str
    display: str
    networks: tuple[str, ...]
    operator: str
    losses: tuple[str, ...]
    train_flops: Callable[..., float]
    aliases: tuple[str, ...] = ()
    module: str = "effmarl.algos.qmix"                    # exposes run(cfg, rundir) and run_lockstep
    checks: str = "effmarl.qmix_checks:check_config"      # its cross-field checks (config.py; torch-free)

    @property
    def central(self) -> bool:
        return "central_mixer" in self.networks


# A variant's cost (its learner update against the base variant's) is measured, not declared: effmarl/step_costs.py
# reads it from benchmarks/results/step_cost.csv (a variant not yet measured is priced as the dearest one).
QMIX_VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("qmix", "QMIX", QMIX_NETWORKS, "double_q_max", (), qmix_flops),
    Variant("ow_qmix", "OW-QMIX", CENTRAL_NETWORKS, "ow_central", ("ow_weighting",), ow_qmix_flops,
            aliases=("owqmix", "wqmix")),
    Variant("res_qmix", "RES-QMIX", QMIX_NETWORKS, "res_softmax", ("res_regulariser",), res_qmix_flops,
            aliases=("res",)),
)}
BASE_VARIANT = "qmix"  # the family's reference: plain QMIX (other variants' costs are measured against it)


def variant(algo: str) -> Variant:
    """The table entry of `algo`; KeyError naming the known variants for any other algorithm."""
    try:
        return QMIX_VARIANTS[algo]
    except KeyError:
        raise KeyError(f"{algo!r} is not a QMIX-family variant ({', '.join(QMIX_VARIANTS)})") from None
