"""Paper 2's claims beside this reproduction (the paper-2 counterpart of `paper1_claims`): up to 20x FLOPs (MAST-QMIX
on 2s3z), 10x / 9x / 8x average training-FLOPs reduction (QMIX / WQMIX / RES), 5-20x smaller models, < 3 % below
dense, > 90 % win rate on 3s5z with 10 % of the parameters. Each row names the runs it rests on (studies, seeds,
budget, maps, profile) and the sparsity chosen; a claim the given runs cannot check says so ("not measured: ...")
instead of a value. Every win-rate row carries the caveat that SMAX is not SMAC: only dense-vs-sparse comparisons
within SMAX are meaningful, not absolute win rates against the paper's.

All roles are optional; a role given no file makes its rows "not measured"."""

from __future__ import annotations

import numpy as np
import pandas as pd

from effmarl.analysis.io import named_inputs, read_optional
from effmarl.analysis.metrics import (
    LAST_K,
    chosen_sparsity,
    final_win_rate,
    flops_averages,
    interval_text,
    seed_stats,
    table1_cells,
)
from effmarl.analysis.style import algo_name, map_name

CAPTION = ("Paper 2's claims beside ours, on SMAX (not SMAC: absolute win rates are not comparable with the paper's; "
           "only dense vs sparse within SMAX is). FLOPs and sizes: theoretical, from the runs' final masks (paper's "
           "formulas), as reductions = dense / sparse. Win rate: per run the mean test win rate of the last min(20, "
           "available) evaluations, IQM over seeds with a 95 % bootstrap interval. Sparsity per cell: the highest "
           "MAST sparsity within 3 % of dense (table mast_selection). 'not measured' where the profile has no such "
           "run.")
REPRODUCES = "Paper 2's abstract and Table 1 claims."
CLAIM = "All of them, side by side: SMAX is not SMAC, so only dense vs sparse within SMAX is compared."
NOT_MEASURED = "not measured"
SMAX_CAVEAT = "SMAX is not SMAC: compare dense vs sparse within SMAX, not absolute win rates with the paper"
PAPER_AVERAGE = {"qmix": 10.0, "ow_qmix": 9.0, "res_qmix": 8.0}

OUTPUT = {"group": "mast", "stem": "claims", "when": ["mast_dense", "mast_sweep", "mast_table1"]}
INPUTS = {"dense": {"study": "mast_dense", "optional": True, "doc": "metrics.summary.parquet of mast_dense"},
          "sweep": {"study": "mast_sweep", "optional": True, "doc": "metrics.summary.parquet of mast_sweep"},
          "baselines": {"study": "mast_table1", "optional": True, "doc": "metrics.summary.parquet of mast_table1"},
          "selection": {"output": "mast/tables/selection.csv",
                        "optional": True, "doc": "the CSV of table mast_selection"},
          "sparsity": {"study": ["mast_sweep", "mast_table1"], "table": "sparsity", "optional": True,
                       "doc": "sparsity.summary.parquet of mast_sweep and mast_table1"},
          "fig1": {"study": "mast_fig1", "optional": True,
                   "doc": "metrics.summary.parquet of mast_fig1 (qmix, 3s5z, sparsity 0.9, all methods)"}}


def _runs(*frames: pd.DataFrame | None) -> str:
    """'studies a, b; 12 runs; seeds per cell 2; budget 600 env steps; maps 3m; profile smoke'."""
    frames = [f for f in frames if f is not None and not f.empty]
    if not frames:
        return ""
    f = pd.concat(frames, ignore_index=True)
    runs = f.drop_duplicates(["cfg.study", "run_id"])
    budget = sorted({int(b) for b in runs.get("cfg.budget.env_steps", pd.Series(dtype=float)).dropna()})
    return (f"studies {', '.join(sorted(map(str, set(runs['cfg.study']))))}; {len(runs)} runs; seeds "
            f"{'/'.join(map(str, sorted(set(runs['cfg.seed'])))) if 'cfg.seed' in runs else '?'}; budget "
            f"{'/'.join(f'{b:,}' for b in budget) or '?'} env steps (paper: 2,000,000, 8 seeds); maps "
            f"{', '.join(sorted(map(str, set(runs['cfg.env.map']))))}; profile "
            f"{'/'.join(sorted(map(str, set(runs['cfg.profile']))))}")


