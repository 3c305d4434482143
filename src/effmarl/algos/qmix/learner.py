"""The learner of the QMIX family: networks, target networks and the loss (lockstep.SeedStack owns the optimiser step,
for one seed or S seeds).

    loss(batch, kind)
      unroll the GRU agents over the episode batch → Q-values [B, T+1, n, A]
      Q_tot = mixer(Q of the taken actions, state)
      y     = returns of `kind` (one-step / n-step / λ) over V(s_t) from the run's target operator (operators.py)
      QMIX / RES: masked mean of (Q_tot − y)²; OW-QMIX weights it (1 under, w over the target) and adds Q*'s own
      loss; RES adds λ·(Q_tot − G_t)² with the discounted return G_t

`loss` is a pure function of the parameters and the batch (its statistics are returned as tensors), so the
lockstep trainer (lockstep.py) evaluates it for many seeds at once with torch.func.vmap.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from effmarl.algos.qmix.networks import build_networks
from effmarl.algos.qmix.operators import choose_operator, greedy_actions
from effmarl.algos.qmix.settings import QmixOptions
from effmarl.nets.rnn_agent import RNNAgent, agent_inputs
from effmarl.replay import episode
from effmarl.sparse import SparseTraining
from effmarl.targets.returns import discounted_returns, targets
from effmarl.variants import variant


class Learner(nn.Module):
    """Networks, target networks, sparse topology and loss of one qmix-family algorithm (its optimiser step:
    lockstep.SeedStack.step).

    q: the run's qmix options (QmixSettings.qmix; a validated `qmix:` section is read as them);
    sparse: the run's `sparse:` section with the effective delta_m (None or method dense/tiny: no masks);
    mellowmax: {"operator", "alpha", "omega", "beta"} when the mellowmax component replaces the target operator
    (operator default soft_mellowmax; operators.agent_value), else None;
    initial_masks: masks to start from instead of random ones (a ticket, tickets.py);
    agent_shares: one relative budget per agent for every per-agent layer (sparse/allocation.py; None: learned)."""

    def __init__(self, algo: str, q: QmixOptions | dict, n_agents: int, obs_dim: int, n_actions: int, state_dim: int, *,
                 sparse: dict | None = None, mellowmax: dict | None = None, seed: int = 0, device="cpu",
                 initial_masks: dict[str, torch.Tensor] | None = None, agent_shares: list[float] | None = None):
        super().__init__()
        q = QmixOptions.of(q)
        self.algo, self.q, self.n_agents, self.n_actions, self.mellowmax = algo, q, n_agents, n_actions, mellowmax
        self.variant = variant(algo)  # its table entry (effmarl/variants.py): networks, operator, loss terms
        self.operator = choose_operator(algo, mellowmax)
        for name, module in build_networks(algo, q, n_agents, obs_dim, n_actions, state_dim).items():
            self.add_module(name, module)
        self.to(device)
        networks = self.networks()
        # MAST: one sparse topology (one budget, ER densities) over every network; None when dense or Tiny.
        # ζ follows the env-step progress passed at each update, so the number of updates need not be known.
        self.sparse = SparseTraining.from_config(sparse or {}, networks, total_updates=0, seed=seed,
                                                 masks=initial_masks, agent_shares=agent_shares)
        self.target = copy.deepcopy(networks)
        self.target.requires_grad_(False)
        self.target_topology = self.sparse.topology.bind(self.target) if self.sparse else None

    def networks(self) -> nn.ModuleDict:
        """The online networks by name (agent, mixer, and OW-QMIX's central ones)."""
        return nn.ModuleDict({k: m for k, m in self.named_children() if k != "target"})

    def online_parameters(self) -> list[nn.Parameter]:
        return [p for name, p in self.named_parameters() if not name.startswith("target.")]

    def update_targets(self) -> None:
        for name, module in self.target.items():
            module.load_state_dict(getattr(self, name).state_dict())
        if self.sparse:  # target networks copy the masks
            self.sparse.topology.copy_masks_to(self.target_topology)

    def sparse_state(self) -> dict | None:
        if not self.sparse:
            return None
        return {"online": self.sparse.state_dict(), "target": self.target_topology.state_dict()}

    def load_sparse_state(self, state: dict | None) -> None:
        if self.sparse:
            self.sparse.load_state_dict(state["online"])
            self.target_topology.load_state_dict(state["target"])

    @staticmethod
    def unroll(agent: RNNAgent, inputs: torch.Tensor, filled: torch.Tensor | None = None) -> torch.Tensor:
        """Q-values [B, T+1, n, A] from agent inputs [B, T+1, n, in], the GRU carried over time. Given the batch's
        padding mask `filled` [B, T], states past an episode's last one (L transitions: states 0..L) are skipped
        and their Q-values are zeros: every loss, return and statistic masks them out."""
        return agent.unroll(inputs, lengths=None if filled is None else episode.state_counts(filled))

    @torch.no_grad()
    def policy_distance(self, batch: dict[str, torch.Tensor]) -> float:
        """Fraction of the batch's agent-steps whose stored action differs from the current greedy action."""
        last = torch.cat([torch.full_like(batch["actions"][:, :1], -1), batch["actions"][:, :-1]], dim=1)
        qs = self.unroll(self.agent, agent_inputs(batch["obs"], last, self.n_actions), batch["filled"])[:, :-1]
        greedy = greedy_actions(qs, batch["avail"][:, :-1])
        differ = (greedy != batch["actions"][:, :-1]) & batch["filled"].unsqueeze(-1)
        return float(differ.sum()) / max(1, int(batch["filled"].sum()) * self.n_agents)

    @torch.no_grad()
    def td_targets(self, batch: dict[str, torch.Tensor], inputs: torch.Tensor, q_all: torch.Tensor,
                   kind: tuple[str, int, float] | None = None) -> torch.Tensor:
        """Targets y [B, T]: bootstrap values V(s_t) for t = 0..T from the run's target operator, then the returns
        of `kind` = (return kind, n, λ) (default: one-step; a run passes settings.target_kind's)."""
        kind = kind or ("one_step", 1, 0.0)
        q_target = self.unroll(self.target["agent"], inputs, batch["filled"])
        values = self.operator(self, inputs, q_all, q_target, batch["avail"], batch["state"])
        return targets(kind[0], batch["reward"], batch["terminated"], batch["filled"], values, self.q.gamma,
                       kind[1], kind[2])

    def loss(self, batch: dict[str, torch.Tensor],
             kind: tuple[str, int, float] | None = None) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The training loss of one episode batch and its statistics (0-d tensors, detached)."""
        q = self.q
        rewards, mask, actions, states = batch["reward"], batch["filled"], batch["actions"], batch["state"]
        last = torch.cat([torch.full_like(actions[:, :1], -1), actions[:, :-1]], dim=1)
        inputs = agent_inputs(batch["obs"], last, self.n_actions)

        q_all = self.unroll(self.agent, inputs, mask)                             # [B, T+1, n, A]
        chosen = q_all[:, :-1].gather(-1, actions[:, :-1].unsqueeze(-1)).squeeze(-1)
        q_tot = self.mixer(chosen, states[:, :-1])                                # [B, T]
        y = self.td_targets(batch, inputs, q_all.detach(), kind)

        n_valid = mask.sum().clamp(min=1)
        td = torch.where(mask, q_tot - y, torch.zeros_like(q_tot))
        stats = {}
        if "ow_weighting" in self.variant.losses:
            weights = torch.where(td < 0, torch.ones_like(td), torch.full_like(td, q.ow_w))
            central_q = self.unroll(self.central_agent, inputs, mask)[:, :-1]
            central_chosen = central_q.gather(-1, actions[:, :-1].unsqueeze(-1)).squeeze(-1)
            central_td = torch.where(mask, self.central_mixer(central_chosen, states[:, :-1]) - y,
                                     torch.zeros_like(q_tot))
            central_loss = (central_td ** 2).sum() / n_valid
            loss = (weights * td ** 2).sum() / n_valid + q.central_loss * central_loss
            stats.update(central_loss=central_loss, ow_weight_mean=(weights * mask).sum() / n_valid)
        else:
            loss = (td ** 2).sum() / n_valid
        g = discounted_returns(rewards, mask, q.gamma)  # what the batch's episodes actually returned from each t
        if "res_regulariser" in self.variant.losses:
            reg = (torch.where(mask, q_tot - g, torch.zeros_like(q_tot)) ** 2).sum() / n_valid
            loss = loss + q.res_lambda * reg
            stats["res_regulariser"] = reg
        # q_taken_mean − return_mean: the value estimate's bias against the discounted returns obtained (paper 2's
        # over-estimation diagnosis, its Fig. 5), over the same agent-steps
        stats.update(td_error_abs=td.abs().sum() / n_valid, q_taken_mean=(q_tot * mask).sum() / n_valid,
                     target_mean=(y * mask).sum() / n_valid, return_mean=(g * mask).sum() / n_valid)
        return loss, {k: v.detach() for k, v in stats.items()}

    def forward(self, batch: dict[str, torch.Tensor], kind: tuple[str, int, float] | None = None):
        """`loss` (so torch.func.functional_call can evaluate it with substituted parameters)."""
        return self.loss(batch, kind)
