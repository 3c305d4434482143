"""Paper 2's claims beside this reproduction (the paper-2 counterpart of `paper1_claims`): up to 20x FLOPs (MAST-QMIX
on 2s3z), 10x / 9x / 8x average training-FLOPs reduction (QMIX / WQMIX / RES), 5-20x smaller models, < 3 % below
dense (and which swept sparsities stay within it), MAST above the sparse baselines where they fall below dense (the
central claim: MAST / each baseline with its interval), > 90 % win rate on 3s5z with 10 % of the parameters.

Every row the given runs can reach has a number with its interval: the paper's FLOPs and size claims hold "with less
than 3 % performance degradation", so each FLOPs or size value comes with MAST / dense at the same cells (the ratio
of means with its 95 % Fieller interval, stats.ratio_interval, the probability that a MAST run beats a dense run, and
the 3 % verdict), and every "within 3 %" verdict is an equivalence decided by that interval alone, else undecided with
the seeds that would decide it (mast.versus_tolerance, metrics.power). MAST against the baselines of a cell is a
family of comparisons, decided by Holm's procedure (metrics.versus_baselines). A reduction
follows from the sparsity its cell sits at: the `kind` column says "by construction" where that sparsity was declared
(the default profile's 99 %) and "measured" only where the 3 % rule chose it from a sweep (`chosen_by_rule`); what is
measured at a declared sparsity is the win rate there. "Up to 20x" is measured only at a cell with that reduction or
where the sweep tried ≈ 95 % and the rule stopped below. The header counts by-construction rows apart. A row whose runs
are illustrative (metrics.evidence: fewer than 3 seeds per compared cell, or dense not at its plateau) leaves its value
out and gives the stamp instead ("not claimed: illustrative: ..."); a row no given run can reach says which study,
algorithm and map it needs, and the 2s3z row, where no run trains there, what the multi-type map probe measured on
it (role map_probe: whether dense QMIX learns the map at all, the reason the default and extended profiles leave it
out). The `evidence` column (first) gives each row's verdict.

The row vocabulary (a row, its verdict, how cells and ratios are said, the split of a claim spanning cells) is in
`analysis/claims.py`. Cells come from the Table-1 code (`metrics.table1_cells`), at the sparsity it gives them: from the
`selection` CSV where one is given (the paper profile's 3 % rule), otherwise at the runs' configured sparsity (the
baselines', or the sweep's where it ran one). Every win-rate row carries the caveat that SMAX is not SMAC.

All roles are optional; a role given no file makes its rows "not measured"."""

from __future__ import annotations

import numpy as np
import pandas as pd

from effmarl.analysis.claims import (
    ALGO,
    BY_CONSTRUCTION,
    MAP,
    MEASURED,
    METHOD,
    NOT_CLAIMED,
    NOT_MEASURED,
    SPARSITY,
    cell_text,
    cells_list,
    cells_verdict,
    claim_row,
    judged_row,
    pick_cells,
    ratio_text,
    runs_in,
    runs_of,
    split_cells,
    why_text,
)
from effmarl.analysis.io import EVIDENCE, named_inputs, read_optional
from effmarl.analysis.metrics import (
    LAST_K,
    RATIO_STATISTIC,
    STATISTIC,
    cells_of,
    chosen_by_rule,
    chosen_sparsity,
    declared_selection,
    flops_averages,
    interval_text,
    judge,
    judge_cells,
    judge_runs_each_cell,
    select_sparsity,
    study_cells,
    table1_runs,
    versus_baselines,
)
from effmarl.analysis.metrics.map_probe import probe_text, read_probe
from effmarl.analysis.metrics.mast import TOLERANCE
from effmarl.analysis.metrics.power import needed_text
from effmarl.analysis.style import algo_name, map_name, method_name

