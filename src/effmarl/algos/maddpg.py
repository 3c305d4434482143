"""MADDPG (Lowe et al. 2017) for discrete actions, faithful to openai/maddpg's defaults.

Every agent i has a decentralised actor π_i(o_i) (2×64 ReLU MLP -> action logits) and a centralised critic
Q_i(o_1…o_N, a_1…a_N) (2×64 ReLU MLP on all observations and actions), each with a Polyak target copy.
For agent i, on a batch (o, a, r, o', d):
    target_q  y = r_i + γ (1 − d_i) Q'_i(o', a'),  a'_j = Gumbel-softmax sample of π'_j(o'_j) for every j
    q_loss    mean (Q_i(o, a) − y)²                                  -> Adam step on Q_i, clipped
    p_loss    −mean Q_i(o, a_1 … a_i ~ π_i(o_i) … a_N) + actor_reg · mean logits_i²  -> Adam step on π_i
    target_update  θ' <- (1 − τ) θ' + τ θ for π_i and Q_i
Gradients are clipped per parameter tensor to norm `grad_clip` (the original's `minimize_and_clip`).

Decision: the environment executes a discrete action, so the actor samples a *hard* (one-hot,
straight-through) Gumbel-softmax action; the replay buffer stores that one-hot vector, and target and
policy actions are hard samples too, so the critic sees one kind of action everywhere. (The original fed
the soft sample to MPE's force model, which mpe2's discrete mode no longer accepts.)

The actors (construction, action selection, state) are `effmarl.algos.actors`, shared with MASAC and the
batched learners; the training loop (phases, replay, checkpointing) is `effmarl.algos.offpolicy`.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F

from effmarl.algos.actors import ActorsMixin
from effmarl.algos.offpolicy_settings import OffPolicySettings
from effmarl.envs import EnvSpec
from effmarl.nets.mlp import MLP, gumbel_softmax, soft_update
from effmarl.profiling.phases import PhaseTimer
from effmarl.replay import Batch


class MADDPG(ActorsMixin):
    def __init__(self, settings: OffPolicySettings, spec: EnvSpec, device: torch.device):
        off = settings.offpolicy
        self.gamma, self.tau, self.grad_clip, self.actor_reg = off.gamma, off.tau, off.grad_clip, \
            off.actor_reg
        self._build_actors(off, spec, device)
        self.critics = [MLP(self.critic_in, 1, off.hidden).to(device) for _ in spec.agents]
        self.critic_opts = [torch.optim.Adam(q.parameters(), lr=off.lr, foreach=True) for q in self.critics]
        self.target_actors = [copy.deepcopy(p) for p in self.actors]
        self.target_critics = [copy.deepcopy(q) for q in self.critics]

    def update(self, agent: int, batch: Batch, timer: PhaseTimer) -> None:
        i = agent
        with timer.phase("target_q"), torch.no_grad():
            next_acts = [gumbel_softmax(p(o), hard=True) for p, o in zip(self.target_actors, batch.next_obs,
                                                                         strict=True)]
            q_next = self.target_critics[i](torch.cat(batch.next_obs + next_acts, dim=-1)).squeeze(-1)
            target = batch.rew[i] + self.gamma * (1.0 - batch.done[i]) * q_next
        with timer.phase("q_loss"):
            q = self.critics[i](torch.cat(batch.obs + batch.act, dim=-1)).squeeze(-1)
            self._step(self.critic_opts[i], self.critics[i].parameters(), F.mse_loss(q, target))
        with timer.phase("p_loss"):
            logits, acts = self._policy_actions(i, batch)
            q_pi = self.critics[i](torch.cat(batch.obs + acts, dim=-1))
            loss = -q_pi.mean() + self.actor_reg * logits.pow(2).mean()
            self._step(self.actor_opts[i], self.actors[i].parameters(), loss)
        with timer.phase("target_update"):
            soft_update(self.target_actors[i], self.actors[i], self.tau)
            soft_update(self.target_critics[i], self.critics[i], self.tau)

    def modules(self) -> dict[str, list]:
        return {"actors": self.actors, "critics": self.critics, "target_actors": self.target_actors,
                "target_critics": self.target_critics, "actor_opts": self.actor_opts,
                "critic_opts": self.critic_opts}

