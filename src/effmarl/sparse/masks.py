"""SparseTopology: boolean masks over a chosen set of weight parameters of any nn.Module(s).

The topology owns one mask per weight parameter (name -> bool tensor, True = active). A *layer* is the unit
that gets one density and is ranked as a whole during evolution: by default every weight parameter is its own
layer (a GRU's weight_ih and weight_hh are two layers; a stacked per-agent weight [n_agents, out, in] is one
layer, so all agents compete under one budget and each ends with its own mask). `groups` joins several
parameters into one layer, e.g. an nn.ModuleList with one Linear per agent.

Biases (and any parameter not selected) stay dense.

How a learner uses it (see SparseTraining in evolution.py for the same sequence wrapped up):

    loss.backward()                      # p.grad is the DENSE gradient: masked weights are zero, not detached
    topo.evolve(zeta, grow="gradient")   # only on evolution steps; RigL ranks inactive weights by |p.grad|
    topo.reset_optimizer_state(opt, changed)  # after evolve: zero Adam/RMSprop state where the mask changed
    topo.mask_gradients()                # before clipping and the optimiser step
    opt.step()
    topo.apply_masks()                   # weights exactly sparse again (momentum cannot leak into them)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from effmarl.nets.rnn_agent import StackedLinear
from effmarl.sparse.allocation import split_by_agent
from effmarl.sparse.density import kept_counts, layer_densities

ModuleLike = nn.Module | Mapping[str, nn.Module]


def named_parameters(modules: ModuleLike) -> dict[str, nn.Parameter]:
    """Parameters by name; a mapping of modules prefixes each module's names with its key ("agent.fc1.weight")."""
    if isinstance(modules, nn.Module):
        return dict(modules.named_parameters())
    return {f"{key}.{name}": p for key, mod in modules.items() for name, p in mod.named_parameters()}


def named_modules(modules: ModuleLike) -> Iterable[tuple[str, nn.Module]]:
    if isinstance(modules, nn.Module):
        yield from modules.named_modules()
        return
    for key, mod in modules.items():
        for name, sub in mod.named_modules():
            yield (f"{key}.{name}" if name else key), sub


def sparsifiable_weights(modules: ModuleLike) -> list[str]:
    """Names of the weights MAST sparsifies: Linear / StackedLinear weights (so the ih / hh maps of
    nets.rnn_agent.GRUCell too) and the input-hidden and hidden-hidden weights of torch's recurrent cells and layers
    (GRUCell, GRU, ...). Biases are left dense."""
    names = []
    for mname, mod in named_modules(modules):
        prefix = f"{mname}." if mname else ""
        if isinstance(mod, nn.Linear | StackedLinear):
            names.append(prefix + "weight")
        elif isinstance(mod, nn.RNNCellBase):
            names += [prefix + "weight_ih", prefix + "weight_hh"]
        elif isinstance(mod, nn.RNNBase):
            names += [prefix + n for n, _ in mod.named_parameters(recurse=False) if n.startswith("weight_")]
    return names


@dataclass(frozen=True)
class Layer:
    """One unit of density and ranking: one or more weight parameters of the same per-agent shape (out, in)."""

    name: str
    params: tuple[str, ...]
    shape: tuple[int, int]  # per-agent (out, in): the fan-out and fan-in
    numel: int  # all weights of the layer (every agent's copy)


