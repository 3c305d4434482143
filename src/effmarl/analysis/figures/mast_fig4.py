"""Paper 2, Figure 4: multi-step target length vs model size - RigL-QMIX with multi-step targets (study
`mast_abl_nstep`: cfg.rlx2.multi_step.n x cfg.sparse.sparsity): win rate against n, one line per sparsity (the mean over
seeds with a 95 % Student-t (Yuen) interval)."""

from __future__ import annotations

import matplotlib.pyplot as plt

from effmarl.analysis.io import mark_evidence, named_inputs, read_tables
from effmarl.analysis.metrics import LAST_K, STATISTIC, final_win_rate, judge, seed_stats, seeds_text, win_rate_label
from effmarl.analysis.style import algo_name, map_name

N, SPARSITY = "cfg.rlx2.multi_step.n", "cfg.sparse.sparsity"
CAPTION = ("Paper 2, Figure 4 on SMAX: win rate of RigL-QMIX with n-step targets against the multi-step length n, one "
           "line per sparsity (model size). Point and error bar: " + STATISTIC + "; legend gives n = seeds.")
REPRODUCES = "Paper 2, Figure 4 (multi-step length vs model size)."
CLAIM = ("The best multi-step length depends on model size, which motivates MAST's hybrid TD(λ) instead of a "
         "fixed n.")

OUTPUT = {"group": "mast", "stem": "fig4_multi_step"}
INPUTS = {"metrics": {"study": "mast_abl_nstep", "doc": "metrics.summary.parquet of mast_abl_nstep"}}


def make(inputs: list[str], k: int = LAST_K):
    summary = read_tables(named_inputs(inputs, INPUTS, "figure mast_fig4")["metrics"])
    stats = seed_stats(final_win_rate(summary, k), [SPARSITY, N])
    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    cmap = plt.get_cmap("viridis")
    levels = sorted(stats[SPARSITY].unique())
    for i, s in enumerate(levels):
        rows = stats[stats[SPARSITY] == s].sort_values(N)
        lo, hi = rows["mean_lo"], rows["mean_hi"]
        yerr = None if lo.isna().all() else [(rows["mean"] - lo).fillna(0), (hi - rows["mean"]).fillna(0)]
        ax.errorbar(rows[N], rows["mean"], yerr=yerr, marker="o", capsize=3,
                    color=cmap(i / max(1, len(levels) - 1)),
                    label=f"sparsity {s:g} ({seeds_text(rows['seeds'])})")
    ax.set_xlabel("multi-step length n")
    ax.set_ylabel(win_rate_label(k))
    ax.set_ylim(-0.02, 1.05)
    where = ", ".join(f"{algo_name(a)} on SMAX {map_name(m)}"
                      for a, m in summary[["cfg.algo", "cfg.env.map"]].drop_duplicates().values)
    ax.set_title(f"RigL + n-step targets, {where}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    mark_evidence(fig, judge(summary, ["cfg.algo", "cfg.env.map", SPARSITY, N]))
    return fig, summary
