"""MASAC: multi-agent soft actor-critic with centralised twin critics and discrete Gumbel-softmax actors,
as in the common TF2 ports of the MADDPG loop that paper 1 profiles.

Agent i has an actor π_i(o_i), twin critics Q_i¹, Q_i² on all observations and actions with Polyak target
copies (no target actors, as in SAC), and an entropy coefficient α_i (fixed `masac.alpha`, 0.05, or tuned
automatically toward the entropy `masac.target_entropy_ratio · log |A_i|`). On a batch (o, a, r, o', d):
    target_q  a'_j ~ π_j(o'_j) for every j;
              y = r_i + γ (1 − d_i) [min_k Q'_iᵏ(o', a') + α_i H(π_i(·|o'_i))]
    q_loss    mean (Q_i¹(o, a) − y)² + mean (Q_i²(o, a) − y)²                -> one Adam step on both
    p_loss    −mean min_k Q_iᵏ(o, a_1 … a_i ~ π_i(o_i) … a_N) − α_i H(π_i(·|o_i)) + actor_reg · mean logits_i²
              (and, with autotune, the α_i step: min_α α (H − target entropy))
    target_update  Polyak on both critics
The entropy H is computed exactly from the categorical distribution (Σ_a π log π), not from a sample.
Actions are hard (one-hot, straight-through) Gumbel-softmax samples, as in MADDPG (see maddpg.py).
"""

from __future__ import annotations

import copy
import math

import torch
import torch.nn.functional as F

from effmarl.algos.actors import ActorsMixin
from effmarl.algos.offpolicy_settings import OffPolicySettings
from effmarl.envs import EnvSpec
from effmarl.nets.mlp import MLP, gumbel_softmax, soft_update
from effmarl.profiling.phases import PhaseTimer
from effmarl.replay import Batch


def entropy(logits: torch.Tensor) -> torch.Tensor:
    logp = F.log_softmax(logits, dim=-1)
    return -(logp.exp() * logp).sum(-1)


class MASAC(ActorsMixin):
    def __init__(self, settings: OffPolicySettings, spec: EnvSpec, device: torch.device):
        off, sac = settings.offpolicy, settings.masac
        self.gamma, self.tau, self.grad_clip, self.actor_reg = off.gamma, off.tau, off.grad_clip, \
            off.actor_reg
        self.autotune = sac.autotune
        self._build_actors(off, spec, device)
        self.critics = [[MLP(self.critic_in, 1, off.hidden).to(device) for _ in range(2)] for _ in spec.agents]
        self.critic_opts = [torch.optim.Adam([p for q in pair for p in q.parameters()], lr=off.lr, foreach=True)
                            for pair in self.critics]
        self.target_critics = [[copy.deepcopy(q) for q in pair] for pair in self.critics]
        self.log_alpha = [torch.tensor(math.log(sac.alpha), device=device, requires_grad=True)
                          for _ in spec.agents]
        self.alpha_opts = [torch.optim.Adam([a], lr=sac.alpha_lr, foreach=True) for a in self.log_alpha]
        self.target_entropy = [sac.target_entropy_ratio * math.log(n) for n in spec.n_actions]

    def update(self, agent: int, batch: Batch, timer: PhaseTimer) -> None:
        i = agent
        alpha = self.log_alpha[i].detach().exp()
        with timer.phase("target_q"), torch.no_grad():
            next_logits = [p(o) for p, o in zip(self.actors, batch.next_obs, strict=True)]
            next_acts = [gumbel_softmax(lg, hard=True) for lg in next_logits]
            joint = torch.cat(batch.next_obs + next_acts, dim=-1)
            q_next = torch.min(*(q(joint) for q in self.target_critics[i])).squeeze(-1)
            soft_v = q_next + alpha * entropy(next_logits[i])
            target = batch.rew[i] + self.gamma * (1.0 - batch.done[i]) * soft_v
        with timer.phase("q_loss"):
            joint = torch.cat(batch.obs + batch.act, dim=-1)
            loss = sum(F.mse_loss(q(joint).squeeze(-1), target) for q in self.critics[i])
            self._step(self.critic_opts[i], [p for q in self.critics[i] for p in q.parameters()], loss)
        with timer.phase("p_loss"):
            logits, acts = self._policy_actions(i, batch)
            joint = torch.cat(batch.obs + acts, dim=-1)
            q_pi = torch.min(*(q(joint) for q in self.critics[i])).squeeze(-1)
            h = entropy(logits)
            loss = -(q_pi + alpha * h).mean() + self.actor_reg * logits.pow(2).mean()
            self._step(self.actor_opts[i], self.actors[i].parameters(), loss)
            if self.autotune:
                alpha_loss = self.log_alpha[i].exp() * (h.detach() - self.target_entropy[i]).mean()
                self.alpha_opts[i].zero_grad()
                alpha_loss.backward()
                self.alpha_opts[i].step()
        with timer.phase("target_update"):
            for target_q, q in zip(self.target_critics[i], self.critics[i], strict=True):
                soft_update(target_q, q, self.tau)

    def modules(self) -> dict[str, list]:
        return {"actors": self.actors, "actor_opts": self.actor_opts, "critics": self.critics,
                "target_critics": self.target_critics, "critic_opts": self.critic_opts,
                "log_alpha": self.log_alpha, "alpha_opts": self.alpha_opts}

