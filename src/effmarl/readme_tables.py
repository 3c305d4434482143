"""`effmarl readme-tables`: the tables README.md and docs/ quote from `published/`, regenerated from the files.

A Markdown file marks each generated block with a pair of comments naming it:

    <!-- published:paper1-claims -->
    ... (everything in between is replaced) ...
    <!-- /published:paper1-claims -->

and `effmarl readme-tables README.md docs/results.md docs/costs.md` rewrites every block from the published CSV
tables and their `.provenance.json` sidecars under `--published` (the default profile's, published/default);
`--check` only reports the files whose blocks differ, and exits 1. A block named `NAME@PROFILE`
(`<!-- published:paper2-claims@extended -->`) renders block NAME from that profile's published directory beside
`--published` (`published/<profile>`), so another profile's tables are quoted by the same code. Links in a block are
relative to the file it is written into. tests/test_docs.py fails when a block differs from what this would write,
so a number quoted from `published/` cannot drift from the file it comes from.

Blocks (BLOCKS): `paper1-claims`, `paper2-claims` (claim, paper, ours), `paper2-table1` (Table 1 of the default
profile), `default-costs` (what each part of the default profile cost, from `effmarl costs` tables),
`profile-costs` (one profile's costs table, as `profile-costs@PROFILE`) and `paper2-sparse-inference` (each sparse
inference form's speed against dense, from `effmarl bench sparse`).
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

from effmarl import io
from effmarl.config import ConfigError

NAME = r"[a-z0-9-]+(?:@[a-z0-9-]+)?"  # a block, or block@profile
MARKER = re.compile(rf"<!-- published:({NAME}) -->\n(.*?)<!-- /published:\1 -->", re.S)
OPEN = re.compile(rf"<!-- published:({NAME}) -->")


class Block:
    """What one block is made from and how: `render(read, link)`, where `read(rel)` loads a published file and
    `link(rel)` is the path to it from the Markdown file being written."""

    def __init__(self, sources: tuple[str, ...], render: Callable):
        self.sources, self.render = sources, render


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(text.splitlines()))


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _measured(prov: dict) -> str:
    hw = prov.get("hardware") or {}
    commit = ((prov.get("git") or {}).get("commit") or "unknown")[:7]
    return (f"{hw.get('cpu_model', 'unknown CPU')} ({hw.get('usable_cores', '?')} cores); table made "
            f"{(prov.get('finished_at') or '?')[:10]} at commit {commit}")


def _claims(stem: str) -> Callable:
    def render(read, link) -> str:
        rows = _rows(read(f"{stem}.csv"))
        prov = json.loads(read(f"{stem}.provenance.json"))
        body = _table(["claim", "paper", "ours"], [[r["claim"], r["paper"], r["ours"]] for r in rows])
        return (f"{body}\n\nMeasured on {_measured(prov)}. The runs, ratios and caveats of each row: "
                f"[`{stem}.md`]({link(stem + '.md')}).\n")
    return render


def _ratio(row: dict) -> str:
    """A Table-1 row's mean / dense mean with its interval where the CSV has
    one (Fieller's, stats.ratio_interval, in tables made since it replaced the stratified bootstrap)."""
    if not row["normalised"]:
        return ""
    lo, hi = row.get("normalised_lo"), row.get("normalised_hi")
    return f"{float(row['normalised']):.3f}" + (f" [{float(lo):.3f}, {float(hi):.3f}]" if lo and hi else "")


def _table1(read, link) -> str:
    stem = "mast/tables/table1"
    rows = [r for r in _rows(read(f"{stem}.csv")) if r["map"] != "average"]
    prov = json.loads(read(f"{stem}.provenance.json"))
    body = _table(
        ["algorithm, map", "method", "sparsity", "training FLOPs", "win rate [95 % CI]", "/ dense [95 % CI]",
         "P(run > dense run)", "seeds"],
        [[f"{r['algorithm']} {r['map']}", r["method"], f"{float(r['sparsity']):g}",
          "1" if float(r["train_flops_reduction"]) == 1 else f"1 / {float(r['train_flops_reduction']):.1f}",
          f"{float(r['mean']):.3f} " + (f"[{float(r['mean_lo']):.3f}, {float(r['mean_hi']):.3f}]" if r["mean_lo"]
                                        else f"[no interval: {r['seeds']} seed]"),
          _ratio(r), f"{float(r['p_improvement']):.2f}" if r.get("p_improvement") else "", r["seeds"]] for r in rows])
    # a Table 1 that says whether it is evidence (its `evidence` column) says so here too; where its rows differ
    # (judged cell by cell, metrics.CellsEvidence) its first line, the sidecar's `evidence`, names which cells are
    said = list(dict.fromkeys(r["evidence"] for r in rows if r.get("evidence")))
    stamp = "".join(f"**{e}**\n\n" for e in ([prov["evidence"]] if len(said) > 1 and prov.get("evidence") else said))
    return (f"{stamp}{body}\n\nMeasured on {_measured(prov)}; {prov.get('source_runs', '')}. Every column: "
            f"[`{stem}.md`]({link(stem + '.md')}).\n")


COST_PARTS = {  # published `effmarl costs` tables of the default profile, in the order they are shown
    "costs": "paper 1: every study, the interleaved sampling benchmark, the counters, bench paper1 (timing jobs alone)",
    "mast/costs": ("paper 2: Table 1 at a declared 99 % (dense, MAST, the five baselines), Fig. 8's sweep, bench qmix, "
                   "bench sparse (not alone: see its table)"),
}


def _costs(parts: dict[str, str], total_row: str = "") -> Callable:
    """A table of what each part of a published profile cost (`effmarl costs` tables, stem -> what it holds), with a
    row summing them (`total_row`, its first cell) where there are several."""
    def render(read, link) -> str:
        rows, wall, work, runs = [], 0.0, 0.0, 0
        for stem, what in parts.items():
            table = {r["kind"]: r for r in _rows(read(f"{stem}.csv"))}
            prov = json.loads(read(f"{stem}.provenance.json"))
            total = table["all jobs"]
            n_runs = sum(int(r.get("runs") or r["jobs"]) for kind, r in table.items() if kind.startswith("training: "))
            wall, work, runs = wall + prov["wall_s"], work + float(total["job_s"]), runs + n_runs
            rows.append([f"[{what}]({link(stem + '.md')})", str(n_runs), f"{prov['wall_s'] / 60:.1f} min",
                         f"{float(total['job_s']) / 60:.1f}", f"{float(total['longest_s']):.0f} s",
                         f"{float(total['peak_rss_mb']) / 1024:.2f} GB", prov["finished_at"][:10]])
        if len(parts) > 1:
            rows.append([total_row, str(runs), f"{wall / 60:.1f} min ({wall / 3600:.1f} h)",
                         f"{work / 60:.1f}", "", "", ""])
        return _table(["part (its costs table)", "runs", "wall, 2 cores", "job-minutes", "longest job",
                       "peak memory of a job", "finished"], rows) + "\n"
    return render


SPARSE_BENCH = "bench/bench_sparse"  # the default profile's `effmarl bench sparse` table, under published/default


def _sparse_inference(read, link) -> str:
    """Per sparse form of `effmarl bench sparse`: speedup = dense time / its time, min-max over the batch sizes."""
    stem = SPARSE_BENCH
    rows = _rows(read(f"{stem}.csv"))
    prov = json.loads(read(f"{stem}.provenance.json"))
    sizes = sorted({int(r["rows"]) for r in rows})
    body = []
    for form in dict.fromkeys(r["variant"] for r in rows if r["variant"] != "dense"):
        speed = [float(r["speedup_vs_dense"]) for r in rows if r["variant"] == form]
        body.append([form, f"{min(speed):.2f}–{max(speed):.2f}×"])
    flops = float(rows[0]["flops_ratio"])
    return (_table(["form", f"speed / dense (batch {sizes[0]}–{sizes[-1]} rows)"], body)
            + f"\n\nForward FLOPs {flops:.3f} of dense ({1 / flops:.1f}× fewer). Measured on {_measured(prov)}: "
            f"[`published/default/{stem}.md`]({link(stem + '.md')}).\n")


BLOCKS: dict[str, Block] = {
    "paper1-claims": Block(("paper1/tables/claims.csv", "paper1/tables/claims.provenance.json"),
                           _claims("paper1/tables/claims")),
    "paper2-claims": Block(("mast/tables/claims.csv", "mast/tables/claims.provenance.json"),
                           _claims("mast/tables/claims")),
    "paper2-table1": Block(("mast/tables/table1.csv", "mast/tables/table1.provenance.json"), _table1),
    "default-costs": Block(tuple(f"{s}.{e}" for s in COST_PARTS for e in ("csv", "provenance.json")),
                           _costs(COST_PARTS, "all of the default profile")),
    # one profile's costs table at its published root (`profile-costs@extended`)
    "profile-costs": Block(("costs.csv", "costs.provenance.json"), _costs({"costs": "every job of the profile"})),
    "paper2-sparse-inference": Block(tuple(f"{SPARSE_BENCH}.{e}" for e in ("csv", "provenance.json")),
                                     _sparse_inference),
}


def _split(name: str, published: Path) -> tuple[str, Path]:
    """(block, the published directory it reads) of a marker's name: `NAME` reads `published`, `NAME@PROFILE` the
    profile's directory beside it."""
    block, _, profile = name.partition("@")
    return block, (published.parent / profile if profile else published)


def render(text: str, where: Path, published: Path) -> str:
    """`text` (the Markdown file at `where`) with every block regenerated from `published` (or, for `NAME@PROFILE`,
    from the profile's directory beside it)."""
    names = OPEN.findall(text)
    closed = [m.group(1) for m in MARKER.finditer(text)]
    problems = [f"{where}: block {n!r} has no closing <!-- /published:{n} -->" for n in names if n not in closed]
    problems += [f"{where}: unknown block {n!r} (known: {', '.join(BLOCKS)}, each also as NAME@PROFILE)"
                 for n in names if _split(n, published)[0] not in BLOCKS]
    missing = sorted({str(root / s) for n in names for b, root in [_split(n, published)] if b in BLOCKS
                      for s in BLOCKS[b].sources if not (root / s).is_file()})
    problems += [f"{m}: no such published file" for m in missing]
    if problems:
        raise ConfigError(problems, "effmarl readme-tables")

    def block(match: re.Match) -> str:
        name = match.group(1)
        kind, root = _split(name, published)

        def read(rel: str) -> str:
            return (root / rel).read_text()

        def link(rel: str) -> str:
            return Path(os.path.relpath(root / rel, where.resolve().parent)).as_posix()

        return f"<!-- published:{name} -->\n{BLOCKS[kind].render(read, link)}<!-- /published:{name} -->"

    return MARKER.sub(block, text)


def run(files: list[str], published: str, check: bool) -> tuple[list[str], list[str]]:
    """Regenerate (or with `check` only compare) each file's blocks; returns (files changed or stale, files
    without any block)."""
    root = Path(published).resolve()
    if not root.is_dir():
        raise ConfigError([f"--published {published}: not a directory"], "effmarl readme-tables")
    stale, empty = [], []
    for name in files:
        path = Path(name)
        if not path.is_file():
            raise ConfigError([f"{name}: no such file"], "effmarl readme-tables")
        text = path.read_text()
        if not OPEN.search(text):
            empty.append(name)
            continue
        new = render(text, path, root)
        if new != text:
            stale.append(name)
            if not check:
                io.write_text(path, new)
    return stale, empty
