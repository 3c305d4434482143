"""Carry a workflow's finished work from one results tree to another: the complete runs and the benchmark records of
the jobs that made them, never a run still training.

A profile that takes longer than one machine is held (a cloud instance that is given back, a cluster's scratch that
is purged) resumes on the next one from what was finished: `effmarl carry-runs --from results --to SAVED` keeps it,
and `effmarl carry-runs --from SAVED --to results` puts it back before the same `snakemake` command runs again.
Snakemake has no such step (its `--archive` packs a workflow's code, not its results), hence this module.

What travels, from each run directory (one holding config.yaml) that is complete (its provenance.json written,
the file training writes last): its files, not its `checkpoint/` (the resumable state of a run still training,
hundreds of MB for an off-policy learner's replay buffer; a complete run no longer needs it). From each study,
the Snakemake benchmark records under `benchmarks/` (written when a job ends, so only finished jobs have one):
`effmarl costs` reads them. A run whose provenance.json cannot be read is refused, not carried; a run the
destination already holds with another provenance (another training of it) is refused before anything is copied.

The copies' modification times are set so that Snakemake sees each run finished: its configuration (the train
rule's input) a second older than what training wrote, and everything training wrote at one time, the same for every
run (a run copied from another, `effmarl reuse-run`, has the source's provenance.json as an input: not newer).

Not carried: figures and tables (the workflow makes them again from the runs), and so the runs of a study whose
sparsity the MAST selection decides (`sparsity_from: selection`) train again, their configuration being made from
the selection table; the default and extended profiles have none.

Plain Python (no torch).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from effmarl.config import ConfigError

INPUTS = ("config.yaml", "config.log")  # what the workflow wrote before training: older than its outputs


def _provenance(run: Path) -> dict:
    path = run / "provenance.json"
    try:
        prov = json.loads(path.read_text())
        if not isinstance(prov, dict):
            raise ValueError
        return prov
    except (ValueError, OSError):
        raise ConfigError([f"{path}: unreadable provenance (a damaged run); remove the run or train it again"],
                          "effmarl carry-runs") from None


def plan(src: str | Path, dest: str | Path) -> tuple[list[Path], list[Path], list[str]]:
    """(complete runs of `src` to copy, benchmark records to copy, runs left behind: still training), relative to
    `src`; runs `dest` already holds identically are left out. Refuses a damaged run and a run `dest` holds with
    another provenance."""
    src, dest = Path(src), Path(dest)
    if not src.is_dir():
        raise ConfigError([f"--from {src}: no such directory"], "effmarl carry-runs")
    runs, records, training, problems = [], [], [], []
    for config in sorted(src.rglob("config.yaml")):
        run = config.parent
        rel = run.relative_to(src)
        if "checkpoint" in rel.parts:
            continue
        if not (run / "provenance.json").is_file():
            training.append(str(rel))
            continue
        ours = _provenance(run)
        there = dest / rel / "provenance.json"
        if there.is_file():
            if _provenance(dest / rel) == ours:
                continue
            problems.append(f"{dest / rel}: holds another training of this run than {run}; remove one of them")
            continue
        runs.append(rel)
    for record in sorted(src.rglob("benchmarks/*.tsv")):
        rel = record.relative_to(src)
        target = dest / rel
        if not (target.is_file() and target.read_bytes() == record.read_bytes()):
            records.append(rel)
    if problems:
        raise ConfigError(problems, "effmarl carry-runs")
    return runs, records, training


def carry(src: str | Path, dest: str | Path) -> tuple[list[Path], list[Path], list[str]]:
    """Copy what `plan` names from `src` to `dest` (module doc); returns `plan`'s answer."""
    src, dest = Path(src), Path(dest)
    runs, records, training = plan(src, dest)
    now = time.time()
    for rel in runs:
        out = dest / rel
        out.mkdir(parents=True, exist_ok=True)
        files = sorted(p for p in (src / rel).iterdir() if p.is_file() and not p.name.startswith("."))
        # provenance.json last, as training writes it: a copy cut off midway is not a complete run
        for path in sorted(files, key=lambda p: p.name == "provenance.json"):
            shutil.copyfile(path, out / path.name)
            stamp = now - 1 if path.name in INPUTS else now  # one time for all outputs: a copied run's (reuse)
            os.utime(out / path.name, (stamp, stamp))
    for rel in records:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, dest / rel)
    return runs, records, training
