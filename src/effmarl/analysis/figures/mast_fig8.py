"""Paper 2, Figure 8: win rate against sparsity for every method (study `mast_fig8`: tiny, static, set, rigl, rlx2 x
sparsity on one algorithm and map, and/or Table 1's baseline runs `mast_table1` at the selected sparsity, which
replace mast_fig8's runs of the same method and sparsity: no run is counted twice), MAST from mast_sweep rows of the
same algorithm and map, dense as a horizontal line with its interval band. Every run of a panel must be trained
alike (metrics.require_comparable): a baseline with a shorter budget beside a longer-trained MAST is refused, not
drawn.

Per method m and sparsity s, over the n seeds' per-run win rates w_1..w_n (metrics.final_win_rate):
    point  w̄ = (1/n) Σ w_i,   error bar  w̄ ± t_{n-1, 0.975} · sd(w) / √n   (stats.mean_interval; none for n = 1);
dense likewise, drawn as a line at w̄_dense with a band over its interval. The methods at one sparsity are drawn
side by side (`dodge`) so that none hides another. A panel with fewer than MIN_SPARSITIES sparsities cannot show
where a method falls below dense: the figure is stamped illustrative with that reason."""

from __future__ import annotations

import dataclasses

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from effmarl.analysis.io import mark_evidence, named_inputs, read_tables
from effmarl.analysis.metrics import (
    LAST_K,
    METHOD_ORDER,
    STATISTIC,
    final_win_rate,
    judge,
    require_comparable,
    seeds_text,
    sweep_stats,
    win_rate_label,
)
from effmarl.analysis.style import algo_name, map_name, method_color, method_name
from effmarl.config import ConfigError

KEYS = ["cfg.algo", "cfg.env.map"]
CAPTION = ("Paper 2, Figure 8 on SMAX: win rate against sparsity for each sparse-training method (MAST from the "
           "sparsity sweep; the baselines from Table 1's runs at the selected sparsity and from their own "
           "sparsity grid elsewhere), dense as a horizontal dashed line with its interval as a band; every run of a "
           "panel trained alike (budget, update ratio, schedules). Point and error bar: " + STATISTIC
           + "; band: dense's interval; legend gives n = seeds. Methods at one sparsity "
           "are drawn side by side (a small x offset; the ticks mark the sparsities trained). A panel with fewer "
           "than 2 sparsities is stamped illustrative: it cannot show where a method falls below dense.")
REPRODUCES = "Paper 2, Figure 8."
CLAIM = ("MAST holds the dense win rate to higher sparsity than the baselines; the sweep also chooses Table "
         "1's sparsity.")

# Fig. 8: the baselines from mast_fig8's sparsity grid and/or Table 1's runs at the selected sparsity (a profile that
# cannot afford the grid at Table 1's budget plots what Table 1 trained), against the sweep and dense.
OUTPUT = {"group": "mast", "stem": "fig8_win_rate_vs_sparsity", "one_of": ["fig8", "baselines"]}
INPUTS = {"fig8": {"study": "mast_fig8", "optional": True, "doc": "metrics.summary.parquet of mast_fig8"},
          "baselines": {"study": "mast_table1", "optional": True,
                        "doc": "metrics.summary.parquet of mast_table1 (Table 1's baselines at the chosen sparsity)"},
          "dense": {"study": "mast_dense", "doc": "metrics.summary.parquet of mast_dense"},
          "sweep": {"study": "mast_sweep", "doc": "metrics.summary.parquet of mast_sweep"}}
MAX_COLUMNS = 4
POINT = ["cfg.algo", "cfg.env.map", "cfg.sparse.method", "cfg.sparse.sparsity"]
# two sparsities bracket where a method falls below dense (it holds at one, not at the next); one cannot show it
MIN_SPARSITIES = 2
DODGE = 0.3  # the methods at one sparsity spread over this share of the smallest gap between swept sparsities
LONE_SPREAD = 0.02  # their spread where a panel has one sparsity (no gap to take a share of)


def dodge(methods: list[str], sparsities) -> dict[str, float]:
    """{method: x offset}: the methods spread evenly, in order, over DODGE x the smallest gap between the
    `sparsities` (LONE_SPREAD where there is one), centred on 0."""
    s = np.unique(np.asarray(list(sparsities), dtype=float))
    spread = DODGE * float(np.diff(s).min()) if len(s) > 1 else LONE_SPREAD
    step = spread / max(len(methods) - 1, 1)
    return {m: (i - (len(methods) - 1) / 2) * step for i, m in enumerate(methods)}


