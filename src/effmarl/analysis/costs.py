"""`effmarl costs`: what a finished workflow run cost, from the benchmark file Snakemake wrote for every job.

Every compute rule declares `benchmark:` (workflow/rules/*.smk), so each job leaves a tab-separated line of its wall
seconds (`s`), peak resident memory (`max_rss`, MB) and CPU seconds (`cpu_time`). This sums them by kind of job:
training per study (`<results>/<study>/<run>/train.benchmark.tsv` and `<results>/<study>/benchmarks/<group>.tsv` for
several runs in one process, interleaved pairs included), the paper-1 micro-measurements, the `effmarl bench` sections,
study tables (aggregate), and figures and tables. Job seconds add up over jobs that may have run side by side, so their
total is core-seconds of work, not the workflow's wall time (measure that around `snakemake` itself, e.g.
`/usr/bin/time -v snakemake --cores all`, and pass it with --wall-s to have it in the table). A training kind also
counts its study's runs (run directories holding the `provenance.json` a finished run writes): with several runs in one
process (runs_per_process) a job is not a run.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

COPIED = "copied runs (reuse)"  # runs copied from a run that trained the same thing (effmarl.reuse), not trained


def _kind(path: Path, results: Path, figures: Path) -> str:
    if path.name == "train.benchmark.tsv":
        return f"training: {path.relative_to(results).parts[0]}"
    if path.name == "reuse.benchmark.tsv":
        return COPIED
    if path.is_relative_to(figures):
        rel = path.relative_to(figures)
        if rel.parts[0] == "bench":
            return f"benchmark: {path.name.split('.')[0]}"
        if path.name.endswith(".figure.tsv"):
            return "figures"
        if path.name.endswith(".table.tsv"):
            return "tables"
        return "figure index"
    rel = path.relative_to(results)
    if rel.parts[0] == "paper1_micro":
        return f"paper 1 micro: {path.stem}"
    if path.name.endswith(".summary.tsv"):
        return "study tables (aggregate)"
    if path.parent.name == "benchmarks" and path.stem.startswith(("batch_", "lockstep_", "pairs_")):
        return f"training: {rel.parts[0]}"
    return "other"


def collect(results: str | Path, figures: str | Path) -> pd.DataFrame:
    """One row per benchmark file under `results` and `figures`: kind, path, s, max_rss, cpu_time."""
    results, figures = Path(results).resolve(), Path(figures).resolve()
    files = sorted({*results.rglob("*.tsv"), *figures.rglob("*.tsv")})
    rows = []
    for path in files:
        if path.name.endswith(".benchmark.tsv") or path.parent.name in ("benchmarks", "logs"):
            table = pd.read_csv(path, sep="\t")
            if not {"s", "max_rss", "cpu_time"} <= set(table.columns):
                continue  # a tab-separated file that is not a Snakemake benchmark
            last = table.iloc[-1]  # the latest attempt of the job
            rows.append({"kind": _kind(path, results, figures), "path": str(path), "s": float(last["s"]),
                         "max_rss_mb": float(last["max_rss"]) if pd.notna(last["max_rss"]) else 0.0,
                         "cpu_s": float(last["cpu_time"]) if pd.notna(last["cpu_time"]) else 0.0})
    return pd.DataFrame(rows, columns=["kind", "path", "s", "max_rss_mb", "cpu_s"])


def finished_runs(results: str | Path) -> dict[str, int]:
    """Training kind -> how many runs of that study finished training here (run directories with a provenance.json;
    a run copied from another, effmarl.reuse, is counted under COPIED)."""
    import json

    counts: dict[str, int] = {}
    for path in Path(results).glob("*/*/provenance.json"):
        copied = "reused_from" in json.loads(path.read_text())
        kind = COPIED if copied else f"training: {path.parent.parent.name}"
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def summary(jobs: pd.DataFrame, runs: dict[str, int] | None = None) -> pd.DataFrame:
    """Per kind: jobs, runs (training kinds: `runs`, else one per job; 0 for other kinds), job seconds, share of all
    job seconds, the longest job and the largest peak memory."""
    grouped = jobs.groupby("kind").agg(jobs=("s", "size"), job_s=("s", "sum"), longest_s=("s", "max"),
                                       peak_rss_mb=("max_rss_mb", "max")).reset_index()
    training = grouped["kind"].str.startswith("training: ") | (grouped["kind"] == COPIED)
    grouped["runs"] = [((runs or {}).get(k) or n) if t else 0
                       for k, n, t in zip(grouped["kind"], grouped["jobs"], training, strict=True)]
    grouped["share_pct"] = 100.0 * grouped["job_s"] / grouped["job_s"].sum()
    grouped = grouped.sort_values("job_s", ascending=False)
    total = pd.DataFrame([{"kind": "all jobs", "jobs": len(jobs), "runs": int(grouped["runs"].sum()),
                           "job_s": jobs["s"].sum(), "longest_s": jobs["s"].max(),
                           "peak_rss_mb": jobs["max_rss_mb"].max(), "share_pct": 100.0}])
    return pd.concat([grouped, total], ignore_index=True)[["kind", "jobs", "runs", "job_s", "share_pct", "longest_s",
                                                          "peak_rss_mb"]]


def write(results: str, figures: str, out: str, wall_s: float | None = None, note: str = "") -> list[Path]:
    from effmarl import io, provenance
    from effmarl.config import ConfigError

    missing = [f"{name} {path}: not a directory" for name, path in (("--results", results), ("--figures", figures))
               if not Path(path).is_dir()]
    if missing:
        raise ConfigError(missing, "effmarl costs")
    jobs = collect(results, figures)
    if jobs.empty:
        raise ConfigError([f"--results {results}: no Snakemake benchmark files (a finished workflow run)"],
                          "effmarl costs")
    table = summary(jobs, finished_runs(results))
    caption = ("What the workflow run cost: per kind of job, the jobs, their seconds summed (core-seconds of work, "
               "not wall time), their share, the longest job and the largest peak memory, from Snakemake's "
               f"benchmark files. {note}").rstrip()
    rec = provenance.record(inputs=jobs["path"].tolist(), extra={"kind": "costs", "name": "costs", "caption": caption,
                                                                 "wall_s": wall_s, "note": note})
    hw = rec["hardware"]
    lines = [f"# What the workflow run cost: {results}", "",
             f"Machine: {hw['cpu_model']}, {hw['usable_cores']} usable cores, {hw['memory_gib']} GiB. {note}".rstrip(),
             ""]
    if wall_s is not None:
        lines += [f"Wall time of the whole run: {wall_s / 60:.1f} min ({wall_s:.0f} s); its jobs together: "
                  f"{jobs['s'].sum() / 60:.1f} job-minutes, largest peak memory of one job "
                  f"{jobs['max_rss_mb'].max() / 1024:.2f} GB.", ""]
    lines += ["Job seconds add up over jobs that ran side by side (core-seconds of work, not wall time).", "",
              table.to_markdown(index=False, floatfmt=".1f")]
    out = Path(out)
    return [io.write_text(out.with_suffix(".csv"), table.to_csv(index=False)),
            io.write_text(out.with_suffix(".md"), "\n".join(lines) + "\n"),
            io.write_json(out.with_suffix(".provenance.json"), rec)]
