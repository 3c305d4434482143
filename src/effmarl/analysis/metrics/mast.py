"""Paper-2 (MAST) metrics: the per-run win-rate statistic, its aggregate over seeds, learning curves aligned on the
evaluation grid, the sparsity selection, Table 1's cells and the per-algorithm FLOPs averages, the runs each
learning-curve figure shows (the ablations: metrics.ablations).

The statistic (paper 2, Table 1): per run, the mean test win rate of its last K evaluations (K = 20 in the paper,
i.e. its final 10 % of training; here min(K, available) within the run's final 10 %); across seeds, the
interquartile mean (IQM; below 4 seeds the mean) with the 95 % Student-t interval of that trimmed mean
(`stats.mean_interval(trim=IQM_TRIM)`, Yuen's standard error), and against dense the ratio IQM / dense IQM with
Fieller's 95 % interval (`stats.ratio_interval`, Welch's degrees of freedom); both intervals' coverage at 3 and 5 seeds
is checked by tests/test_stats_coverage.py. Every aggregate carries `seeds`, the number of runs it rests on;
one seed has no interval (NaN). Curves: each run's evaluations on the exact grid `eval_step`, Savitzky-Golay smoothed
per run (window 21, order 2, ≤ 1/3 of the series length), then mean and 95 % bootstrap band over seeds per x."""

from __future__ import annotations

import numpy as np
import pandas as pd

from effmarl.analysis.metrics.runs import RUN_ID, per_run, require_alike, run_columns
from effmarl.analysis.metrics.stats import (
    IQM_TRIM,
    bootstrap_ci,
    iqm,
    mean_interval,
    probability_of_improvement,
    ratio_interval,
    savgol,
)
from effmarl.profile_checks import COMPARABLE_SETTINGS
from effmarl.schedules import FINAL_FRACTION, LAST_K

# LAST_K (20): evaluations averaged per run (the paper's last 20), within the final FINAL_FRACTION (10 %) of the run
# (the paper's last 20 of 200 evaluations); defined in effmarl.schedules, where the profile checks read them too.
SG_WINDOW, SG_ORDER = 21, 2  # the paper's Savitzky-Golay filter
TOLERANCE = 0.03  # admissible: MAST >= (1 - 3 %) x dense

ALGO, MAP, METHOD, SPARSITY, SEED = "cfg.algo", "cfg.env.map", "cfg.sparse.method", "cfg.sparse.sparsity", "cfg.seed"
DELTA_M = "cfg.sparse.delta_m"
STAT_COLUMNS = ["iqm", "iqm_lo", "iqm_hi", "mean", "std", "seeds"]
RATIO_COLUMNS = ["size", "size_ratio", "train_flops_ratio", "inference_flops_ratio"]
# What every run of one comparison (a selection or Table-1 cell, a Fig. 8 panel) must share (studies.py, which checks
# a profile's configs before any job starts; here the results are checked, whichever runs they come from).
SHARED_SETTINGS = [f"cfg.{path}" for path in COMPARABLE_SETTINGS]


def seeds_text(seeds) -> str:
    """'n = 1 seed', 'n = 3 seeds', 'n = 2-3 seeds' (a range where the count differs, e.g. across x)."""
    values = sorted({int(s) for s in np.atleast_1d(seeds) if pd.notna(s)})
    if not values:
        return "n = 0 seeds"
    text = str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}"
    return f"n = {text} seed" + ("" if values == [1] else "s")


def interval_text(lo, hi, digits: int = 2, why: str = "1 seed") -> str:
    """'[0.41, 0.62]', or 'no interval (<why>)' where the bounds are NaN."""
    if pd.isna(lo) or pd.isna(hi):
        return f"no interval ({why})"
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def versus_tolerance(point, lo, hi, tolerance: float = TOLERANCE) -> str:
    """The verdict on a method / dense ratio against the bar 1 − tolerance (0.97), decided by its 95 % interval
    [lo, hi] where that interval decides it: 'within 3 % by its whole interval' (lo ≥ 0.97), 'more than 3 % below by
    its whole interval' (hi < 0.97); else the side of the point estimate, saying it rests on the point estimate
    only ('... by the point estimate only (its interval straddles 0.97)', or '(no interval)'). The one place every
    paper-2 '< 3 % below dense' verdict is worded (select_sparsity, table1_cells, the claims)."""
    bar, pct = 1 - tolerance, f"{100 * tolerance:g} %"
    if pd.isna(point):
        return "no ratio (dense wins 0 %)"
    if pd.notna(lo) and pd.notna(hi):
        if lo >= bar - 1e-12:
            return f"within {pct} by its whole interval"
        if hi < bar - 1e-12:
            return f"more than {pct} below by its whole interval"
    side = f"within {pct}" if point >= bar - 1e-12 else f"more than {pct} below"
    why = "no interval" if pd.isna(lo) or pd.isna(hi) else f"its interval straddles {bar:g}"
    return f"{side} by the point estimate only ({why})"