def _row(claim, paper, ours, runs="", sparsity="", caveat="", paper_value=None, our_value=None):
    ratio = (f"{our_value / paper_value:.2f}" if paper_value and our_value is not None and np.isfinite(our_value)
             else "")
    return {"claim": claim, "paper": paper, "ours": ours, "ratio ours/paper": ratio, "sparsity chosen": sparsity,
            "runs": runs, "caveat": caveat}


def _cell_text(cell) -> str:
    return f"{algo_name(cell['algo'])} {map_name(cell['map'])}"


def flops_rows(cells: pd.DataFrame | None, runs: str) -> list[dict]:
    rows = []
    mast = None if cells is None else cells[(cells["method"] == "mast") & cells["train_flops_ratio"].notna()]
    have = mast is not None and not mast.empty
    claim, paper = "largest training-FLOPs reduction of MAST over all cells", "up to 20x (MAST-QMIX, 2s3z)"
    if not have:
        rows.append(_row(claim, paper, f"{NOT_MEASURED}: no MAST runs with sparsity tables given"))
    else:
        best = mast.loc[mast["train_flops_reduction"].idxmax()]
        rows.append(_row(claim, paper, f"{best['train_flops_reduction']:.1f}x training, "
                         f"{1 / best['inference_flops_ratio']:.1f}x inference ({_cell_text(best)})", runs,
                         f"{best['sparsity']:g}", "", 20.0, float(best["train_flops_reduction"])))
    claim, paper = "training / inference FLOPs reduction, MAST-QMIX on 2s3z", "20x"
    cell = None if not have else mast[(mast["algo"] == "qmix") & (mast["map"] == "2s3z")]
    if cell is None or cell.empty:
        maps = "" if not have else f" (MAST maps here: {', '.join(sorted(map(str, set(mast['map']))))})"
        rows.append(_row(claim, paper, f"{NOT_MEASURED}: no MAST-QMIX run on 2s3z in the given runs{maps}"))
    else:
        c = cell.iloc[0]
        rows.append(_row(claim, paper, f"{c['train_flops_reduction']:.1f}x training, "
                         f"{1 / c['inference_flops_ratio']:.1f}x inference", runs, f"{c['sparsity']:g}", "", 20.0,
                         float(c["train_flops_reduction"])))
    averages = flops_averages(cells) if have else pd.DataFrame()
    for algo, paper_x in PAPER_AVERAGE.items():
        claim = f"average training-FLOPs reduction over maps, MAST-{algo_name(algo)}"
        a = averages[(averages["algo"] == algo) & (averages["method"] == "mast")] if len(averages) else averages
        if a.empty:
            rows.append(_row(claim, f"{paper_x:g}x (4 SMAC maps)", f"{NOT_MEASURED}: no MAST-{algo_name(algo)} runs"))
            continue
        a = a.iloc[0]
        sp = mast[mast["algo"] == algo]
        rows.append(_row(claim, f"{paper_x:g}x (4 SMAC maps)",
                         f"{a['train_flops_reduction']:.1f}x (1 / mean ratio; mean of per-map reductions "
                         f"{a['mean_of_reductions']:.1f}x) over {a['n_maps']} map(s): {a['maps']}", runs,
                         ", ".join(f"{map_name(m)} {s:g}" for m, s in zip(sp["map"], sp["sparsity"], strict=True)),
                         "" if a["n_maps"] >= 4 else "fewer maps than the paper's four", paper_x,
                         float(a["train_flops_reduction"])))
    claim, paper = "model size reduction, MAST cells", "5x - 20x"
    if not have:
        rows.append(_row(claim, paper, f"{NOT_MEASURED}: no MAST runs with sparsity tables given"))
    else:
        lo, hi = mast["size_reduction"].min(), mast["size_reduction"].max()
        rows.append(_row(claim, paper, f"{lo:.1f}x - {hi:.1f}x over {len(mast)} cell(s)", runs,
                         ", ".join(sorted({f"{s:g}" for s in mast["sparsity"]}))))
    return rows


