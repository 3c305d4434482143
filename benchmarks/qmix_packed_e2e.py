"""End to end: the same QMIX-family training run through different learner unrolls, side by side in one process: the
packed learner unroll (the default) and the padded one (bench.unrolls.padded_unroll, every step of a batch cut to
its longest episode). (Its compiled path, a jitted JAX update, is gone with the update itself; the run of it,
benchmarks/results/qmix_compiled_e2e.md, was made by the version at commit 5e40a92.)

    python benchmarks/qmix_packed_e2e.py --config RUN.yaml --out benchmarks/results/qmix_packed_e2e [--repeats 1]
        [--paths padded packed]

Each repeat trains the run once per path (in the order given, alternating), each into a fresh temporary run
directory, with one torch thread; it records wall and CPU seconds (all threads of the process: JAX may use more
than one core), the learner phases, updates, the final test win rate, and the padding share of the batches the
learner saw. `effmarl bench qmix --only update` measures one update on
a buffer of random play; this measures a whole run, where a learned policy's batches are padded differently.
Writes <out>.csv and <out>.md (with the command and the machine)."""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch

from effmarl import config, provenance, train
from effmarl.bench.unrolls import every_agent, padded_unroll
from effmarl.replay import episode

PATHS = {"padded": lambda: every_agent(padded_unroll), "packed": contextlib.nullcontext}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--paths", nargs="+", choices=list(PATHS), default=["padded", "packed"])
    args = parser.parse_args()
    cfg = {**config.load_run_config(args.config), "threads": 1}
    torch.set_num_threads(1)
    seen = {"alive": 0, "rows": 0}
    gather = episode.EpisodeBuffer.gather

    def counting_gather(self, idx):  # the padding share of every sampled batch
        batch = gather(self, idx)
        alive, rows = episode.state_rows(batch["filled"])
        seen["alive"] += alive
        seen["rows"] += rows
        return batch

    episode.EpisodeBuffer.gather = counting_gather
    rows = []
    with tempfile.TemporaryDirectory(prefix="effmarl-packed-e2e-") as tmp:
        for repeat in range(args.repeats):
            for path in args.paths:
                seen.update(alive=0, rows=0)
                start, cpu = time.perf_counter(), time.process_time()
                with PATHS[path]():
                    rundir = train.train(cfg, str(Path(tmp) / f"{path}-{repeat}"))
                wall, cpu = time.perf_counter() - start, time.process_time() - cpu
                metrics = pd.read_parquet(rundir.path / "metrics.parquet")
                phases = pd.read_parquet(rundir.path / "phases.parquet").groupby("phase")["seconds"].sum()
                rows.append({"repeat": repeat, "path": path, "wall_s": wall, "cpu_s": cpu,
                             "learner_s": phases.get("learner_forward", 0) + phases.get("learner_backward", 0),
                             "acting_s": phases.get("acting", 0), "updates": int(metrics["updates"].iloc[-1]),
                             "alive_share": seen["alive"] / max(1, seen["rows"]),
                             "final_test_win_rate": float(metrics["test_win_rate"].iloc[-1])})
    table = pd.DataFrame(rows)
    base = table[table.path == args.paths[0]].set_index("repeat")
    for column in ("learner_s", "wall_s", "cpu_s"):  # the first path ÷ this path, within one repeat
        table[column.replace("_s", "_speedup")] = table["repeat"].map(base[column]) / table[column]
    rec = provenance.record()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out.with_suffix(".csv"), index=False)
    out.with_suffix(".md").write_text(
        f"# Learner paths {' vs '.join(args.paths)}, one whole run each ({cfg['algo']}, {cfg['sparse']['method']}, "
        f"SMAX "
        f"{cfg['env']['map']}, {cfg['budget']['env_steps']} env steps, 1 thread)\n\n{rec['hardware']['cpu_model']}, "
        f"commit {rec['git']['commit']}; command: `python benchmarks/qmix_packed_e2e.py --config {args.config} "
        f"--out {args.out} --repeats {args.repeats} --paths {' '.join(args.paths)}`\n\n"
        + table.to_markdown(index=False, floatfmt=".3g") + "\n")
    print(table.to_string())


if __name__ == "__main__":
    main()
