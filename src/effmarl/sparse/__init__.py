"""Sparse-training machinery: masks over any module's weights, Erdős–Rényi densities, topology evolution
(static, SET, RigL/RLx2/MAST, gradual magnitude pruning: each method's entry in effmarl/methods.py says which),
FLOPs/size accounting, the Tiny baseline's width (tiny.py), and sparse inference forms. The per-agent layers they
mask are the networks' own (nets.rnn_agent.StackedLinear). Design notes: docs/mast.md."""

from effmarl.sparse.density import kept_counts, layer_densities
from effmarl.sparse.evolution import SparseTraining, TopologySchedule, cosine_zeta
from effmarl.sparse.masks import SparseTopology, sparsifiable_weights

__all__ = ["SparseTopology", "SparseTraining", "TopologySchedule", "cosine_zeta", "kept_counts",
           "layer_densities", "sparsifiable_weights"]