CAPTION = ("Paper 2's claims beside ours, on SMAX (not SMAC: absolute win rates are not comparable with the paper's; "
           "only dense vs sparse within SMAX is). FLOPs and sizes: theoretical, from the runs' final masks (paper's "
           "formulas), as reductions = dense / sparse, each beside MAST / dense at the same cells (" + RATIO_STATISTIC
           + ", P = the probability that a MAST run beats a dense run, and the 3 % verdict); `kind`: 'by "
           "construction' where the reduction follows from a declared sparsity (what is measured there is the win "
           "rate), 'measured' where the 3 % rule chose the sparsity from a sweep; a '3 %' verdict is an equivalence "
           "decided by the interval alone (within 3 % where its lower end clears 0.97, more than 3 % below where its "
           "upper end is under 0.97), else 'undecided' with the seeds per method that would decide it at the "
           "measured spread (80 % power). MAST against the baselines: MAST / baseline (" + RATIO_STATISTIC + "), "
           "'MAST above' only where the whole interval lies above 1 and Holm's procedure over the cell's baselines "
           "rejects equality at 5 %. Win rate: " + STATISTIC + ". Sparsity per cell: as Table 1 has it. "
           "`evidence`: each row's "
           "verdict (metrics.evidence); a row on illustrative runs (< 3 seeds per compared cell, or dense not at its "
           "plateau) is 'not claimed' with the stamp instead of its value; 'not measured' names the runs a row needs.")
REPRODUCES = "Paper 2's abstract and Table 1 claims."
CLAIM = ("All of them, side by side: SMAX is not SMAC, so only dense vs sparse (and sparse vs sparse) within SMAX "
         "is compared.")
PAPER_MAX = 20.0  # "up to 20x": measured only at a cell whose reduction rounds to it, or where the sweep tried
PAPER_MAX_SPARSITY = 0.95  # the paper's 20x cell's sparsity (MAST-QMIX 2s3z, ≈ 95 %) and the 3 % rule stopped below
SMAX_CAVEAT = "SMAX is not SMAC: compare dense vs sparse within SMAX, not absolute win rates with the paper"
PAPER_AVERAGE = {"qmix": 10.0, "ow_qmix": 9.0, "res_qmix": 8.0}
PAPER_PROFILE = "the paper profile's Table 1 trains every algorithm on 3m, 2s3z, 3s5z and 64zg (approx.)"

OUTPUT = {"group": "mast", "stem": "claims", "when": ["mast_dense", "mast_sweep", "mast_table1"]}
INPUTS = {"dense": {"study": "mast_dense", "optional": True, "doc": "metrics.summary.parquet of mast_dense"},
          "sweep": {"study": "mast_sweep", "optional": True, "doc": "metrics.summary.parquet of mast_sweep"},
          "baselines": {"study": "mast_table1", "optional": True, "doc": "metrics.summary.parquet of mast_table1"},
          "selection": {"output": "mast/tables/selection.csv",
                        "optional": True, "doc": "the CSV of table mast_selection"},
          "sparsity": {"study": ["mast_sweep", "mast_table1"], "table": "sparsity", "optional": True,
                       "doc": "sparsity.summary.parquet of mast_sweep and mast_table1"},
          "fig1": {"study": "mast_fig1", "optional": True,
                   "doc": "metrics.summary.parquet of mast_fig1 (qmix, 3s5z, sparsity 0.9, all methods)"},
          "map_probe": {"repo_file": "benchmarks/results/qmix_multitype_maps_summary.csv", "optional": True,
                        "doc": "the summary CSV of the multi-type map probe (dense QMIX on a map of several unit "
                               "types, one seed a variant: benchmarks/results/qmix_multitype_maps.md)"}}


def _study(*roles: str) -> str:
    """The studies the given INPUTS roles read ('mast_dense, mast_sweep'): named once, in INPUTS."""
    names = [INPUTS[role]["study"] for role in roles]
    return ", ".join(n for name in names for n in ([name] if isinstance(name, str) else name))


def _needs(what: str, cells: pd.DataFrame | None) -> str:
    have = "" if cells is None or cells.empty else f"; the given runs have {cells_list(cells)}"
    return f"{NOT_MEASURED}: needs {what} ({PAPER_PROFILE}){have}"


def _kind(cells: pd.DataFrame, measured: dict) -> str:
    """MEASURED where every cell of `cells` sits at the sparsity the 3 % rule chose, else BY_CONSTRUCTION."""
    ok = all(np.isclose(measured.get((r["algo"], r["map"]), (np.nan,))[0], r["sparsity"]) for _, r in cells.iterrows())
    return MEASURED if ok else BY_CONSTRUCTION


