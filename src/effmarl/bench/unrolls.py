"""The GRU agent's unroll as it was before the learner's optimisation, and the padded agent-major unroll: the
references that `effmarl bench qmix --only update`, benchmarks/qmix_packed_e2e.py and tests/test_learner_fast.py
time or compare the production unroll (nets.rnn_agent.RNNAgent.unroll) against. Training never calls them.

    reference_unroll(agent, x, h)   step-by-step autograd, indexing gi[:, t] (whose backward zero-fills a copy of gi
                                    per step), every step of the padded batch
    padded_unroll(agent, x, h)      the production unroll without episode lengths: per-agent layers agent-major with
                                    the hand-written recurrence backward over every padded step (no packing)
    use_unroll(module, fn)          inside the block every RNNAgent in `module` (a learner: online, target and central
                                    agents) unrolls with fn; an instance attribute, restored on exit
    every_agent(fn)                 inside the block every RNNAgent, including those a training run builds, unrolls
                                    with fn (patches the class for the block: benchmarks and tests only)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
from torch import nn

from effmarl.nets.rnn_agent import RNNAgent

Unroll = Callable[[RNNAgent, torch.Tensor, torch.Tensor | None], torch.Tensor]
_PRODUCTION = RNNAgent.unroll  # the class's own unroll, also while every_agent has replaced it


def reference_unroll(agent: RNNAgent, inputs: torch.Tensor, hidden: torch.Tensor | None = None) -> torch.Tensor:
    """Q-values [B, T, n, A] of inputs [B, T, n, in] the way the learner computed them before nets/gru_sequence.py:
    fc1 and the input projection over all steps, then the cell step by step under autograd (torch's fused cell for
    shared nn.Linear layers)."""
    x = torch.relu(agent.fc1(inputs))
    h = agent.init_hidden(inputs.shape[0], inputs.shape[2]) if hidden is None else hidden
    hs = []
    if agent.rnn.fused and type(agent.rnn.ih) is nn.Linear and type(agent.rnn.hh) is nn.Linear:
        for t in range(inputs.shape[1]):
            h = agent.rnn(x[:, t], h)
            hs.append(h)
        return agent.fc2(torch.stack(hs, dim=1))
    gi = agent.rnn.ih(x)
    for t in range(inputs.shape[1]):
        h = agent.rnn.from_input_gates(gi[:, t], h)
        hs.append(h)
    return agent.fc2(torch.stack(hs, dim=1))


def padded_unroll(agent: RNNAgent, inputs: torch.Tensor, hidden: torch.Tensor | None = None) -> torch.Tensor:
    """The production unroll given no lengths: every padded step computed (the path before packing)."""
    return _PRODUCTION(agent, inputs, hidden)


def _bound(agent: RNNAgent, fn: Unroll):
    def unroll(inputs, hidden=None, lengths=None):  # lengths ignored: both references run every padded step
        return fn(agent, inputs, hidden)
    return unroll


@contextmanager
def use_unroll(module: nn.Module, fn: Unroll) -> Iterator[None]:
    """Every RNNAgent inside `module` unrolls with fn(agent, inputs, hidden) within the block (their `unroll`
    instance attribute, removed again on exit; the class is untouched)."""
    agents = [m for m in module.modules() if isinstance(m, RNNAgent)]
    for agent in agents:
        agent.unroll = _bound(agent, fn)
    try:
        yield
    finally:
        for agent in agents:
            del agent.unroll


@contextmanager
def every_agent(fn: Unroll) -> Iterator[None]:
    """Every RNNAgent, those built inside the block included, unrolls with fn within the block: for a whole training
    run, whose learners the caller never sees (benchmarks/qmix_packed_e2e.py, tests/test_learner_fast.py)."""
    original = RNNAgent.unroll

    def unroll(self, inputs, hidden=None, lengths=None):
        return fn(self, inputs, hidden)

    RNNAgent.unroll = unroll
    try:
        yield
    finally:
        RNNAgent.unroll = original
