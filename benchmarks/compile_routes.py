"""Which compiled route could make the QMIX learner's update cheaper on this CPU: the GRU agent's unroll (the part of
an update that grows with the sequence), forward and backward, at SMAX 3m's shapes (3 per-agent networks, input 40,
GRU 64, 9 actions, 32 episodes × 25 states), one thread for torch, side by side in one process:

  eager, hand-written   RNNAgent.unroll (the learner's path: agent-major products, nets/gru_sequence.py's backward)
  eager, autograd       the same unroll recorded step by step by autograd (RNNAgent.unroll_reference)
  torch.compile         inductor's CPU code for the autograd unroll (one graph per sequence length; compile time)
  jax scan              jax.jit(jax.grad) of functional.agent_unroll (lax.scan over time), the compiled update's
  jax unrolled          the same with the time loop unrolled in Python (one XLA graph of T steps; compile time)
and where XLA's time goes inside the loop: the GRU's gate arithmetic (sigmoid, tanh, products) of all T steps as
one fused op against the same arithmetic step by step inside lax.scan.

    python benchmarks/compile_routes.py --out benchmarks/results/compile_routes [--no-inductor]

Writes <out>.csv and <out>.md (with the command and the machine). Times: median of 5 blocks of 20 calls (ms)."""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from effmarl import provenance
from effmarl.nets.rnn_agent import RNNAgent, linear_factory, reference_unroll

N, IN, H, A, B, T = 3, 40, 64, 9, 32, 25


def timed(fn, repeats: int = 5, calls: int = 20) -> float:
    fn()
    blocks = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        blocks.append((time.perf_counter() - start) / calls)
    return 1000 * statistics.median(blocks)


def first_call(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def torch_rows(inductor: bool) -> list[dict]:
    torch.manual_seed(0)
    agent = RNNAgent(IN, A, H, linear_factory(N, shared_params=False))
    x, w = torch.randn(B, T, N, IN), torch.randn(B, T, N, A)

    def step(unroll):
        agent.zero_grad()
        (unroll(x) * w).sum().backward()

    def reference(inputs):
        with reference_unroll():
            return agent.unroll(inputs)

    rows = [{"route": "eager, hand-written", "ms": timed(lambda: step(agent.unroll))},
            {"route": "eager, autograd", "ms": timed(lambda: step(reference))}]
    if inductor:
        compiled = torch.compile(agent.unroll_reference)
        seconds = first_call(lambda: step(compiled))
        rows.append({"route": "torch.compile (inductor)", "ms": timed(lambda: step(compiled)), "compile_s": seconds})
    return rows


def jax_rows() -> list[dict]:
    import jax
    import jax.numpy as jnp

    from effmarl.algos.qmix import functional

    rng = np.random.default_rng(0)
    p = {"fc1.weight": (N, H, IN), "fc1.bias": (N, H), "rnn.ih.weight": (N, 3 * H, H), "rnn.ih.bias": (N, 3 * H),
         "rnn.hh.weight": (N, 3 * H, H), "rnn.hh.bias": (N, 3 * H), "fc2.weight": (N, A, H), "fc2.bias": (N, A)}
    p = jax.device_put({k: (0.1 * rng.standard_normal(s)).astype(np.float32) for k, s in p.items()})
    x = jax.device_put(rng.standard_normal((B, T, N, IN)).astype(np.float32))
    w = jax.device_put(rng.standard_normal((B, T, N, A)).astype(np.float32))

    def unrolled(params, inputs):  # the time loop as T copies of the step in one graph
        h, qs = jnp.zeros((B, N, H), jnp.float32), []
        for t in range(T):
            q, h = functional.agent_step(params, inputs[:, t], h)
            qs.append(q)
        return jnp.stack(qs, axis=1)

    rows = []
    for route, unroll in (("jax scan", functional.agent_unroll), ("jax unrolled", unrolled)):
        grad = jax.jit(jax.grad(lambda params, inputs, unroll=unroll: (unroll(params, inputs) * w).sum()))
        seconds = first_call(lambda grad=grad: jax.block_until_ready(grad(p, x)))
        rows.append({"route": route, "ms": timed(lambda grad=grad: jax.block_until_ready(grad(p, x))),
                     "compile_s": seconds})

    gates = jax.device_put(rng.standard_normal((T, N, B, 3 * H)).astype(np.float32))
    hidden = jax.device_put(rng.standard_normal((T, N, B, H)).astype(np.float32))
    fused = jax.jit(lambda g, h: functional.gru_cell(g, g, h))

    def looped(g, h):
        return jax.lax.scan(lambda carry, xs: (functional.gru_cell(xs[0], xs[0], carry), carry), h[0], (g, h))[0]

    looped = jax.jit(looped)
    rows.append({"route": "xla gate arithmetic, all steps as one op", "ms": timed(
        lambda: jax.block_until_ready(fused(gates, hidden)))})
    rows.append({"route": "xla gate arithmetic, step by step in lax.scan", "ms": timed(
        lambda: jax.block_until_ready(looped(gates, hidden)))})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--no-inductor", action="store_true", help="skip torch.compile (its compile takes minutes)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    table = pd.DataFrame(torch_rows(not args.no_inductor) + jax_rows())
    base = float(table.loc[table.route == "eager, hand-written", "ms"].iloc[0])
    table["vs_eager_hand_written"] = base / table["ms"]
    rec = provenance.record()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out.with_suffix(".csv"), index=False)
    out.with_suffix(".md").write_text(
        f"# Compiled routes for the GRU agent's unroll, forward and backward (3 per-agent networks, {B} x {T} "
        f"states, GRU {H}; 1 torch thread)\n\n{rec['hardware']['cpu_model']}, commit {rec['git']['commit']}; "
        f"command: `python benchmarks/compile_routes.py --out {args.out}"
        f"{' --no-inductor' if args.no_inductor else ''}`\n\n" + table.to_markdown(index=False, floatfmt=".3g") + "\n")
    print(table.to_string())


if __name__ == "__main__":
    main()
