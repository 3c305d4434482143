"""Paper-2 ablations (MAST-QMIX, one knob at a time): MAST's components removed one at a time (the components table),
the one-knob ablation tables (Tables 6-10: burn-in, λ, Soft Mellowmax's α and ω, the dual buffer's batch ratio, Δm)
with the Δm the runs used, and each run's target operator (Figs. 5, 16). The statistic and its aggregate over seeds
are metrics.mast's."""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd

from effmarl.analysis.metrics.mast import (
    ALGO,
    DELTA_M,
    MAP,
    METHOD,
    SEED,
    SPARSITY,
    _key,
    final_win_rate,
    interval_text,
    require_comparable,
    seed_stats,
    versus_dense,
)
from effmarl.analysis.metrics.runs import RUN_ID
from effmarl.components import PARTS, part_on, switch_field
from effmarl.config import ConfigError, get_dotted, validate
from effmarl.schedules import LAST_K, REFERENCE_ENV_STEPS, scaled_delta_m, schedule_scale

# MAST's three value-learning components (paper 2, section 4): its parts in effmarl.components (whose rule says when
# one is on: `enabled: null` = on exactly for sparse.method mast), each with the config column that switches it.
COMPONENTS = {part: f"cfg.{switch_field(part)}" for part, (owner, _) in PARTS.items() if owner == "mast"}
COMPONENTS_RATIO_COLUMNS = ["ratio", "ratio_lo", "ratio_hi", "p_improvement"]