def _reduction_text(kind: str, cells: pd.DataFrame, value: str) -> str:
    """A reduction's value and how it was obtained, before MAST / dense at it with its verdict (ratio_text): 'by
    construction (declared sparsity 0.9): <value>; measured at it: ', or '<value> (at the sparsity the 3 % rule
    chose, 0.9); measured there: '."""
    sparsities = ", ".join(sorted({f"{s:g}" for s in cells["sparsity"]}))
    if kind == BY_CONSTRUCTION:
        return f"{BY_CONSTRUCTION} (declared sparsity {sparsities}): {value}; measured at it: "
    return f"{value} (at the sparsity the 3 % rule chose, {sparsities}); measured there: "


def flops_rows(cells: pd.DataFrame | None, runs: dict, measured: dict | None = None,
               probe: pd.DataFrame | None = None) -> list[dict]:
    """The FLOPs and size rows. A reduction follows from the sparsity its cell sits at: it is MEASURED only where the
    3 % rule chose that sparsity (`measured`, chosen_by_rule), else BY_CONSTRUCTION, with MAST / dense at it as the
    measured part; "up to 20x" is measured only at a cell with that reduction, or where the 3 % rule chose the cell's
    sparsity from a sweep that tried ≈ 95 % (the paper's 20x) and stopped below it."""
    measured = measured or {}
    rows = []
    mast = None if cells is None else cells[(cells["method"] == "mast") & cells["train_flops_ratio"].notna()]
    have = mast is not None and not mast.empty
    missing = (f"{NOT_MEASURED}: needs MAST's sparsity summaries (role sparsity: {_study('sweep')}'s sparsity.summary"
               ".parquet) to count FLOPs" if cells is not None and not cells[cells["method"] == "mast"].empty else
               f"{NOT_MEASURED}: needs dense and MAST runs ({_study('dense', 'sweep')}, with their sparsity summaries)")
    claim, paper = "largest training-FLOPs reduction of MAST over all cells", "up to 20x (MAST-QMIX, 2s3z)"
    if not have:
        rows.append(claim_row(claim, paper, missing))
    else:
        pool, left = split_cells(mast, lambda g: cells_verdict(cells, g, runs))
        best = pool.loc[[pool["train_flops_reduction"].idxmax()]]
        b = best.iloc[0]
        reached = round(float(b["train_flops_reduction"])) >= PAPER_MAX
        best_kind = _kind(best, measured)
        swept = measured.get((b["algo"], b["map"]), (np.nan, np.nan))[1] if best_kind == MEASURED else np.nan
        tried = swept >= PAPER_MAX_SPARSITY - 1e-9
        kind = best_kind if reached or tried else BY_CONSTRUCTION
        short = "" if reached else (
            f"; the sweep tried up to {swept:g} (the paper's {PAPER_MAX:g}x: ≈ {PAPER_MAX_SPARSITY:g}) and the 3 % "
            f"rule stopped at {b['sparsity']:g}" if tried else
            f"; up to {PAPER_MAX:g}x not measured: no cell at a {PAPER_MAX:g}x reduction and no swept sparsity at "
            f"≈ {PAPER_MAX_SPARSITY:g} (the paper's: MAST-QMIX on 2s3z)")
        text = _reduction_text(best_kind, best, f"{b['train_flops_reduction']:.1f}x training, "
                               f"{1 / b['inference_flops_ratio']:.1f}x inference ({cell_text(b)})")
        rows.append(judged_row(claim, paper, cells_verdict(cells, best, runs),
                               f"{text}{ratio_text(b)} ({int(b['seeds'])} seeds){short}",
                               runs_in(runs, best), f"{b['sparsity']:g}", "", PAPER_MAX,
                               float(b["train_flops_reduction"]), kind, left))
    claim, paper = "training / inference FLOPs reduction, MAST-QMIX on 2s3z", "20x"
    cell = None if not have else mast[(mast["algo"] == "qmix") & (mast["map"] == "2s3z")]
    if cell is None or cell.empty:
        need = f"dense QMIX and MAST-QMIX runs on 2s3z ({_study('dense', 'sweep')})"
        probe_row = probe_text(probe, "2s3z", map_name("2s3z"))
        rows.append(claim_row(claim, paper, (_needs(need, mast) if have else missing) + probe_row))
    else:
        c = cell.iloc[0]
        kind = _kind(cell, measured)
        text = _reduction_text(kind, cell, f"{c['train_flops_reduction']:.1f}x training, "
                               f"{1 / c['inference_flops_ratio']:.1f}x inference")
        rows.append(judged_row(claim, paper, cells_verdict(cells, cell, runs),
                               f"{text}{ratio_text(c)} ({int(c['seeds'])} seeds)",
                               runs_in(runs, cell), f"{c['sparsity']:g}", "", PAPER_MAX,
                               float(c["train_flops_reduction"]), kind))
    averages = flops_averages(cells) if have else pd.DataFrame()
    for algo, paper_x in PAPER_AVERAGE.items():
        claim = f"average training-FLOPs reduction over maps, MAST-{algo_name(algo)}"
        a = averages[(averages["algo"] == algo) & (averages["method"] == "mast")] if len(averages) else averages
        if a.empty:
            need = (f"dense {algo_name(algo)} and MAST-{algo_name(algo)} runs ({_study('dense', 'sweep')} with algo "
                    f"{algo})")
            rows.append(claim_row(claim, f"{paper_x:g}x (4 SMAC maps)", _needs(need, mast) if have else missing))
            continue
        a = a.iloc[0]
        sp = mast[mast["algo"] == algo]
        per_map = "; ".join(f"{map_name(r['map'])}: {ratio_text(r)}" for _, r in sp.iterrows())
        kind = _kind(sp, measured)
        text = _reduction_text(kind, sp, f"{a['train_flops_reduction']:.1f}x (1 / mean ratio; mean of per-map "
                               f"reductions {a['mean_of_reductions']:.1f}x) over {a['n_maps']} map(s): " + ", ".join(
                                   f"{map_name(r['map'])} {r['train_flops_reduction']:.1f}x" for _, r in sp.iterrows()))
        rows.append(judged_row(claim, f"{paper_x:g}x (4 SMAC maps)", cells_verdict(cells, sp, runs),
                               f"{text}{per_map} ({int(sp['seeds'].min())} seeds)",
                               runs_in(runs, sp),
                               ", ".join(f"{map_name(m)} {x:g}"
                                         for m, x in zip(sp["map"], sp["sparsity"], strict=True)),
                               "" if a["n_maps"] >= 4 else "fewer maps than the paper's four", paper_x,
                               float(a["train_flops_reduction"]), kind))
    claim, paper = "model size reduction, MAST cells", "5x - 20x"
    if not have:
        rows.append(claim_row(claim, paper, missing))
    else:
        pool, left = split_cells(mast, lambda g: cells_verdict(cells, g, runs))
        lo, hi = pool["size_reduction"].min(), pool["size_reduction"].max()
        worst = pool.loc[pool["normalised"].idxmin()] if pool["normalised"].notna().any() else pool.iloc[0]
        kind = _kind(pool, measured)
        text = _reduction_text(kind, pool, f"{lo:.1f}x - {hi:.1f}x over {len(pool)} cell(s)")
        rows.append(judged_row(claim, paper, cells_verdict(cells, pool, runs),
                               f"{text}lowest {ratio_text(worst)} ({cell_text(worst)})",
                               runs_in(runs, pool),
                               ", ".join(sorted({f"{s:g}" for s in pool["sparsity"]})), kind=kind, left=left))
    return rows


