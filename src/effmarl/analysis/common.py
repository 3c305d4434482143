"""Reading a figure's or table's named inputs, shared colours, and saving: atomically, as PDF + PNG (CSV +
Markdown for tables), each with a provenance sidecar and a footer naming the runs it was made from.

Inputs are named: the workflow passes `role=path` arguments (e.g. `phases=results/paper1/phases.summary.parquet`)
and each module declares its roles in `INPUTS`; nothing is recognised from a file name or a column."""

from __future__ import annotations

import textwrap
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
    Every role must be given at least once (unless not `required`, or its description starts with "optional: ");
    an unknown role or a bare path is a one-line
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
               if required and not found[role] and not is_optional(what)]
    if errors:
        raise ConfigError(errors, f"effmarl {name}".strip())
    return found


OPTIONAL = "optional: "  # a role whose description starts so may be left out (it is then an empty list)


def is_optional(description: str) -> bool:
    return str(description).startswith(OPTIONAL)


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
    # wrapped to the figure's width (a 6 pt character is ~3.3 pt wide): one long line would widen the saved
    # figure (bbox_inches="tight") and leave a one-panel figure half empty
    width = max(60, int(fig.get_figwidth() * 72 / 3.3))
    fig.text(0.01, y, textwrap.fill(source_line(summary), width), fontsize=6, color="0.4", ha="left", va="top")


def stamp(fig, reasons: list[str]) -> None:
    """'ILLUSTRATIVE: <reasons>' across the top of a figure whose runs cannot support or refute the claim it
    illustrates (too few seeds or update rounds, a budget where nothing learned …): the image says so itself."""
    if reasons:
        # wrapped here to the figure's width (a bold 8 pt character is ~5 pt wide), not by matplotlib's wrap=True:
        # that measures the line before bbox_inches="tight" crops and leaves a column of blank canvas above
        width = max(40, int(fig.get_figwidth() * 72 / 5.0))
        fig.text(0.5, 1.0, textwrap.fill("ILLUSTRATIVE: " + "; ".join(reasons), width), ha="center", va="bottom",
                 fontsize=8, color="#b00000", fontweight="bold")


LABEL_PAD_PX = 3.0  # room between a value label and the axis line


def fit_labels_inside(fig, rounds: int = 10) -> None:
    """Lay the figure out (tight_layout), then widen each panel's x and y limits until every text in it lies inside
    its axes, `LABEL_PAD_PX` from the axis lines: a label is never struck through by an axis or cut by the canvas.
    Labels are anchored to data points with an offset in points, so each widening moves them inwards; a few rounds
    settle it."""
    for _ in range(rounds):
        fig.tight_layout()
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        moved = False
        for ax in fig.axes:
            if not ax.texts:
                continue
            box = ax.get_window_extent(renderer)
            texts = [t.get_window_extent(renderer) for t in ax.texts]
            pad = LABEL_PAD_PX
            left = max(0.0, *(box.x0 + pad - t.x0 for t in texts))
            right = max(0.0, *(t.x1 - box.x1 + pad for t in texts))
            down = max(0.0, *(box.y0 + pad - t.y0 for t in texts))
            up = max(0.0, *(t.y1 - box.y1 + pad for t in texts))
            if left or right or down or up:
                inverse = ax.transData.inverted()
                x0, y0 = inverse.transform((box.x0 - 1.5 * left, box.y0 - 1.5 * down))
                x1, y1 = inverse.transform((box.x1 + 1.5 * right, box.y1 + 1.5 * up))
                ax.set_xlim(x0, x1)
                ax.set_ylim(y0, y1)
                moved = True
        if not moved:
            return


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


# ---- paper 2 (MAST) drawing helpers shared by the mast_* figures -------------------------------------------------
TICKET_NAMES = {"random": "random ticket", "winning": "winning ticket", "cheating": "cheating ticket"}
OPERATOR_ORDER = ["max", "softmax", "mellowmax", "soft_mellowmax"]
OPERATOR_NAMES = {"max": "max", "softmax": "softmax", "mellowmax": "Mellowmax", "soft_mellowmax": "Soft Mellowmax"}


