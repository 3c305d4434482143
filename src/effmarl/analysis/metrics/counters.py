"""Paper-1 counter metrics from a counters table (`effmarl counters`: one row per source, metric, storage, N,
sampler and repeat, each repeat measured with its own address-space layout of the driver processes): the spread
of a count over the repeats, and the neighbor-vs-uniform difference the claims table reports.

The interval is the range [min, max] over the repeats, i.e. the 0-100 % percentile interval of the repeats
(with 5 repeats any narrower percentile interval would rest on one or two values); nothing is assumed about the
distribution of the layouts' counts, and two ranges that do not overlap are the only "separated" result."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from effmarl.analysis.metrics.phases import thousands

KEYS = ["source", "metric", "storage", "n_agents", "sampler"]
SPREAD_COLUMNS = ["median", "lo", "hi", "repeats"]


def counter_spread(table: pd.DataFrame, value: str = "per_sampled_transition") -> pd.DataFrame:
    """Per (source, metric, storage, n_agents, sampler[, k]): `median`, `lo` (minimum), `hi` (maximum) of `value`
    over the repeats and `repeats` (how many rows, one per repeat, hold a value). Rows marked unavailable or
    without a value are left out; a table without a `repeat` column counts each row as one repeat. The interval
    [lo, hi] is the range over the repeats (the module docstring says why)."""
    keys = KEYS + (["k"] if "k" in table else [])
    rows = table
    if "available" in rows:
        rows = rows[rows["available"].astype(bool)]
    rows = rows[rows[value].notna()]
    if rows.empty:
        return pd.DataFrame(columns=[*keys, *SPREAD_COLUMNS])
    grouped = rows.assign(_v=rows[value].astype(float)).groupby(keys, dropna=False)["_v"]
    out = grouped.agg(median="median", lo="min", hi="max", repeats="size").reset_index()
    out["repeats"] = out["repeats"].astype(int)
    return out


def counter_difference(table: pd.DataFrame, source: str, metric: str, storage: str, n_agents: int,
                       k: int | None = None, value: str = "per_sampled_transition") -> dict | None:
    """Neighbor against uniform sampling for one counter (`source`, `metric`) on one storage and N: `uniform` and
    `neighbor` each {median, lo, hi, repeats} over the repeats (`counter_spread`), `change_pct` = 100 ·
    (neighbor median / uniform median − 1), `separated` = True when the two ranges [lo, hi] do not overlap, and
    `repeats` = the fewer repeats of the two. None when either sampler has no value. Neighbor rows of several
    window lengths need `k` to pick one (a ValueError names them otherwise)."""
    spread = counter_spread(table, value)
    sel = spread[(spread.source == source) & (spread.metric == metric) & (spread.storage == storage)
                 & (spread.n_agents == n_agents)]
    uniform = sel[sel.sampler == "uniform"]
    neighbor = sel[sel.sampler == "neighbor"]
    if k is not None and "k" in neighbor:
        neighbor = neighbor[neighbor.k == k]
    if len(neighbor) > 1:
        raise ValueError(f"counter_difference: {source} {metric} {storage} N={n_agents} has neighbor rows of k = "
                         f"{sorted(neighbor.k.tolist())}; pass k")
    if uniform.empty or neighbor.empty:
        return None
    u, nb = ({c: (int(r[c]) if c == "repeats" else float(r[c])) for c in SPREAD_COLUMNS}
             for r in (uniform.iloc[0], neighbor.iloc[0]))
    change = float(100.0 * (nb["median"] / u["median"] - 1.0)) if u["median"] else float(np.nan)
    return {"uniform": u, "neighbor": nb, "change_pct": change,
            "separated": bool(nb["hi"] < u["lo"] or u["hi"] < nb["lo"]),
            "repeats": min(u["repeats"], nb["repeats"])}


def fill_statement(counters: pd.DataFrame, n: int) -> str:
    """At what buffer fill the counters at N = `n` ran (reference storage) and whether the buffers fit in
    cachegrind's simulated last level: a buffer set no larger than the last level fits, and a miss difference cannot
    show locality there; a larger one of B bytes against a last level of L holds at most L / B of it there."""
    sel = counters[(counters["n_agents"] == n) & (counters["storage"] == "reference")]
    if "fill" not in sel or sel["fill"].dropna().empty:
        return ""
    fill = thousands(sel["fill"].dropna().iloc[0])
    text = f"; at a fill of {fill} transitions per buffer (the paper's replay holds 10^6)"
    if "storage_bytes" not in sel or "caches" not in sel or sel["storage_bytes"].dropna().empty:
        return text
    size = float(sel["storage_bytes"].dropna().median())
    last = int(json.loads(sel["caches"].dropna().iloc[0])["LL"].split(",")[0])
    held = f"cachegrind's simulated {last / 2**20:g} MiB last level"
    if size <= last:
        return f"{text}: buffers of {size / 2**20:.1f} MiB fit in {held}, so a miss difference cannot show locality"
    return (f"{text}: buffers of {size / 2**20:.1f} MiB, {size / last:.1f}x {held}, at most {100 * last / size:.0f} % "
            "of them held there")
