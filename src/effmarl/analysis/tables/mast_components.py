"""Paper 2's "why": MAST against MAST without each of its value-learning components - Soft Mellowmax in the target,
hybrid TD(λ) targets, the dual replay buffer - one removed at a time, at Table 1's cell (QMIX on SMAX 3m at 99 % in the
default profile) and on Table 1's seeds (study `mast_components`; the full MAST runs are mast_sweep's at the same
sparsity). Per variant: the win-rate statistic (the mean over seeds with its 95 % t-interval, std), its
ratio to full MAST (mean / full MAST mean) with a 95 % Fieller interval, and the probability that a run
of the variant beats a full MAST run; dense's row, where given, for context."""

from __future__ import annotations

import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_optional, read_tables
from effmarl.analysis.metrics import LAST_K, STATISTIC, components_ablation, interval_text, judge, removed_components
from effmarl.analysis.style import algo_name, map_name

CAPTION = ("Paper 2, MAST's components ablated one at a time on SMAX (not SMAC), at Table 1's cell and seeds: full "
           "MAST (mast_sweep's runs at the cell's sparsity) and MAST without Soft Mellowmax (max in the target), "
           "without hybrid TD(λ) (one-step targets throughout) and without the dual buffer (one FIFO buffer), every "
           "run trained alike; dense for context. Win rate: " + STATISTIC + ", ± std; `ratio` = mean / full MAST "
           "mean with its 95 % Fieller interval "
           "(each variant's runs and full MAST's as independent samples); `p_improvement` = the probability that a run "
           "of the variant beats a full MAST run (0.5 = no difference); `seeds` and `seed_list` = the runs behind "
           "each row.")
REPRODUCES = ("Paper 2's component ablation (its section 5: why MAST works - Soft Mellowmax, hybrid TD(λ) and the dual "
              "buffer each fix the value learning of sparse networks).")
CLAIM = "Each of MAST's three components contributes: removing any one lowers the sparse model's win rate."

OUTPUT = {"group": "mast", "stem": "components"}
INPUTS = {"mast": {"study": "mast_sweep",
                   "doc": "metrics.summary.parquet of mast_sweep (full MAST: its runs at the ablated runs' sparsity)"},
          "ablated": {"study": "mast_components",
                      "doc": "metrics.summary.parquet of mast_components (MAST without one component per run)"},
          "dense": {"study": "mast_dense", "optional": True,
                    "doc": "metrics.summary.parquet of mast_dense (a context row per cell)"}}

VARIANT_NAMES = {"dense": "Dense", "none": "MAST (all components)", "soft_mellowmax": "MAST without Soft Mellowmax",
                 "td_lambda": "MAST without hybrid TD(λ)", "dual_buffer": "MAST without the dual buffer"}
SHOWN = ["algorithm", "map", "sparsity", "variant", "removed", "mean", "interval", "ratio", "ratio_lo", "ratio_hi",
         "p_improvement", "std", "seeds", "seed_list", "mean_lo", "mean_hi"]


def make(inputs: list[str], k: int = LAST_K) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, "table mast_components")
    mast, ablated, dense = read_tables(named["mast"]), read_tables(named["ablated"]), read_optional(named["dense"])
    table = components_ablation(mast, ablated, dense, k=k)
    out = table.assign(algorithm=table["algo"].map(algo_name), map=table["map"].map(map_name),
                       variant=table["removed"].map(lambda r: VARIANT_NAMES.get(r, f"MAST without {r}")),
                       interval=[interval_text(lo, hi, 3) for lo, hi in zip(table["mean_lo"], table["mean_hi"],
                                                                             strict=True)])
    out.loc[out["removed"] == "dense", "sparsity"] = 0.0
    out = out[SHOWN].round({c: 4 for c in ("mean", "ratio", "ratio_lo", "ratio_hi", "p_improvement", "std", "mean_lo",
                                           "mean_hi")})
    # the compared cells: each variant and full MAST at the ablated runs' sparsity (dense, where given, as context)
    full = mast[mast["cfg.sparse.sparsity"].isin(set(ablated["cfg.sparse.sparsity"]))]
    shown = pd.concat([f.assign(removed=removed_components(f)) for f in (ablated, full)], ignore_index=True)
    return mark_evidence(out, judge(shown, ["cfg.algo", "cfg.env.map", "cfg.sparse.sparsity", "removed"],
                                    dense=dense))
