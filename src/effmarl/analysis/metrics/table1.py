"""Paper 2, Table 1's cells: the runs of each (algorithm, map, method) cell at its sparsity (`table1_runs`) and the
runs each learning-curve figure shows (`learning_curve_runs`), the cell statistics against dense (`table1_cells`),
MAST against each baseline (`versus_baselines`, the paper's central comparison) and the per-algorithm FLOPs averages
(`flops_averages`). The per-run statistic and its intervals are metrics.mast's; the cells' sparsity is
metrics.selection's."""

from __future__ import annotations

import numpy as np
import pandas as pd

from effmarl.analysis.metrics.mast import (
    ALGO,
    MAP,
    METHOD,
    RATIO_COLUMNS,
    SPARSITY,
    _key,
    final_win_rate,
    no_interval_why,
    require_comparable,
    seed_stats,
    undecided_text,
    versus_dense,
    versus_tolerance,
)
from effmarl.analysis.metrics.power import seeds_needed
from effmarl.analysis.metrics.runs import RUN_ID
from effmarl.analysis.metrics.selection import cell_sparsity
from effmarl.analysis.metrics.stats import CONFIDENCE, holm, probability_of_improvement, ratio_interval, ratio_test
from effmarl.methods import METHODS
from effmarl.schedules import LAST_K


def learning_curve_runs(algo: str, frames: dict[str, pd.DataFrame | None],
                        chosen: pd.DataFrame | None) -> pd.DataFrame:
    """Paper 2, Figures 13-15: the metrics rows of one algorithm's runs, one method per run: dense from `frames`
    ["dense"] (mast_dense), MAST from ["sweep"] (mast_sweep), baselines from ["baselines"] (mast_table1; a role that is
    None is left out). Sweep and baseline runs are kept only at the `chosen` sparsity of their (algo, map) cell
    (`cell_sparsity`: the one the baselines ran at, else the selection's), where one is given."""
    parts = []
    for role in ("dense", "sweep", "baselines"):
        if frames.get(role) is None:
            continue
        frame = frames[role]
        frame = frame[frame[ALGO] == algo].copy()
        if role == "dense":
            frame[METHOD] = "dense"
        elif role == "sweep":
            frame[METHOD] = "mast"
        if role != "dense" and chosen is not None and len(frame):
            frame["_s"] = _key(frame, SPARSITY)
            frame = frame.merge(chosen.rename(columns={"algo": ALGO, "map": MAP, "sparsity": "_s"})
                                [[ALGO, MAP, "_s"]], on=[ALGO, MAP, "_s"])
            frame = frame.drop(columns="_s")
        parts.append(frame)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _with_ratios(final: pd.DataFrame, sparsity: pd.DataFrame | None) -> pd.DataFrame:
    if sparsity is None or sparsity.empty:
        return final.assign(**{c: np.nan for c in RATIO_COLUMNS + ["dense_size"]})
    cols = [c for c in RUN_ID if c in sparsity and c in final]
    keep = cols + [c for c in RATIO_COLUMNS + ["dense_size"] if c in sparsity]
    return final.merge(sparsity[keep].drop_duplicates(cols), on=cols, how="left")


