"""What every paper-1 learner shares: decentralised discrete actors (construction, action selection, the
per-tensor clipped optimiser step) and the learner's whole state as nested lists of modules, optimisers and
tensors. MADDPG and MASAC (maddpg.py, masac.py) and their batched forms (batched.py) build on `ActorsMixin`.
"""

from __future__ import annotations

import numpy as np
import torch

from effmarl.algos.offpolicy_settings import OffPolicyOptions
from effmarl.envs import EnvSpec
from effmarl.nets.mlp import MLP, clip_grads_per_tensor, gumbel_softmax
from effmarl.replay import Batch


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

    def _build_actors(self, off: OffPolicyOptions, spec: EnvSpec, device: torch.device) -> None:
        self.device = device
        self.actors = [MLP(d, a, off.hidden).to(device) for d, a in zip(spec.obs_dims, spec.n_actions,
                                                                            strict=True)]
        self.actor_opts = [torch.optim.Adam(p.parameters(), lr=off.lr, foreach=True) for p in self.actors]
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