def method_color(method: str):
    """One colour per paper-2 method, the same in every figure (tab10 in Table 1's order)."""
    return _TAB10[METHOD_ORDER.index(method) % 10] if method in METHOD_ORDER else "0.5"


def method_name(method) -> str:
    return METHOD_NAMES.get(str(method), str(method))


def algo_name(algo) -> str:
    return ALGO_NAMES.get(str(algo), str(algo))


def map_name(name) -> str:
    return str(name).replace("64zg_approx", "64zg (approx.)")


def read_optional(paths: list[str]) -> pd.DataFrame | None:
    """Parquet tables concatenated, or None where a role was given no file."""
    return read_tables(paths) if paths else None


def draw_curve(ax, curve: pd.DataFrame, label: str, color=None, linestyle="-") -> None:
    """One smoothed mean line with its band (from `metrics.curves` rows of one group); the legend label gets the
    seed count. A single point is drawn as a marker (a line needs two)."""
    from effmarl.analysis.metrics import seeds_text

    curve = curve.sort_values("x")
    text = f"{label} ({seeds_text(curve['seeds'])})"
    marker = "o" if len(curve) < 3 else None
    (line,) = ax.plot(curve["x"], curve["mean"], label=text, color=color, linestyle=linestyle, marker=marker)
    band = curve.dropna(subset=["lo", "hi"])
    if len(band):
        ax.fill_between(band["x"], band["lo"], band["hi"], color=line.get_color(), alpha=0.2, linewidth=0)


