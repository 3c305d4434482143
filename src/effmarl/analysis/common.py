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


RUN_COLUMNS = ["run_id", "git_commit", "cfg.study", "cfg.profile"]


def read_tables(inputs: list[str]) -> pd.DataFrame:
    """The input tables of a figure or table, concatenated."""
    return pd.concat([pd.read_parquet(p) for p in inputs], ignore_index=True)


def panels(frame: pd.DataFrame, keys: list[str], width: float, height: float):
    """One subplot per distinct combination of `keys` in `frame`, side by side.

    Returns the figure and a list of (axis, key values, the rows of `frame` with those values).
    """
    combos = frame[keys].drop_duplicates().values.tolist()
    fig, axes = plt.subplots(1, len(combos), figsize=(width * len(combos), height), squeeze=False)
    rows = [frame[(frame[keys] == values).all(axis=1)] for values in combos]
    return fig, list(zip(axes[0], combos, rows, strict=True))


def runs_of(inputs: list[str]) -> pd.DataFrame | None:
    """The run identity columns of the study tables among `inputs` (None if none are study tables)."""
    frames = []
    for path in inputs:
        if str(path).endswith(".parquet"):
            try:
                frames.append(pd.read_parquet(path, columns=RUN_COLUMNS).drop_duplicates())
            except (KeyError, ValueError):
                continue  # not a study table
    return pd.concat(frames, ignore_index=True) if frames else None


def _sidecar(out_stem: Path, kind: str, name: str, caption: str, inputs: list[str],
             shown: pd.DataFrame | None) -> None:
    extra = {"kind": kind, "name": name, "caption": caption,
             "source_runs": source_line(shown) if shown is not None else None}
    io.write_json(out_stem.with_suffix(".provenance.json"), provenance.record(inputs=inputs, extra=extra))


def save_figure(fig, out_stem: str | Path, inputs: list[str], summary: pd.DataFrame | None = None, *,
                name: str = "", caption: str = "") -> list[Path]:
    """Write <out_stem>.pdf, .png and .provenance.json (with the caption); the footer names the source runs."""
    out_stem = Path(out_stem)
    if summary is not None:
        fig.text(0.01, 0.005, source_line(summary), fontsize=6, color="0.4", ha="left", va="bottom")
    written = []
    for ext in ("pdf", "png"):
        target = out_stem.with_suffix(f".{ext}")
        io.write_with(target, lambda tmp, ext=ext: fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight"))
        written.append(target)
    plt.close(fig)
    _sidecar(out_stem, "figure", name, caption, inputs, summary)
    return written


def save_table(table: pd.DataFrame, out_stem: str | Path, inputs: list[str], *, name: str = "",
               caption: str = "") -> list[Path]:
    """Write <out_stem>.csv, .md (caption above the table) and .provenance.json."""
    out_stem = Path(out_stem)
    csv = io.write_text(out_stem.with_suffix(".csv"), table.to_csv(index=False))
    header = f"{caption}\n\n" if caption else ""
    md = io.write_text(out_stem.with_suffix(".md"), header + table.to_markdown(index=False) + "\n")
    _sidecar(out_stem, "table", name, caption, inputs, runs_of(inputs))
    return [csv, md]
