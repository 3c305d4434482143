"""Paper 1, table 7: every number the paper claims beside ours, the ratio, the run that produced ours and
its hardware. A claim the inputs do not cover reads "not measured in this profile", never a made-up value.

Inputs (any order, recognised by name): `sampling_bench.parquet` (effmarl sampling-bench),
`phases.summary.parquet` and `metrics.summary.parquet` of the paper-1 studies."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from effmarl.analysis.figures.paper1_phases import RUN_KEYS, run_totals, steady_state
from effmarl.analysis.figures.paper1_rewards import bootstrap_ci, final_rewards

CAPTION = ("Paper 1's claims beside this reproduction. Sampling: `effmarl sampling-bench` on the reference "
           "storage (openai/maddpg layout). End-to-end, reward and phase shares: training runs of the profile; "
           "times and shares after the warm-up (from each run's first update round on). "
           "'not measured in this profile' where the profile has no such run.")
NOT_MEASURED = "not measured in this profile"


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
        change = 100 * (nb.median_ms.iloc[0] / uni - 1)
        rows.append(_row(claim, f"{paper} %", f"{change:+.2f} % ({nb.sampler.iloc[0]}, reference storage)",
                         f"sampling-bench {path}", _hardware(path), paper, change))
    return rows


def reward_row(metrics: pd.DataFrame | None) -> dict:
    """Neighbor − uniform final reward, paired by (study, algorithm, N, seed), with a 95 % bootstrap interval over the
    pairs. Reference and contiguous runs of one seed train identically, so storages are pooled per pair."""
    claim, paper = "final episode reward, neighbor − uniform", "no significant degradation"
    pair_keys = ["cfg.study", "cfg.algo", "cfg.env.n_agents", "cfg.seed"]
    pairs = pd.DataFrame()
    if metrics is not None and {"uniform", "neighbor"} <= set(metrics.get("cfg.replay.sampler", [])):
        final = final_rewards(metrics, ["run_id", "cfg.replay.sampler", *pair_keys]).reset_index()
        pairs = final.pivot_table(index=pair_keys, columns="cfg.replay.sampler", values="reward").dropna()
    if pairs.empty:
        return _row(claim, paper, NOT_MEASURED, "", "")
    diff = (pairs["neighbor"] - pairs["uniform"]).to_numpy()
    lo, hi = bootstrap_ci(diff[:, None])
    verdict = ("interval contains 0: no significant difference" if lo[0] <= 0 <= hi[0] else
               "significantly lower" if hi[0] < 0 else "significantly higher")
    ours = (f"{diff.mean():+.2f} (95 % CI [{lo[0]:+.2f}, {hi[0]:+.2f}], {len(diff)} pairs; uniform mean "
            f"{pairs['uniform'].mean():.2f}): {verdict}")
    return _row(claim, paper, ours, f"{final.run_id.nunique()} runs; all-agent return, last 20 % of episodes", "")


def training_rows(phases: pd.DataFrame | None, metrics: pd.DataFrame | None) -> list[dict]:
    rows = []
    totals = (run_totals(steady_state(phases), ["cfg.study", *RUN_KEYS, "run_id"]) if phases is not None
              else None)
    claim = "end-to-end training time, neighbor vs uniform, N=12"
    sel = None if totals is None else totals[(totals["cfg.env.n_agents"] == 12)
                                             & (totals["cfg.replay.storage"] == "reference")]
    if sel is None or set(sel["cfg.replay.sampler"]) < {"uniform", "neighbor"}:
        rows.append(_row(claim, "-10.2 %", NOT_MEASURED, "", ""))
    else:
        m = sel.groupby("cfg.replay.sampler")["total"].mean()
        change = 100 * (m["neighbor"] / m["uniform"] - 1)
        rows.append(_row(claim, "-10.2 %", f"{change:+.2f} % (mean over runs)",
                         f"{', '.join(sorted(set(sel['cfg.study'])))}: {len(sel)} runs", "", -10.2, change))
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
    bench = next((p for p in inputs if Path(p).name.startswith("sampling_bench")), None)
    phases = [pd.read_parquet(p) for p in inputs if Path(p).name == "phases.summary.parquet"]
    metrics = [pd.read_parquet(p) for p in inputs if Path(p).name == "metrics.summary.parquet"]
    rows = sampling_rows(bench) + training_rows(pd.concat(phases, ignore_index=True) if phases else None,
                                                pd.concat(metrics, ignore_index=True) if metrics else None)
    from effmarl.provenance import hardware

    hw = hardware()
    for r in rows:
        if r["ours"] != NOT_MEASURED and not r["hardware"]:
            r["hardware"] = f"{hw['cpu_model']}, {hw['usable_cores']} cores"
    return pd.DataFrame(rows)
