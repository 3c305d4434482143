"""A training run's marginal cost per env step, in process CPU seconds, measured on a shared machine (issue 45: what
OW-QMIX, RES-QMIX and the SMAX maps cost beside QMIX on 3m, to price the extended profile; results in
benchmarks/results/qmix_multitype_maps.md).

Starts `effmarl train --config CONFIG --out OUT --set threads=1` (as the workflow runs it) at low priority, samples
the process's CPU time (user + system, /proc/<pid>/stat) and the env steps of its last logged evaluation every few
seconds, and stops it (SIGTERM: it saves its checkpoint and exits) once it has logged --to env steps. The cost per
env step is the least-squares slope of CPU seconds over env steps between --from and --to (start-up, compilation
and the first rounds left out); CPU time, unlike wall time, hardly depends on what runs beside. Peak memory is the
process's VmHWM. Appends one row to --csv:

    python benchmarks/probe/marginal_cost.py --config C.yaml --out results/multitype/costs/NAME --name NAME \\
        --from 20000 --to 80000 --csv benchmarks/results/qmix_multitype_costs.csv
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import yaml

STEPS = re.compile(r"env_steps (\d+):")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def last_steps(log: Path) -> int | None:
    if not log.exists():
        return None
    found = STEPS.findall(log.read_text(errors="replace"))
    return int(found[-1]) if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--from", dest="start", type=int, default=20_000)
    parser.add_argument("--to", dest="stop", type=int, default=80_000)
    parser.add_argument("--every", type=float, default=5.0, help="seconds between samples")
    parser.add_argument("--csv", required=True)
    args = parser.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = out / "log.txt"
    env = {**os.environ, "EFFMARL_NO_PROGRESS": "1"}
    with log.open("a") as sink:
        proc = subprocess.Popen(["nice", "-n", "5", "effmarl", "train", "--config", args.config, "--out", str(out),
                                 "--set", "threads=1"], stdout=sink, stderr=subprocess.STDOUT, env=env)
    pid = proc.pid  # nice execs effmarl: the same process
    samples, rss, seen = [], 0.0, None
    while proc.poll() is None:
        try:
            cpu, rss = cpu_seconds(pid), max(rss, peak_rss_mb(pid))
        except (FileNotFoundError, ProcessLookupError):
            break
        steps = last_steps(log)
        if steps is not None and steps != seen:
            samples.append((steps, cpu))
            seen = steps
        if steps is not None and steps >= args.stop:
            os.kill(pid, signal.SIGTERM)
            break
        time.sleep(args.every)
    proc.wait()
    points = np.array([(s, c) for s, c in samples if args.start <= s <= args.stop])
    slope = float(np.polyfit(points[:, 0], points[:, 1], 1)[0]) if len(points) >= 3 else float("nan")
    cfg = yaml.safe_load(Path(args.config).read_text())
    row = {"name": args.name, "algo": cfg["algo"], "map": cfg["env"]["map"],
           "method": cfg.get("sparse", {}).get("method", "dense"), "sparsity": cfg.get("sparse", {}).get("sparsity"),
           "from_steps": int(points[0, 0]) if len(points) else None,
           "to_steps": int(points[-1, 0]) if len(points) else None, "samples": len(points),
           "cpu_ms_per_step": round(1000 * slope, 4), "peak_rss_mb": round(rss, 1),
           "cpu_s_total": round(samples[-1][1], 1) if samples else None}
    path = Path(args.csv)
    new = not path.exists()
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)
    print(row)


if __name__ == "__main__":
    main()