class SparseTopology:
    """Masks for a set of weight parameters, their densities, and the operations that keep weights sparse.

    modules: an nn.Module or a mapping name -> module (e.g. {"agent": agent, "mixer": mixer}) treated as one
        network under one budget.
    sparsity: global S; (1 − S) of all selected weights are active.
    params: weight names to sparsify (default: sparsifiable_weights(modules)).
    groups: layer name -> list of parameter names ranked together as one layer (each name at most once).
    distribution: "er" (Erdős–Rényi) or "uniform" per-layer densities.
    seed: seeds the topology's own torch.Generator (initial random masks, SET's random growth, tie breaking).
    masks: name -> bool mask for every selected weight, installed instead of the random initial masks (a lottery
        ticket); each layer's count and density then follow these masks.
    agent_shares: one relative weight per agent: every stacked per-agent layer [n_agents, out, in] then keeps a
        fixed budget per agent (sparse/allocation.py), drawn and evolved within each agent's slice; None: the
        layer's one budget is ranked across all agents (the split between agents is learned).
    dense_start: every weight active at first (a dense start that `prune_to` brings to `sparsity`: GMP); the
        densities, counts and per-agent budgets are still those of `sparsity`, where pruning ends.
    """

    def __init__(self, modules: ModuleLike, sparsity: float, *, params: Iterable[str] | None = None,
                 groups: Mapping[str, Iterable[str]] | None = None, distribution: str = "er", seed: int = 0,
                 masks: Mapping[str, torch.Tensor] | None = None, agent_shares: Sequence[float] | None = None,
                 dense_start: bool = False):
        self.modules = modules
        self.sparsity = float(sparsity)
        self.distribution = distribution
        self.generator = torch.Generator().manual_seed(seed)
        self.params = named_parameters(modules)
        selected = list(params) if params is not None else sparsifiable_weights(modules)
        unknown = [n for n in selected if n not in self.params]
        if unknown:
            raise KeyError(f"not parameters of the module(s): {unknown}")
        self.layers = self._make_layers(selected, groups or {})
        if agent_shares is not None and masks is not None:
            raise ValueError("given masks and per-agent budgets exclude each other")
        self.agent_shares = None if agent_shares is None else list(agent_shares)
        self.densities, self.counts, self.agent_budgets = self._budgets(self.sparsity)
        self.masks: dict[str, torch.Tensor] = {}
        if masks is not None:
            self._check_given(masks, selected)
        for layer in self.layers:
            if dense_start:
                flat = torch.ones(layer.numel, dtype=torch.bool)
            elif layer.name in self.agent_budgets:  # each agent's budget drawn within its own slice
                budgets = self.agent_budgets[layer.name]
                per = layer.numel // len(budgets)
                flat = torch.zeros(layer.numel, dtype=torch.bool)
                for a, count in enumerate(budgets):
                    flat[a * per + torch.randperm(per, generator=self.generator)[:count]] = True
            elif masks is None:
                flat = torch.zeros(layer.numel, dtype=torch.bool)
                flat[torch.randperm(layer.numel, generator=self.generator)[: self.counts[layer.name]]] = True
            else:
                flat = self._layer_flat(layer, {n: m.bool().cpu() for n, m in masks.items()})
                self.counts[layer.name] = int(flat.sum())
                self.densities[layer.name] = self.counts[layer.name] / layer.numel
            self._set_layer_mask(layer, flat)
        self.apply_masks()

    def _check_given(self, masks: Mapping[str, torch.Tensor], selected: list[str]) -> None:
        if set(masks) != set(selected):
            raise ValueError(f"given masks name {sorted(set(masks) ^ set(selected))[:3]} differently from the "
                             "weights to sparsify")
        for name, mask in masks.items():
            if tuple(mask.shape) != tuple(self.params[name].shape):
                raise ValueError(f"{name}: mask shape {tuple(mask.shape)} != parameter shape "
                                 f"{tuple(self.params[name].shape)}")

    # ----------------------------------------------------------------------------------------------- set-up
    def _budgets(self, sparsity: float) -> tuple[dict[str, float], dict[str, int], dict[str, list[int]]]:
        """(density, active weights of every layer, {stacked layer: active weights of each agent}, fixed where
        agents have shares) at global sparsity `sparsity`."""
        sizes = {layer.name: layer.numel for layer in self.layers}
        densities = layer_densities({ly.name: (ly.shape, ly.numel) for ly in self.layers}, sparsity,
                                    self.distribution)
        counts, agent_budgets = kept_counts(sizes, densities, sparsity), {}
        if self.agent_shares is not None:
            stacked = {ly.name: self.params[ly.params[0]].shape[0] for ly in self.layers
                       if len(ly.params) == 1 and self.params[ly.params[0]].dim() == 3}
            split, agent_budgets = split_by_agent(counts, sizes, stacked, self.agent_shares)
            densities.update({n: c / sizes[n] for n, c in split.items() if c != counts[n]})
            counts = split
        return densities, counts, agent_budgets

    def _make_layers(self, selected: list[str], groups: Mapping[str, Iterable[str]]) -> list[Layer]:
        layers, grouped = [], set()
        for gname, members in groups.items():
            members = tuple(members)
            shapes = {tuple(self.params[m].shape[-2:]) for m in members}
            if len(shapes) != 1:
                raise ValueError(f"group {gname!r}: members have different shapes {sorted(shapes)}")
            layers.append(Layer(gname, members, shapes.pop(), sum(self.params[m].numel() for m in members)))
            grouped.update(members)
        for name in selected:
            if name not in grouped:
                p = self.params[name]
                if p.dim() < 2:
                    raise ValueError(f"{name}: only weights shaped [..., out, in] can be masked, got {tuple(p.shape)}")
                layers.append(Layer(name, (name,), tuple(p.shape[-2:]), p.numel()))
        return layers

    def _layer_flat(self, layer: Layer, tensors: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return torch.cat([tensors[n].reshape(-1) for n in layer.params])

    def _set_layer_mask(self, layer: Layer, flat: torch.Tensor) -> None:
        offset = 0
        for name in layer.params:
            p = self.params[name]
            self.masks[name] = flat[offset: offset + p.numel()].view(p.shape).to(p.device)
            offset += p.numel()

    # ------------------------------------------------------------------------------------ every update step
    @torch.no_grad()
    def apply_masks(self) -> None:
        """Zero every inactive weight (call after each optimiser step and after loading weights)."""
        for name, mask in self.masks.items():
            self.params[name].masked_fill_(~mask, 0.0)

    @torch.no_grad()
    def mask_gradients(self) -> None:
        """Zero the gradient of every inactive weight (call after backward, before clipping and the step)."""
        for name, mask in self.masks.items():
            grad = self.params[name].grad
            if grad is not None:
                grad.masked_fill_(~mask, 0.0)

    @torch.no_grad()
    def reset_optimizer_state(self, optimizer: torch.optim.Optimizer,
                              changed: Mapping[str, torch.Tensor] | None = None) -> None:
        """Zero every per-weight optimiser state tensor (Adam's exp_avg/exp_avg_sq, RMSprop's square_avg,
        momentum buffers, ...) at inactive positions and at positions in `changed` (e.g. the grown weights),
        so a dropped weight leaves no momentum behind and a grown weight starts from a fresh state."""
        for name, mask in self.masks.items():
            state = optimizer.state.get(self.params[name])
            if not state:
                continue
            reset = ~mask if changed is None or name not in changed else (~mask | changed[name])
            for value in state.values():
                if torch.is_tensor(value) and value.shape == mask.shape:
                    value.masked_fill_(reset, 0.0)

    # --------------------------------------------------------------------------------------------- evolution
    @torch.no_grad()
    def evolve(self, zeta: float, grow: str = "gradient") -> tuple[dict[str, torch.Tensor], dict[str, dict]]:
        """One topology update: in every layer drop k = floor(ζ·active) active weights with the smallest |w| and
        grow k inactive ones (grow="random": uniformly, SET; grow="gradient": largest |p.grad|, RigL/MAST).

        Candidates for growth are the weights inactive *before* this update, so a just-dropped weight is not
        regrown in the same update and drop and grow sets are disjoint; k is capped by the number of inactive
        weights. Dropped and grown weights are set to 0. Ties (e.g. zero gradients, just-grown zero weights) are
        broken by a random permutation so no agent or row is favoured by its position in memory.
        For grow="gradient" p.grad must hold the dense gradient (read before mask_gradients()).
        Returns (changed: name -> bool tensor of flipped positions, stats: layer -> {active, drop, grow}; active:
        before the update).
        """
        if grow not in ("random", "gradient"):
            raise ValueError(f"grow must be 'random' or 'gradient', got {grow!r}")
        changed, stats = {}, {}
        for layer in self.layers:
            mask = self._layer_flat(layer, self.masks).cpu()
            n_active = int(mask.sum())
            # ranking units: the whole layer, or each agent's slice when agents have fixed budgets
            n_units = len(self.agent_budgets.get(layer.name, [None]))
            per = mask.numel() // n_units
            active = [int(mask[a * per:(a + 1) * per].sum()) for a in range(n_units)]
            ks = [min(int(zeta * n), per - n) for n in active]
            stats[layer.name] = {"active": n_active, "drop": sum(ks), "grow": sum(ks)}
            if sum(ks) <= 0:
                continue
            weight = self._layer_flat(layer, {n: self.params[n].detach() for n in layer.params}).abs().cpu()
            grad = self._dense_grad(layer) if grow == "gradient" else None
            new = mask.clone()
            for a, k in enumerate(ks):
                if k <= 0:
                    continue
                lo, hi = a * per, (a + 1) * per
                drop_idx, grow_idx = self._drop_grow(mask[lo:hi], weight[lo:hi],
                                                     None if grad is None else grad[lo:hi], k, grow)
                new[lo + drop_idx] = False
                new[lo + grow_idx] = True
            changed.update(self._install(layer, mask, new))
        return changed, stats

    def _install(self, layer: Layer, mask: torch.Tensor, new: torch.Tensor) -> dict[str, torch.Tensor]:
        """Layer `layer`'s flat mask `mask` becomes `new`; every flipped weight is set to 0 (a dropped weight
        vanishes, a grown one starts at 0). Returns the flipped positions of each of its parameters."""
        flipped, changed, offset = mask ^ new, {}, 0
        self._set_layer_mask(layer, new)
        for n in layer.params:
            p = self.params[n]
            changed[n] = flipped[offset: offset + p.numel()].view(p.shape).to(p.device)
            p.masked_fill_(changed[n], 0.0)
            offset += p.numel()
        return changed

    def _dense_grad(self, layer: Layer) -> torch.Tensor:
        grads = {}
        for n in layer.params:
            if self.params[n].grad is None:
                raise RuntimeError(f"{n}: gradient growth needs the dense gradient in .grad (call evolve "
                                   "after backward and before mask_gradients)")
            grads[n] = self.params[n].grad
        return self._layer_flat(layer, grads).abs().cpu()

    def _smallest(self, mask: torch.Tensor, weight: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Within one ranking unit: the k active weights with the smallest |w|, ties broken by a random permutation
        (returned too)."""
        perm = torch.randperm(mask.numel(), generator=self.generator)
        drop_score = torch.where(mask, weight, torch.inf)[perm]
        return perm[torch.topk(drop_score, k, largest=False).indices], perm

    def _drop_grow(self, mask: torch.Tensor, weight: torch.Tensor, grad: torch.Tensor | None, k: int,
                   grow: str) -> tuple[torch.Tensor, torch.Tensor]:
        """Within one ranking unit: the k active weights with the smallest |w| (dropped) and k weights inactive
        before this update (grown: at random, or by the largest |dense gradient|); ties broken by a permutation."""
        drop_idx, perm = self._smallest(mask, weight, k)
        if grad is None:
            grow_idx = perm[~mask[perm]][:k]
        else:
            grow_score = torch.where(mask, -torch.inf, grad)[perm]
            grow_idx = perm[torch.topk(grow_score, k).indices]
        return drop_idx, grow_idx

    @torch.no_grad()
    def prune_to(self, sparsity: float) -> tuple[dict[str, torch.Tensor], dict[str, dict]]:
        """Magnitude pruning towards global sparsity `sparsity` (GMP): every ranking unit (a layer, or an agent's
        slice where agents have fixed budgets) drops its smallest-|w| active weights down to what `sparsity` leaves it
        by the same rules as the target's (ER or uniform densities, the agents' shares); nothing is grown, and a unit
        already at or below that count is left alone. Returns (changed, stats) as `evolve` does (grow 0)."""
        _, counts, budgets = self._budgets(sparsity)
        changed, stats = {}, {}
        for layer in self.layers:
            mask = self._layer_flat(layer, self.masks).cpu()
            keep = budgets.get(layer.name, [counts[layer.name]])
            per = mask.numel() // len(keep)
            ks = [max(0, int(mask[a * per:(a + 1) * per].sum()) - n) for a, n in enumerate(keep)]
            stats[layer.name] = {"active": int(mask.sum()), "drop": sum(ks), "grow": 0}
            if sum(ks) == 0:
                continue
            weight = self._layer_flat(layer, {n: self.params[n].detach() for n in layer.params}).abs().cpu()
            new = mask.clone()
            for a, k in enumerate(ks):
                lo, hi = a * per, (a + 1) * per
                if k > 0:
                    new[lo + self._smallest(mask[lo:hi], weight[lo:hi], k)[0]] = False
            changed.update(self._install(layer, mask, new))
        return changed, stats

    def set_mask(self, name: str, mask: torch.Tensor) -> None:
        """Install a given mask (e.g. a lottery ticket) for one parameter and apply it. The layer's density then
        follows this mask; densities/counts are updated so evolution keeps it."""
        p = self.params[name]
        if tuple(mask.shape) != tuple(p.shape):
            raise ValueError(f"{name}: mask shape {tuple(mask.shape)} != parameter shape {tuple(p.shape)}")
        self.masks[name] = mask.bool().to(p.device)
        layer = next(ly for ly in self.layers if name in ly.params)
        if all(n in self.masks for n in layer.params):
            active = int(self._layer_flat(layer, self.masks).sum())
            self.counts[layer.name], self.densities[layer.name] = active, active / layer.numel
        with torch.no_grad():
            p.masked_fill_(~self.masks[name], 0.0)

    def rebind_parameters(self) -> None:
        """Look the parameters up again by name, after the modules' parameter objects were replaced (e.g. by views
        of a stacked tensor, algos/qmix/lockstep.py), and apply the masks to them."""
        self.params = named_parameters(self.modules)
        self.masks = {n: m.to(self.params[n].device) for n, m in self.masks.items()}
        self.apply_masks()

    # ------------------------------------------------------------------------------------------- reporting
    def layer_density(self) -> dict[str, float]:
        """Actual density of each layer, from the masks."""
        return {ly.name: float(self._layer_flat(ly, self.masks).float().mean()) for ly in self.layers}

    def density(self) -> float:
        """Actual overall density of the selected weights."""
        active = sum(int(m.sum()) for m in self.masks.values())
        return active / sum(m.numel() for m in self.masks.values())

    def agent_counts(self, name: str) -> torch.Tensor:
        """Active weights per agent of a stacked [n_agents, out, in] parameter (the paper's Figs. 11-12, 19-25)."""
        mask = self.masks[name]
        return mask.reshape(mask.shape[0], -1).sum(dim=1) if mask.dim() == 3 else mask.sum().reshape(1)

    # --------------------------------------------------------------------------------- targets, checkpoints
    def bind(self, modules: ModuleLike) -> SparseTopology:
        """A topology over another module(s) with the same parameter names (the target network) holding copies
        of these masks; applies them. Call again (or copy_masks_to) whenever the target is synchronised."""
        other = object.__new__(SparseTopology)
        other.modules, other.sparsity, other.distribution = modules, self.sparsity, self.distribution
        other.generator = torch.Generator().manual_seed(0)
        other.params = named_parameters(modules)
        other.layers, other.densities, other.counts = self.layers, dict(self.densities), dict(self.counts)
        other.agent_budgets = {n: list(b) for n, b in self.agent_budgets.items()}
        other.agent_shares = self.agent_shares
        other.masks = {}
        self.copy_masks_to(other)
        return other

    def copy_masks_to(self, other: SparseTopology) -> None:
        """Overwrite other's masks with copies of these and apply them to other's weights."""
        missing = [n for n in self.masks if n not in other.params]
        if missing:
            raise KeyError(f"target lacks parameters {missing}")
        other.masks = {n: m.clone().to(other.params[n].device) for n, m in self.masks.items()}
        other.apply_masks()

    def state_dict(self) -> dict:
        return {"sparsity": self.sparsity, "distribution": self.distribution,
                "masks": {n: m.cpu().clone() for n, m in self.masks.items()},
                "generator": self.generator.get_state()}

    def load_state_dict(self, state: Mapping) -> None:
        if set(state["masks"]) != set(self.masks):
            raise KeyError("checkpointed masks do not name the same parameters as this topology")
        self.masks = {n: m.to(self.params[n].device).bool() for n, m in state["masks"].items()}
        self.generator.set_state(state["generator"])
        self.apply_masks()
