"""Paper 1, table 7: every number the paper claims beside ours, the ratio, the run that produced ours and
its hardware. A claim the inputs do not cover reads "not measured in this profile", never a made-up value.

Inputs, named: `bench=` the sampling_bench.parquet of `effmarl sampling-bench`; `phases=` and `metrics=` the
summaries of the paper-1 training studies (any number of each). A role given no file counts as not measured."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from effmarl.analysis.common import named_inputs
from effmarl.analysis.metrics import (
    RUN_ID,
    bootstrap_ci,
    change_pct,
    final_rewards,
    grid_keys,
    paired,
    run_totals,
    steady_state,
)

CAPTION = ("Paper 1's claims beside this reproduction. Sampling: `effmarl sampling-bench` on the reference "
           "storage (openai/maddpg layout). End-to-end, reward and phase shares: training runs of the profile; "
           "times and shares after the warm-up (from each run's first update round on). "
           "'not measured in this profile' where the profile has no such run.")
NOT_MEASURED = "not measured in this profile"
INPUTS = {"bench": "sampling_bench.parquet of `effmarl sampling-bench`",
          "phases": "phases.summary.parquet of the paper-1 training studies",
          "metrics": "metrics.summary.parquet of the paper-1 training studies"}
# What a neighbor-vs-uniform pair may differ in: how transitions are drawn and stored (storages train identically).
DRAW_KEYS = {"cfg.replay.sampler", "cfg.replay.storage", "cfg.replay.neighbor_k"}


def _hardware(path: str) -> str:
    side = Path(path).with_suffix(".provenance.json")
    if side.exists():
        hw = json.loads(side.read_text()).get("hardware", {})
        return f"{hw.get('cpu_model', '?')}, {hw.get('usable_cores', '?')} cores"
    return "unknown"


def _row(claim, paper, ours, source, hardware, paper_value=None, our_value=None):
    ratio = (f"{our_value / paper_value:.2f}" if paper_value not in (None, 0) and our_value is not None else "")
    return {"claim": claim, "paper": paper, "ours": ours, "ratio ours/paper": ratio, "source": source,
            "hardware": hardware}


def sampling_rows(path: str | None) -> list[dict]:
    rows = []
    table = pd.read_parquet(path) if path else None
    for n, paper in ((3, -26.66), (12, -27.39)):
        claim = f"sampling phase, neighbor vs uniform, N={n}"
        sel = None if table is None else table[(table.storage == "reference") & (table.n_agents == n)]
        if sel is None or len(sel) < 2:
            rows.append(_row(claim, f"{paper} %", NOT_MEASURED, "", ""))
            continue
        uni = sel[sel.sampler == "uniform"].median_ms.iloc[0]
        nb = sel[sel.sampler.str.startswith("neighbor")]
        change = float(change_pct(nb.median_ms.iloc[0], uni))
        rows.append(_row(claim, f"{paper} %", f"{change:+.2f} % ({nb.sampler.iloc[0]}, reference storage)",
                         f"sampling-bench {path}", _hardware(path), paper, change))
    return rows


def reward_row(metrics: pd.DataFrame | None) -> dict:
    """Neighbor − uniform final reward, paired by study and every grid key except how transitions are drawn and
    stored (algorithm, N, seed …), with a 95 % bootstrap interval over the pairs. Reference and contiguous runs of
    one seed train identically, so storages are pooled per pair. The source cites the runs that form pairs."""
    claim, paper = "final episode reward, neighbor − uniform", "no significant degradation"
    if metrics is None or not {"uniform", "neighbor"} <= set(metrics.get("cfg.replay.sampler", [])):
        return _row(claim, paper, NOT_MEASURED, "", "")
    final = final_rewards(metrics)
    pair_keys = ["cfg.study", *[k for k in grid_keys(metrics) if k not in DRAW_KEYS | {"cfg.study"}]]
    pairs = paired(final, pair_keys, "cfg.replay.sampler", "reward", "uniform", "neighbor")
    if pairs.empty:
        return _row(claim, paper, NOT_MEASURED, "", "")
    diff = pairs["diff"].to_numpy()
    lo, hi = bootstrap_ci(diff)
    verdict = ("too few pairs for an interval" if len(diff) < 2 else
               "interval contains 0: no significant difference" if lo <= 0 <= hi else
               "significantly lower" if hi < 0 else "significantly higher")
    in_pairs = final.merge(pairs[pair_keys], on=pair_keys)
    in_pairs = in_pairs[in_pairs["cfg.replay.sampler"].isin(["uniform", "neighbor"])]
    ours = (f"{diff.mean():+.2f} (95 % CI [{lo:+.2f}, {hi:+.2f}], {len(diff)} pairs; uniform mean "
            f"{pairs['uniform'].mean():.2f}): {verdict}")
    runs = in_pairs.drop_duplicates(RUN_ID)
    return _row(claim, paper, ours, f"{len(runs)} runs in {len(diff)} pairs "
                f"({', '.join(sorted(set(runs['cfg.study'])))}); all-agent return, last 20 % of episodes", "")


def training_rows(phases: pd.DataFrame | None, metrics: pd.DataFrame | None) -> list[dict]:
    rows = []
    totals = run_totals(steady_state(phases)) if phases is not None else None
    claim = "end-to-end training time, neighbor vs uniform, N=12"
    sel = None if totals is None else totals[(totals["cfg.env.n_agents"] == 12)
                                             & (totals["cfg.replay.storage"] == "reference")]
    # neighbor vs uniform runs of one study and configuration (algorithm, seed, budget ...): a run without its
    # counterpart (e.g. paper1_scale's short uniform-only runs) would shift one side's mean
    pairs = pd.DataFrame() if sel is None or sel.empty else paired(
        sel, ["cfg.study", *[k for k in grid_keys(sel) if k not in DRAW_KEYS | {"cfg.study"}]],
        "cfg.replay.sampler", "total", "uniform", "neighbor")
    if pairs.empty:
        rows.append(_row(claim, "-10.2 %", NOT_MEASURED, "", ""))
    else:
        change = float(change_pct(pairs["neighbor"].mean(), pairs["uniform"].mean()))
        per_pair = 100.0 * (pairs["neighbor"] / pairs["uniform"] - 1.0)
        interval = ("" if len(pairs) < 2 else
                    "; per-pair change 95 % CI [{:+.1f}, {:+.1f}] %".format(*bootstrap_ci(per_pair.to_numpy())))
        studies = ", ".join(sorted(set(pairs["cfg.study"])))
        rows.append(_row(claim, "-10.2 %", f"{change:+.2f} % (mean over {len(pairs)} pairs{interval})",
                         f"{studies}: {2 * len(pairs)} runs in {len(pairs)} pairs", "", -10.2, change))
    rows.append(reward_row(metrics))
    for n, paper in ((3, 35.0), (48, 85.0)):
        claim = f"update-all-trainers share of training time, N={n}"
        sel = None if totals is None else totals[(totals["cfg.env.n_agents"] == n)
                                                 & (totals["cfg.replay.storage"] == "reference")
                                                 & (totals["cfg.replay.sampler"] == "uniform")]
        if sel is None or sel.empty or sel.total.sum() == 0:
            rows.append(_row(claim, f"≈{paper:.0f} %", NOT_MEASURED, "", ""))
            continue
        share = 100 * sel["update"].sum() / sel["total"].sum()
        rows.append(_row(claim, f"≈{paper:.0f} %", f"{share:.1f} % (reference/uniform)",
                         f"{', '.join(sorted(set(sel['cfg.study'])))}: {len(sel)} runs", "", paper, share))
    return rows


def make(inputs: list[str]) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, "table paper1_claims", required=False)
    bench = named["bench"][0] if named["bench"] else None
    phases = pd.concat([pd.read_parquet(p) for p in named["phases"]], ignore_index=True) if named["phases"] else None
    metrics = (pd.concat([pd.read_parquet(p) for p in named["metrics"]], ignore_index=True) if named["metrics"]
               else None)
    rows = sampling_rows(bench) + training_rows(phases, metrics)
    from effmarl.provenance import hardware

    hw = hardware()
    for r in rows:
        if r["ours"] != NOT_MEASURED and not r["hardware"]:
            r["hardware"] = f"{hw['cpu_model']}, {hw['usable_cores']} cores"
    return pd.DataFrame(rows)