def performance_row(cells: pd.DataFrame | None, runs: str) -> dict:
    claim, paper = "MAST's win rate relative to dense, every cell", "< 3 % below dense everywhere"
    mast = None if cells is None else cells[cells["method"] == "mast"]
    if mast is None or mast.empty:
        return _row(claim, paper, f"{NOT_MEASURED}: no MAST and dense runs given", caveat=SMAX_CAVEAT)
    valid = mast[mast["normalised"].notna()]
    zero = mast[mast["dense_iqm"] == 0]
    parts = []
    if len(valid):
        worst = valid.loc[valid["normalised"].idxmin()]
        within = int((valid["normalised"] >= 0.97 - 1e-12).sum())
        lo, hi = worst.get("normalised_lo", np.nan), worst.get("normalised_hi", np.nan)
        interval = f"[{lo:.3f}, {hi:.3f}]" if pd.notna(lo) and pd.notna(hi) else "(no interval)"
        beats = worst.get("p_improvement")
        beats = "" if pd.isna(beats) else f", P(MAST run > dense run) = {beats:.2f}"
        parts.append(f"lowest MAST/dense {worst['normalised']:.3f} {interval}{beats} ({_cell_text(worst)}, "
                     f"{int(worst['seeds'])} seeds); {within} of {len(valid)} cells within 3 % (point estimates)")
    if len(zero):
        names = ", ".join(_cell_text(r) for _, r in zero.iterrows())
        parts.append(f"{len(zero)} cell(s) where dense wins 0 %: no ratio ({names})")
    sparsities = ", ".join(f"{_cell_text(r)} {r['sparsity']:g}" for _, r in mast.iterrows())
    return _row(claim, paper, "; ".join(parts), runs, sparsities, SMAX_CAVEAT)


def fig1_row(fig1: pd.DataFrame | None, cells: pd.DataFrame | None, k: int) -> dict:
    claim, paper = "MAST-QMIX win rate on 3s5z with 10 % of the parameters", "> 90 %"
    if fig1 is not None and not fig1.empty:
        sel = fig1[(fig1["cfg.algo"] == "qmix") & (fig1["cfg.env.map"] == "3s5z")]
        if not sel.empty:
            stats = seed_stats(final_win_rate(sel, k), ["cfg.sparse.method"]).set_index("cfg.sparse.method")
            if "mast" in stats.index:
                m = stats.loc["mast"]
                dense = (f"; dense {stats.loc['dense', 'iqm']:.3f} ({int(stats.loc['dense', 'seeds'])} seeds)"
                         if "dense" in stats.index else "")
                sp = sorted({f"{s:g}" for s in sel.loc[sel["cfg.sparse.method"] == "mast", "cfg.sparse.sparsity"]})
                return _row(claim, paper, f"IQM {m['iqm']:.3f} {interval_text(m['iqm_lo'], m['iqm_hi'])}, "
                            f"{int(m['seeds'])} seeds{dense}", _runs(sel), ", ".join(sp), SMAX_CAVEAT, 0.9,
                            float(m["iqm"]))
    if cells is not None:
        c = cells[(cells["algo"] == "qmix") & (cells["map"] == "3s5z") & (cells["method"] == "mast")]
        if not c.empty and np.isclose(float(c["sparsity"].iloc[0]), 0.9):
            c = c.iloc[0]
            return _row(claim, paper, f"IQM {c['iqm']:.3f} {interval_text(c['iqm_lo'], c['iqm_hi'])}, "
                        f"{int(c['seeds'])} seeds (Table 1 cell)", "", "0.9", SMAX_CAVEAT, 0.9, float(c["iqm"]))
    return _row(claim, paper, f"{NOT_MEASURED}: no MAST-QMIX run on 3s5z at sparsity 0.9 in the given runs",
                caveat=SMAX_CAVEAT)


def make(inputs: list[str], k: int = LAST_K) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, "table mast_claims")
    dense, sweep = read_optional(named["dense"]), read_optional(named["sweep"])
    baselines, sparsity = read_optional(named["baselines"]), read_optional(named["sparsity"])
    fig1 = read_optional(named["fig1"])
    cells = None
    if dense is not None and sweep is not None and named["selection"]:
        selection = pd.read_csv(named["selection"][0])
        cells = table1_cells(dense, sweep, baselines, sparsity, selection, k=k)
        chosen = chosen_sparsity(selection)
        if not chosen["admissible"].all():
            bad = chosen[~chosen["admissible"]]
            note = "no admissible sparsity (fallback to the lowest swept) in: " + ", ".join(
                f"{algo_name(a)} {map_name(m)}" for a, m in zip(bad["algo"], bad["map"], strict=True))
            cells.attrs["note"] = note
    runs = _runs(dense, sweep, baselines)
    rows = flops_rows(cells, runs) + [performance_row(cells, runs), fig1_row(fig1, cells, k)]
    if cells is not None and cells.attrs.get("note"):
        for r in rows:
            r["caveat"] = "; ".join(x for x in (r["caveat"], cells.attrs["note"]) if x)
    return pd.DataFrame(rows)
