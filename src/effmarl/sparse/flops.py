"""Theoretical FLOPs and model size from the actual masks, with the MAST paper's formulas.

Per layer, with density d = 1 − S taken from the layer's own mask (dense when it has none):
- fully connected, I inputs, O outputs:   forward d·(2I − 1)·O        size d·I·O
- GRU, input I, hidden h:                 forward d·3h·[2(h + I) − 1]  size d·3h·(h + I)
  (the GRU is counted as one [3h, h + I] matrix; with different densities of weight_ih and weight_hh, d is the
  density of that concatenated matrix, i.e. (nnz_ih + nnz_hh)/(3h(h + I)), which gives the formula exactly)
- nets.rnn_agent.GRUCell (a GRU written out from two linear maps ih and hh) is counted as one GRU;
- a stacked per-agent layer (nets.rnn_agent.StackedLinear, and a GRUCell built from two) counts every agent's
  copy with that copy's own mask;
  `copies` multiplies a whole network evaluated several times (a parameter-shared agent network run by n agents).
Only weight matrices count (biases, activations, gates and the mixer's bmm are outside the paper's formulas).
Backward = 2 × forward. Inference = the agent networks' forward only. Per training iteration with batch B
(B counts the samples the networks are evaluated on; for episode batches B·T):
    QMIX     B·4·(F_A + F_M)
    OW-QMIX  B·(3F_A + 3F_M + 4F_UA + 4F_UM)
    RES      B·(4F_A + (3 + 2nm)·F_M)        n agents, m actions
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from torch import nn

from effmarl.nets.rnn_agent import GRUCell as ComposedGRUCell
from effmarl.nets.rnn_agent import StackedLinear
from effmarl.sparse.masks import ModuleLike, SparseTopology, named_modules
from effmarl.variants import QMIX_VARIANTS


@dataclass
class LayerCount:
    name: str
    kind: str  # "linear" or "gru"
    inputs: int  # I
    outputs: int  # O (linear) or hidden size h (gru)
    copies: int  # stacked agents × evaluations per sample
    nnz: float  # active weights (all copies' own masks; a mean over training where counted so: layer_counts)
    numel: int  # all weights
    forward_flops: float
    dense_forward_flops: float

    @property
    def density(self) -> float:
        return self.nnz / self.numel


def linear_forward_flops(inputs: int, outputs: int, density: float = 1.0) -> float:
    return density * (2 * inputs - 1) * outputs


def gru_forward_flops(inputs: int, hidden: int, density: float = 1.0) -> float:
    return density * 3 * hidden * (2 * (hidden + inputs) - 1)


def _nnz(topology: SparseTopology | None, name: str, param: nn.Parameter,
         active: Mapping[str, float] | None = None) -> float:
    if active is not None and name in active:
        return active[name]
    if topology is not None and name in topology.masks:
        return int(topology.masks[name].sum())
    return param.numel()


def layer_counts(modules: ModuleLike, topology: SparseTopology | None = None, copies: int = 1,
                 active: Mapping[str, float] | None = None) -> list[LayerCount]:
    """One LayerCount per Linear / StackedLinear / GRUCell (torch's or nets.rnn_agent's) / single-layer GRU in modules.

    Parameter names follow SparseTopology's convention, so the topology's masks are found for each layer; `active`
    (name -> active weights, e.g. a mean over training: SparseTraining.mean_active) replaces a mask's count.
    """
    rows, inside_gru = [], ()
    for mname, mod in named_modules(modules):
        prefix = f"{mname}." if mname else ""
        if inside_gru and mname.startswith(inside_gru):
            continue  # the ih / hh maps of a composed GRU cell, counted with the cell
        if isinstance(mod, ComposedGRUCell):  # nets.rnn_agent.GRUCell: a GRU written out from two linear maps
            inside_gru = prefix
            names, params = [prefix + "ih.weight", prefix + "hh.weight"], [mod.ih.weight, mod.hh.weight]
            stacked = getattr(mod.ih, "n_agents", 1)
            nnz = sum(_nnz(topology, n, p, active) for n, p in zip(names, params, strict=True))
            numel = sum(p.numel() for p in params)
            dense = stacked * copies * gru_forward_flops(mod.ih.in_features, mod.hidden_size)
            rows.append(LayerCount(mname, "gru", mod.ih.in_features, mod.hidden_size, stacked * copies,
                                   nnz * copies, numel * copies, dense * nnz / numel, dense))
        elif isinstance(mod, nn.Linear | StackedLinear):
            stacked = getattr(mod, "n_agents", 1)
            nnz, numel = _nnz(topology, prefix + "weight", mod.weight, active), mod.weight.numel()
            dense = stacked * copies * linear_forward_flops(mod.in_features, mod.out_features)
            rows.append(LayerCount(mname, "linear", mod.in_features, mod.out_features, stacked * copies,
                                   nnz * copies, numel * copies, dense * nnz / numel, dense))
        elif isinstance(mod, nn.GRUCell | nn.GRU):
            if isinstance(mod, nn.GRU):
                if mod.num_layers != 1 or mod.bidirectional:
                    raise NotImplementedError(f"{mname}: only single-layer unidirectional nn.GRU is counted")
                names = [prefix + "weight_ih_l0", prefix + "weight_hh_l0"]
            else:
                names = [prefix + "weight_ih", prefix + "weight_hh"]
            params = [getattr(mod, n.rsplit(".", 1)[-1]) for n in names]
            nnz = sum(_nnz(topology, n, p, active) for n, p in zip(names, params, strict=True))
            numel = sum(p.numel() for p in params)
            dense = copies * gru_forward_flops(mod.input_size, mod.hidden_size)
            rows.append(LayerCount(mname, "gru", mod.input_size, mod.hidden_size, copies,
                                   nnz * copies, numel * copies, dense * nnz / numel, dense))
        elif isinstance(mod, nn.RNNBase | nn.RNNCellBase):
            raise NotImplementedError(f"{mname}: {type(mod).__name__} has no FLOPs formula here")
    return rows


def count(modules: ModuleLike, topology: SparseTopology | None = None, copies: int = 1,
          active: Mapping[str, float] | None = None) -> dict:
    """Forward FLOPs and size of modules, sparse (from the masks, or `active`) and dense, plus the per-layer rows."""
    rows = layer_counts(modules, topology, copies, active)
    return {
        "forward_flops": sum(r.forward_flops for r in rows),
        "dense_forward_flops": sum(r.dense_forward_flops for r in rows),
        "size": sum(r.nnz for r in rows),
        "dense_size": sum(r.numel for r in rows),
        "layers": [asdict(r) | {"density": r.density} for r in rows],
    }


def training_flops(algo: str, batch: int, f_agent: float, f_mix: float, *, f_unrestricted_agent: float = 0.0,
                   f_unrestricted_mix: float = 0.0, n_agents: int | None = None, n_actions: int | None = None) -> float:
    """FLOPs of one training iteration (the paper's formulas, each variant's `train_flops` in effmarl/variants.py);
    the F's are forward FLOPs per sample. `algo`: a QMIX-family variant or one of the paper's names for one."""
    v = QMIX_VARIANTS.get(algo) or next((v for v in QMIX_VARIANTS.values() if algo in v.aliases), None)
    if v is None:
        raise ValueError(f"no training-FLOPs formula for algo {algo!r}")
    return v.train_flops(batch, f_agent, f_mix, f_unrestricted_agent, f_unrestricted_mix, n_agents, n_actions)


def summary(algo: str, batch: int, agent: ModuleLike, mixer: ModuleLike, topology: SparseTopology | None = None, *,
            agent_copies: int = 1, unrestricted_agent: ModuleLike | None = None,
            unrestricted_mixer: ModuleLike | None = None, n_agents: int | None = None,
            n_actions: int | None = None, active: Mapping[str, float] | None = None) -> dict:
    """Table-1 numbers for one model: training and inference FLOPs and size, sparse, dense, and their ratio.

    agent/mixer (and OW-QMIX's unrestricted networks) must be named as in the topology: pass the same mapping
    keys, e.g. agent={"agent": agent_net}, mixer={"mixer": mixer_net} for a topology over both.
    agent_copies: evaluations of the agent network per sample (n_agents for a parameter-shared network, 1 for
    per-agent (StackedLinear) networks, which already hold every agent).
    active: active weights per parameter name to count instead of the masks' (layer_counts).
    """
    parts = {"agent": count(agent, topology, agent_copies, active), "mixer": count(mixer, topology, active=active)}
    parts["unrestricted_agent"] = count(unrestricted_agent, topology, agent_copies, active) if unrestricted_agent \
        else None
    parts["unrestricted_mixer"] = count(unrestricted_mixer, topology, active=active) if unrestricted_mixer else None

    def value(part: str, key: str) -> float:
        return parts[part][key] if parts[part] is not None else 0.0

    out = {}
    for prefix, key in (("", "forward_flops"), ("dense_", "dense_forward_flops")):
        out[prefix + "train_flops"] = training_flops(
            algo, batch, value("agent", key), value("mixer", key),
            f_unrestricted_agent=value("unrestricted_agent", key), f_unrestricted_mix=value("unrestricted_mixer", key),
            n_agents=n_agents, n_actions=n_actions)
        out[prefix + "inference_flops"] = value("agent", key)
    size_key = {"": "size", "dense_": "dense_size"}
    for prefix in ("", "dense_"):
        out[prefix + "size"] = sum(value(p, size_key[prefix]) for p in parts)
    for key in ("train_flops", "inference_flops", "size"):
        out[key + "_ratio"] = out[key] / out["dense_" + key]  # normalised to dense (the paper reports 1/ratio)
    out["parts"] = parts
    return out