def performance_row(cells: pd.DataFrame | None, runs: dict) -> dict:
    claim, paper = "MAST's win rate relative to dense, every cell", "< 3 % below dense everywhere"
    mast = None if cells is None else cells[cells["method"] == "mast"]
    if mast is None or mast.empty:
        return claim_row(claim, paper, f"{NOT_MEASURED}: needs dense and MAST runs ({_study('dense', 'sweep')})",
                         caveat=SMAX_CAVEAT)
    mast, left = split_cells(mast, lambda g: cells_verdict(cells, g, runs))
    valid = mast[mast["normalised"].notna()]
    zero = mast[mast["dense_mean"] == 0]
    parts = []
    if len(valid):
        worst = valid.loc[valid["normalised"].idxmin()]
        within = int((valid["normalised_lo"] >= 1 - TOLERANCE - 1e-12).sum())
        below = int((valid["normalised_hi"] < 1 - TOLERANCE - 1e-12).sum())
        parts.append(f"lowest {ratio_text(worst)} ({cell_text(worst)}, {int(worst['seeds'])} seeds); of "
                     f"{len(valid)} cells {within} within 3 % by the whole interval, {below} more than 3 % below by "
                     f"the whole interval, {len(valid) - within - below} undecided")
    if len(zero):
        parts.append(f"{len(zero)} cell(s) where dense wins 0 %: no ratio ({cells_list(zero)})")
    sparsities = ", ".join(f"{cell_text(r)} {r['sparsity']:g}" for _, r in mast.iterrows())
    return judged_row(claim, paper, cells_verdict(cells, mast, runs), "; ".join(parts),
                      runs_in(runs, mast), sparsities, SMAX_CAVEAT, left=left)


