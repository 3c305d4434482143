"""Per-layer densities under one global sparsity S: Erdős–Rényi (RigL's "ER") or uniform.

A layer l with per-agent weight shape (out, in) and n_l weights (all agents' copies together) gets density
d_l = min(1, ε·(in + out)/(in·out)); ε is chosen so that Σ_l d_l·n_l = (1 − S)·Σ_l n_l. A layer whose density
would exceed 1 is kept dense and the budget it leaves is spread over the others (RigL's iterative rule:
mark the layer with the largest raw density dense, recompute ε, repeat).

`kept_counts` turns densities into integer numbers of active weights per layer that sum exactly to
round((1 − S)·Σ n_l) (largest-remainder rounding, each count in [1, n_l]), so the global budget is exact.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def er_raw_density(shape: Sequence[int]) -> float:
    """(fan_in + fan_out)/(fan_in·fan_out) for a per-agent weight of shape (out, in)."""
    out, inp = shape[-2], shape[-1]
    return (out + inp) / (out * inp)


def layer_densities(layers: Mapping[str, tuple[Sequence[int], int]], sparsity: float,
                    distribution: str = "er") -> dict[str, float]:
    """Densities per layer. layers: name -> (per-agent shape (out, in), number of weights n_l)."""
    if not 0.0 <= sparsity < 1.0:
        raise ValueError(f"sparsity must be in [0, 1), got {sparsity}")
    if distribution == "uniform":
        return {name: 1.0 - sparsity for name in layers}
    if distribution != "er":
        raise ValueError(f"distribution must be 'er' or 'uniform', got {distribution!r}")
    total = sum(n for _, n in layers.values())
    budget = (1.0 - sparsity) * total
    raw = {name: er_raw_density(shape) for name, (shape, _) in layers.items()}
    dense: set[str] = set()
    while True:
        free = budget - sum(layers[name][1] for name in dense)
        weighted = sum(raw[name] * layers[name][1] for name in layers if name not in dense)
        if weighted <= 0.0:  # every layer dense
            return {name: 1.0 for name in layers}
        eps = free / weighted
        over = [name for name in layers if name not in dense and eps * raw[name] > 1.0]
        if not over:
            return {name: 1.0 if name in dense else eps * raw[name] for name in layers}
        dense.add(max(over, key=lambda name: raw[name]))


def kept_counts(sizes: Mapping[str, int], densities: Mapping[str, float], sparsity: float) -> dict[str, int]:
    """Integer active-weight counts per layer, summing exactly to round((1 − S)·Σ sizes)."""
    target = round((1.0 - sparsity) * sum(sizes.values()))
    exact = {name: densities[name] * sizes[name] for name in sizes}
    counts = {name: min(sizes[name], max(1, math.floor(exact[name]))) for name in sizes}  # no layer left empty
    short = target - sum(counts.values())
    order = sorted(sizes, key=lambda name: exact[name] - counts[name], reverse=True)
    while short > 0:  # hand out the remainders, largest fractional part first, never above a layer's size
        progressed = False
        for name in order:
            if short == 0:
                break
            if counts[name] < sizes[name]:
                counts[name] += 1
                short -= 1
                progressed = True
        if not progressed:
            break
    while short < 0:  # from the one-weight floor or the target's rounding: take from the largest layers
        name = max(counts, key=lambda k: counts[k])
        counts[name] -= 1
        short += 1
    return counts
