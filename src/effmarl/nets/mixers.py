"""Mixing networks: QMIX's monotonic hypernetwork mixer and WQMIX's unrestricted feed-forward central mixer.

Both take per-agent values [..., n_agents] and the global state [..., state_dim] and return the joint value
[...]. Every layer comes from one `linear(in, out)` factory (nn.Linear by default), so a later issue can
make the mixer and its hypernetworks sparse by passing a masked layer.
"""

from __future__ import annotations

import torch
from torch import nn

from effmarl.nets.rnn_agent import LinearFactory


def _mlp(sizes: list[int], linear: LinearFactory) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        layers.append(linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class QMixer(nn.Module):
    """PyMARL's QMixer: Q_tot = elu(q·|W1(s)| + b1(s))·|W2(s)| + V(s); monotonic in every agent's q.

    hypernet_layers = 1 makes W1 and W2 single linear maps of the state, 2 (PyMARL's SMAC setting) puts a
    hidden layer of `hypernet_embed` units with ReLU in each.
    """

    def __init__(self, n_agents: int, state_dim: int, embed_dim: int = 32, hypernet_embed: int = 64,
                 hypernet_layers: int = 2, linear: LinearFactory = nn.Linear):
        super().__init__()
        self.n_agents, self.state_dim, self.embed_dim = n_agents, state_dim, embed_dim
        if hypernet_layers == 1:
            self.hyper_w_1 = linear(state_dim, embed_dim * n_agents)
            self.hyper_w_final = linear(state_dim, embed_dim)
        elif hypernet_layers == 2:
            self.hyper_w_1 = _mlp([state_dim, hypernet_embed, embed_dim * n_agents], linear)
            self.hyper_w_final = _mlp([state_dim, hypernet_embed, embed_dim], linear)
        else:
            raise ValueError(f"qmix.hypernet_layers: {hypernet_layers} is not supported; allowed: 1, 2")
        self.hyper_b_1 = linear(state_dim, embed_dim)
        self.V = _mlp([state_dim, embed_dim, 1], linear)

    def forward(self, agent_qs: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
        return self.forward_many(agent_qs.unsqueeze(-2), states).squeeze(-1)

    def forward_many(self, agent_qs: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
        """k joint values per state: agent_qs [..., k, n_agents], states [..., state_dim] -> [..., k].
        The hypernetworks run once per state (RES mixes n·m counterfactual joint actions per state)."""
        lead = agent_qs.shape[:-1]
        qs = agent_qs.reshape(-1, agent_qs.shape[-2], self.n_agents)
        s = states.reshape(-1, self.state_dim)
        w1 = torch.abs(self.hyper_w_1(s)).view(-1, self.n_agents, self.embed_dim)
        b1 = self.hyper_b_1(s).view(-1, 1, self.embed_dim)
        hidden = nn.functional.elu(torch.bmm(qs, w1) + b1)
        w_final = torch.abs(self.hyper_w_final(s)).view(-1, self.embed_dim, 1)
        v = self.V(s).view(-1, 1, 1)
        return (torch.bmm(hidden, w_final) + v).reshape(lead)


class CentralFFMixer(nn.Module):
    """WQMIX's unrestricted central mixer ("ff"): an MLP of [state, agent values] with 3 hidden layers of
    `embed_dim` (256) units, plus a state value V(s). Not monotonic."""

    def __init__(self, n_agents: int, state_dim: int, embed_dim: int = 256, linear: LinearFactory = nn.Linear):
        super().__init__()
        self.n_agents, self.state_dim = n_agents, state_dim
        self.net = _mlp([state_dim + n_agents, embed_dim, embed_dim, embed_dim, 1], linear)
        self.V = _mlp([state_dim, embed_dim, 1], linear)

    def forward(self, agent_qs: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
        lead = agent_qs.shape[:-1]
        s = states.reshape(-1, self.state_dim)
        x = torch.cat([s, agent_qs.reshape(-1, self.n_agents)], dim=1)
        return (self.net(x) + self.V(s)).reshape(lead)
