"""One compiled update of the QMIX family: the loss and its gradient as one jitted JAX program.

    grads, loss, stats = CompiledLoss(learner)(params, batch, kind)
      params   one seed's online and target parameters, torch tensors keyed by the learner's parameter names
      batch    an episode batch, padded in time to a length bucket (8, 12, 16, 24, 32, 48, …: ≤ 1.5× its
               longest episode), so that a run compiles a handful of programs, not one per length
      program  jax.jit(jax.value_and_grad(functional.make_loss(learner))) — the whole forward (online and target
               unrolls, mixers, target operator, returns, loss) and backward as one XLA program, compiled once per
               (return kind, bucket) and cached for the process
The optimiser step (sparse evolution reading the dense gradient, gradient masks, clipping, RMSprop) stays in torch,
in the one step function of lockstep.SeedStack, which takes these gradients in place of a backward pass.

Why JAX and not torch.compile: measured side by side on one update (benchmarks/results/qmix_compiled.md), the
jitted program costs a fraction of the eager update, compiles in seconds per bucket, and its agent is the same
function the jitted SMAX runner acts with (functional.agent_step), so acting and learning share one definition.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from effmarl.replay.episode import pad_time

TARGET = "target."


def bucket(steps: int) -> int:
    """The padded length of a batch of `steps` transitions: the smallest of 8, 12, 16, 24, 32, 48, … ≥ steps."""
    size = 8
    while True:
        for candidate in (size, size * 3 // 2):
            if candidate >= steps:
                return candidate
        size *= 2


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().cpu().numpy()


class CompiledLoss:
    """The loss and gradient of one learner configuration as jitted programs (see the module docstring).
    `compile_seconds` adds up the calls that compiled a new program (their wall time, tracing included)."""

    def __init__(self, learner):
        import jax

        from effmarl.algos.qmix.functional import make_loss

        self._program = jax.jit(jax.value_and_grad(make_loss(learner), has_aux=True), static_argnums=3)
        self.compile_seconds, self.programs = 0.0, set()

    def __call__(self, params: dict[str, torch.Tensor], batch: dict[str, torch.Tensor],
                 kind: tuple) -> tuple[dict[str, torch.Tensor], torch.Tensor, dict[str, torch.Tensor]]:
        """(gradient of every online parameter, loss, statistics) of one seed's parameters on `batch`."""
        import jax

        online = {n: _numpy(p) for n, p in params.items() if not n.startswith(TARGET)}
        target = {n[len(TARGET):]: _numpy(p) for n, p in params.items() if n.startswith(TARGET)}
        steps = bucket(batch["filled"].shape[1])
        padded = pad_time(batch, steps)
        data = {k: _numpy(v) for k, v in padded.items()}
        data["actions"] = data["actions"].astype(np.int32)
        for k in ("filled", "terminated"):
            data[k] = data[k].astype(np.float32)
        key = (steps, kind, tuple(data["obs"].shape))
        start = time.perf_counter()
        (loss, stats), grads = self._program(online, target, data, tuple(kind))
        jax.block_until_ready(grads)
        if key not in self.programs:
            self.programs.add(key)
            self.compile_seconds += time.perf_counter() - start
        return ({n: torch.from_numpy(np.array(g)) for n, g in grads.items()}, torch.tensor(float(loss)),
                {k: torch.tensor(float(v)) for k, v in stats.items()})
