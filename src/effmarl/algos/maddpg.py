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

The training loop (phases, replay, checkpointing) is `effmarl.algos.offpolicy`.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F

from effmarl.algos.offpolicy import train_loop
from effmarl.envs import EnvSpec
from effmarl.nets.mlp import MLP, clip_grads_per_tensor, gumbel_softmax, soft_update
from effmarl.profiling.phases import PhaseTimer
from effmarl.replay import Batch
from effmarl.runs import RunDir


def _nested_state(obj):
    if isinstance(obj, list):
        return [_nested_state(x) for x in obj]
    if isinstance(obj, torch.Tensor):
        return obj.detach().clone()
    return obj.state_dict()


def _nested_load(obj, state) -> None:
    if isinstance(obj, list):
        for x, s in zip(obj, state, strict=True):
            _nested_load(x, s)
    elif isinstance(obj, torch.Tensor):
        with torch.no_grad():
            obj.copy_(state)
    else:
        obj.load_state_dict(state)


class ActorsMixin:
    """Decentralised discrete actors shared by MADDPG and MASAC: construction and action selection."""

    def _build_actors(self, off: dict, spec: EnvSpec, device: torch.device) -> None:
        self.device = device
        self.actors = [MLP(d, a, off["hidden"]).to(device) for d, a in zip(spec.obs_dims, spec.n_actions,
                                                                            strict=True)]
        self.actor_opts = [torch.optim.Adam(p.parameters(), lr=off["lr"], foreach=True) for p in self.actors]
        self.critic_in = sum(spec.obs_dims) + sum(spec.n_actions)

    @torch.no_grad()
    def act(self, obs: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
        # as the original: one forward per agent on its own observations (`[E, D_i]`, E environment copies)
        onehots = [gumbel_softmax(actor(torch.as_tensor(o, device=self.device)), hard=True).cpu().numpy()
                   for actor, o in zip(self.actors, obs, strict=True)]
        return np.stack([h.argmax(-1) for h in onehots], axis=1), onehots

    def _step(self, optimizer: torch.optim.Optimizer, params, loss: torch.Tensor) -> None:
        optimizer.zero_grad()
        loss.backward()
        clip_grads_per_tensor(params, self.grad_clip)
        optimizer.step()

    def modules(self) -> dict[str, list]:
        """Named lists (possibly nested) of the learner's modules, optimisers and tensors: its whole state."""
        raise NotImplementedError

    def state_dict(self) -> dict:
        return {name: _nested_state(items) for name, items in self.modules().items()}

    def load_state_dict(self, state: dict) -> None:
        for name, items in self.modules().items():
            _nested_load(items, state[name])

    def _policy_actions(self, agent: int, batch: Batch) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """Agent i's logits on o_i, and the joint action with a_i resampled from π_i (differentiable)."""
        logits = self.actors[agent](batch.obs[agent])
        acts = list(batch.act)
        acts[agent] = gumbel_softmax(logits, hard=True)
        return logits, acts


class MADDPG(ActorsMixin):
    def __init__(self, cfg: dict, spec: EnvSpec, device: torch.device):
        off = cfg["offpolicy"]
        self.gamma, self.tau, self.grad_clip, self.actor_reg = off["gamma"], off["tau"], off["grad_clip"], \
            off["actor_reg"]
        self._build_actors(off, spec, device)
        self.critics = [MLP(self.critic_in, 1, off["hidden"]).to(device) for _ in spec.agents]
        self.critic_opts = [torch.optim.Adam(q.parameters(), lr=off["lr"], foreach=True) for q in self.critics]
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


def run(cfg: dict, rundir: RunDir) -> None:
    if cfg["offpolicy"]["learner"] == "batched":
        from effmarl.algos.batched import BatchedMADDPG

        train_loop(cfg, rundir, BatchedMADDPG)
    else:
        train_loop(cfg, rundir, MADDPG)