def make(inputs: list[str], k: int = LAST_K):
    named = named_inputs(inputs, INPUTS, "figure mast_fig8")
    if not named["fig8"] and not named["baselines"]:
        raise ConfigError(["input role 'fig8' or 'baselines' (the baseline methods' runs) not given"],
                          "effmarl figure mast_fig8")
    fig8, table1 = (read_tables(named[r]) if named[r] else pd.DataFrame(columns=POINT) for r in ("fig8", "baselines"))
    if len(table1) and len(fig8):  # at a point both trained, Table 1's runs (its own evidence, as many seeds or more)
        have = table1[POINT].drop_duplicates().assign(_have=True)
        fig8 = fig8.merge(have, on=POINT, how="left")
        fig8 = fig8[fig8["_have"].isna()].drop(columns="_have")
    baselines = pd.concat([f for f in (fig8, table1) if len(f)], ignore_index=True)
    cells = baselines[KEYS].drop_duplicates()
    dense = read_tables(named["dense"]).merge(cells, on=KEYS).assign(**{"cfg.sparse.method": "dense"})
    sweep = read_tables(named["sweep"]).merge(cells, on=KEYS).assign(**{"cfg.sparse.method": "mast"})
    require_comparable({"fig8": fig8, "baselines": table1, "dense": dense, "sweep": sweep}, "effmarl figure mast_fig8")
    runs = pd.concat([f for f in (baselines, sweep) if len(f)], ignore_index=True)
    stats = sweep_stats(final_win_rate(runs, k), POINT)
    dstats = sweep_stats(final_win_rate(dense, k), KEYS) if len(dense) else None
    cells = cells.sort_values(KEYS)
    ncols = min(len(cells), MAX_COLUMNS)  # the paper profile's 12 cells: 3 rows of 4
    nrows = -(-len(cells) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.4 * nrows), squeeze=False)
    for ax in axes.flat[len(cells):]:
        ax.set_visible(False)
    short = []  # panels with too few sparsities to show a breakdown point
    for ax, (algo, name) in zip(axes.flat, cells.values.tolist(), strict=False):
        cell = stats[(stats["cfg.algo"] == algo) & (stats["cfg.env.map"] == name)]
        methods = [m for m in METHOD_ORDER if m in set(cell["cfg.sparse.method"])]
        methods += sorted(set(cell["cfg.sparse.method"]) - set(methods))
        sparsities = sorted(cell["cfg.sparse.sparsity"].astype(float).unique())
        if len(sparsities) < MIN_SPARSITIES:
            short.append(f"{algo_name(algo)} {map_name(name)}: {', '.join(f'{s:g}' for s in sparsities)}")
        offset = dodge(methods, sparsities)
        if dstats is not None:
            d = dstats[(dstats["cfg.algo"] == algo) & (dstats["cfg.env.map"] == name)]
            if len(d):
                d = d.iloc[0]
                ax.axhline(d["mean"], color=method_color("dense"), linestyle="--",
                           label=f"Dense ({seeds_text(d['seeds'])})")
                if np.isfinite([d["lo"], d["hi"]]).all():
                    ax.axhspan(d["lo"], d["hi"], color=method_color("dense"), alpha=0.15, linewidth=0)
        for m in methods:
            rows = cell[cell["cfg.sparse.method"] == m].sort_values("cfg.sparse.sparsity")
            yerr = None if rows["lo"].isna().all() else [(rows["mean"] - rows["lo"]).fillna(0),
                                                          (rows["hi"] - rows["mean"]).fillna(0)]
            ax.errorbar(rows["cfg.sparse.sparsity"].astype(float) + offset[m], rows["mean"], yerr=yerr, marker="o",
                        markersize=4, capsize=2, linewidth=1, color=method_color(m),
                        label=f"{method_name(m)} ({seeds_text(rows['seeds'])})")
        ax.set_xticks(sparsities)
        ax.set_xticklabels([f"{s:g}" for s in sparsities])
        if len(sparsities) == 1:  # room for the spread methods either side of the one sparsity
            ax.set_xlim(sparsities[0] - 2 * LONE_SPREAD, sparsities[0] + 2 * LONE_SPREAD)
        ax.set_title(f"{algo_name(algo)} on SMAX {map_name(name)}", fontsize=9)
        ax.set_xlabel("sparsity (methods side by side at each)")
        ax.set_ylabel(win_rate_label(k), fontsize=8)
        ax.set_ylim(-0.02, 1.05)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    verdict = judge(runs, POINT, dense=dense)
    if short:
        verdict = dataclasses.replace(verdict, reasons=(
            *verdict.reasons, f"fewer than {MIN_SPARSITIES} sparsities per panel ({'; '.join(short)}): no sweep to "
            "show where a method falls below dense"))
    mark_evidence(fig, verdict)
    return fig, pd.concat([f for f in (runs, dense) if len(f)], ignore_index=True)