def _switch(value) -> bool | None:
    """A switch column's cell as the config held it: None (unset; an empty cell) or a boolean."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return str(value).lower() in ("true", "1", "1.0")


def removed_components(frame: pd.DataFrame) -> pd.Series:
    """Per row, which of MAST's components the run trained without: "none" (every component on), a COMPONENTS name,
    or several joined by "+", read from the config columns as the learner reads them (unset = on for method mast, off
    otherwise). A column absent from the frame counts as unset."""
    method = frame.get(METHOD, pd.Series("mast", index=frame.index)).astype(str)
    off = pd.Series([[] for _ in range(len(frame))], index=frame.index, dtype=object)
    for name, column in COMPONENTS.items():
        values = frame[column] if column in frame else pd.Series(None, index=frame.index, dtype=object)
        for i, (v, m) in enumerate(zip(values, method, strict=True)):
            if not part_on(name, _switch(v), m):
                off.iloc[i] = [*off.iloc[i], name]
    return off.map(lambda names: "+".join(names) or "none")


def components_ablation(mast: pd.DataFrame, ablated: pd.DataFrame, dense: pd.DataFrame | None = None,
                        k: int = LAST_K) -> pd.DataFrame:
    """MAST against MAST without each component, per (algo, map, sparsity) cell of the `ablated` runs: the full MAST
    runs are those of `mast` (its runs of method mast with every component on) at the cell's sparsity; `dense`, if
    given, adds the cell's dense runs for context. One row per (cell, variant): `removed` ("none" for full MAST,
    "dense" for dense), the win-rate statistics (seed_stats), `ratio` = mean / full MAST mean with its 95 %
    Fieller interval (`ratio_lo`, `ratio_hi`, stats.ratio_interval through versus_dense) and `p_improvement` = the
    probability that a run of the variant beats a full MAST run (0.5 = no difference), and `seed_list`. Every run
    must be trained alike (require_comparable, within algo and map); ablated runs must be of method mast."""
    frames = {"mast": mast, "ablated": ablated, "dense": dense}
    require_comparable(frames, "the components ablation")
    methods = set(ablated[METHOD].astype(str)) if METHOD in ablated else {"mast"}
    if methods != {"mast"}:
        raise ConfigError([f"ablated runs of method(s) {', '.join(sorted(methods - {'mast'}))}: the components "
                           "ablation removes parts of MAST (sparse.method mast)"], "the components ablation")
    abl = final_win_rate(ablated, k).assign(removed=lambda f: removed_components(f))
    full = final_win_rate(mast, k)
    if METHOD in full:
        full = full[full[METHOD].astype(str) == "mast"]
    full = full[removed_components(full) == "none"].assign(removed="none")
    for frame in (abl, full):
        frame["_s"] = _key(frame, SPARSITY)
    cells = abl[[ALGO, MAP, "_s"]].drop_duplicates()
    full = full.merge(cells, on=[ALGO, MAP, "_s"])
    parts = [full, abl]
    if dense is not None and not dense.empty:
        d = final_win_rate(dense, k).drop(columns=[SPARSITY], errors="ignore")
        d = d.merge(cells, on=[ALGO, MAP]).assign(removed="dense")
        parts.append(d)
    runs = pd.concat(parts, ignore_index=True)
    keys = [ALGO, MAP, "_s", "removed"]
    table = seed_stats(runs, keys)
    ref = versus_dense(runs, full, keys, [ALGO, MAP, "_s"]).rename(
        columns={"normalised_lo": "ratio_lo", "normalised_hi": "ratio_hi"})
    table = table.merge(ref, on=keys, how="left")
    base = table[table["removed"] == "none"].set_index([ALGO, MAP, "_s"])["mean"].rename("full_mean")
    table = table.join(base, on=[ALGO, MAP, "_s"])
    table["ratio"] = (table["mean"] / table["full_mean"]).where(table["full_mean"] > 0)
    seeds = runs.groupby(keys)[SEED].agg(lambda v: ", ".join(str(int(x)) for x in sorted(set(v))))
    table = table.join(seeds.rename("seed_list"), on=keys)
    order = {"dense": 0, "none": 1, **{name: 2 + i for i, name in enumerate(COMPONENTS)}}
    table["_o"] = table["removed"].map(order).fillna(len(order) + 1)
    table = table.sort_values([ALGO, MAP, "_s", "_o"]).drop(columns=["_o", "full_mean"])
    return table.rename(columns={ALGO: "algo", MAP: "map", "_s": "sparsity"}).reset_index(drop=True)


# The ablated settings whose default the ablation tables mark: the schema's default (read, not copied).
ABLATED = ("mast.td_lambda.burn_in_fraction", "mast.td_lambda.lambda", "mellowmax.alpha", "mellowmax.omega",
           "mast.dual_buffer.batch_ratio", "sparse.delta_m")


@cache
def ablation_defaults() -> dict[str, float]:
    """{config column: the schema's default} of every ABLATED setting, from a QMIX run holding only defaults."""
    run = validate({"study": "defaults", "algo": "qmix", "seed": 0, "env": {"backend": "smax", "map": "3m"},
                    "budget": {"env_steps": 1}}, part="run", checks=False)
    return {f"cfg.{key}": get_dotted(run, key) for key in ABLATED}


def used_delta_m(metrics: pd.DataFrame) -> pd.Series:
    """Per configured Δm (cfg.sparse.delta_m), the Δm its runs used ('2', or '2/5' where runs differ), from each
    run's budget and qmix.scale_schedules (schedules.scaled_delta_m: Δm scales with budget / 2 M env steps)."""
    runs = metrics.drop_duplicates(RUN_ID)
    budget = runs["cfg.budget.env_steps"] if "cfg.budget.env_steps" in runs else pd.Series(REFERENCE_ENV_STEPS,
                                                                                           index=runs.index)
    scaled = runs["cfg.qmix.scale_schedules"] if "cfg.qmix.scale_schedules" in runs else pd.Series(
        False, index=runs.index)
    used = [scaled_delta_m(int(d), schedule_scale(int(b), bool(s)))
            for d, b, s in zip(runs[DELTA_M], budget, scaled, strict=True)]
    return pd.Series(used, index=runs[DELTA_M].to_numpy()).groupby(level=0).agg(
        lambda v: "/".join(str(x) for x in sorted(set(v))))


# What the ablation tables' comparison with the default setting says (their captions quote it)
VS_DEFAULT = ("mean / the default setting's mean with its 95 % Fieller interval (over the seeds of both) and what "
              "the interval shows: below or above the default by its whole interval, else no difference shown")


def ablation(metrics: pd.DataFrame, keys: list[str], k: int = LAST_K) -> pd.DataFrame:
    """An ablation table: per value of the varied `keys` (and per algo/map if several), the win-rate statistic,
    `default` (the value is the configuration's default for every key) and, against the default setting's runs of
    its algo/map, `ratio` = mean / default mean with its 95 % Fieller interval (`ratio_lo`, `ratio_hi`,
    stats.ratio_interval through versus_dense, NaN where a side has one seed or the default's interval reaches 0) and
    `p_improvement`, the probability that a run of the value beats a run of the default (0.5 = no difference); NaN
    where no run holds the default."""
    extra = [c for c in (ALGO, MAP) if c in metrics and metrics[c].nunique() > 1]
    per_run = final_win_rate(metrics, k)
    table = seed_stats(per_run, extra + keys)

    def at_default(frame: pd.DataFrame) -> pd.Series:
        out = pd.Series(True, index=frame.index)
        for key in keys:
            if key in ablation_defaults():
                out &= np.isclose(frame[key].astype(float), float(ablation_defaults()[key]))
        return out

    table["default"] = at_default(table)
    table["interval"] = [interval_text(lo, hi, 3) for lo, hi in zip(table["mean_lo"], table["mean_hi"], strict=True)]
    cell = extra or ["_cell"]
    runs = per_run.assign(_cell=0)
    ref = versus_dense(runs, runs[at_default(runs)], list(dict.fromkeys(cell + keys)), cell, of_ref="default").rename(
        columns={"normalised_lo": "ratio_lo", "normalised_hi": "ratio_hi", "normalised_why": "_why"})
    ref = ref[[*extra, *keys, *COMPONENTS_RATIO_COLUMNS[1:], "_why"]]
    base = table[table["default"]].assign(_cell=0).groupby(cell)["mean"].first().rename("_default_mean")
    table = table.assign(_cell=0).join(base, on=cell).merge(ref, on=extra + keys, how="left")
    table["ratio"] = (table["mean"] / table["_default_mean"]).where(table["_default_mean"] > 0)
    table["vs_default"] = [_versus_default(*row) for row in zip(
        table["default"], table["_default_mean"].notna(), table["ratio"], table["ratio_lo"], table["ratio_hi"],
        table["_why"].fillna(""), strict=True)]
    ratios = ["ratio", "ratio_lo", "ratio_hi", "p_improvement"]
    table = table.drop(columns=["_cell", "_default_mean", "_why"])
    table = table[[c for c in table if c not in ratios and c != "vs_default"] + ratios + ["vs_default"]]
    return table.round({c: 3 for c in ratios})


def _versus_default(is_default: bool, has_default: bool, ratio: float, lo: float, hi: float, why: str) -> str:
    """An ablation row against the default setting: 'default', 'no default run', or the ratio with its interval and
    what the interval shows ('below' / 'above' the default by its whole interval, else 'no difference shown')."""
    if is_default:
        return "default"
    if not has_default:
        return "no default run"
    if pd.isna(ratio) or pd.isna(lo):
        point = "" if pd.isna(ratio) else f"{ratio:.3f} "
        return f"{point}no interval ({why})"
    shown = "below" if hi < 1 else "above" if lo > 1 else "no difference shown"
    return f"{ratio:.3f} {interval_text(lo, hi, 3)} {shown}"


def operator_of(frame: pd.DataFrame) -> pd.Series:
    """The target operator of each row: cfg.mellowmax.operator (Soft Mellowmax where absent) where the soft_mellowmax
    part is on, else max. The part is on as effmarl.components decides: cfg.mellowmax.enabled true, or unset on a
    MAST run; the schema fills the operator field into every run, so it says nothing where the part is off."""
    from effmarl.components import part_on

    method = frame.get(METHOD, pd.Series("", index=frame.index))
    enabled = frame.get("cfg.mellowmax.enabled", pd.Series(None, index=frame.index, dtype=object))
    operator = frame.get("cfg.mellowmax.operator", pd.Series("soft_mellowmax", index=frame.index))

    def one(e, m, op):
        unset = e is None or (isinstance(e, float) and e != e)
        on = part_on("soft_mellowmax", None if unset else str(e).lower() in ("true", "1"), m)
        return str(op) if on and isinstance(op, str) else "soft_mellowmax" if on else "max"

    return pd.Series([one(e, m, op) for e, m, op in zip(enabled, method, operator, strict=True)], index=frame.index)
