"""Issue 35's breakdown at one sparsity: per configuration (method and which of MAST's value-learning components it
trains with), each seed's final win rate (paper 2's statistic, `metrics.mast.final_win_rate`), their mean with its
Student-t interval, mean / dense with Fieller's interval, and the value estimate against what was obtained:

    bias = q_taken_mean - return_mean,

the mean Q_tot of the taken actions minus the mean discounted return that the same replayed steps went on to obtain
(`Learner.loss`), both averaged over the training rows of the final 10 % of env steps, then over seeds (paper 2's
mechanism: sparse networks' targets over-estimate, Soft Mellowmax, hybrid TD(λ) and the dual buffer repair them).
Runs come from any number of results directories (the probe's, the breakdown's, the default profile's); a run counts
once it has its provenance.json; a (configuration, seed) trained in several directories counts once, from the first
directory given. Dense is the reference of every ratio (the dense runs found, any sparsity).

    python benchmarks/probe/summarise_breakdown.py results/default results/breakdown results/rigl_plus results/probe \
        --sparsity 0.99 --out benchmarks/results/breakdown_099_3m
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from effmarl.analysis.aggregate import run_table
from effmarl.analysis.metrics.mast import final_win_rate
from effmarl.analysis.metrics.stats import mean_interval, ratio_interval
from effmarl.components import mast_components, switch_field

NAMES = {"mast": "MAST", "static": "SS", "set": "SET", "rigl": "RigL", "dense": "Dense", "tiny": "Tiny",
         "rlx2": "RLx2"}
COMPONENTS = {"soft_mellowmax": "Soft Mellowmax", "td_lambda": "hybrid TD(λ)", "dual_buffer": "dual buffer"}
FINAL = 0.9  # the value statistics' window: env steps from 90 % of the budget on
TOLERANCE = 0.97


def one_run(run: Path) -> dict:
    frame = run_table(run / "metrics.parquet")
    cfg = frame.iloc[0]
    late = frame[(frame["env_steps"] >= FINAL * float(cfg["cfg.budget.env_steps"]))
                 & frame["q_taken_mean"].notna()]
    row = {"run": f"{run.parent.parent.name}/{run.parent.name}/{run.name}", "method": cfg["cfg.sparse.method"],
           "sparsity": 0.0 if cfg["cfg.sparse.method"] == "dense" else float(cfg["cfg.sparse.sparsity"]),
           "seed": int(cfg["cfg.seed"]), "delta_m": int(cfg["cfg.sparse.delta_m"]),
           "win_rate": float(final_win_rate(frame)["win_rate"].iloc[0]), "commit": str(cfg["git_commit"])[:7],
           "q_taken": late["q_taken_mean"].mean() if len(late) else np.nan,
           "return": late["return_mean"].mean() if "return_mean" in late and len(late) else np.nan}
    on = mast_components({"sparse": {"method": cfg["cfg.sparse.method"]},
                          **{section: switches for section, switches in _switches(cfg).items()}})
    row.update({name: on[part] for part, name in COMPONENTS.items()})
    # Soft Mellowmax's (α, ω) as the run applied them: the config's times its schedule's operator_scale (runs before
    # schedules.operator_scale applied the config's as given)
    scale = float(frame["operator_scale"].iloc[0]) if "operator_scale" in frame else 1.0
    sm = (scale * float(cfg["cfg.mellowmax.alpha"]), scale * float(cfg["cfg.mellowmax.omega"]))
    row["sm"] = f"α {sm[0]:g}, ω {sm[1]:g} applied" if on["soft_mellowmax"] else ""
    return row


def _switches(cfg: pd.Series) -> dict:
    """The components' `enabled` switches as a nested config (NaN or None: unset, the part follows the method)."""
    out: dict = {}
    for part in COMPONENTS:
        field = "cfg." + switch_field(part)
        value = cfg.get(field)
        value = None if value is None or (isinstance(value, float) and np.isnan(value)) else bool(value)
        *path, last = switch_field(part).split(".")
        node = out
        for key in path:
            node = node.setdefault(key, {})
        node[last] = value
    return out


def runs_in(roots: list[Path]) -> tuple[pd.DataFrame, list[str]]:
    rows, unfinished = [], []
    for root in roots:
        for config in sorted(root.glob("*/*/config.yaml")):
            run = config.parent
            if (run / "provenance.json").is_file() and (run / "metrics.parquet").is_file():
                rows.append(one_run(run))
            elif run.parent.name not in ("logs", "benchmarks"):
                unfinished.append(f"{root.name}/{run.parent.name}/{run.name}")
    runs = pd.DataFrame(rows)
    if len(runs):  # one result per (configuration, seed), from the first directory given: the same seed trained in
        # another process (2 vs 3 seeds in lockstep) gives another result (SET 0.99 seed 0: 0.439 vs 0.366), correlated
        # with it (same initial weights and environment seeds), so it is not a further seed
        runs = runs.drop_duplicates([*KEYS, "seed"], keep="first")
    return runs, unfinished


KEYS = ["method", "sparsity", "delta_m", *COMPONENTS.values(), "sm"]


