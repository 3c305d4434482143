"""The PyMARL GRU agent: fc -> ReLU -> GRU cell -> fc, one Q-value per action.

Every layer is made by one `linear(in_features, out_features)` factory, the GRU cell included (it is written
out from two linear maps, input->3h and hidden->3h, exactly torch.nn.GRUCell's equations), so a later
issue can swap in masked sparse layers everywhere by passing another factory.

Inputs are laid out [..., n_agents, features]. With shared parameters (PyMARL's default) the factory is
nn.Linear and every agent uses the same weights; with `shared_params=False` it is `StackedLinear`, which
keeps one weight matrix per agent stacked in one tensor [n_agents, out, in] and applies all of them in one
batched product.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from effmarl.nets.gru_sequence import gru_packed, gru_sequence

LinearFactory = Callable[[int, int], nn.Module]


class StackedLinear(nn.Module):
    """n independent linear layers, one per agent: [..., n, in] -> [..., n, out]."""

    def __init__(self, n: int, in_features: int, out_features: int):
        super().__init__()
        self.n_agents, self.in_features, self.out_features = n, in_features, out_features
        self.weight = nn.Parameter(torch.empty(n, out_features, in_features))
        self.bias = nn.Parameter(torch.empty(n, out_features))
        bound = 1.0 / math.sqrt(in_features)  # nn.Linear's default initialisation, per agent
        nn.init.uniform_(self.weight, -bound, bound)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.einsum("...ni,noi->...no", x, self.weight) + self.bias

    def agent_major(self, x: torch.Tensor) -> torch.Tensor:
        """The same layer on agent-major inputs [n, rows, in] -> [n, rows, out]: one batched product, no permutes."""
        return torch.baddbmm(self.bias.unsqueeze(1), x, self.weight.transpose(1, 2))


def linear_factory(n_agents: int, shared_params: bool = True) -> LinearFactory:
    """nn.Linear (shared by all agents) or StackedLinear (one set of weights per agent)."""
    if shared_params:
        return nn.Linear
    return lambda i, o: StackedLinear(n_agents, i, o)


class GRUCell(nn.Module):
    """torch.nn.GRUCell's equations and initialisation, built from two `linear` layers."""

    def __init__(self, input_size: int, hidden_size: int, linear: LinearFactory = nn.Linear):
        super().__init__()
        self.hidden_size = hidden_size
        # torch's fused cell for dense shared layers; off under torch.func.vmap, which has no batching rule for it
        self.fused = True
        self.ih = linear(input_size, 3 * hidden_size)
        self.hh = linear(hidden_size, 3 * hidden_size)
        bound = 1.0 / math.sqrt(hidden_size)
        for layer in (self.ih, self.hh):
            for p in layer.parameters():
                nn.init.uniform_(p, -bound, bound)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        if self.fused and type(self.ih) is nn.Linear and type(self.hh) is nn.Linear:
            shape = h.shape
            out = torch.gru_cell(x.reshape(-1, x.shape[-1]), h.reshape(-1, shape[-1]), self.ih.weight,
                                 self.hh.weight, self.ih.bias, self.hh.bias)
            return out.view(shape)
        return self.from_input_gates(self.ih(x), h)

    def from_input_gates(self, gi: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """The cell given its input projection gi = ih(x) (computed for a whole sequence at once by `unroll`)."""
        xr, xz, xn = gi.chunk(3, dim=-1)
        hr, hz, hn = self.hh(h).chunk(3, dim=-1)
        r = torch.sigmoid(xr + hr)
        z = torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1 - z) * n + z * h