def baselines_row(cells: pd.DataFrame | None, versus: pd.DataFrame | None, runs: dict) -> dict:
    """The paper's central claim, at each Table-1 cell with MAST and baseline runs: which baselines fall below dense
    by their whole interval (/ dense under 0.97), MAST's own / dense verdict (mast.versus_tolerance), and MAST / each
    baseline with its 95 % interval and verdict (metrics.versus_baselines: 'MAST above' only where the whole interval
    lies above 1). The evidence verdict counts every compared cell's seeds."""
    claim = "MAST above the sparse baselines where they fall below dense (Table 1's cells)"
    paper = "the baselines break value learning at high sparsity; MAST stays within 3 % of dense, above them"
    if cells is None or versus is None or versus.empty:
        return claim_row(claim, paper, f"{NOT_MEASURED}: needs MAST and baseline runs at one cell "
                         f"({_study('sweep', 'baselines')}) beside dense ({_study('dense')})", caveat=SMAX_CAVEAT)
    def compared_in(group):
        return cells.merge(group[["algo", "map"]].drop_duplicates(), on=["algo", "map"])

    def verdict_of(group):
        compared = compared_in(group)
        return judge_cells(compared, pick_cells(runs["dense"], compared),
                           *(pick_cells(f, compared) for f in runs.values()))

    kept, left = split_cells(versus, verdict_of)
    versus = versus.merge(kept[["algo", "map"]].drop_duplicates(), on=["algo", "map"])
    parts = []
    for (algo, name), vs in versus.groupby(["algo", "map"], sort=True):
        cell = cells[(cells["algo"] == algo) & (cells["map"] == name)]
        mast = cell[cell["method"] == "mast"].iloc[0]
        below = [f"{method_name(r['method'])} {r['normalised']:.2f} "
                 f"{interval_text(r['normalised_lo'], r['normalised_hi'])}"
                 for _, r in cell.iterrows() if r["method"] not in ("dense", "mast")
                 and pd.notna(r["normalised_hi"]) and r["normalised_hi"] < 1 - TOLERANCE - 1e-12]
        ratios = [f"{method_name(r['method'])} {r['ratio']:.2f} {interval_text(r['lo'], r['hi'], 2, r['why'])} "
                  + _versus_text(r) for _, r in vs.iterrows()]
        above = int((vs["verdict"] == "MAST above").sum())
        parts.append(f"{cell_text(mast)} {mast['sparsity']:g}: below dense by the whole interval: "
                     f"{', '.join(below) or 'none'}; {ratio_text(mast)}; MAST / "
                     + "; ".join(ratios) + f"; above {above} of {len(vs)} baselines by the whole interval, Holm's "
                     f"procedure holding the family of {len(vs)} comparisons at 5 %")
    compared, verdict = compared_in(versus), verdict_of(versus)
    sparsities = ", ".join(f"{cell_text(r)} {r['sparsity']:g}" for _, r in
                           compared[compared["method"] == "mast"].iterrows())
    return judged_row(claim, paper, verdict, " | ".join(parts),
                      runs_in(runs, compared), sparsities, SMAX_CAVEAT, left=left)


def _versus_text(r) -> str:
    """'MAST above (Holm p 0.004)', 'undecided (Holm p 0.41): ≈ 39 seeds each would decide it (...)' or, where the
    interval alone decided but Holm's correction did not, 'undecided (Holm p 0.061; the interval alone lies above 1):
    ...' of a versus_baselines record."""
    verdict, p = r["verdict"], "" if pd.isna(r["p_holm"]) else f"Holm p {r['p_holm']:.3f}"
    if verdict == "undecided (Holm)":
        verdict, p = "undecided", f"{p}; the interval alone lies {'above' if r['lo'] > 1 else 'below'} 1"
    need = needed_text(r["seeds_needed"], int(str(r["seeds"]).split(",")[0]))
    return verdict + (f" ({p})" if p else "") + (f": {need}" if need else "")


