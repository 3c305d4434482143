"""Seeds in lockstep: S learners of one configuration trained as one stacked computation.

Every parameter of the S learners (online and target networks) is stored once, stacked along a leading seed
axis [S, ...]; each learner's own parameters become views of its slice, so a learner object still reads, masks,
evolves and checkpoints exactly its own seed. One update of all seeds is

    loss   = Σ_s loss_s, each loss_s = Learner.loss(batch_s) evaluated with the seed's slice of the stacked
             parameters (functional_call): by torch.func.vmap over the seed axis on a GPU, seed by seed on a CPU
             (where the update is compute-bound and a loop keeps torch's fused GRU cell); batches padded in time
             to the longest of them
    backward once → stacked gradients; gradient s is seed s's own (the seeds share no parameter)
    per seed: sparse evolution on its own schedule and RNG (RigL reads its slice of the dense gradient),
              gradient masking, optimiser-state reset where its mask changed
    per seed: gradient-norm clipping with its own norm (torch's clip_grad_norm_ formula)
    one RMSprop step over the stacked tensors — RMSprop is elementwise, so this is S separate optimisers
    per seed: re-zero its inactive weights
This step is the only optimiser step of the QMIX family (a single run is a stack of one seed). The update is eager
torch; a jitted JAX loss and gradient measured no faster on this project's CPUs (0.30x the eager update on 3s5z,
benchmarks/results/qmix_compiled_3s5z.md) and is gone (git show 5e40a92:src/effmarl/algos/qmix/compiled.py).

Seeds whose updates use different returns (hybrid TD(λ) switches at an env-step count that a seed reaches a
round earlier or later than another) are evaluated in one vmap call per return kind. Padding episodes in time
changes no loss mathematically (padded steps are masked out of the TD error and of every return), but it changes the
rounding of every sum over time steps. So the seed-by-seed path (the CPU's) evaluates each seed on its own unpadded
batch: a seed's update depends on its batch alone, and a run resumed from periodic checkpoints that the seeds took in
different rounds equals the uninterrupted run to the bit (tests/test_qmix_lockstep.py). The vmapped path (a GPU's)
pads to the longest batch, so there a seed's rounding depends on the others'.
"""

from __future__ import annotations

from collections import defaultdict

import torch
from torch import nn
from torch.func import functional_call, vmap

from effmarl.algos.qmix.learner import Learner
from effmarl.algos.qmix.optim import RMSprop
from effmarl.nets.rnn_agent import GRUCell
from effmarl.replay.episode import pad_time


def _set_parameter(module: nn.Module, dotted: str, value: nn.Parameter) -> None:
    owner, _, leaf = dotted.rpartition(".")
    setattr(module.get_submodule(owner) if owner else module, leaf, value)


class _SeedOptimiserView:
    """Seed s's slice of the stacked optimiser's per-weight state, keyed by that learner's own parameters: what
    SparseTopology.reset_optimizer_state needs to reset the state where seed s's mask changed."""

    def __init__(self, optimiser: torch.optim.Optimizer, stacked: dict[str, nn.Parameter], learner: Learner, s: int):
        own = dict(learner.named_parameters())
        self.state = {own[name]: {k: v[s] for k, v in optimiser.state.get(p, {}).items()
                                  if torch.is_tensor(v) and v.dim() > 0}
                      for name, p in stacked.items()}


