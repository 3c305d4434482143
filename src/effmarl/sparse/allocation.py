"""How a per-agent layer's connections are split between the agents (the paper's Fig. 12).

`sparse.allocation`:
  learned  one budget per stacked layer [n_agents, out, in], ranked across all agents (MAST: the split is learned)
  equal    every agent keeps exactly the same number of active weights in every stacked layer, at every step
  by_type  each agent's share is proportional to its unit type's weight in `sparse.type_density`

`agent_shares` turns the config and the env's unit types into one relative weight per agent (None: learned);
`split_by_agent` turns a layer budget into per-agent budgets. Per-agent budgets are whole numbers (floor of the
exact share), so a stacked layer may keep up to n_agents − 1 fewer weights than its Erdős–Rényi count; those are
given to the layers that are not per agent (the mixers), largest room first, so the global budget stays exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def agent_shares(sparse_cfg: Mapping, unit_types: Sequence[str] | None, n_agents: int) -> list[float] | None:
    """One relative weight per agent, or None for the learned allocation. A problem raises ValueError(field,
    message)."""
    allocation = sparse_cfg.get("allocation", "learned")
    if allocation == "learned":
        return None
    if allocation == "equal":
        return [1.0] * n_agents
    if allocation != "by_type":
        raise ValueError("sparse.allocation", f"unknown allocation {allocation!r}")
    weights = sparse_cfg.get("type_density") or {}
    missing = sorted(set(unit_types or ()) - set(weights))
    if unit_types is None:
        raise ValueError("sparse.allocation", "by_type needs the unit type of every agent, which this env does "
                                              "not report")
    if missing:
        raise ValueError("sparse.type_density", f"no weight for unit type(s) {', '.join(missing)} of this map")
    return [float(weights[t]) for t in unit_types]


def split_by_agent(counts: Mapping[str, int], sizes: Mapping[str, int], stacked: Mapping[str, int],
                   shares: Sequence[float]) -> tuple[dict[str, int], dict[str, list[int]]]:
    """Per-agent budgets of the stacked layers (name -> n_agents) from the layer counts and the agents' shares.
    Returns (layer counts, every layer; their sum unchanged) and {stacked layer: [budget of agent a]}."""
    counts, per_agent, spill = dict(counts), {}, 0
    total_share = float(sum(shares))
    for name, n in stacked.items():
        if len(shares) != n:
            raise ValueError(f"{name}: {n} agents but {len(shares)} shares")
        cap = sizes[name] // n
        each = [min(cap, int(counts[name] * share / total_share)) for share in shares]
        spill += counts[name] - sum(each)
        counts[name], per_agent[name] = sum(each), each
    for name in sorted((k for k in counts if k not in stacked), key=lambda k: sizes[k] - counts[k], reverse=True):
        take = min(spill, sizes[name] - counts[name])
        counts[name] += take
        spill -= take
    if spill:
        raise ValueError(f"no layer outside the per-agent ones can take the {spill} weights the per-agent split "
                         "leaves over")
    return counts, per_agent