def sweep_row(dense: pd.DataFrame | None, sweep: pd.DataFrame | None, k: int) -> dict:
    """Which swept sparsities fall within 3 % of dense and how sure that is: per (algo, map, sparsity) of the sweep,
    MAST / dense (the ratio of means) with its 95 % interval and P(MAST run > dense run), and the verdict of
    mast.versus_tolerance: by the whole interval where it lies at or above 0.97 or under it, else undecided with the
    seeds that would decide it (metrics.power)."""
    claim = "swept sparsities within 3 % of dense (MAST sweep), and how sure"
    paper = "Table 1's sparsity = the highest within 3 % (QMIX 3s5z 90 %, QMIX 2s3z ≈ 95 %)"
    if dense is None or sweep is None or dense.empty or sweep.empty:
        return claim_row(claim, paper, f"{NOT_MEASURED}: needs dense runs and a MAST sparsity sweep "
                         f"({_study('dense', 'sweep')})", caveat=SMAX_CAVEAT)
    sweep = sweep.merge(dense[[ALGO, MAP]].drop_duplicates(), on=[ALGO, MAP])
    keys = [ALGO, MAP, SPARSITY]
    table = select_sparsity(dense, sweep, k)

    each = judge_runs_each_cell(sweep, keys, dense)
    table, left = split_cells(table, lambda group: each.cells[(group["algo"].iloc[0], group["map"].iloc[0])])
    cells = table[["algo", "map"]].drop_duplicates().rename(columns={"algo": ALGO, "map": MAP})
    dense, sweep = dense.merge(cells, on=[ALGO, MAP]), sweep.merge(cells, on=[ALGO, MAP])
    parts = []
    for (algo, name), group in table.groupby(["algo", "map"], sort=True):
        items = []
        for _, r in group.sort_values("sparsity").iterrows():
            p = "" if pd.isna(r["p_improvement"]) else f", P = {r['p_improvement']:.2f}"
            gap = interval_text(r["normalised_lo"], r["normalised_hi"], 3, why_text(r["normalised_why"]))
            items.append(f"{r['sparsity']:g}: {r['normalised']:.3f} {gap}{p}, {r['verdict']}")
        parts.append(f"{algo_name(algo)} {map_name(name)} — " + "; ".join(items))
    highest = table[table["within"]].groupby(["algo", "map"])["sparsity"].max()
    summary = ("highest sparsity within 3 % by its whole interval: " + (", ".join(
        f"{algo_name(a)} {map_name(m)} {sp:g}" for (a, m), sp in sorted(highest.items())) or "none"))
    verdict = judge(sweep, keys, dense=dense)
    return judged_row(claim, paper, verdict, "; ".join(parts) + f". {summary}", runs_of(dense, sweep),
                      ", ".join(sorted({f"{x:g}" for x in sweep[SPARSITY].dropna()})), SMAX_CAVEAT, left=left)