def _key(frame: pd.DataFrame, column: str) -> pd.Series:
    """A sparsity-like float key rounded so that 0.9 from two sources compares equal."""
    return frame[column].astype(float).round(6)


def _keyed(keys: list[str], values) -> dict:
    return dict(zip(keys, values if isinstance(values, tuple) else (values,), strict=True))


def require_comparable(frames: dict[str, pd.DataFrame], where: str, keys: tuple[str, ...] = (ALGO, MAP)) -> None:
    """A one-line ConfigError per SHARED_SETTINGS column whose value differs between the runs of `frames` ({input
    role: metrics summary}) within one group of `keys`, naming the values and the roles that hold them."""
    require_alike(frames, where, SHARED_SETTINGS, keys)


def evaluations(metrics: pd.DataFrame, value: str = "test_win_rate") -> pd.DataFrame:
    """The rows of `metrics` that carry `value`, with `x`: the evaluation grid step (`eval_step`), or where a row has
    none, its env_steps rounded down to the grid of cfg.qmix.eval_every (so seeds line up on the same x)."""
    rows = metrics[metrics[value].notna()].copy() if value in metrics else metrics.iloc[:0].copy()
    x = rows["eval_step"] if "eval_step" in rows else pd.Series(np.nan, index=rows.index)
    if x.isna().any() and "env_steps" in rows:
        every = rows["cfg.qmix.eval_every"] if "cfg.qmix.eval_every" in rows else pd.Series(1, index=rows.index)
        every = every.fillna(1).astype(float).clip(lower=1)
        x = x.fillna((rows["env_steps"] // every) * every)
    rows["x"] = x.astype(float)
    return rows[rows["x"].notna()]


def final_win_rate(metrics: pd.DataFrame, k: int = LAST_K, value: str = "test_win_rate",
                   fraction: float = FINAL_FRACTION) -> pd.DataFrame:
    """Per run: `win_rate`, the mean of `value` over its last min(k, available) evaluations (by eval_step) that fall
    in the final `fraction` of the run (x >= (1 - fraction) x its last evaluation step, so the last evaluation
    always counts), and `evals`, how many it averaged; with every configuration column. At the paper's scale
    (2 M steps, an evaluation every 10 000) both limits give the paper's last 20; a shorter run averages its final
    10 % only, not evaluations from early in learning."""
    ev = evaluations(metrics, value)
    keys = run_columns(metrics)
    last = ev.groupby(keys)["x"].transform("max")
    ev = ev[ev["x"] >= (1 - fraction) * last]
    tail = ev.sort_values([*keys, "x"]).groupby(keys, group_keys=False).tail(int(k))
    agg = tail.groupby(keys)[value].agg(win_rate="mean", evals="count")
    return per_run(metrics, agg)


def seed_stats(per_run_values: pd.DataFrame, keys: list[str], value: str = "win_rate") -> pd.DataFrame:
    """Per group of `keys`: IQM with its 95 % t-interval (`iqm_lo`, `iqm_hi`: stats.mean_interval with trim =
    IQM_TRIM; NaN for one seed), mean, std (ddof 1; NaN for one
    seed) and `seeds`, the number of runs in the group."""
    rows = []
    ident = run_columns(per_run_values)
    for values, group in per_run_values.groupby(keys, dropna=False, sort=True):
        v = group[value].dropna().to_numpy(dtype=float)
        lo, hi = mean_interval(v, trim=IQM_TRIM)
        rows.append({**_keyed(keys, values),
                     "iqm": float(iqm(v)) if len(v) else np.nan, "iqm_lo": float(lo), "iqm_hi": float(hi),
                     "mean": float(v.mean()) if len(v) else np.nan,
                     "std": float(v.std(ddof=1)) if len(v) > 1 else np.nan,
                     "seeds": int(group.drop_duplicates(ident).shape[0]) if ident else len(group)})
    return pd.DataFrame(rows, columns=[*keys, *STAT_COLUMNS])


def sweep_stats(per_run: pd.DataFrame, keys: list[str], value: str = "win_rate") -> pd.DataFrame:
    """Per group of `keys`: `mean` over its runs of `value`, `lo`/`hi` its 95 % Student-t interval
    (stats.mean_interval: NaN for one run) and `seeds`, the number of runs."""
    ident = run_columns(per_run)
    rows = []
    for values, group in per_run.groupby(keys, dropna=False, sort=True):
        v = group[value].to_numpy(dtype=float)
        lo, hi = mean_interval(v)
        rows.append({**dict(zip(keys, values if isinstance(values, tuple) else (values,), strict=True)),
                     "mean": float(np.nanmean(v)) if np.isfinite(v).any() else np.nan, "lo": lo, "hi": hi,
                     "seeds": int(len(group.drop_duplicates(ident))) if ident else len(group)})
    return pd.DataFrame(rows, columns=[*keys, "mean", "lo", "hi", "seeds"])


def curves(metrics: pd.DataFrame, keys: list[str], value: str = "test_win_rate", window: int = SG_WINDOW,
           order: int = SG_ORDER, smooth: bool = True) -> pd.DataFrame:
    """Learning curves: per group of `keys` and grid step x, the mean over seeds of each run's Savitzky-Golay
    smoothed `value`, its 95 % bootstrap band (`lo`, `hi`; NaN where one seed) and `seeds` at that x.
    Seeds are aligned on the evaluation grid (`evaluations`), never on raw env_steps."""
    ev = evaluations(metrics, value)
    ident = run_columns(metrics)
    out = []
    for values, group in ev.groupby(keys, dropna=False, sort=True):
        wide = group.groupby([*ident, "x"])[value].mean().unstack("x").sort_index(axis=1)
        if smooth:
            smoothed = []
            for _, row in wide.iterrows():  # each run over its own points (a shorter run is smoothed on its own)
                present = row.dropna()
                smoothed.append(pd.Series(savgol(present.to_numpy(), window, order), index=present.index))
            wide = pd.DataFrame(smoothed, columns=wide.columns)
        matrix = wide.to_numpy(dtype=float)
        counts = np.isfinite(matrix).sum(axis=0)
        mean = np.nanmean(np.where(np.isfinite(matrix), matrix, np.nan), axis=0) if len(matrix) else matrix
        lo, hi = np.full(len(counts), np.nan), np.full(len(counts), np.nan)
        full = counts == len(matrix)
        if full.any():
            lo[full], hi[full] = bootstrap_ci(matrix[:, full])
        for j in np.flatnonzero(~full):
            col = matrix[:, j]
            lo[j], hi[j] = bootstrap_ci(col[np.isfinite(col)])
        base = _keyed(keys, values)
        out.append(pd.DataFrame({**base, "x": wide.columns.to_numpy(dtype=float), "mean": mean, "lo": lo, "hi": hi,
                                 "seeds": counts}))
    columns = [*keys, "x", "mean", "lo", "hi", "seeds"]
    return pd.concat(out, ignore_index=True)[columns] if out else pd.DataFrame(columns=columns)


VS_DENSE_COLUMNS = ["normalised_lo", "normalised_hi", "normalised_why", "p_improvement"]


def versus_dense(per_run_values: pd.DataFrame, dense_runs: pd.DataFrame, keys: list[str], cell: list[str],
                 value: str = "win_rate") -> pd.DataFrame:
    """Per group of `keys` of `per_run_values`, against the dense runs of its `cell` (the (algo, map) columns):
    `normalised_lo` / `normalised_hi`, Fieller's 95 % interval of IQM / dense IQM (stats.ratio_interval), and
    `p_improvement`, the probability that a run of the group beats a dense run (stats.probability_of_improvement;
    0.5 = no difference). NaN where a side has too few runs (one seed has no interval) or where dense's IQM is not
    clear of 0 (the ratio is unbounded); `normalised_why` says which ('' where there is an interval)."""
    rows = []
    dense = {k if isinstance(k, tuple) else (k,): g[value].to_numpy(dtype=float)
             for k, g in dense_runs.groupby(cell, dropna=False)}
    for values, group in per_run_values.groupby(keys, dropna=False, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        mine = group[value].to_numpy(dtype=float)
        ref = dense.get(tuple(values[keys.index(c)] for c in cell), np.array([]))
        lo, hi = ratio_interval(mine, ref, trim=IQM_TRIM)
        n_mine, n_ref = (int(np.isfinite(v).sum()) for v in (mine, ref))
        why = ("" if np.isfinite(lo) else "1 seed" if n_mine < 2 else "1 dense seed" if n_ref < 2 else
               "dense wins 0 %" if iqm(ref[np.isfinite(ref)]) <= 0 else "dense's interval reaches 0")
        rows.append({**_keyed(keys, values), "normalised_lo": lo, "normalised_hi": hi, "normalised_why": why,
                     "p_improvement": probability_of_improvement(mine, ref)})
    return pd.DataFrame(rows, columns=[*keys, *VS_DENSE_COLUMNS])


def select_sparsity(dense: pd.DataFrame, sweep: pd.DataFrame, k: int = LAST_K,
                    tolerance: float = TOLERANCE) -> pd.DataFrame:
    """Table 1's sparsity per (algo, map): the highest swept sparsity at which MAST's IQM is at least (1 - tolerance)
    of the dense IQM; if none is admissible, the lowest swept sparsity (its `admissible` stays False). `admissible`
    is the paper's rule, decided by the point estimate; `verdict` (versus_tolerance) says whether the 95 % interval
    of MAST / dense decides it too, or the verdict rests on the point estimate alone.

    `dense`, `sweep`: metrics summaries, trained alike (require_comparable). One row per (algo, map, sparsity) with
    raw config values in `algo`, `map`, `sparsity`, the MAST and dense statistics, `normalised` = MAST IQM / dense IQM
    (NaN where dense is 0), `admissible`, `chosen` and `rule` (how the chosen row was picked)."""
    require_comparable({"dense": dense, "sweep": sweep}, "sparsity selection")
    dense_runs, sweep_runs = final_win_rate(dense, k), final_win_rate(sweep, k)
    d = seed_stats(dense_runs, [ALGO, MAP]).rename(columns={c: f"dense_{c}" for c in STAT_COLUMNS})
    s = seed_stats(sweep_runs, [ALGO, MAP, SPARSITY]).merge(
        versus_dense(sweep_runs, dense_runs, [ALGO, MAP, SPARSITY], [ALGO, MAP]), on=[ALGO, MAP, SPARSITY], how="left")
    table = s.merge(d, on=[ALGO, MAP], how="left").rename(columns={ALGO: "algo", MAP: "map", SPARSITY: "sparsity"})
    dense_iqm = table["dense_iqm"]
    table["normalised"] = np.where(dense_iqm > 0, table["iqm"] / dense_iqm.where(dense_iqm > 0), np.nan)
    table["admissible"] = (table["iqm"] >= (1 - tolerance) * dense_iqm - 1e-12) & dense_iqm.notna()
    table["verdict"] = [versus_tolerance(n, lo, hi, tolerance) for n, lo, hi in
                        zip(table["normalised"], table["normalised_lo"], table["normalised_hi"], strict=True)]
    table["chosen"], table["rule"] = False, ""
    for _, group in table.groupby(["algo", "map"], sort=False):
        ok = group[group["admissible"]]
        if len(ok):
            idx, rule = ok["sparsity"].astype(float).idxmax(), "highest admissible sparsity"
        else:
            idx = group["sparsity"].astype(float).idxmin()
            rule = ("no dense runs for this cell: lowest swept sparsity" if group["dense_iqm"].isna().all()
                    else "none admissible: lowest swept sparsity")
        table.loc[idx, ["chosen", "rule"]] = True, rule
    table["note"] = np.where(table["dense_iqm"] == 0,
                             "dense win rate is 0: admissibility holds trivially, the comparison says nothing", "")
    table["last_k"] = int(k)
    first = ["algo", "map", "sparsity", "chosen", "admissible", "verdict", "normalised"]
    return table[first + [c for c in table.columns if c not in first]].sort_values(
        ["algo", "map", "sparsity"]).reset_index(drop=True)


def chosen_sparsity(selection: pd.DataFrame) -> pd.DataFrame:
    """The chosen rows of a selection table (as read back from its CSV): algo, map, sparsity (rounded), admissible."""
    sel = selection[selection["chosen"].astype(str).str.lower().isin(["true", "1"])]
    out = sel[["algo", "map", "sparsity"]].copy()
    out["sparsity"] = out["sparsity"].astype(float).round(6)
    out["admissible"] = sel["admissible"].astype(str).str.lower().isin(["true", "1"]).to_numpy()
    return out.reset_index(drop=True)


CELL_COLUMNS = ["algo", "map", "sparsity", "admissible", "selected_sparsity", "sparsity_source"]


def cell_sparsity(selection: pd.DataFrame | None, baselines: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 1's sparsity per (algo, map) cell: the one its baselines ran at where `baselines` (a metrics summary of
    the baseline runs) has the cell - declared by the profile (the default profile's 90 %) or written into their
    configs from the selection (the paper profile's `sparsity_from: selection`); where they ran at several, the
    selection's chosen one among them; without baseline runs, the selection's chosen sparsity. Columns: algo, map,
    sparsity (rounded), `admissible` (MAST within 3 % of dense at that sparsity by the `selection` table; None where
    the selection has no row for it or none is given), `selected_sparsity` (the selection's chosen sparsity, the 3 %
    rule's answer; NaN without a selection) and `sparsity_source` ("baseline runs" or "selection"). A cell whose
    baselines ran at several sparsities, none of them the selection's, is refused (one line per cell)."""
    chosen = chosen_sparsity(selection) if selection is not None and not selection.empty else None
    picked = {} if chosen is None else {(r.algo, r.map): float(r.sparsity) for r in chosen.itertuples()}
    rows: dict[tuple, tuple[float, str]] = {}
    lines = []
    if baselines is not None and not baselines.empty:
        ran = baselines.assign(_s=_key(baselines, SPARSITY)).groupby([ALGO, MAP])["_s"].unique()
        for (algo, env_map), values in ran.items():
            values = sorted(float(v) for v in values)
            if len(values) == 1:
                rows[(algo, env_map)] = (values[0], "baseline runs")
            elif any(np.isclose(v, picked.get((algo, env_map), np.nan)) for v in values):
                rows[(algo, env_map)] = (picked[(algo, env_map)], "selection")
            else:
                lines.append(f"{algo} {env_map}: baselines at sparsities {', '.join(f'{v:g}' for v in values)} and no "
                             "selection choosing one of them; Table 1 puts every method of a cell at one sparsity")
    if lines:
        from effmarl.config import ConfigError

        raise ConfigError(lines, "Table 1")
    for cell, value in picked.items():
        rows.setdefault(cell, (value, "selection"))
    table = None if chosen is None else selection.assign(
        _s=selection["sparsity"].astype(float).round(6),
        _ok=selection["admissible"].astype(str).str.lower().isin(["true", "1"]))
    out = []
    for (algo, env_map), (value, source) in rows.items():
        admissible = None
        if table is not None:
            at = table[(table["algo"] == algo) & (table["map"] == env_map) & np.isclose(table["_s"], value)]
            admissible = bool(at["_ok"].iloc[0]) if len(at) else None
        out.append({"algo": algo, "map": env_map, "sparsity": round(value, 6), "admissible": admissible,
                    "selected_sparsity": picked.get((algo, env_map), np.nan), "sparsity_source": source})
    return pd.DataFrame(out, columns=CELL_COLUMNS).sort_values(["algo", "map"]).reset_index(drop=True)


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
    ratios to dense (mean over seeds; dense is 1 by definition), the win-rate statistics, `normalised` (IQM / dense
    IQM) with its interval (`normalised_lo`, `normalised_hi`), `vs_dense` (the 3 % verdict, versus_tolerance),
    `normalised_mean` and `normalised_std` (mean and std over seeds / dense mean), and `seeds`; per cell
    `selection_admissible` (MAST within 3 % of dense at the cell's sparsity by the selection's rule, i.e. by the point
    estimate; None without one) and
    `selected_sparsity` (the selection's chosen sparsity).

    The cell's sparsity (`cell_sparsity`) is the one its baselines ran at - declared by the profile, or the
    selection's choice where the profile takes it from there - else, without baseline runs, the selection's chosen
    one. MAST rows are the sweep runs at that sparsity; baselines are kept at it. Every run of a cell must be
    trained alike (require_comparable)."""
    runs, chosen = table1_runs(dense, sweep, baselines, sparsity, selection, k)
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
    ref = table[is_dense].set_index([ALGO, MAP])[["iqm", "mean"]].rename(columns=lambda c: f"dense_{c}")
    table = table.join(ref, on=[ALGO, MAP])
    pos = table["dense_iqm"] > 0
    table["normalised"] = (table["iqm"] / table["dense_iqm"]).where(pos)
    posm = table["dense_mean"] > 0
    table["normalised_mean"] = (table["mean"] / table["dense_mean"]).where(posm)
    table["normalised_std"] = (table["std"] / table["dense_mean"]).where(posm)
    table["vs_dense"] = [versus_tolerance(n, lo, hi) if m != "dense" else "the reference" for m, n, lo, hi in
                         zip(table[METHOD], table["normalised"], table["normalised_lo"], table["normalised_hi"],
                             strict=True)]
    table["train_flops_reduction"] = 1.0 / table["train_flops_ratio"]
    table["size_reduction"] = 1.0 / table["size_ratio"]
    table["order"] = table[METHOD].map({m: i for i, m in enumerate(METHOD_ORDER)}).fillna(99)
    table = table.sort_values([ALGO, MAP, "order"]).drop(columns=["order", "dense_size"])
    return table.rename(columns={ALGO: "algo", MAP: "map", METHOD: "method"}).reset_index(drop=True)


METHOD_ORDER = ["dense", "tiny", "static", "set", "rigl", "rlx2", "mast"]


def ratio_verdict(lo, hi, of: str = "MAST") -> str:
    """The verdict on a ratio of two methods' win rates (`of` over another) by its 95 % interval [lo, hi]: '<of> above'
    where the whole interval lies above 1, '<of> below' where it lies under 1, else 'undecided' (NaN bounds:
    'no interval')."""
    if pd.isna(lo) or pd.isna(hi):
        return "no interval"
    return f"{of} above" if lo > 1 else f"{of} below" if hi < 1 else "undecided"


def versus_baselines(runs: pd.DataFrame, value: str = "win_rate") -> pd.DataFrame:
    """Paper 2's central comparison in each Table-1 cell (`table1_runs`' runs): per (algo, map) and baseline method,
    `ratio` = IQM of MAST's runs / IQM of the baseline's with Fieller's 95 % interval (`lo`, `hi`:
    stats.ratio_interval, trim IQM_TRIM - the interval Table 1 gives against dense), `p_improvement` = P(a MAST run
    beats a baseline run), `verdict` (ratio_verdict) and `seeds` (MAST's, the baseline's). One row per baseline
    present in a cell that also has MAST runs."""
    rows = []
    for (algo, name), cell in runs.groupby([ALGO, MAP], sort=True):
        mast = cell.loc[cell[METHOD] == "mast", value].to_numpy(dtype=float)
        if not len(mast):
            continue
        for method, group in cell[~cell[METHOD].isin(["dense", "mast"])].groupby(METHOD, sort=False):
            other = group[value].to_numpy(dtype=float)
            lo, hi = ratio_interval(mast, other, trim=IQM_TRIM)
            ref = iqm(other[np.isfinite(other)])
            rows.append({"algo": algo, "map": name, "method": method,
                         "ratio": float(iqm(mast[np.isfinite(mast)]) / ref) if ref > 0 else np.nan,
                         "lo": lo, "hi": hi, "p_improvement": probability_of_improvement(mast, other),
                         "verdict": ratio_verdict(lo, hi), "seeds": f"{len(mast)}, {len(other)}"})
    table = pd.DataFrame(rows, columns=["algo", "map", "method", "ratio", "lo", "hi", "p_improvement", "verdict",
                                        "seeds"])
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
