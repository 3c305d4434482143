"""Paper 2, Figure 16: a sparse method's test win rate with each target operator - max, softmax, Mellowmax and Soft
Mellowmax (study `mast_abl_operator`: MAST in the paper, the panel titles name the method of the runs); smoothed per
seed, mean over seeds with a 95 % bootstrap band."""

from __future__ import annotations

from effmarl.analysis.io import mark_evidence, named_inputs, read_tables
from effmarl.analysis.metrics import judge, operator_of
from effmarl.analysis.style import OPERATOR_NAMES, OPERATOR_ORDER, algo_name, curve_panels, map_name, method_name

OPERATOR = "cfg.mellowmax.operator"
CAPTION = ("Paper 2, Figure 16 on SMAX: a sparse method's test win rate (MAST's in the paper; the panel title names "
           "it) with the max, softmax, Mellowmax and Soft Mellowmax operators in its targets (those the runs have), "
           "against environment steps. Each seed Savitzky-Golay smoothed (window 21, "
           "order 2, ≤ 1/3 of its length), seeds aligned on the evaluation grid; line = mean, band = 95 % "
           "percentile-bootstrap interval (none for 1 seed); legend gives n = seeds.")
REPRODUCES = "Paper 2, Figure 16."
CLAIM = "Soft Mellowmax is the best of the four operators for sparse value learning."

OUTPUT = {"group": "mast", "stem": "fig16_operators"}
INPUTS = {"metrics": {"study": "mast_abl_operator", "doc": "metrics.summary.parquet of mast_abl_operator"}}


def make(inputs: list[str]):
    summary = read_tables(named_inputs(inputs, INPUTS, "figure mast_fig16")["metrics"])
    data = summary.assign(**{OPERATOR: operator_of(summary)})
    cells = data[["cfg.algo", "cfg.env.map"]].drop_duplicates().values.tolist()
    methods = {(a, m): "/".join(method_name(x) for x in sorted(set(group["cfg.sparse.method"])))
               for (a, m), group in data.groupby(["cfg.algo", "cfg.env.map"])}
    panels_data = [(f"{methods[(a, m)]}-{algo_name(a)} on SMAX {map_name(m)}",
                    data[(data["cfg.algo"] == a) & (data["cfg.env.map"] == m)]) for a, m in cells]
    fig = curve_panels(panels_data, OPERATOR, OPERATOR_ORDER, OPERATOR_NAMES, {}, width=5.0)
    mark_evidence(fig, judge(data, ["cfg.algo", "cfg.env.map", OPERATOR]))
    return fig, summary
