"""The Tiny baseline: a dense network whose parameter count matches the sparse model's.

An architecture is a list of layers (kind, inputs, outputs), kind "linear" or "gru" (outputs = hidden size);
a size is an int, "h" (the width being searched) or a callable width -> int (e.g. lambda h: 2 * h, or a fixed
ratio between a mixer's embedding and hypernet widths). Parameter counts use the paper's size formulas,
I·O for a linear layer and 3h(h + I) for a GRU, weights only unless include_bias.

Search: the dense count is non-decreasing in the width, so a binary search finds the smallest width whose count
reaches the target; the answer is that width or the one below, whichever count is closer to the target (ties go
to the smaller network, so Tiny is never larger than the sparse model it is compared with when they tie).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Size = int | str | Callable[[int], int]
Spec = Sequence[tuple[str, Size, Size]]


def _size(value: Size, width: int) -> int:
    if value == "h":
        return width
    if callable(value):
        return int(value(width))
    return int(value)


def dense_param_count(spec: Spec, width: int, *, copies: int = 1, include_bias: bool = False) -> int:
    total = 0
    for kind, inp, out in spec:
        i, o = _size(inp, width), _size(out, width)
        if kind == "linear":
            total += i * o + (o if include_bias else 0)
        elif kind == "gru":
            total += 3 * o * (o + i) + (6 * o if include_bias else 0)
        else:
            raise ValueError(f"unknown layer kind {kind!r}")
    return copies * total


def tiny_width(spec: Spec, target_params: int, *, copies: int = 1, include_bias: bool = False,
               max_width: int = 1 << 16) -> int:
    """The width whose dense parameter count is closest to target_params (see module docstring)."""
    def count(w: int) -> int:
        return dense_param_count(spec, w, copies=copies, include_bias=include_bias)

    lo, hi = 1, max_width
    if count(hi) < target_params:
        raise ValueError(f"target {target_params} exceeds the count at max_width={max_width}")
    while lo < hi:  # smallest width with count >= target
        mid = (lo + hi) // 2
        if count(mid) >= target_params:
            hi = mid
        else:
            lo = mid + 1
    if lo > 1 and target_params - count(lo - 1) <= count(lo) - target_params:
        return lo - 1
    return lo
