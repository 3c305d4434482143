"""Paper 2, Figure 6: single vs dual replay buffer, for the sparse (MAST) and the dense model (study
`mast_abl_buffer`: cfg.sparse.method dense|mast x cfg.mast.dual_buffer.enabled false|true) - one panel per method,
one smoothed win-rate curve per buffer setting with a 95 % bootstrap band over seeds."""

from __future__ import annotations

from effmarl.analysis.io import mark_evidence, named_inputs, read_tables
from effmarl.analysis.metrics import judge
from effmarl.analysis.style import curve_panels, method_name

ENABLED = "cfg.mast.dual_buffer.enabled"
CAPTION = ("Paper 2, Figure 6 on SMAX: test win rate with a single replay buffer vs MAST's dual buffer (B1:B2 "
           "sizes 50:1, batch split b1:b2), for the sparse MAST model and the dense model. Each seed Savitzky-Golay "
           "smoothed (window 21, order 2, ≤ 1/3 of its length), seeds aligned on the evaluation grid; line = mean, "
           "band = 95 % percentile-bootstrap interval (none for 1 seed); legends give n = seeds. An unset "
           "dual_buffer.enabled is the default: dual for MAST, single otherwise.")
REPRODUCES = "Paper 2, Figure 6."
CLAIM = ("The dual buffer (50:1 sizes, 3:1 batch split) helps sparse training; its effect on the dense model "
         "is shown alongside.")

OUTPUT = {"group": "mast", "stem": "fig6_dual_buffer"}
INPUTS = {"metrics": {"study": "mast_abl_buffer", "doc": "metrics.summary.parquet of mast_abl_buffer"}}


def buffer_kind(row) -> str:
    enabled = row.get(ENABLED)
    if enabled is None or (isinstance(enabled, float) and enabled != enabled):
        return "dual buffer" if row["cfg.sparse.method"] == "mast" else "single buffer"
    return "dual buffer" if str(enabled).lower() in ("true", "1") else "single buffer"


def make(inputs: list[str]):
    summary = read_tables(named_inputs(inputs, INPUTS, "figure mast_fig6")["metrics"])
    data = summary.assign(buffer=summary.apply(buffer_kind, axis=1))
    methods = [m for m in ("mast", "dense") if m in set(data["cfg.sparse.method"])]
    methods += sorted(set(data["cfg.sparse.method"]) - set(methods))
    panels_data = []
    for m in methods:
        rows = data[data["cfg.sparse.method"] == m]
        title = method_name(m) + ("" if m == "dense" else f" (sparsity {rows['cfg.sparse.sparsity'].iloc[0]:g})")
        panels_data.append((title, rows))
    fig = curve_panels(panels_data, "buffer", ["single buffer", "dual buffer"], {},
                       {"single buffer": "tab:gray", "dual buffer": "tab:red"})
    dense = data[data["cfg.sparse.method"] == "dense"]  # the dense model of each buffer setting
    mark_evidence(fig, judge(data, ["cfg.algo", "cfg.env.map", "cfg.sparse.method", "buffer"], dense=dense,
                             dense_keys=["cfg.algo", "cfg.env.map", "buffer"]))
    return fig, summary
