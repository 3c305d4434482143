"""A figure's or table's inputs and outputs: reading its named inputs, and saving it atomically, as PDF + PNG (CSV +
Markdown for tables), each with a provenance sidecar, and on a figure the marks that record what it was made from
(the footer naming the runs, the ILLUSTRATIVE stamp; on a paper-2 figure or table its evidence mark,
`mark_evidence`).

What belongs here: parsing `role=path` arguments, reading study tables, and everything written with an output that
records where it came from. Colours, names and drawing helpers are `analysis.style`; what is selected or computed
from the data is `analysis.metrics`.

Inputs are named: the workflow passes `role=path` arguments (e.g. `phases=results/paper1/phases.summary.parquet`)
and each module declares its roles in `INPUTS`; nothing is recognised from a file name or a column."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # figures are written to files, never shown: no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from effmarl import provenance  # noqa: E402
from effmarl.analysis.metrics import require_one_commit  # noqa: E402
from effmarl.analysis.metrics.runs import RUN_COLUMNS  # noqa: E402
from effmarl.config import ConfigError  # noqa: E402
from effmarl.io import write_json, write_text, write_with  # noqa: E402


def named_inputs(inputs: list[str], roles: dict[str, dict], name: str = "", required: bool = True
                 ) -> dict[str, list[str]]:
    """`role=path` arguments -> {role: [paths]} for the roles a module declares in `INPUTS` ({role: {"doc": what
    it is, "optional": bool, and where the workflow finds it: effmarl.outputs}}). Every role must be given at least
    once (unless not `required`, or the role is optional); an unknown role or a bare path is a one-line error
    naming it."""
    found: dict[str, list[str]] = {role: [] for role in roles}
    errors = []
    for arg in inputs:
        role, sep, path = str(arg).partition("=")
        if not sep and len(roles) == 1:  # a module with one input role takes bare paths
            role, sep, path = next(iter(roles)), "=", str(arg)
        if not sep or role not in roles:
            errors.append(f"input {arg!r}: expected ROLE=PATH with ROLE one of {', '.join(roles)}")
        else:
            found[role].append(path)
    errors += [f"input role {role!r} ({spec['doc']}) not given" for role, spec in roles.items()
               if required and not found[role] and not spec.get("optional")]
    if errors:
        raise ConfigError(errors, f"effmarl {name}".strip())
    return found


def input_paths(inputs: list[str]) -> list[str]:
    """The paths of `role=path` (or bare path) arguments."""
    return [str(a).partition("=")[2] if "=" in str(a) else str(a) for a in inputs]


def read_tables(paths: list[str]) -> pd.DataFrame:
    """Parquet tables, concatenated."""
    return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)


def read_optional(paths: list[str]) -> pd.DataFrame | None:
    """Parquet tables concatenated, or None where a role was given no file."""
    return read_tables(paths) if paths else None


def runs_of(inputs: list[str]) -> pd.DataFrame | None:
    """The run identity columns of the study tables among `inputs` (None if none are study tables)."""
    frames = []
    for path in input_paths(inputs):
        if str(path).endswith(".parquet"):
            try:
                frames.append(pd.read_parquet(path, columns=RUN_COLUMNS).drop_duplicates())
            except (KeyError, ValueError):
                continue  # not a study table
    return pd.concat(frames, ignore_index=True) if frames else None


def source_line(summary: pd.DataFrame) -> str:
    """'runs: <study> (<n> runs, profile <p>, commit <c>)' for a figure footer."""
    parts = []
    for study, group in summary.groupby("cfg.study"):
        commits = sorted({str(c)[:10] for c in group["git_commit"].dropna()}) or ["unknown"]
        profiles = sorted(set(group["cfg.profile"]))
        parts.append(f"{study} ({group['run_id'].nunique()} runs, profile {'/'.join(profiles)}, "
                     f"commit {'/'.join(commits)})")
    return "runs: " + "; ".join(parts)


def _sidecar(out_stem: Path, kind: str, name: str, caption: str, inputs: list[str],
             shown: pd.DataFrame | None, evidence: str | None = None) -> None:
    extra = {"kind": kind, "name": name, "caption": caption, "named_inputs": list(map(str, inputs)),
             "source_runs": source_line(shown) if shown is not None else None}
    if evidence:
        extra[EVIDENCE] = evidence
    write_json(out_stem.with_suffix(".provenance.json"), provenance.record(inputs=input_paths(inputs), extra=extra))


def add_footer(fig, summary: pd.DataFrame | None) -> None:
    """The runs footer, placed below everything already drawn (axis labels and legends below the axes included),
    so that it never sits under a legend."""
    if summary is None:
        return
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [a.get_tightbbox(renderer) for a in fig.axes] + [lg.get_window_extent(renderer) for lg in fig.legends]
    bottom = min([b.y0 for b in boxes if b is not None] + [0.0])
    y = (bottom - 4) / fig.bbox.height  # figure fraction; negative is fine, savefig(bbox_inches="tight") grows
    # wrapped to the figure's width (a 6 pt character is ~3.3 pt wide): one long line would widen the saved
    # figure (bbox_inches="tight") and leave a one-panel figure half empty
    width = max(60, int(fig.get_figwidth() * 72 / 3.3))
    fig.text(0.01, y, textwrap.fill(source_line(summary), width), fontsize=6, color="0.4", ha="left", va="top")


def stamp(fig, reasons: list[str], prefix: str = "ILLUSTRATIVE: ") -> None:
    """'ILLUSTRATIVE: <reasons>' across the top of a figure whose runs cannot support or refute the claim it
    illustrates (too few seeds or update rounds, a budget where nothing learned …): the image says so itself.
    `prefix` "" where the first reason is the whole stamp (paper 2's 'illustrative: n seeds, m steps — …')."""
    if reasons:
        # wrapped here to the figure's width (a bold 8 pt character is ~5 pt wide), not by matplotlib's wrap=True:
        # that measures the line before bbox_inches="tight" crops and leaves a column of blank canvas above
        width = max(40, int(fig.get_figwidth() * 72 / 5.0))
        fig.text(0.5, 1.0, textwrap.fill(prefix + "; ".join(reasons), width), ha="center", va="bottom",
                 fontsize=8, color="#b00000", fontweight="bold")


EVIDENCE = "evidence"  # the column (first) of a paper-2 table, and the sidecar field, that says what it rests on


def mark_evidence(output, verdict, rows: list[str] | None = None):
    """Mark a paper-2 output with its verdict (`metrics.judge`): a figure is stamped with the verdict's text when it
    is illustrative (and records it for its sidecar); a table gets the text as its first column, `evidence`, on
    every row (what the .csv carries; `rows`: each row's own text instead, for a table judged cell by cell,
    `metrics.CellsEvidence`), and as the line above its caption in the .md (`save_table`). Returns the output. Every
    paper-2 figure and table calls this, so what a stamp says is decided in metrics.evidence only."""
    if isinstance(output, pd.DataFrame):
        table = output.drop(columns=EVIDENCE, errors="ignore")
        table.insert(0, EVIDENCE, verdict.text if rows is None else list(rows))
        table.attrs[EVIDENCE] = verdict.text
        return table
    if verdict.illustrative:
        stamp(output, [verdict.text], prefix="")
    output._effmarl_evidence = verdict.text  # noqa: SLF001 - read back by save_figure for the sidecar
    return output


def save_figure(fig, out_stem: str | Path, inputs: list[str], summary: pd.DataFrame | None = None, *,
                name: str = "", caption: str = "") -> list[Path]:
    """Write <out_stem>.pdf, .png and .provenance.json (with the caption); the footer names the source runs."""
    out_stem = Path(out_stem)
    add_footer(fig, summary)
    written = []
    for ext in ("pdf", "png"):
        target = out_stem.with_suffix(f".{ext}")
        write_with(target, lambda tmp, ext=ext: fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight"))
        written.append(target)
    plt.close(fig)
    _sidecar(out_stem, "figure", name, caption, inputs, summary, getattr(fig, "_effmarl_evidence", None))
    return written


def save_table(table: pd.DataFrame, out_stem: str | Path, inputs: list[str], *, name: str = "",
               caption: str = "") -> list[Path]:
    """Write <out_stem>.csv, .md (caption above the table) and .provenance.json. A table marked by `mark_evidence`
    has its verdict as the .md's first line, above the caption (in bold), and as the `evidence` column of the .csv;
    the .md's table leaves that column out where it holds one text on every row (the first line says it)."""
    out_stem = Path(out_stem)
    evidence = table.attrs.get(EVIDENCE)
    csv = write_text(out_stem.with_suffix(".csv"), table.to_csv(index=False))
    header = (f"**{evidence}**\n\n" if evidence else "") + (f"{caption}\n\n" if caption else "")
    body = table
    if evidence and EVIDENCE in table and table[EVIDENCE].nunique() <= 1:
        body = table.drop(columns=EVIDENCE)
    md = write_text(out_stem.with_suffix(".md"), header + body.to_markdown(index=False) + "\n")
    _sidecar(out_stem, "table", name, caption, inputs, runs_of(inputs), evidence)
    return [csv, md]


# ---- checks of a figure / table invocation (`effmarl figure|table|index`), before anything is drawn ----------------

def check_out_stem(out: str) -> None:
    """--out of figure/table/index is a path without extension: a suffix would be replaced silently."""
    if Path(out).suffix:
        raise ConfigError([f"--out must be a path without an extension; {Path(out).suffix!r} would be replaced "
                           f"(write e.g. {str(Path(out)).replace('.', '_')})"], str(out))


def check_named_inputs(inputs: list[str], module, name: str) -> None:
    """The module's input roles first (a missing or unknown role is named), then every file behind them, then that
    the trained runs they hold come from one commit (metrics.require_one_commit)."""
    if hasattr(module, "INPUTS"):
        named_inputs(inputs, module.INPUTS, name)
    check_input_files(input_paths(inputs))
    require_one_commit(runs_of(inputs), name)


def check_input_files(paths: list[str]) -> None:
    """Study tables a figure or table is drawn from: readable parquet files with at least one finite number."""
    for path in paths:
        if not Path(path).is_file():
            raise ConfigError(["no such file" if not Path(path).exists() else "not a file"], path)
        if not path.endswith(".parquet"):
            continue
        try:
            frame = pd.read_parquet(path)
        except Exception as exc:
            raise ConfigError([f"not a readable parquet table ({' '.join(str(exc).split())[:160]})"], path) from None
        numbers = frame.select_dtypes("number").to_numpy(dtype=float, na_value=np.nan)
        if frame.empty or not np.isfinite(numbers).any():
            raise ConfigError([f"no finite data ({len(frame)} rows); refusing to draw from it"], path)
