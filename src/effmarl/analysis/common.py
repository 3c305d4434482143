"""Reading a figure's or table's named inputs, shared colours, and saving: atomically, as PDF + PNG (CSV +
Markdown for tables), each with a provenance sidecar and a footer naming the runs it was made from.

Inputs are named: the workflow passes `role=path` arguments (e.g. `phases=results/paper1/phases.summary.parquet`)
and each module declares its roles in `INPUTS`; nothing is recognised from a file name or a column."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from effmarl import io, provenance  # noqa: E402
from effmarl.config import ConfigError  # noqa: E402

# One colour per sampler and per phase, the same in every figure (tab10).
_TAB10 = plt.get_cmap("tab10").colors
SAMPLER_COLORS = {"uniform": _TAB10[0], "neighbor": _TAB10[1]}
PHASE_COLORS = {phase: _TAB10[i] for i, phase in enumerate(
    ["action_selection", "env_step", "buffer_add", "sampling", "target_q", "q_loss", "p_loss", "target_update"])}


# Display names of the paper-2 algorithms and sparse-training methods, and the methods' table order.
ALGO_NAMES = {"qmix": "QMIX", "ow_qmix": "OW-QMIX", "res_qmix": "RES-QMIX"}
METHOD_ORDER = ["dense", "tiny", "static", "set", "rigl", "rlx2", "mast"]
METHOD_NAMES = {"dense": "Dense", "tiny": "Tiny", "static": "SS", "set": "SET", "rigl": "RigL", "rlx2": "RLx2",
                "mast": "MAST"}


def sampler_color(sampler: str):
    """The colour of a sampler, also for benchmark names such as `neighbor_k16`."""
    return SAMPLER_COLORS.get(str(sampler).split("_")[0], "0.5")


def named_inputs(inputs: list[str], roles: dict[str, str], name: str = "", required: bool = True
                 ) -> dict[str, list[str]]:
    """`role=path` arguments -> {role: [paths]} for the roles a module declares in `roles` ({role: what it is}).
    Every role must be given at least once (unless not `required`); an unknown role or a bare path is a one-line
    error naming it."""
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
    errors += [f"input role {role!r} ({what}) not given" for role, what in roles.items()
               if required and not found[role]]
    if errors:
        raise ConfigError(errors, f"effmarl {name}".strip())
    return found


def input_paths(inputs: list[str]) -> list[str]:
    """The paths of `role=path` (or bare path) arguments."""
    return [str(a).partition("=")[2] if "=" in str(a) else str(a) for a in inputs]


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


def read_tables(paths: list[str]) -> pd.DataFrame:
    """Parquet tables, concatenated."""
    return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)


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
    for path in input_paths(inputs):
        if str(path).endswith(".parquet"):
            try:
                frames.append(pd.read_parquet(path, columns=RUN_COLUMNS).drop_duplicates())
            except (KeyError, ValueError):
                continue  # not a study table
    return pd.concat(frames, ignore_index=True) if frames else None


def _sidecar(out_stem: Path, kind: str, name: str, caption: str, inputs: list[str],
             shown: pd.DataFrame | None) -> None:
    extra = {"kind": kind, "name": name, "caption": caption, "named_inputs": list(map(str, inputs)),
             "source_runs": source_line(shown) if shown is not None else None}
    io.write_json(out_stem.with_suffix(".provenance.json"),
                  provenance.record(inputs=input_paths(inputs), extra=extra))


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
    fig.text(0.01, y, source_line(summary), fontsize=6, color="0.4", ha="left", va="top")


def legend_right(ax, **kwargs):
    """A legend outside the axes on the right, where it covers no data, label or footer."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kwargs)


def save_figure(fig, out_stem: str | Path, inputs: list[str], summary: pd.DataFrame | None = None, *,
                name: str = "", caption: str = "") -> list[Path]:
    """Write <out_stem>.pdf, .png and .provenance.json (with the caption); the footer names the source runs."""
    out_stem = Path(out_stem)
    add_footer(fig, summary)
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
