"""Summarise the multi-type map probe (benchmarks/probe/run_multitype.sh; benchmarks/results/qmix_multitype_maps.md).

Reads every results/multitype/<variant>/seed-<s>/ run: its evaluations (metrics.parquet where the run finished, else
the log's evaluation lines, which a run stopped early leaves), its process CPU time and peak memory (/usr/bin/time's
time.txt, or cpu.txt where a run was stopped around it). Writes <out>.csv, every evaluation (variant, seed, env
steps, test win rate, test return in SMAX's units: a reward-scaled variant's logged return / its scale) and
<out>_summary.csv, per run: the probe's map and the variant's reward scale, the last evaluation, the evidence rule's
windows (analysis/metrics/evidence.py: the win rate over the final 10 % of the evaluations against the 10 % before
halfway, learned and plateau as the rule says for one seed), CPU seconds and ms per env step, peak RSS. The paper-2
claims table reads the summary (mast_claims, role map_probe).

    python benchmarks/probe/summarise_multitype.py results/multitype --out benchmarks/results/qmix_multitype_maps
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd
import yaml

from effmarl.analysis.metrics.evidence import plateau

LINE = re.compile(r"seed (\d+) env_steps (\d+): test win rate ([\d.]+), test return ([-\d.]+)")
SCALES = {"sink": 10.0, "sink_peragent": 10.0, "reward10": 10.0, "reward10_eps50k": 10.0, "reward10_lambda": 10.0}
PROBE = Path(__file__).with_name("multitype_dense_2s3z.yaml")  # every variant's configuration (run_multitype.sh)
GRID = 5000  # the probe's evaluation interval (PROBE)
MAP = yaml.safe_load(PROBE.read_text())["env"]["map"]


def scale_of(variant: str) -> float:
    return SCALES.get(variant, 10.0 if variant.startswith("reward10") else 1.0)


def evaluations(run: Path) -> pd.DataFrame:
    """The run's evaluations: the log's lines (a run resumed at a larger budget and stopped early logs past its last
    metrics.parquet), else metrics.parquet where the log reaches no further."""
    rows = [(int(s), float(w), float(r)) for _, s, w, r in LINE.findall((run / "log.txt").read_text())]
    frame = pd.DataFrame(rows, columns=["env_steps", "test_win_rate", "test_return"])
    frame["eval_step"] = frame["env_steps"] // GRID * GRID
    frame = frame.drop_duplicates("eval_step", keep="last").sort_values("eval_step", ignore_index=True)
    if (run / "metrics.parquet").exists():
        m = pd.read_parquet(run / "metrics.parquet")
        m = m.loc[m["test_win_rate"].notna(), ["env_steps", "eval_step", "test_win_rate", "test_return"]]
        if frame.empty or m["env_steps"].max() >= frame["env_steps"].max():
            return m.copy()
    return frame


def cost(run: Path) -> dict:
    text = (run / "cpu.txt").read_text() if (run / "cpu.txt").exists() else ""
    if text:
        cpu = float(re.search(r"process CPU ([\d.]+) s", text).group(1))
        rss = int(re.search(r"VmHWM (\d+) kB", text).group(1)) / 1024
        return {"cpu_s": cpu, "peak_rss_mb": rss}
    timing = (run / "time.txt").read_text() if (run / "time.txt").exists() else ""
    user = sum(float(x) for x in re.findall(r"User time \(seconds\): ([\d.]+)", timing))
    system = sum(float(x) for x in re.findall(r"System time \(seconds\): ([\d.]+)", timing))
    rss = max([int(x) for x in re.findall(r"Maximum resident set size \(kbytes\): (\d+)", timing)] or [0]) / 1024
    return {"cpu_s": user + system if timing else float("nan"), "peak_rss_mb": rss or float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    frames, runs = [], []
    for run in sorted(Path(args.root).glob("*/seed-*")):
        if not (run / "log.txt").exists() or run.parent.name == "costs":
            continue
        variant, seed = run.parent.name, int(run.name.removeprefix("seed-"))
        ev = evaluations(run)
        ev["test_return"] = ev["test_return"] / scale_of(variant)
        ev.insert(0, "seed", seed)
        ev.insert(0, "variant", variant)
        frames.append(ev)
        runs.append({"variant": variant, "seed": seed, "map": MAP, "reward_scale": scale_of(variant),
                     "env_steps": int(ev["env_steps"].max()), **cost(run)})
    table = pd.concat(frames, ignore_index=True)
    judged = table.rename(columns={"variant": "cfg.algo", "seed": "cfg.seed"}).assign(**{"cfg.env.map": MAP})
    judged["run_id"] = judged["cfg.algo"] + "/" + judged["cfg.seed"].astype(str)
    verdict = plateau(judged, keys=("cfg.algo", "cfg.seed"))
    summary = pd.DataFrame(runs)
    summary["ms_per_step"] = 1000 * summary["cpu_s"] / summary["env_steps"]
    summary = summary.merge(verdict.rename(columns={"cfg.algo": "variant", "cfg.seed": "seed"})[
        ["variant", "seed", "final", "earlier", "rise", "learned", "plateau", "reason"]], on=["variant", "seed"])
    last = table.sort_values("env_steps").groupby(["variant", "seed"]).tail(1)[["variant", "seed", "test_win_rate",
                                                                                 "test_return"]]
    summary = summary.merge(last.rename(columns={"test_win_rate": "last_win_rate", "test_return": "last_return"}),
                            on=["variant", "seed"])
    out = Path(args.out)
    table.to_csv(out.with_suffix(".csv"), index=False, float_format="%.4f")
    summary.to_csv(out.with_name(out.name + "_summary.csv"), index=False, float_format="%.4f")
    print(summary.to_markdown(index=False, floatfmt=".3f"))


if __name__ == "__main__":
    main()