class SeedStack:
    """S learners (same configuration, different seeds) updated together; see the module docstring."""

    def __init__(self, learners: list[Learner], vectorised: bool | None = None):
        self.learners = learners
        base = learners[0]
        q = base.q
        names = [name for name, _ in base.named_parameters()]
        self.online_names = [n for n in names if not n.startswith("target.")]
        per_seed = [dict(learner.named_parameters()) for learner in learners]
        self.params = {n: nn.Parameter(torch.stack([p[n].detach() for p in per_seed]))
                       for n in self.online_names}
        self.target = {n: torch.stack([p[n].detach() for p in per_seed]) for n in names if n.startswith("target.")}
        for s, learner in enumerate(learners):  # each learner's parameters become views of its slice
            for n in names:
                stacked = self.params[n] if n in self.params else self.target[n]
                _set_parameter(learner, n, nn.Parameter(stacked.data[s], requires_grad=n in self.params))
            if learner.sparse:
                learner.sparse.topology.rebind_parameters()
                learner.target_topology.rebind_parameters()
        self.template = base  # evaluates the loss under functional_call with the stacked parameters
        # vmap over seeds on a GPU (one kernel per op for all seeds); on a CPU the learner is compute-bound and
        # a loop over the seeds' slices (keeping torch's fused GRU cell for dense shared networks) is faster
        device = next(iter(self.params.values())).device
        self.vectorised = device.type == "cuda" if vectorised is None else vectorised
        self.cells = [m for m in base.modules() if isinstance(m, GRUCell)]
        self.optimiser = RMSprop(list(self.params.values()), lr=q.lr, alpha=q.optim_alpha, eps=q.optim_eps)
        self.max_norm = q.grad_norm_clip

    def __len__(self) -> int:
        return len(self.learners)

    def losses(self, batches: list[dict[str, torch.Tensor]], kinds: list[tuple], seeds: list[int]):
        """Loss and statistics of seed seeds[i] on batches[i] with return kinds[i]. Returns (Σ loss, [loss_i],
        [stats_i]) with loss_i and the statistics as 0-d tensors."""
        steps = max(b["filled"].shape[1] for b in batches)
        groups = defaultdict(list)
        for i, kind in enumerate(kinds):
            groups[kind].append(i)
        total, losses, stats = 0.0, [None] * len(batches), [None] * len(batches)
        everyone = list(range(len(self.learners)))
        for kind, members in groups.items():
            idx = [seeds[i] for i in members]
            if idx == everyone:
                params = {**self.params, **self.target}
            else:
                at = torch.tensor(idx, device=next(iter(self.params.values())).device)
                params = {n: p.index_select(0, at) for n, p in {**self.params, **self.target}.items()}
            if len(members) == 1 or not self.vectorised:  # seed by seed (a dense GRU keeps the fused cell)
                # each on its own batch, unpadded: padding changes no loss mathematically, but it does change the
                # rounding of every sum over time steps, so a padded seed's update would depend on the longest
                # episode the other seeds sampled (and a resume that re-pairs the seeds' rounds would diverge)
                each = [functional_call(self.template, {n: p[j] for n, p in params.items()}, (batches[i], kind))
                        for j, i in enumerate(members)]
                loss = torch.stack([e[0] for e in each])
                stat = {k: torch.stack([e[1][k] for e in each]) for k in each[0][1]}
            else:
                padded = {i: pad_time(batches[i], steps) for i in members}
                batch = {k: torch.stack([padded[i][k] for i in members]) for k in padded[members[0]]}
                for cell in self.cells:  # vmap has no batching rule for torch's fused GRU cell
                    cell.fused = False
                try:
                    loss, stat = vmap(lambda p, b, kind=kind: functional_call(self.template, p, (b, kind)))(params,
                                                                                                          batch)
                finally:
                    for cell in self.cells:
                        cell.fused = True
            total = total + loss.sum()
            for j, i in enumerate(members):
                losses[i] = loss[j].detach()
                stats[i] = {k: v[j] for k, v in stat.items()}
        return total, losses, stats

    def step(self, loss: torch.Tensor | None, seeds: list[int], updates: list[int],
             progress: list[float]) -> torch.Tensor:
        """Backward of Σ loss (None: `losses` has set the gradients) and one optimiser step of `seeds` (each seed's
        update number and fraction of its budget done); returns the gradient norm of every seed before clipping [S].
        Seeds not listed are not stepped (their gradients are zero); the optimiser's running averages of seeds that
        left the stack (finished runs) do move, which no output reads any more."""
        if loss is not None:
            self.optimiser.zero_grad()
            loss.backward()
        for s, t, done in zip(seeds, updates, progress, strict=True):
            learner = self.learners[s]
            if learner.sparse:
                own = dict(learner.named_parameters())
                for n, p in self.params.items():
                    own[n].grad = p.grad[s]
                learner.sparse.before_step(_SeedOptimiserView(self.optimiser, self.params, learner, s), t, done)
        grads = [p.grad for p in self.params.values()]
        norms = torch.stack([g.reshape(g.shape[0], -1).pow(2).sum(1) for g in grads]).sum(0).sqrt()
        coef = (self.max_norm / (norms + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.view(-1, *([1] * (g.dim() - 1))))
        self.optimiser.step()
        for s in seeds:
            if self.learners[s].sparse:
                self.learners[s].sparse.after_step()
        return norms

    @torch.no_grad()
    def update_targets(self, s: int) -> None:
        """Seed s's target networks ← its online networks (and masks)."""
        self.learners[s].update_targets()

    # ---- one seed's share of the state, for its own checkpoint ---------------------------------------------
    def seed_state(self, s: int) -> dict:
        learner = self.learners[s]
        optimiser = {n: {k: (v[s].clone() if torch.is_tensor(v) and v.dim() > 0 else v)
                         for k, v in self.optimiser.state.get(p, {}).items()} for n, p in self.params.items()}
        return {"learner": {k: v.clone() for k, v in learner.state_dict().items()}, "optimiser": optimiser,
                "sparse": learner.sparse_state()}

    @torch.no_grad()
    def load_seed_state(self, s: int, state: dict) -> None:
        learner = self.learners[s]
        own = learner.state_dict()
        missing = set(own) ^ set(state["learner"])
        if missing:
            raise KeyError(f"checkpointed learner does not match this configuration: {sorted(missing)[:3]}")
        for k, v in state["learner"].items():
            own[k].copy_(v)  # the state dict's tensors are views of the stacked storage
        for n, p in self.params.items():
            saved = state["optimiser"][n]
            if not saved:
                continue
            current = self.optimiser.state[p]
            for k, v in saved.items():
                if torch.is_tensor(v) and v.dim() > 0:
                    current.setdefault(k, torch.zeros_like(p))[s] = v.to(p.device)
                else:
                    current[k] = v.clone() if torch.is_tensor(v) else v
        learner.load_sparse_state(state["sparse"])

