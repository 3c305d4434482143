"""Does a batched product get cheaper per unit of work with more groups (seeds folded into the group axis) than
with more rows? One GRU-sized torch.baddbmm, [g, rows, 64] x [g, 64, 192], 1 thread, for (groups, rows) =
(3, 32), (9, 32), (24, 32), (3, 96), (3, 256): 3 agents, 3 or 8 seeds folded in, or their batches as rows.

    python benchmarks/batched_product_groups.py

Prints microseconds per product (median of 7 blocks of 300 after 20 warm-up products)."""

from __future__ import annotations

import statistics
import time

import torch

SHAPES = ((3, 32), (9, 32), (24, 32), (3, 96), (3, 256))


def micros(groups: int, rows: int) -> float:
    x, w, b = torch.randn(groups, rows, 64), torch.randn(groups, 64, 192), torch.randn(groups, 1, 192)
    for _ in range(20):
        torch.baddbmm(b, x, w)
    blocks = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(300):
            torch.baddbmm(b, x, w)
        blocks.append((time.perf_counter() - start) / 300 * 1e6)
    return statistics.median(blocks)


def main() -> None:
    torch.set_num_threads(1)
    base = micros(*SHAPES[0])
    print("groups  rows  us_per_product  vs_3x32")
    for groups, rows in SHAPES:
        us = base if (groups, rows) == SHAPES[0] else micros(groups, rows)
        print(f"{groups:6d} {rows:5d} {us:15.1f} {us / base:8.2f}")


if __name__ == "__main__":
    main()