class RNNAgent(nn.Module):
    """Q-values [..., n_agents, n_actions] and the next hidden state from inputs [..., n_agents, input_dim]."""

    def __init__(self, input_dim: int, n_actions: int, hidden_dim: int = 64, linear: LinearFactory = nn.Linear):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.fc1 = linear(input_dim, hidden_dim)
        self.rnn = GRUCell(hidden_dim, hidden_dim, linear)
        self.fc2 = linear(hidden_dim, n_actions)

    def init_hidden(self, *batch_shape: int) -> torch.Tensor:
        weight = next(self.parameters())
        return weight.new_zeros(*batch_shape, self.hidden_dim)

    def forward(self, inputs: torch.Tensor, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.relu(self.fc1(inputs))
        h = self.rnn(x, hidden)
        return self.fc2(h), h

    def unroll(self, inputs: torch.Tensor, hidden: torch.Tensor | None = None,
               lengths: torch.Tensor | None = None) -> torch.Tensor:
        """Q-values [B, T, n, A] for a sequence of inputs [B, T, n, in], the GRU carried over time from `hidden`
        (zeros by default). Same values as calling forward step by step; fc1, the GRU's input projection and fc2
        run once for all t, only the hidden-to-hidden product runs per step. Per-agent layers (outside vmap) run
        agent-major with the recurrence's hand-written backward (nets/gru_sequence.py); given `lengths` [B] (the
        steps of each sequence that matter), they skip every step past a sequence's length, whose Q-values are then
        zeros (the learner masks them out). The forms it replaced, kept to compare against: bench/unrolls.py."""
        if self.rnn.fused and type(self.fc1) is StackedLinear and type(self.rnn.hh) is StackedLinear \
                and type(self.fc2) is StackedLinear and type(self.rnn.ih) is StackedLinear:
            if lengths is not None and hidden is None:
                return self._unroll_packed(inputs, lengths)
            return self._unroll_agent_major(inputs, hidden)
        x = torch.relu(self.fc1(inputs))
        h = self.init_hidden(inputs.shape[0], inputs.shape[2]) if hidden is None else hidden
        hs = []
        if self.rnn.fused and type(self.rnn.ih) is nn.Linear and type(self.rnn.hh) is nn.Linear:
            for x_t in x.unbind(1):  # torch's fused cell: faster than the split form for one seed
                h = self.rnn(x_t, h)
                hs.append(h)
            return self.fc2(torch.stack(hs, dim=1))
        gi = self.rnn.ih(x)
        for gi_t in gi.unbind(1):  # unbind, not gi[:, t]: one backward node, not T zero-filled copies of gi
            h = self.rnn.from_input_gates(gi_t, h)
            hs.append(h)
        return self.fc2(torch.stack(hs, dim=1))

    def _unroll_agent_major(self, inputs: torch.Tensor, hidden: torch.Tensor | None) -> torch.Tensor:
        """`unroll` for per-agent layers: every layer one batched product over [n, T·B, ·], the recurrence by
        gru_sequence; the result is a [B, T, n, A] view of agent-major Q-values."""
        batch, steps, n, _ = inputs.shape
        x = inputs.permute(2, 1, 0, 3).reshape(n, steps * batch, -1)   # agent-major, time-major within an agent
        gi = self.rnn.ih.agent_major(torch.relu(self.fc1.agent_major(x))).view(n, steps, batch, -1)
        h0 = inputs.new_zeros(n, batch, self.hidden_dim) if hidden is None else hidden.transpose(0, 1)
        hs = gru_sequence(gi, h0, self.rnn.hh.weight, self.rnn.hh.bias)
        q = self.fc2.agent_major(hs.reshape(n, steps * batch, self.hidden_dim))
        return q.view(n, steps, batch, -1).permute(2, 1, 0, 3)

    def _unroll_packed(self, inputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """`_unroll_agent_major` over the alive steps only: sequences sorted longest first, step t's alive rows
        gathered after those of earlier steps (gru_packed's layout), every layer run on those rows alone, the
        Q-values scattered back into a zero [B, T, n, A] tensor."""
        batch, steps, n, _ = inputs.shape
        order = torch.argsort(lengths, descending=True, stable=True)
        t = torch.arange(steps, device=inputs.device).unsqueeze(1)
        alive = t < lengths[order].unsqueeze(0)  # [T, B], longest first: each step's alive rows are a prefix
        counts = alive.sum(1).tolist()
        # row (t, b) of the agent-major, time-major layout is t·B + b; step t keeps its first counts[t] sequences
        rows = (t * batch + order.unsqueeze(0))[alive]
        x = inputs.permute(2, 1, 0, 3).reshape(n, steps * batch, -1).index_select(1, rows)
        gi = self.rnn.ih.agent_major(torch.relu(self.fc1.agent_major(x)))
        hs = gru_packed(gi, inputs.new_zeros(n, batch, self.hidden_dim), self.rnn.hh.weight, self.rnn.hh.bias,
                        counts)
        q = self.fc2.agent_major(hs)
        q = q.new_zeros(n, steps * batch, q.shape[-1]).index_copy(1, rows, q)
        return q.view(n, steps, batch, -1).permute(2, 1, 0, 3)


def agent_inputs(obs: torch.Tensor, last_actions: torch.Tensor, n_actions: int) -> torch.Tensor:
    """PyMARL's agent input: observation, one-hot last action (zeros at t = 0), one-hot agent id.

    obs [..., n_agents, obs_dim]; last_actions [..., n_agents] int with -1 meaning "none yet".
    """
    n_agents = obs.shape[-2]
    onehot_last = torch.nn.functional.one_hot(last_actions.clamp(min=0), n_actions).to(obs.dtype)
    onehot_last = onehot_last * (last_actions >= 0).unsqueeze(-1).to(obs.dtype)
    ids = torch.eye(n_agents, dtype=obs.dtype, device=obs.device).expand(*obs.shape[:-1], n_agents)
    return torch.cat([obs, onehot_last, ids], dim=-1)


def input_dim(obs_dim: int, n_actions: int, n_agents: int) -> int:
    return obs_dim + n_actions + n_agents
