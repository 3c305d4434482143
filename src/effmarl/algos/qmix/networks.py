"""The networks of the QMIX family, built in one place, and the Tiny baseline's narrowed settings.

`build_networks` makes PyMARL's GRU agent (shared, or one set of weights per agent) and QMIX's hypernetwork mixer;
OW-QMIX adds its central GRU agent and unrestricted feed-forward central mixer. The learner, the Tiny width search
and FLOPs accounting all use these modules, so no second description of the layout exists.
"""

from __future__ import annotations

import torch
from torch import nn

from effmarl.algos.qmix.settings import QmixOptions
from effmarl.nets.mixers import CentralFFMixer, QMixer
from effmarl.nets.rnn_agent import RNNAgent, input_dim, linear_factory
from effmarl.sparse.tiny import sparsifiable_count, tiny_width_for
from effmarl.variants import variant


def build_networks(algo: str, q: QmixOptions | dict, n_agents: int, obs_dim: int, n_actions: int,
                   state_dim: int) -> dict[str, nn.Module]:
    """The networks of `algo`'s table entry (effmarl/variants.py: {"agent", "mixer"}, + "central_agent",
    "central_mixer" for ow_qmix), built in its order with the widths of the qmix options `q`."""
    q = QmixOptions.of(q)
    linear = linear_factory(n_agents, q.shared_params)
    in_dim = input_dim(obs_dim, n_actions, n_agents)
    builders = {
        "agent": lambda: RNNAgent(in_dim, n_actions, q.rnn_hidden_dim, linear),
        "mixer": lambda: QMixer(n_agents, state_dim, q.mixing_embed_dim, q.hypernet_embed, q.hypernet_layers),
        "central_agent": lambda: RNNAgent(in_dim, n_actions, q.rnn_hidden_dim, linear),
        "central_mixer": lambda: CentralFFMixer(n_agents, state_dim, q.central_mixing_embed_dim),
    }
    return {name: builders[name]() for name in variant(algo).networks}


def narrowed(q: QmixOptions, width: int) -> QmixOptions:
    """`q` with the GRU hidden size set to `width` and every other width (mixer embedding, hypernetwork, OW-QMIX
    central mixer) scaled by the same factor width / rnn_hidden_dim."""
    factor = width / q.rnn_hidden_dim
    return q.replace(rnn_hidden_dim=width, mixing_embed_dim=max(1, round(q.mixing_embed_dim * factor)),
                     hypernet_embed=max(1, round(q.hypernet_embed * factor)),
                     central_mixing_embed_dim=max(1, round(q.central_mixing_embed_dim * factor)))


def tiny_hyper(algo: str, q: QmixOptions | dict, n_agents: int, obs_dim: int, n_actions: int, state_dim: int,
               sparsity: float) -> tuple[QmixOptions, dict]:
    """Tiny: the qmix settings of a dense network whose weight count matches the sparse model's budget
    round((1 − S) · weights of the full-width networks), every network of the algorithm counted (OW-QMIX's central
    networks included, as MAST sparsifies them too). Returns (narrowed settings, {tiny_width, tiny_target_params,
    tiny_params})."""
    q = QmixOptions.of(q)

    def build(width: int) -> dict[str, nn.Module]:
        return build_networks(algo, narrowed(q, width), n_agents, obs_dim, n_actions, state_dim)

    full = q.rnn_hidden_dim
    with torch.device("meta"):
        target = round((1.0 - sparsity) * sparsifiable_count(build(full)))
    width = tiny_width_for(build, target, max_width=full)
    with torch.device("meta"):
        count = sparsifiable_count(build(width))
    return narrowed(q, width), {"tiny_width": width, "tiny_target_params": target, "tiny_params": count}