def note(ax, text: str) -> None:
    """A message in an axis that has nothing else to show (never an empty plot)."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=9, color="0.3", wrap=True)


def bars(ax, stats: pd.DataFrame, labels: list[str], colors=None, value: str = "iqm") -> None:
    """Bars of `value` (IQM) with the bootstrap interval as error bars where there is one, and each bar's seed count
    written above it ('n=1: no interval' where one seed)."""
    import numpy as np

    x = np.arange(len(stats))
    heights = stats[value].to_numpy(dtype=float)
    ax.bar(x, np.nan_to_num(heights), color=colors, edgecolor="0.2", linewidth=0.5)
    lo, hi = stats["iqm_lo"].to_numpy(dtype=float), stats["iqm_hi"].to_numpy(dtype=float)
    has = np.isfinite(lo) & np.isfinite(hi)
    if has.any():
        ax.errorbar(x[has], heights[has], yerr=[heights[has] - lo[has], hi[has] - heights[has]], fmt="none",
                    ecolor="0.1", capsize=3, linewidth=1)
    # on two lines: seven one-line labels ("n=1, no CI") overlap their neighbours in a 4.5-inch panel
    for xi, top, n in zip(x, np.where(has, hi, heights), stats["seeds"], strict=True):
        ax.text(xi, (top if np.isfinite(top) else 0) + 0.02, f"n={int(n)}" + ("" if n > 1 else "\nno CI"),
                ha="center", va="bottom", fontsize=7, linespacing=1.0)
    ax.set_xticks(x, labels, rotation=30 if len(labels) > 4 else 0, ha="right" if len(labels) > 4 else "center")


def curve_panels(panels_data: list[tuple[str, pd.DataFrame]], hue: str, order: list, names: dict, colors: dict,
                 value: str = "test_win_rate", ylabel: str = "test win rate", width: float = 4.0,
                 height: float = 3.2, title: str = ""):
    """One panel per (title, metrics rows), one smoothed line with a band per value of `hue` (in `order`), seeds
    aligned on the evaluation grid; a panel without data says so. Returns the figure."""
    import matplotlib.pyplot as plt

    from effmarl.analysis.metrics import curves

    n = max(1, len(panels_data))
    fig, axes = plt.subplots(1, n, figsize=(width * n, height), squeeze=False)
    for ax, (name, rows) in zip(axes[0], panels_data or [("no runs", pd.DataFrame())], strict=True):
        data = curves(rows, [hue], value) if len(rows) and hue in rows else pd.DataFrame()
        present = [h for h in order if len(data) and h in set(data[hue])]
        present += [h for h in (sorted(set(data[hue]), key=str) if len(data) else []) if h not in present]
        for h in present:
            draw_curve(ax, data[data[hue] == h], names.get(h, str(h)), colors.get(h))
        if not present:
            note(ax, f"no {ylabel} values in these runs")
        else:
            ax.legend(fontsize=7)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("environment steps")
        ax.set_ylabel(ylabel)
        if value == "test_win_rate":
            ax.set_ylim(-0.02, 1.02)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def learning_curves_figure(algo: str, named: dict[str, list[str]]):
    """Paper 2, Figures 13-15: for one algorithm, one panel per map, one line per method (dense from mast_dense,
    MAST from mast_sweep at the chosen sparsity, baselines from mast_table1). Returns (figure, runs shown)."""
    from effmarl.analysis.metrics import chosen_sparsity

    chosen = chosen_sparsity(pd.read_csv(named["selection"][0])) if named.get("selection") else None
    parts = []
    for role in ("dense", "sweep", "baselines"):
        if not named.get(role):
            continue
        frame = read_tables(named[role])
        frame = frame[frame["cfg.algo"] == algo].copy()
        if role == "dense":
            frame["cfg.sparse.method"] = "dense"
        elif role == "sweep":
            frame["cfg.sparse.method"] = "mast"
        if role != "dense" and chosen is not None and len(frame):
            frame["_s"] = frame["cfg.sparse.sparsity"].astype(float).round(6)
            frame = frame.merge(chosen.rename(columns={"algo": "cfg.algo", "map": "cfg.env.map", "sparsity": "_s"})
                                [["cfg.algo", "cfg.env.map", "_s"]], on=["cfg.algo", "cfg.env.map", "_s"])
            frame = frame.drop(columns="_s")
        parts.append(frame)
    data = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    maps = sorted(set(data["cfg.env.map"])) if len(data) else []
    sparsity = {}
    if chosen is not None:
        sparsity = {m: s for a, m, s in zip(chosen["algo"], chosen["map"], chosen["sparsity"], strict=True)
                    if a == algo}
    panels_data = [(f"{algo_name(algo)} on SMAX {map_name(m)}"
                    + (f", sparsity {sparsity[m]:g}" if m in sparsity else ""), data[data["cfg.env.map"] == m])
                   for m in maps]
    if not panels_data:
        panels_data = [(f"{algo_name(algo)}: no runs of this algorithm in the inputs", pd.DataFrame())]
    colors = {m: method_color(m) for m in METHOD_ORDER}
    fig = curve_panels(panels_data, "cfg.sparse.method", METHOD_ORDER, METHOD_NAMES, colors)
    return fig, (data if len(data) else None)


def shown_runs(frame: pd.DataFrame | None) -> pd.DataFrame | None:
    """`frame` for the footer naming the runs, or None where it lacks the run identity columns."""
    return frame if frame is not None and set(RUN_COLUMNS) <= set(frame.columns) and len(frame) else None


def operator_of(frame: pd.DataFrame) -> pd.Series:
    """The target operator of each row: cfg.mellowmax.operator where present; otherwise from cfg.mellowmax.enabled
    (true -> Soft Mellowmax, false -> max; unset -> on for MAST only, the config's default)."""
    if "cfg.mellowmax.operator" in frame:
        return frame["cfg.mellowmax.operator"].astype(str)
    method = frame.get("cfg.sparse.method", pd.Series("", index=frame.index))
    enabled = frame.get("cfg.mellowmax.enabled", pd.Series(None, index=frame.index, dtype=object))

    def one(e, m):
        if e is None or (isinstance(e, float) and e != e):
            return "soft_mellowmax" if m == "mast" else "max"
        return "soft_mellowmax" if str(e).lower() in ("true", "1") else "max"

    return pd.Series([one(e, m) for e, m in zip(enabled, method, strict=True)], index=frame.index)