def table1_runs(dense: pd.DataFrame, sweep: pd.DataFrame, baselines: pd.DataFrame | None,
                sparsity: pd.DataFrame | None, selection: pd.DataFrame | None,
                k: int = LAST_K) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1's runs, one row per run with its final win rate (`final_win_rate`), its method (dense, mast or the
    baseline's) and size / FLOPs ratios, kept at its cell's sparsity (`cell_sparsity`); and the cells' chosen
    sparsities (columns ALGO, MAP, `_s`, `selection_admissible`, `selected_sparsity`). Every run of a cell must be
    trained alike (require_comparable)."""
    require_comparable({"dense": dense, "sweep": sweep, "baselines": baselines}, "Table 1")
    chosen = cell_sparsity(selection, baselines).drop(columns="sparsity_source").rename(
        columns={"algo": ALGO, "map": MAP, "sparsity": "_s", "admissible": "selection_admissible"})
    parts = []
    fd = _with_ratios(final_win_rate(dense, k), None).assign(**{METHOD: "dense"})
    parts.append(fd)
    for frame in (sweep, baselines):
        if frame is None or frame.empty:
            continue
        f = _with_ratios(final_win_rate(frame, k), sparsity)
        if frame is sweep:
            f[METHOD] = "mast"
        f["_s"] = _key(f, SPARSITY)
        f = f.merge(chosen[[ALGO, MAP, "_s"]], on=[ALGO, MAP, "_s"], how="inner").drop(columns="_s")
        parts.append(f)
    return pd.concat(parts, ignore_index=True), chosen


def table1_cells(dense: pd.DataFrame, sweep: pd.DataFrame, baselines: pd.DataFrame | None,
                 sparsity: pd.DataFrame | None, selection: pd.DataFrame | None, k: int = LAST_K) -> pd.DataFrame:
    """Table 1's cells, raw config values: one row per (algo, map, method) with the cell's sparsity, size and FLOPs
    ratios to dense (mean over seeds; dense is 1 by definition), the win-rate statistics (seed_stats), `normalised`
    (mean / dense mean) with its interval (`normalised_lo`, `normalised_hi`), `vs_dense` (the 3 % verdict,
    versus_tolerance, with the seeds that would decide it where it is undecided: `seeds_needed`), `normalised_std`
    (std over seeds / dense mean), and `seeds`; per cell
    `selection_admissible` (MAST within 3 % of dense at the cell's sparsity by the selection's rule, i.e. by the point
    estimate; None without one) and
    `selected_sparsity` (the selection's chosen sparsity).

    The cell's sparsity (`cell_sparsity`) is the one its baselines ran at - declared by the profile, or the
    selection's choice where the profile takes it from there - else, without baseline runs, the selection's chosen
    one. MAST rows are the sweep runs at that sparsity; baselines are kept at it. Every run of a cell must be
    trained alike (require_comparable)."""
    return cells_of(*table1_runs(dense, sweep, baselines, sparsity, selection, k))


def cells_of(runs: pd.DataFrame, chosen: pd.DataFrame) -> pd.DataFrame:
    """`table1_cells` from `table1_runs`' runs and chosen sparsities (for a caller that also needs the runs)."""
    fd = runs[runs[METHOD] == "dense"]
    keys = [ALGO, MAP, METHOD]
    table = seed_stats(runs, keys).merge(versus_dense(runs[runs[METHOD] != "dense"], fd, keys, [ALGO, MAP]),
                                         on=keys, how="left")
    means = runs.groupby(keys, dropna=False)[RATIO_COLUMNS + ["dense_size"]].mean().reset_index()
    table = table.merge(means, on=keys, how="left").merge(chosen, on=[ALGO, MAP], how="left")
    table = table.rename(columns={"_s": "sparsity"})
    is_dense = table[METHOD] == "dense"
    table.loc[is_dense, "sparsity"] = 0.0
    table.loc[is_dense, ["size_ratio", "train_flops_ratio", "inference_flops_ratio"]] = 1.0
    dense_size = table.groupby([ALGO, MAP])["dense_size"].transform("mean")
    table.loc[is_dense, "size"] = dense_size[is_dense]
    ref = table[is_dense].set_index([ALGO, MAP])[["mean"]].rename(columns=lambda c: f"dense_{c}")
    table = table.join(ref, on=[ALGO, MAP])
    pos = table["dense_mean"] > 0
    table["normalised"] = (table["mean"] / table["dense_mean"]).where(pos)
    table["normalised_std"] = (table["std"] / table["dense_mean"]).where(pos)
    table["vs_dense"] = [undecided_text(versus_tolerance(n, lo, hi), need, s) if m != "dense" else "the reference"
                         for m, n, lo, hi, need, s in
                         zip(table[METHOD], table["normalised"], table["normalised_lo"], table["normalised_hi"],
                             table["seeds_needed"], table["seeds"], strict=True)]
    table["train_flops_reduction"] = 1.0 / table["train_flops_ratio"]
    table["size_reduction"] = 1.0 / table["size_ratio"]
    table["order"] = table[METHOD].map({m: i for i, m in enumerate(METHOD_ORDER)}).fillna(99)
    table = table.sort_values([ALGO, MAP, "order"]).drop(columns=["order", "dense_size"])
    return table.rename(columns={ALGO: "algo", MAP: "map", METHOD: "method"}).reset_index(drop=True)


METHOD_ORDER = list(METHODS)  # Table 1's row order: the methods' table, effmarl/methods.py


def study_cells(frame: pd.DataFrame, k: int = LAST_K) -> pd.DataFrame:
    """Per (algo, map, method) of one study's runs with dense among them (Figure 1's mast_fig1): the win-rate
    statistics (seed_stats) and, for every method but dense, `normalised` = mean / dense mean of its cell with
    versus_dense's interval, P and seeds needed, and `vs_dense`, the 3 % verdict; columns named as table1_cells'."""
    runs = final_win_rate(frame, k)
    keys = [ALGO, MAP, METHOD]
    dense = runs[runs[METHOD] == "dense"]
    table = seed_stats(runs, keys).merge(versus_dense(runs[runs[METHOD] != "dense"], dense, keys, [ALGO, MAP]),
                                         on=keys, how="left")
    ref = table[table[METHOD] == "dense"].set_index([ALGO, MAP])["mean"].rename("dense_mean")
    table = table.join(ref, on=[ALGO, MAP])
    table["normalised"] = (table["mean"] / table["dense_mean"]).where(table["dense_mean"] > 0)
    table["vs_dense"] = [undecided_text(versus_tolerance(n, lo, hi), need, s) if m != "dense" else "the reference"
                         for m, n, lo, hi, need, s in
                         zip(table[METHOD], table["normalised"], table["normalised_lo"], table["normalised_hi"],
                             table["seeds_needed"], table["seeds"], strict=True)]
    return table.rename(columns={ALGO: "algo", MAP: "map", METHOD: "method"})


def ratio_verdict(lo, hi, of: str = "MAST", why: str = "", p_family=np.nan) -> str:
    """The verdict on a ratio of two methods' win rates (`of` over another) by its 95 % interval [lo, hi], or, where
    the comparison is one of a family, by its Holm-adjusted p-value `p_family` (stats.holm over the family's
    ratio_test p-values): '<of> above' where the interval lies wholly above 1 (and p_family < 0.05 where given),
    '<of> below' where it lies wholly under 1 (likewise), else 'undecided' - also where the interval alone would decide
    but the family's correction does not ('undecided (Holm)'). NaN bounds: 'undecided' where the ratio is unbounded
    (`why`, mast.no_interval_why, says the reference's interval reaches 0: Fieller's set then holds ratios below 1
    too), else 'no interval' (too few seeds)."""
    if pd.isna(lo) or pd.isna(hi):
        return "undecided" if why.endswith("interval reaches 0") else "no interval"
    side = f"{of} above" if lo > 1 else f"{of} below" if hi < 1 else "undecided"
    if side != "undecided" and pd.notna(p_family) and p_family >= 1 - CONFIDENCE:
        return "undecided (Holm)"
    return side


VERSUS_COLUMNS = ["algo", "map", "method", "ratio", "lo", "hi", "p", "p_holm", "p_improvement", "verdict", "why",
                  "seeds", "seeds_needed", "family"]


def versus_baselines(runs: pd.DataFrame, value: str = "win_rate") -> pd.DataFrame:
    """Paper 2's central comparison in each Table-1 cell (`table1_runs`' runs), one verdict record per (algo, map) and
    baseline method: `ratio` = mean of MAST's runs / mean of the baseline's with Fieller's 95 % interval (`lo`, `hi`:
    stats.ratio_interval, the interval Table 1 gives against dense); `p`, the two-sided test of ratio = 1
    (stats.ratio_test: Welch's test of equal means, which Fieller's interval inverts) and `p_holm`, its Holm-adjusted
    value over the cell's `family` of baselines (stats.holm: MAST against k baselines is k comparisons, the
    family-wise error held at 5 %); `verdict` (ratio_verdict with p_holm), `why` (mast.no_interval_why: why there is no
    interval, '' where there is); `seeds` (MAST's, the baseline's); `seeds_needed`, where the verdict is undecided,
    the seeds per method at which the interval would decide it at the measured spread, planned at the family's
    Bonferroni level (metrics.power.seeds_needed with family = k; NaN where decided). One row per baseline present in
    a cell that also has MAST runs."""
    rows = []
    for (algo, name), cell in runs.groupby([ALGO, MAP], sort=True):
        mast = cell.loc[cell[METHOD] == "mast", value].to_numpy(dtype=float)
        if not len(mast):
            continue
        others = list(cell[~cell[METHOD].isin(["dense", "mast"])].groupby(METHOD, sort=False))
        p_values = [ratio_test(mast, group[value].to_numpy(dtype=float))[1] for _, group in others]
        adjusted = holm(p_values)
        for (method, group), p, p_holm in zip(others, p_values, adjusted, strict=True):
            other = group[value].to_numpy(dtype=float)
            lo, hi = ratio_interval(mast, other)
            ref, why = np.nanmean(other) if np.isfinite(other).any() else np.nan, no_interval_why(lo, mast, other,
                                                                                                 "baseline")
            verdict = ratio_verdict(lo, hi, why=why, p_family=p_holm)
            rows.append({"algo": algo, "map": name, "method": method,
                         "ratio": float(np.nanmean(mast) / ref) if ref > 0 else np.nan,
                         "lo": lo, "hi": hi, "p": p, "p_holm": p_holm,
                         "p_improvement": probability_of_improvement(mast, other), "verdict": verdict, "why": why,
                         "seeds": f"{len(mast)}, {len(other)}",
                         "seeds_needed": seeds_needed(mast, other, 1.0, family=len(others))
                         if verdict.startswith("undecided") else np.nan,
                         "family": len(others)})
    table = pd.DataFrame(rows, columns=VERSUS_COLUMNS)
    order = table["method"].map({m: i for i, m in enumerate(METHOD_ORDER)}).fillna(99)
    return table.assign(_o=order).sort_values(["algo", "map", "_o"]).drop(columns="_o").reset_index(drop=True)


def flops_averages(cells: pd.DataFrame) -> pd.DataFrame:
    """Per (algo, method), the average over maps of the FLOPs and size ratios (the paper's "average FLOPs reduction
    per algorithm"): `train_flops_reduction` = 1 / mean ratio, and `mean_of_reductions` = the mean of the per-map
    reductions (the two differ when maps differ; both are shown), with the maps it averages."""
    sparse = cells[cells["method"] != "dense"].dropna(subset=["train_flops_ratio"])
    rows = []
    for (algo, method), g in sparse.groupby(["algo", "method"], sort=True):
        rows.append({"algo": algo, "method": method, "maps": ", ".join(map(str, sorted(g["map"]))),
                     "n_maps": len(g), "train_flops_ratio": g["train_flops_ratio"].mean(),
                     "inference_flops_ratio": g["inference_flops_ratio"].mean(), "size_ratio": g["size_ratio"].mean(),
                     "train_flops_reduction": 1.0 / g["train_flops_ratio"].mean(),
                     "mean_of_reductions": (1.0 / g["train_flops_ratio"]).mean(),
                     "normalised": g["normalised"].mean(), "seeds": int(g["seeds"].min())})
    return pd.DataFrame(rows, columns=["algo", "method", "maps", "n_maps", "train_flops_ratio", "inference_flops_ratio",
                                       "size_ratio", "train_flops_reduction", "mean_of_reductions", "normalised",
                                       "seeds"])
