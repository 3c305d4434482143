"""The Tiny baseline's width, and the weights a sparse method sparsifies that it is matched to. (Which of MAST's parts
a run switches on is effmarl/components.py's `mast_components`.)

`tiny_width_for(build, target)`: Tiny is a dense network with as many weights as the sparse model keeps. Its width
is found by counting the sparsifiable weights of the *real* modules built at each candidate width (on the meta
device, so nothing is allocated), so the count can never drift from the architecture the learner builds.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from effmarl.sparse.masks import named_parameters, sparsifiable_weights


def sparsifiable_count(modules: dict[str, nn.Module]) -> int:
    """Weights MAST would sparsify in these modules (biases excluded): the size the paper counts."""
    params = named_parameters(modules)
    return sum(params[name].numel() for name in sparsifiable_weights(modules))


def weight_count(build: Callable[[int], dict[str, nn.Module]], width: int) -> int:
    """sparsifiable_count of the modules `build(width)` makes, built on the meta device (no memory, no init)."""
    with torch.device("meta"):
        return sparsifiable_count(build(width))


def tiny_width_for(build: Callable[[int], dict[str, nn.Module]], target: int, max_width: int) -> int:
    """The width in [1, max_width] whose real modules' weight count is closest to `target` (ties: the smaller
    network, so Tiny is never larger than the sparse model it replaces when they tie). The count is
    non-decreasing in the width, so a binary search finds the smallest width reaching the target."""
    lo, hi = 1, max_width
    while lo < hi:
        mid = (lo + hi) // 2
        if weight_count(build, mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    if lo > 1 and target - weight_count(build, lo - 1) <= weight_count(build, lo) - target:
        return lo - 1
    return lo
