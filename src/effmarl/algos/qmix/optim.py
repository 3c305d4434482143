"""PyMARL's RMSprop (no momentum, not centred, no weight decay) with a square root that never sees a subnormal.

torch.optim.RMSprop computes avg = sqrt(square_avg) + eps. square_avg holds subnormal floats (< 2^-126) wherever a
weight's gradients are tiny or have been zero for a while (it decays by α every step), and the CPU's square root
of a subnormal is ~45× slower than of a normal float: on the QMIX learner this made the optimiser step ~2 ms of a
~25 ms update. Here avg = sqrt(max(square_avg, 2^-126)) + eps, which is the same float32 number: for any
x < 2^-126, sqrt(x) ≤ sqrt(2^-126) ≈ 1.1e-19, less than half a unit in the last place of eps (for eps ≥ 1e-11;
PyMARL's 1e-5 has a half-ulp of 4.5e-13), so eps + sqrt(x) rounds to eps either way. The state (step,
square_avg) and every parameter are bitwise those of torch's RMSprop (tests/test_learner_fast.py), so
checkpoints and `load_state_dict` are interchangeable with it.
"""

from __future__ import annotations

import torch

TINY = torch.finfo(torch.float32).tiny  # 2^-126, the smallest normal float32
MIN_EPS = 1e-11  # below this eps the rounding argument above does not hold: plain square root


class RMSprop(torch.optim.RMSprop):
    def __init__(self, params, lr: float, alpha: float, eps: float):
        super().__init__(params, lr=lr, alpha=alpha, eps=eps)

    @torch.no_grad()
    def step(self, closure=None):
        if closure is not None:
            raise ValueError("RMSprop.step: closures are not supported")
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:  # torch's initial state, same keys and dtypes
                    state["step"] = torch.zeros((), dtype=torch.get_default_dtype())
                    state["square_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["step"] += 1
                square_avg = state["square_avg"]
                square_avg.mul_(alpha).addcmul_(p.grad, p.grad, value=1 - alpha)
                floor = square_avg.clamp_min(TINY) if eps >= MIN_EPS and square_avg.dtype == torch.float32 \
                    else square_avg
                p.addcdiv_(p.grad, floor.sqrt().add_(eps), value=-lr)
        return None
