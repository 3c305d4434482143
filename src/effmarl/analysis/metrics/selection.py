"""Paper 2, Table 1's sparsity column: which swept sparsity each (algorithm, map) cell takes - the 3 % rule's choice
(`select_sparsity`: the highest swept sparsity at which MAST's mean win rate stays within 3 % of dense's,
`chosen_sparsity`),
or the one a profile declares, read from the runs (`declared_selection`); the cell's sparsity Table 1 and the
learning-curve figures use (`cell_sparsity`: the baselines', else the selection's); and the cells whose sparsity the
rule chose from a sweep (`chosen_by_rule`: there a FLOPs reduction is measured, elsewhere it follows by
construction). The statistic is metrics.mast's."""

from __future__ import annotations

import numpy as np
import pandas as pd

from effmarl.analysis.metrics.mast import (
    ALGO,
    MAP,
    SPARSITY,
    STAT_COLUMNS,
    TOLERANCE,
    _key,
    final_win_rate,
    require_comparable,
    seed_stats,
    undecided_text,
    versus_dense,
    versus_tolerance,
)
from effmarl.schedules import LAST_K


def select_sparsity(dense: pd.DataFrame, sweep: pd.DataFrame, k: int = LAST_K,
                    tolerance: float = TOLERANCE) -> pd.DataFrame:
    """Table 1's sparsity per (algo, map): the highest swept sparsity at which MAST's mean is at least (1 - tolerance)
    of the dense mean; if none is admissible, the lowest swept sparsity (its `admissible` stays False). `admissible`
    is the paper's rule, decided by the point estimate; `verdict` (versus_tolerance) is what the 95 % interval of
    MAST / dense decides, with the seeds that would decide it where it is undecided (`seeds_needed`), and `within`
    whether the interval lies wholly at or above 1 - tolerance.

    `dense`, `sweep`: metrics summaries, trained alike (require_comparable). One row per (algo, map, sparsity) with
    raw config values in `algo`, `map`, `sparsity`, the MAST and dense statistics, `normalised` = MAST mean / dense mean
    (NaN where dense is 0), `admissible`, `chosen` and `rule` (how the chosen row was picked)."""
    require_comparable({"dense": dense, "sweep": sweep}, "sparsity selection")
    dense_runs, sweep_runs = final_win_rate(dense, k), final_win_rate(sweep, k)
    d = seed_stats(dense_runs, [ALGO, MAP]).rename(columns={c: f"dense_{c}" for c in STAT_COLUMNS})
    s = seed_stats(sweep_runs, [ALGO, MAP, SPARSITY]).merge(
        versus_dense(sweep_runs, dense_runs, [ALGO, MAP, SPARSITY], [ALGO, MAP]), on=[ALGO, MAP, SPARSITY], how="left")
    table = s.merge(d, on=[ALGO, MAP], how="left").rename(columns={ALGO: "algo", MAP: "map", SPARSITY: "sparsity"})
    dense_mean = table["dense_mean"]
    table["normalised"] = np.where(dense_mean > 0, table["mean"] / dense_mean.where(dense_mean > 0), np.nan)
    table["admissible"] = (table["mean"] >= (1 - tolerance) * dense_mean - 1e-12) & dense_mean.notna()
    table["verdict"] = [undecided_text(versus_tolerance(n, lo, hi, tolerance), need, seeds)
                        for n, lo, hi, need, seeds in zip(table["normalised"], table["normalised_lo"],
                                                          table["normalised_hi"], table["seeds_needed"], table["seeds"],
                                                          strict=True)]
    table["within"] = table["normalised_lo"] >= (1 - tolerance) - 1e-12
    table["chosen"], table["rule"] = False, ""
    for _, group in table.groupby(["algo", "map"], sort=False):
        ok = group[group["admissible"]]
        if len(ok):
            idx, rule = ok["sparsity"].astype(float).idxmax(), "highest admissible sparsity"
        else:
            idx = group["sparsity"].astype(float).idxmin()
            rule = ("no dense runs for this cell: lowest swept sparsity" if group["dense_mean"].isna().all()
                    else "none admissible: lowest swept sparsity")
        table.loc[idx, ["chosen", "rule"]] = True, rule
    table["note"] = np.where(table["dense_mean"] == 0,
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
    the baseline runs) has the cell - declared by the profile (the default profile's) or written into their
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


def declared_selection(dense: pd.DataFrame, sweep: pd.DataFrame, baselines: pd.DataFrame | None) -> pd.DataFrame:
    """Where no selection CSV is given (a profile that declares Table 1's sparsity): per (algo, map) of the dense
    runs, the sparsity its runs were configured with - the baselines' where they ran, else the sweep's where it ran
    one, else the dense runs' configured sparsity if the sweep has it - as a selection table `table1_cells` reads."""
    rows = []
    for (algo, name), d in dense.groupby([ALGO, MAP], sort=True):
        found = []
        for frame in (baselines, sweep):
            if frame is not None and not frame.empty:
                cell = frame[(frame[ALGO] == algo) & (frame[MAP] == name)]
                found = sorted({round(float(s), 6) for s in cell[SPARSITY].dropna()})
                if found:
                    break
        swept = set(found)
        if len(found) != 1 and SPARSITY in d:
            found = [s for s in sorted({round(float(x), 6) for x in d[SPARSITY].dropna()}) if s in swept]
        if len(found) == 1:
            rows.append({"algo": algo, "map": name, "sparsity": found[0], "chosen": True, "admissible": ""})
    return pd.DataFrame(rows, columns=["algo", "map", "sparsity", "chosen", "admissible"])


def chosen_by_rule(selection: pd.DataFrame | None) -> dict[tuple, tuple[float, float]]:
    """The (algo, map) cells whose sparsity the 3 % rule chose among at least two swept sparsities (a selection CSV's
    chosen row, rule 'highest admissible sparsity'), each with (the sparsity it chose, the highest it swept): there a
    reduction is measured (the highest sparsity at which MAST holds). Elsewhere (a declared sparsity, one swept
    sparsity, or the rule's fallback) a reduction follows from the sparsity: by construction."""
    if selection is None or selection.empty or "rule" not in selection:
        return {}
    out = {}
    for (algo, env_map), group in selection.groupby(["algo", "map"]):
        chosen = group[group["chosen"].astype(str).str.lower().isin(["true", "1"])]
        if len(group) >= 2 and len(chosen) == 1 and chosen["rule"].iloc[0] == "highest admissible sparsity":
            out[(algo, env_map)] = (round(float(chosen["sparsity"].iloc[0]), 6), float(group["sparsity"].max()))
    return out
