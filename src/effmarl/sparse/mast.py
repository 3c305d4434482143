"""MAST's configuration: which of its parts a run switches on, and the Tiny baseline's width.

`mast_components(cfg)` reads the run config's sparse / mellowmax / mast / rlx2 sections: each part follows
sparse.method unless its `enabled` says otherwise (null = follow the method).

`tiny_width_for(build, target)`: Tiny is a dense network with as many weights as the sparse model keeps. Its width
is found by counting the sparsifiable weights of the *real* modules built at each candidate width (on the meta
device, so nothing is allocated), so the count can never drift from the architecture the learner builds.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from effmarl.sparse.masks import named_parameters, sparsifiable_weights


def mast_components(cfg: dict) -> dict[str, bool]:
    """Which MAST / RLx2 parts are on: `enabled: null` follows sparse.method, true/false switches a part alone."""
    method = cfg["sparse"]["method"]

    def on(section: dict, default: bool) -> bool:
        return default if section["enabled"] is None else bool(section["enabled"])

    return {"mellowmax": on(cfg["mellowmax"], method == "mast"),
            "td_lambda": on(cfg["mast"]["td_lambda"], method == "mast"),
            "dual_buffer": on(cfg["mast"]["dual_buffer"], method == "mast"),
            "multi_step": on(cfg["rlx2"]["multi_step"], method == "rlx2"),
            "dynamic_buffer": on(cfg["rlx2"]["dynamic_buffer"], method == "rlx2")}


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
