"""Paper 2's sparse-training methods, one table: everything else (the schema's `sparse.method` enum, the learner's
topology, tickets and config checks, the workflow's per-run files, the cost model, Table 1's order, the figures'
names and colours) reads it.

Adding a method is one `Method` entry in `METHODS` (its place in the table is its place in Table 1 and every
figure) plus, where its topology changes in a way no entry has yet, the schedule in sparse/evolution.py.
The table is plain Python (no torch, no jax), so the schema, the workflow and the figure modules can read it.
"""

from __future__ import annotations

from dataclasses import dataclass

STARTS = ("dense", "sparse", "narrow")
GROWTHS = (None, "random", "gradient")
PRUNES = (None, "cubic")
COSTS = ("dense", "mast", "baseline")
FLOPS = ("final", "history")


@dataclass(frozen=True)
class Method:
    """One sparse-training method (config field `sparse.method`).

    display: its name in figures and tables
    color:   its tab10 colour index in every figure (fixed per method, so adding one recolours none)
    start:   the network it trains from: "dense" (every weight active; masks only once `prune` removes some),
             "sparse" (a random mask at the target sparsity, Erdős–Rényi or uniform per layer) or "narrow" (a
             dense network narrowed to the sparse model's weight count: Tiny, algos/qmix/networks.tiny_hyper)
    grow:    its topology update every Δm gradient updates while ζ's cosine is above 0 (sparse/evolution.py): drop the
             smallest |w| and regrow as many at "random" (SET) or by the largest dense "gradient" (RigL); None: none
    prune:   how a dense start reaches the target sparsity: "cubic" (Zhu & Gupta 2017, magnitude pruning every Δm
             updates between sparse.prune_start and sparse.anneal_end of training, never regrown); None: it does not
    cost:    how it is priced (analysis/envelope.py: by the published study that trained its kind - "dense"
             mast_dense, "mast" mast_sweep, "baseline" mast_table1; effmarl/resources.py: every kind but "dense"
             with the measured sparse-update factor)
    flops:   its training FLOPs per iteration (algos/qmix/accounting.py): "final" = those of its final masks (its
             sparsity never changes), "history" = the mean over its updates of each update's masks (a sparsity
             that changes, e.g. from a dense start)
    """
    name: str
    display: str
    color: int
    start: str
    grow: str | None = None
    prune: str | None = None
    cost: str = "baseline"
    flops: str = "final"

    def __post_init__(self):
        for field, value, allowed in (("start", self.start, STARTS), ("grow", self.grow, GROWTHS),
                                      ("prune", self.prune, PRUNES), ("cost", self.cost, COSTS),
                                      ("flops", self.flops, FLOPS)):
            if value not in allowed:
                raise ValueError(f"method {self.name}: {field} {value!r} is not one of {allowed}")
        if self.prune is not None and self.start != "dense":
            raise ValueError(f"method {self.name}: only a dense start is pruned")
        if self.grow is not None and self.start != "sparse":
            raise ValueError(f"method {self.name}: only a sparse start regrows what it drops")

    @property
    def masks(self) -> bool:
        """Whether it trains under masks (a topology: masks.pt, tickets, allocation): a sparse start or a pruned
        dense one; dense and Tiny have none."""
        return self.start == "sparse" or self.prune is not None


METHODS: dict[str, Method] = {m.name: m for m in (
    Method("dense", "Dense", 0, "dense", cost="dense"),
    Method("tiny", "Tiny", 1, "narrow"),
    Method("static", "SS", 2, "sparse"),
    # gradual magnitude pruning (Zhu & Gupta 2017): no paper of this project ran it; a dense-to-sparse baseline
    # strong in deep RL (Graesser et al. 2022, Obando-Ceron et al. 2024), cheaper to infer, not to train
    Method("gmp", "GMP", 8, "dense", prune="cubic", flops="history"),
    Method("set", "SET", 3, "sparse", grow="random"),
    Method("rigl", "RigL", 4, "sparse", grow="gradient"),
    Method("rlx2", "RLx2", 5, "sparse", grow="gradient"),   # the learner adds its multi-step target, dynamic buffer
    Method("mast", "MAST", 6, "sparse", grow="gradient", cost="mast"),  # + Soft Mellowmax, TD(λ), dual buffer
)}
REFERENCE = "dense"  # what every method is compared with (Table 1's normalisation)


def method(name: str) -> Method:
    """The table entry of sparse method `name`; KeyError naming the known methods for any other."""
    try:
        return METHODS[name]
    except KeyError:
        raise KeyError(f"{name!r} is not a sparse-training method ({', '.join(METHODS)})") from None