def label(r) -> str:
    name = NAMES.get(r["method"], r["method"])
    on = [c for c in COMPONENTS.values() if r[c]]
    if r["method"] == "mast":
        off = [c for c in COMPONENTS.values() if not r[c]]
        name += "".join(f" − {c}" for c in off)
    elif r["method"] != "dense" and on:
        name += "".join(f" + {c}" for c in on)
    name += f" ({r['sm']})" if r["sm"] else ""
    return name + (f" (Δm {r['delta_m']})" if r["method"] != "dense" and r["delta_m"] != 200 else "")


def table(runs: pd.DataFrame, sparsity: float) -> pd.DataFrame:
    dense = runs[runs["method"] == "dense"].sort_values("seed")
    ref = dense["win_rate"].to_numpy(dtype=float)
    cells = pd.concat([dense, runs[np.isclose(runs["sparsity"], sparsity)]])
    rows = []
    for _, group in cells.groupby(KEYS, sort=False, dropna=False):
        group = group.sort_values("seed")
        v = group["win_rate"].to_numpy(dtype=float)
        first = group.iloc[0]
        is_dense = first["method"] == "dense"
        lo, hi = (np.nan, np.nan) if is_dense or len(ref) < 2 else ratio_interval(v, ref)
        verdict = ("" if is_dense or np.isnan(lo) else "falls below dense" if hi < TOLERANCE
                   else "holds (within 3 %)" if lo >= TOLERANCE else "undecided")
        bias = (group["q_taken"] - group["return"]).to_numpy(dtype=float)
        rows.append({"configuration": label(first), "sparsity": first["sparsity"], "seeds": len(v), "values": v,
                     "biases": bias,
                     "per_seed": ", ".join(f"{x:.3f}" for x in v), "mean": v.mean(),
                     "interval": mean_interval(v) if len(v) > 1 else (np.nan, np.nan),
                     "ratio": v.mean() / ref.mean() if len(ref) else np.nan, "ratio_interval": (lo, hi),
                     "verdict": verdict, "q_taken": group["q_taken"].mean(), "return": group["return"].mean(),
                     "bias": np.nanmean(bias) if np.isfinite(bias).any() else np.nan,
                     "bias_seeds": int(np.isfinite(bias).sum())})
    return pd.DataFrame(rows)


def versus(frame: pd.DataFrame, reference: str) -> str:
    """Each configuration's mean win rate over `reference`'s with Fieller's 95 % interval (stats.ratio_interval), and
    the per-seed Q − return of both: a markdown table."""
    ref = frame[frame["configuration"] == reference]
    if ref.empty:
        return f"(no configuration '{reference}' to compare with)"
    ref = ref.iloc[0]
    lines = [f"Against {reference} (per seed Q − return: {', '.join(f'{b:+.3f}' for b in ref['biases'])}):", "",
             f"| configuration | / {reference} [95 % Fieller] | per seed Q − return |", "|---|---|---|"]
    for _, r in frame[frame["configuration"] != reference].iterrows():
        lo, hi = ratio_interval(r["values"], ref["values"])
        ratio = r["values"].mean() / ref["values"].mean()
        span = " (unbounded: a mean within its own interval of 0)" if np.isnan(lo) else f" [{lo:.3f}, {hi:.3f}]"
        lines.append(f"| {r['configuration']} | {ratio:.3f}{span} | "
                     f"{', '.join(f'{b:+.3f}' for b in r['biases'] if np.isfinite(b))} |")
    return "\n".join(lines)


def markdown(frame: pd.DataFrame, runs: pd.DataFrame, unfinished: list[str]) -> str:
    def pair(x):
        return "" if np.isnan(x[0]) else f"[{x[0]:.3f}, {x[1]:.3f}]"

    def num(x):
        return "" if np.isnan(x) else f"{x:.3f}"

    lines = ["| configuration | sparsity | seeds | per seed | mean [95 % t] | / dense [95 % Fieller] | verdict | "
             "Q (taken) | return obtained | Q − return (seeds) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in frame.itertuples():
        lines.append(f"| {r.configuration} | {r.sparsity:.2f} | {r.seeds} | {r.per_seed} | {r.mean:.3f} "
                     f"{pair(r.interval)} | {num(r.ratio)} {pair(r.ratio_interval)} | {r.verdict} | {num(r.q_taken)} | "
                     f"{num(r.return_)} | {num(r.bias)} ({r.bias_seeds}) |")
    commits = ", ".join(sorted(set(runs["commit"]))) or "none"
    left = ", ".join(unfinished) or "none"
    return "\n".join([*lines, "", f"Runs trained at commit(s) {commits}; not finished: {left}."])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="results directories (results/probe, results/breakdown, ...)")
    parser.add_argument("--sparsity", type=float, default=0.99, help="the sparsity of the breakdown (default 0.99)")
    parser.add_argument("--out", required=True, help="output stem: writes <out>.csv (per run) and <out>_table.md")
    parser.add_argument("--versus", help="a configuration label: every other one's win rate over it (Fieller)")
    args = parser.parse_args()
    runs, unfinished = runs_in([Path(r) for r in args.results])
    frame = table(runs, args.sparsity).rename(columns={"return": "return_"})
    runs.to_csv(f"{args.out}.csv", index=False)
    text = markdown(frame, runs, unfinished)
    if args.versus:
        text += "\n\n" + versus(frame, args.versus)
    Path(f"{args.out}_table.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
