"""Saving figures and tables: atomically, as PDF + PNG (CSV + Markdown for tables), each with a
provenance sidecar and a footer naming the runs it was made from."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from effmarl import io, provenance  # noqa: E402


def source_line(summary: pd.DataFrame) -> str:
    """'runs: <study> (<n> runs, profile <p>, commit <c>)' for a figure footer."""
    parts = []
    for study, group in summary.groupby("cfg.study"):
        commits = sorted({str(c)[:10] for c in group["git_commit"].dropna()}) or ["unknown"]
        profiles = sorted(set(group["cfg.profile"]))
        parts.append(f"{study} ({group['run_id'].nunique()} runs, profile {'/'.join(profiles)}, "
                     f"commit {'/'.join(commits)})")
    return "runs: " + "; ".join(parts)


def save_figure(fig, out_stem: str | Path, inputs: list[str], summary: pd.DataFrame | None = None) -> list[Path]:
    """Write <out_stem>.pdf, .png and .provenance.json; footer names the source runs."""
    out_stem = Path(out_stem)
    if summary is not None:
        fig.text(0.01, 0.005, source_line(summary), fontsize=6, color="0.4", ha="left", va="bottom")
    written = []
    for ext in ("pdf", "png"):
        target = out_stem.with_suffix(f".{ext}")
        io.write_with(target, lambda tmp, ext=ext: fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight"))
        written.append(target)
    plt.close(fig)
    io.write_json(out_stem.with_suffix(".provenance.json"), provenance.record(inputs=inputs))
    return written


def save_table(table: pd.DataFrame, out_stem: str | Path, inputs: list[str]) -> list[Path]:
    """Write <out_stem>.csv, .md and .provenance.json."""
    out_stem = Path(out_stem)
    csv = io.write_text(out_stem.with_suffix(".csv"), table.to_csv(index=False))
    md = io.write_text(out_stem.with_suffix(".md"), table.to_markdown(index=False) + "\n")
    io.write_json(out_stem.with_suffix(".provenance.json"), provenance.record(inputs=inputs))
    return [csv, md]
