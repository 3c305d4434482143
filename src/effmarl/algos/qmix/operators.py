"""Target operators of the QMIX family: the bootstrap value V(s_t) of every state of an episode batch.

Each operator is one function `op(learner, inputs, q_online, q_target, avail, states) -> V [B, T+1]`, where
q_online / q_target are the online and target agents' Q-values [B, T+1, n, A] (q_online detached) and the
learner's target networks mix. `choose_operator` picks one per run, once:

  qmix      — double Q: the online agents pick each agent's greedy available action, the target agents value
              it, the target mixer mixes (plain max over the target agents when qmix.double_q is off);
  ow_qmix   — the target *central* agent values QMIX's greedy actions, the target central mixer Q* mixes
              (Rashid et al. 2020, oxwhirl/wqmix);
  res_qmix  — RES's softmax operator over the n·m joint actions in which one agent deviates from the greedy
              joint action, weighted by softmax(β Q_tot) of the online mixer (Pan et al. 2021, ling-pan/RES);
  MAST      — each agent's Soft Mellowmax over its available actions replaces the max (for ow_qmix over the
              central agent's values into Q*; for res_qmix it takes the place of RES's operator, docs/mast.md).
              `mellowmax.operator` swaps the per-agent operator for the paper's Fig. 16 comparison: mellowmax,
              the Boltzmann softmax operator (inverse temperature mellowmax.beta) or a plain max.

Adding a target variant means adding one function here and naming it in the variant's table entry
(effmarl/variants.py).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from effmarl.targets.mellowmax import masked_max, mellowmax, soft_mellowmax, softmax_operator
from effmarl.variants import variant

NEG = -1e9  # stands for -inf on unavailable actions (finite, so that masked products stay finite)

Operator = Callable[..., torch.Tensor]


def greedy_actions(q_values: torch.Tensor, avail: torch.Tensor) -> torch.Tensor:
    """Index of each agent's best available action."""
    return q_values.masked_fill(~avail, NEG).argmax(-1)


def _at(q_values: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    return q_values.gather(-1, actions.unsqueeze(-1)).squeeze(-1)


def double_q_max(learner, inputs, q_online, q_target, avail, states) -> torch.Tensor:
    greedy = greedy_actions(q_online if learner.q.double_q else q_target, avail)
    return learner.target["mixer"](_at(q_target, greedy), states)


def ow_central(learner, inputs, q_online, q_target, avail, states) -> torch.Tensor:
    greedy = greedy_actions(q_online if learner.q.double_q else q_target, avail)
    central = learner.unroll(learner.target["central_agent"], inputs)
    return learner.target["central_mixer"](_at(central, greedy), states)


def res_softmax(learner, inputs, q_online, q_target, avail, states) -> torch.Tensor:
    """Σ_{(i,a)} softmax_{(i,a)}(β Q_tot(u*_{-i}, a)) · Q_tot^target(u*_{-i}, a) over available (i, a)."""
    n, m = learner.n_agents, learner.n_actions
    greedy = greedy_actions(q_online if learner.q.double_q else q_target, avail)
    eye = torch.eye(n, dtype=torch.bool, device=q_online.device).view(n, 1, n)

    def counterfactual(qs: torch.Tensor) -> torch.Tensor:  # [..., n, m] -> [..., n*m, n]
        cf = torch.where(eye, qs.unsqueeze(-1), _at(qs, greedy)[..., None, None, :])
        return cf.reshape(*qs.shape[:-2], n * m, n)

    online_tot = learner.mixer.forward_many(counterfactual(q_online.masked_fill(~avail, 0.0)), states)
    target_tot = learner.target["mixer"].forward_many(counterfactual(q_target.masked_fill(~avail, 0.0)), states)
    logits = (learner.q.res_beta * online_tot).masked_fill(~avail.reshape(*avail.shape[:-2], n * m), NEG)
    return (torch.softmax(logits, dim=-1) * target_tot).sum(-1)


def agent_value(settings: dict) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """Each agent's value over its available actions, (Q [..., A], avail) -> [...]: the `mellowmax.operator` of
    `settings` ({"operator" (default soft_mellowmax), "alpha", "omega", "beta"})."""
    name = settings.get("operator", "soft_mellowmax")
    if name == "soft_mellowmax":
        return lambda q, avail: soft_mellowmax(q, avail, settings["alpha"], settings["omega"])
    if name == "mellowmax":
        return lambda q, avail: mellowmax(q, avail, settings["omega"])
    if name == "softmax":
        return lambda q, avail: softmax_operator(q, avail, settings["beta"])
    if name == "max":
        return masked_max
    raise ValueError(f"mellowmax.operator: unknown operator {name!r}")


def per_agent_operator(value: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> Operator:
    """The target mixer over each agent's `value` of the target agents' Q (OW-QMIX: the target central agent's
    values into the target central mixer Q*)."""
    def op(learner, inputs, q_online, q_target, avail, states) -> torch.Tensor:
        if learner.variant.central:
            central = learner.unroll(learner.target["central_agent"], inputs)
            return learner.target["central_mixer"](value(central, avail), states)
        return learner.target["mixer"](value(q_target, avail), states)

    return op


def choose_operator(algo: str, mellowmax: dict | None) -> Operator:
    """The operator of `algo`; with the mellowmax component on (`mellowmax`: {"operator", "alpha", "omega",
    "beta"}) the target mixer over each agent's chosen operator replaces it."""
    if mellowmax:
        return per_agent_operator(agent_value(mellowmax))
    return globals()[variant(algo).operator]  # the function of this module its table entry names