def fig1_row(fig1: pd.DataFrame | None, cells: pd.DataFrame | None, runs: dict, k: int) -> dict:
    """> 90 % win rate on 3s5z with 10 % of the parameters: from Figure 1's runs (mast_fig1: QMIX on 3s5z at 0.9,
    dense among them) where given, else from Table 1's QMIX 3s5z cell at 0.9."""
    claim, paper = "MAST-QMIX win rate on 3s5z with 10 % of the parameters", "> 90 %"
    if fig1 is not None and not fig1.empty:
        sel = fig1[(fig1[ALGO] == "qmix") & (fig1[MAP] == "3s5z") & fig1[METHOD].isin(["mast", "dense"])]
        if (sel[METHOD] == "mast").any():
            stats = study_cells(sel, k).set_index("method")
            m = stats.loc["mast"]
            ratio = f"; dense {stats.loc['dense', 'mean']:.3f}; {ratio_text(m)}" if "dense" in stats.index else ""
            sp = sorted({f"{s:g}" for s in sel.loc[sel[METHOD] == "mast", SPARSITY]})
            verdict = judge(sel, [ALGO, MAP, METHOD], dense=sel[sel[METHOD] == "dense"])
            text = f"MAST {m['mean']:.3f} {interval_text(m['mean_lo'], m['mean_hi'])}"
            return judged_row(claim, paper, verdict, text
                              + f" ({int(m['seeds'])} seeds; Figure 1's runs){ratio}", runs_of(sel), ", ".join(sp),
                              SMAX_CAVEAT, 0.9, float(m["mean"]))
    if cells is not None:
        c = cells[(cells["algo"] == "qmix") & (cells["map"] == "3s5z") & (cells["method"] == "mast")]
        if not c.empty and np.isclose(float(c["sparsity"].iloc[0]), 0.9):
            row = c.iloc[0]
            return judged_row(claim, paper, cells_verdict(cells, c, runs),
                              f"MAST {row['mean']:.3f} {interval_text(row['mean_lo'], row['mean_hi'])} "
                              f"({int(row['seeds'])} seeds; Table 1's cell); {ratio_text(row)}",
                              runs_in(runs, c), "0.9", SMAX_CAVEAT, 0.9, float(row["mean"]))
    return claim_row(claim, paper, f"{NOT_MEASURED}: needs MAST-QMIX runs on 3s5z at sparsity 0.9 (study "
                     f"{_study('fig1')}, role fig1; or Table 1's QMIX 3s5z cell at 0.9)", caveat=SMAX_CAVEAT)


def summary_line(table: pd.DataFrame) -> str:
    """The .md's first line: how many rows are claimed on evidence, not claimed (illustrative), not measured."""
    on_evidence = table[EVIDENCE].str.startswith("evidence")
    claimed = int((on_evidence & (table["kind"] == MEASURED)).sum())
    construction = int((on_evidence & (table["kind"] == BY_CONSTRUCTION)).sum())
    illustrative = int(table["ours"].str.startswith(NOT_CLAIMED).sum())
    missing = int(table["ours"].str.startswith(NOT_MEASURED).sum())
    return (f"evidence per row (column `evidence`, metrics.evidence): {claimed} of {len(table)} claims with a measured "
            f"value on evidence; {construction} by construction (a reduction that follows from a declared sparsity; "
            f"the win rate at it is what is measured); {illustrative} not claimed (illustrative runs: the stamp "
            f"instead of the value); {missing} not measured (the runs they need named)")


def make(inputs: list[str], k: int = LAST_K) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, "table mast_claims")
    runs = {role: read_optional(named[role]) for role in ("dense", "sweep", "baselines")}
    dense, sweep, baselines = runs["dense"], runs["sweep"], runs["baselines"]
    sparsity, fig1 = read_optional(named["sparsity"]), read_optional(named["fig1"])
    cells, versus, note, measured = None, None, "", {}
    if dense is not None and sweep is not None:
        selection = (pd.read_csv(named["selection"][0]) if named["selection"]
                     else declared_selection(dense, sweep, baselines))
        measured = chosen_by_rule(selection) if named["selection"] else {}
        t1_runs, at = table1_runs(dense, sweep, baselines, sparsity, selection, k)
        cells, versus = cells_of(t1_runs, at), versus_baselines(t1_runs)
        if named["selection"]:  # the 3 % rule admits no swept sparsity: say so where Table 1 uses that sparsity
            chosen = chosen_sparsity(selection).merge(
                cells.loc[cells["method"] == "mast", ["algo", "map", "sparsity"]], on=["algo", "map", "sparsity"])
            bad = chosen[~chosen["admissible"]]
            if len(bad):
                note = ("no swept sparsity within 3 % of dense by the point estimate (a selected sparsity falls back "
                        "to the lowest swept; a declared one stays) in: ") + ", ".join(
                    f"{algo_name(a)} {map_name(m)}" for a, m in zip(bad["algo"], bad["map"], strict=True))
    rows = flops_rows(cells, runs, measured, read_probe(named["map_probe"])) + [
        performance_row(cells, runs), baselines_row(cells, versus, runs), sweep_row(dense, sweep, k),
        fig1_row(fig1, cells, runs, k)]
    for r in rows:
        if note and not r["ours"].startswith(NOT_MEASURED):
            r["caveat"] = "; ".join(x for x in (r["caveat"], note) if x)
    table = pd.DataFrame(rows)
    table.attrs[EVIDENCE] = summary_line(table)
    return table
