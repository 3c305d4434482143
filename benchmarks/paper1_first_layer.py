"""How close is the batched MADDPG round's largest product to this CPU's arithmetic limit? In shared-batch mode
every critic i reads the same joint input X `[B, W]` (W = N·(D + A)), and its first layer is
    pre_i = X · W0_i + b_i        (forward, 2·B·W·H FLOP per critic)
    dW0_i = Xᵀ · dpre_i           (weight gradient, the same again)
A round makes four such passes over all N critics (target critic, critic forward, its weight gradient, the
critic forward of the actor loss after the critic step). This times forward + weight gradient of the first
layer, 1 torch thread, in two forms that compute the same numbers:
    batched   `torch.baddbmm(b, X.expand(N, B, W), W0)`, as `effmarl.algos.stacked.StackedMLP` does
    one_gemm  `X @ W0.permute(1, 0, 2).reshape(W, N·H)`: one [B, W] x [W, N·H] product for all critics
and reports GFLOP/s, so the round's first-layer floor is 4 · 2·N·B·W·H / (that rate).

    python benchmarks/paper1_first_layer.py [--agents 12 48] [--batch 1024] [--repeats 5]

Widths are predator-prey's, read from `effmarl.envs.mpe_vec` (N = 12: W = 516; N = 48: W = 6 672); H = 64.
Prints milliseconds (median of `--repeats` calls after a warm-up), GFLOP/s and the implied floor per form."""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from effmarl.config import validate
from effmarl.envs import make_env

HIDDEN = 64


def joint_width(n_agents: int) -> int:
    """W: the stacked critic's padded joint-input width N·(max obs width + actions)."""
    env = make_env(validate({"study": "bench", "algo": "maddpg", "seed": 0,
                             "env": {"backend": "mpe_vec", "n_agents": n_agents}}, part="run")["env"])
    spec = env.spec
    env.close()
    return n_agents * (max(spec.obs_dims) + spec.n_actions[0])


def time_form(form: str, n: int, batch: int, width: int, repeats: int) -> float:
    x = torch.randn(batch, width)
    w0 = torch.randn(n, width, HIDDEN, requires_grad=True)
    b0 = torch.randn(n, 1, HIDDEN, requires_grad=True)

    def one() -> None:
        if form == "batched":
            pre = torch.baddbmm(b0, x.expand(n, -1, -1), w0)
        else:
            pre = (x @ w0.permute(1, 0, 2).reshape(width, n * HIDDEN)).reshape(batch, n, HIDDEN).transpose(0, 1) + b0
        pre.backward(torch.ones_like(pre))
        w0.grad = b0.grad = None

    one()
    blocks = []
    for _ in range(repeats):
        start = time.perf_counter()
        one()
        blocks.append(time.perf_counter() - start)
    return statistics.median(blocks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="+", type=int, default=[12, 48])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("agents  width  form      ms_fwd+wgrad  GFLOP/s  round_first_layer_floor_ms")
    for n in args.agents:
        width = joint_width(n)
        flop = 2 * 2 * n * args.batch * width * HIDDEN          # forward + weight gradient
        for form in ("batched", "one_gemm"):
            seconds = time_form(form, n, args.batch, width, args.repeats)
            rate = flop / seconds / 1e9
            print(f"{n:6d} {width:6d}  {form:8s} {seconds * 1e3:13.1f} {rate:8.1f} "
                  f"{2 * seconds * 1e3:27.1f}")


if __name__ == "__main__":
    main()
