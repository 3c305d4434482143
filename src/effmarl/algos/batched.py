"""Batched MADDPG and MASAC (`offpolicy.learner: batched`): all N agents' updates of a round in one pass.

The per-agent learners (maddpg.py, masac.py) follow openai/maddpg: an update round is N agent updates one
after another, each recomputing every agent's target action. Here the N actors, critics and targets are
`StackedMLP`s (`[N, in, out]` parameters, one batched matmul per layer), and a round is
    target_q       target actions of all agents, once per sampled batch; all N target critics at once
    q_loss         all N critics' losses summed, one backward, one Adam step (per-agent clipping)
    p_loss         all N actors' losses summed (agent i's action resampled in critic i's input, as a rank-A
                 correction of the q_loss input's first layer), one step
    target_update  one Polyak lerp over all stacked parameters
on a `StackedBatch` (per-agent batches as `[N, B, …]`, or one shared batch).

The semantic difference (documented in docs/paper1.md): in openai/maddpg agent j's update — its actor step
and its target soft-update — lands before agent j+1's target-Q is computed, so later agents in a round see
earlier agents' new target actors (MADDPG) or new actors (MASAC's next actions). A batched round computes
every agent's update from the parameters at the start of the round. For each single agent the update is the
same function of (parameters, batch), which the equivalence tests check against the per-agent modules.

Both learners are built by constructing the per-agent learner first and stacking its modules, so one seed
gives the same initial parameters in either form.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from effmarl.algos.actors import ActorsMixin
from effmarl.algos.maddpg import MADDPG
from effmarl.algos.masac import MASAC, entropy
from effmarl.algos.offpolicy_settings import OffPolicyOptions, OffPolicySettings
from effmarl.algos.stacked import (
    StackedMLP,
    agent_rows,
    clip_grads_per_agent,
    diagonal_groups,
    joint_rows,
    pad_obs,
    soft_update_stacked,
)
from effmarl.config import ConfigError
from effmarl.envs import EnvSpec
from effmarl.nets.mlp import gumbel_softmax
from effmarl.profiling.phases import PhaseTimer
from effmarl.replay import StackedBatch


class BatchedActors(ActorsMixin):
    batched = True

    def _stack_actors(self, seq, spec: EnvSpec, off: OffPolicyOptions, device: torch.device) -> None:
        if len(set(spec.n_actions)) != 1:
            raise ConfigError([f"field 'offpolicy.learner': batched needs one action count for all agents, "
                               f"got {sorted(set(spec.n_actions))}"], "run")
        self.device, self.grad_clip, self.n = device, off.grad_clip, spec.n_agents
        self.gamma, self.tau, self.actor_reg = off.gamma, off.tau, off.actor_reg
        self.obs_dims, self.n_act, self.width = list(spec.obs_dims), spec.n_actions[0], max(spec.obs_dims)
        self.actor_rows = [agent_rows(d) for d in self.obs_dims]
        self.critic_rows = joint_rows(self.obs_dims, self.n_act)
        self.critic_width = self.n * (self.width + self.n_act)
        self.actor = StackedMLP.from_modules(seq.actors, self.actor_rows, self.width).to(device)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=off.lr, foreach=True)
        self.mask = torch.ones(self.n, device=device)

    def _critic(self, modules) -> StackedMLP:
        return StackedMLP.from_modules(modules, [self.critic_rows] * self.n, self.critic_width).to(self.device)

    def set_trained(self, trained: list[int]) -> None:
        """Agents outside `trained` get zero loss weight: zero gradients, so Adam never moves them."""
        self.mask = torch.zeros(self.n, device=self.device)
        self.mask[list(trained)] = 1.0

    @torch.no_grad()
    def act(self, obs: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
        """One stacked actor forward for all agents and all E copies: obs `[E, D_i]` per agent."""
        x = torch.as_tensor(pad_obs(obs, self.width), device=self.device)                # [N, E, D]
        host = gumbel_softmax(self.actor(x), hard=True).cpu().numpy()                    # [N, E, A]
        return host.argmax(-1).T, list(host)

    # ---- the batch seen by every critic and actor ---------------------------------------------------------
    def _agent_view(self, x: torch.Tensor) -> torch.Tensor:
        """`[G, B, N, D]` -> `[N, G·B, D]`: every agent's own rows of every group (for the actors)."""
        g, b, n, d = x.shape
        return x.permute(2, 0, 1, 3).reshape(n, g * b, d)

    def _joint(self, obs: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
        """Critic input `[N, B, N·(D + A)]` for critic i from its group's obs `[G, B, N, D]`, act `[·, B, N, A]`."""
        g, b = max(obs.shape[0], act.shape[0]), obs.shape[1]
        x = torch.cat([obs.reshape(obs.shape[0], b, -1).expand(g, -1, -1),
                       act.reshape(act.shape[0], b, -1).expand(g, -1, -1)], dim=-1)
        return x.expand(self.n, -1, -1) if g == 1 else x

    def _per_group(self, per_agent: torch.Tensor, groups: int) -> torch.Tensor:
        """`[N_j, G·B, …]` (agent j's output on every group) -> `[G, B, N_j, …]`."""
        n, gb = per_agent.shape[:2]
        return per_agent.reshape(n, groups, gb // groups, *per_agent.shape[2:]).movedim(0, 2)

    def _policy_q(self, critic: StackedMLP, joint: torch.Tensor, own_act: torch.Tensor,
                  pi: torch.Tensor) -> torch.Tensor:
        """Critic i on its batch with agent i's stored action `own_act[i]` replaced by `pi[i]` `[N, B, A]`.
        The first layer is linear, so that is the stored joint input's pre-activation plus
        (pi_i − a_i) · (critic i's rows of agent i's action): the backward to pi touches A rows, not the
        whole N·(D + A)-wide input."""
        w0 = critic.weights[0]
        agents = torch.arange(self.n, device=w0.device)
        rows = self.n * self.width + agents[:, None] * self.n_act + torch.arange(self.n_act, device=w0.device)
        own_rows = w0[agents[:, None], rows]                                              # [N, A, hidden]
        pre = torch.baddbmm(critic.biases[0], joint, w0) + torch.bmm(pi - own_act, own_rows)
        return critic.rest(pre).squeeze(-1)

    def _step(self, optimizer, params, loss) -> None:
        optimizer.zero_grad()
        loss.backward()
        clip_grads_per_agent(params, self.grad_clip)
        optimizer.step()

    def _actor_step(self, critics, loss_fn) -> None:
        for p in critics:
            p.requires_grad_(False)        # the actor loss needs input gradients only
        try:
            self._step(self.actor_opt, list(self.actor.parameters()), loss_fn())
        finally:
            for p in critics:
                p.requires_grad_(True)

    def agent_state(self, agent: int) -> dict:
        """Agent i's modules as per-agent `MLP` state dicts (for equivalence checks)."""
        raise NotImplementedError

    def compile_update(self) -> None:
        """Run `update_all` through `torch.compile` (inductor). An opt-in that `effmarl bench paper1 --compiled`
        measures; not adopted (docs/paper1.md): the round is bound by its batched matmuls, which inductor
        leaves to the same GEMM kernels."""
        self.update_all = torch.compile(self.update_all)


class BatchedMADDPG(BatchedActors):
    def __init__(self, settings: OffPolicySettings, spec: EnvSpec, device: torch.device):
        off = settings.offpolicy
        seq = MADDPG(settings, spec, device)
        self._stack_actors(seq, spec, off, device)
        self.critic = self._critic(seq.critics)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=off.lr, foreach=True)
        self.target_actor = StackedMLP.from_modules(seq.target_actors, self.actor_rows, self.width).to(device)
        self.target_critic = self._critic(seq.target_critics)

    def update_all(self, batch: StackedBatch, timer: PhaseTimer) -> None:
        g, mask = batch.groups, self.mask
        with timer.phase("target_q"), torch.no_grad():
            next_logits = self.target_actor(self._agent_view(batch.next_obs))           # [N, G·B, A]
            next_act = self._per_group(gumbel_softmax(next_logits, hard=True), g)       # [G, B, N, A]
            q_next = self.target_critic(self._joint(batch.next_obs, next_act)).squeeze(-1)
            target = (diagonal_groups(batch.rew, g) + self.gamma * (1.0 - diagonal_groups(batch.done, g))
                      * q_next)
        with timer.phase("q_loss"):
            joint = self._joint(batch.obs, batch.act)                                   # [N, B, N·(D + A)]
            q = self.critic(joint).squeeze(-1)                                          # [N, B]
            loss = (((q - target) ** 2).mean(-1) * mask).sum()
            self._step(self.critic_opt, list(self.critic.parameters()), loss)
        with timer.phase("p_loss"):
            own_act = diagonal_groups(batch.act, g)                                     # [N, B, A]

            def actor_loss():
                logits = self.actor(diagonal_groups(batch.obs, g))                      # [N, B, A]
                q_pi = self._policy_q(self.critic, joint, own_act, gumbel_softmax(logits, hard=True))
                per_agent = -q_pi.mean(-1) + self.actor_reg * logits.pow(2).mean((-2, -1))
                return (per_agent * mask).sum()
            self._actor_step(list(self.critic.parameters()), actor_loss)
        with timer.phase("target_update"):
            soft_update_stacked(self.target_actor, self.actor, self.tau)
            soft_update_stacked(self.target_critic, self.critic, self.tau)

    def agent_state(self, agent: int) -> dict:
        rows = self.actor_rows[agent]
        return {"actor": self.actor.agent_module(agent, rows), "critic": self.critic.agent_module(
            agent, self.critic_rows), "target_actor": self.target_actor.agent_module(agent, rows),
            "target_critic": self.target_critic.agent_module(agent, self.critic_rows)}

    def modules(self) -> dict[str, list]:
        return {"actor": [self.actor], "critic": [self.critic], "target_actor": [self.target_actor],
                "target_critic": [self.target_critic], "opts": [self.actor_opt, self.critic_opt]}


class BatchedMASAC(BatchedActors):
    def __init__(self, settings: OffPolicySettings, spec: EnvSpec, device: torch.device):
        off, sac = settings.offpolicy, settings.masac
        seq = MASAC(settings, spec, device)
        self._stack_actors(seq, spec, off, device)
        self.autotune = sac.autotune
        self.critics = [self._critic([pair[k] for pair in seq.critics]) for k in range(2)]
        self.critic_opt = torch.optim.Adam([p for q in self.critics for p in q.parameters()], lr=off.lr,
                                           foreach=True)
        self.target_critics = [self._critic([pair[k] for pair in seq.target_critics]) for k in range(2)]
        self.log_alpha = torch.full((self.n,), math.log(sac.alpha), device=device, requires_grad=True)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=sac.alpha_lr, foreach=True)
        self.target_entropy = torch.tensor([sac.target_entropy_ratio * math.log(a) for a in spec.n_actions],
                                           device=device)

    def _critic_params(self) -> list[torch.Tensor]:
        return [p for q in self.critics for p in q.parameters()]

    def update_all(self, batch: StackedBatch, timer: PhaseTimer) -> None:
        g, mask = batch.groups, self.mask
        alpha = self.log_alpha.detach().exp()[:, None]                                  # [N, 1]
        with timer.phase("target_q"), torch.no_grad():
            next_logits = self.actor(self._agent_view(batch.next_obs))                  # [N, G·B, A]
            next_act = self._per_group(gumbel_softmax(next_logits, hard=True), g)
            joint = self._joint(batch.next_obs, next_act)
            q_next = torch.min(*(q(joint) for q in self.target_critics)).squeeze(-1)    # [N, B]
            own_logits = diagonal_groups(self._per_group(next_logits, g), g)            # [N, B, A]
            soft_v = q_next + alpha * entropy(own_logits)
            target = diagonal_groups(batch.rew, g) + self.gamma * (1.0 - diagonal_groups(batch.done, g)) * soft_v
        with timer.phase("q_loss"):
            joint = self._joint(batch.obs, batch.act)
            loss = sum((((q(joint).squeeze(-1) - target) ** 2).mean(-1) * mask).sum() for q in self.critics)
            self._step(self.critic_opt, self._critic_params(), loss)
        with timer.phase("p_loss"):
            held, own_act = {}, diagonal_groups(batch.act, g)

            def actor_loss():
                logits = self.actor(diagonal_groups(batch.obs, g))
                pi = gumbel_softmax(logits, hard=True)
                q_pi = torch.min(*(self._policy_q(q, joint, own_act, pi) for q in self.critics))
                held["h"] = h = entropy(logits)                                         # [N, B]
                per_agent = -(q_pi + alpha * h).mean(-1) + self.actor_reg * logits.pow(2).mean((-2, -1))
                return (per_agent * mask).sum()
            self._actor_step(self._critic_params(), actor_loss)
            if self.autotune:
                gap = (held["h"].detach() - self.target_entropy[:, None]).mean(-1)
                alpha_loss = (self.log_alpha.exp() * gap * mask).sum()
                self.alpha_opt.zero_grad()
                alpha_loss.backward()
                self.alpha_opt.step()
        with timer.phase("target_update"):
            for target_q, q in zip(self.target_critics, self.critics, strict=True):
                soft_update_stacked(target_q, q, self.tau)

    def agent_state(self, agent: int) -> dict:
        rows = self.critic_rows
        return {"actor": self.actor.agent_module(agent, self.actor_rows[agent]),
                "critics": [q.agent_module(agent, rows) for q in self.critics],
                "target_critics": [q.agent_module(agent, rows) for q in self.target_critics],
                "log_alpha": self.log_alpha[agent].detach().clone()}

    def modules(self) -> dict[str, list]:
        return {"actor": [self.actor], "critics": self.critics, "target_critics": self.target_critics,
                "log_alpha": [self.log_alpha], "opts": [self.actor_opt, self.critic_opt, self.alpha_opt]}

