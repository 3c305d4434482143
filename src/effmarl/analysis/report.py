"""The Snakemake report's caption of every figure and table, generated from the module that makes it: its `CAPTION`
(what it shows, also written into the output's provenance sidecar and the figure index), `REPRODUCES` (the paper's
figure or table) and `CLAIM` (the claim it supports). Those three module fields are the one source; the files under
workflow/report/{figures,tables}/<name>.rst, which the workflow's `report(..., caption=...)` reads, are written from
them, and a test fails when a committed file differs from what its module says:

    python -m effmarl.analysis.report            # rewrite workflow/report/{figures,tables}/*.rst
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from effmarl.analysis.figures import FIGURES
from effmarl.analysis.tables import TABLES

REPORT_DIR = Path(__file__).resolve().parents[3] / "workflow" / "report"
KINDS = {"figures": ("figure", FIGURES), "tables": ("table", TABLES)}


def caption_rst(kind: str, name: str) -> str:
    """The report caption (reStructuredText with Snakemake's Jinja `snakemake.input`) of figure or table `name`."""
    command, registry = KINDS[kind]
    module = importlib.import_module(registry[name])
    inputs = "{% for f in snakemake.input %} ``{{ f }}``{% endfor %}"       # Jinja: the job's input files
    return (f"**What it shows.** {module.CAPTION}\n\n**Reproduces.** {module.REPRODUCES}\n\n"
            f"**Claim it supports.** {module.CLAIM}\n\nMade by ``effmarl {command} {name}`` from{inputs}.\n")


def captions() -> dict[Path, str]:
    """Every report caption file's path and the text its module gives it."""
    return {REPORT_DIR / kind / f"{name}.rst": caption_rst(kind, name)
            for kind, (_, registry) in KINDS.items() for name in registry}


def main() -> int:
    for path, text in captions().items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(path, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
