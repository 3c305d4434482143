"""Figure 8 as a sweep (issue 35): each method's mean over seeds with its Student-t interval at each sparsity, dense
as a line with its band, methods at one sparsity side by side, and a stamp where the sweep has too few sparsities
to show anything; Figure 12 as what each agent and unit type holds, from hand-made masks."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from matplotlib.container import ErrorbarContainer
from test_mast_analysis import summary, write

from effmarl.analysis.figures import FIGURES

fig8 = importlib.import_module(FIGURES["mast_fig8"])
T_2 = 4.302652729749464  # Student t, 2 degrees of freedom, 0.975 quantile


def fig8_inputs(tmp_path, sparsities=(0.5, 0.8, 0.9)) -> list[str]:
    """MAST at every sparsity with seeds 0.5 / 0.6 / 0.7, SET and RigL a little below, dense 0.7 / 0.75 / 0.8."""
    base = summary("mast_fig8", [({"cfg.sparse.method": m, "cfg.sparse.sparsity": s}, [0.5 - d, 0.6 - d, 0.7 - d])
                                 for m, d in (("set", 0.05), ("rigl", 0.1)) for s in sparsities])
    dense = summary("mast_dense", [({"cfg.sparse.method": "dense"}, [0.7, 0.75, 0.8])])
    sweep = summary("mast_sweep", [({"cfg.sparse.sparsity": s}, [0.5, 0.6, 0.7]) for s in sparsities])
    return [f"fig8={write(base, tmp_path / 'fig8.parquet')}", f"dense={write(dense, tmp_path / 'dense.parquet')}",
            f"sweep={write(sweep, tmp_path / 'sweep.parquet')}"]


def drawn(ax) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """{legend label's method: (x, y, lower end, upper end of each error bar)} of a panel's error bars."""
    out = {}
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer):
            line, _, (bars,) = container.lines
            ends = np.array([seg[:, 1] for seg in bars.get_segments()])
            out[container.get_label().split(" (")[0]] = (*line.get_data(), ends[:, 0], ends[:, 1])
    return out


def test_fig8_draws_each_methods_mean_over_seeds_with_its_t_interval(tmp_path):
    fig, _ = fig8.make(fig8_inputs(tmp_path))
    mast = drawn(fig.axes[0])["MAST"]
    half = T_2 * 0.1 / np.sqrt(3)  # seeds 0.5, 0.6, 0.7: sd 0.1, n 3
    assert mast[1] == pytest.approx([0.6] * 3)
    assert mast[2] == pytest.approx([0.6 - half] * 3) and mast[3] == pytest.approx([0.6 + half] * 3)
    # dense: a dashed line at 0.75 and a band over 0.75 ± t·0.05/√3
    line = [ln for ln in fig.axes[0].lines if ln.get_linestyle() == "--"][0]
    assert line.get_ydata()[0] == pytest.approx(0.75)
    band = fig.axes[0].patches[0].get_path().get_extents().transformed(fig.axes[0].patches[0].get_transform())
    lo, hi = fig.axes[0].transData.inverted().transform([[0, band.y0], [0, band.y1]])[:, 1]
    assert (lo, hi) == pytest.approx((0.75 - T_2 * 0.05 / np.sqrt(3), 0.75 + T_2 * 0.05 / np.sqrt(3)), abs=1e-6)


def test_fig8_puts_the_methods_at_one_sparsity_side_by_side(tmp_path):
    fig, _ = fig8.make(fig8_inputs(tmp_path))
    x = {m: xs for m, (xs, *_) in drawn(fig.axes[0]).items()}
    assert set(x) == {"SET", "RigL", "MAST"}
    for i, s in enumerate((0.5, 0.8, 0.9)):
        at = sorted(x[m][i] for m in x)
        assert len(set(at)) == 3 and max(abs(v - s) for v in at) <= fig8.DODGE * 0.1 / 2 + 1e-12
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["0.5", "0.8", "0.9"]


def test_dodge_spreads_the_methods_over_a_share_of_the_smallest_gap():
    # gaps 0.1 and 0.05: spread 0.3 x 0.05 = 0.015 over 3 methods, a step of 0.0075 centred on 0
    assert fig8.dodge(["a", "b", "c"], [0.8, 0.9, 0.95]) == pytest.approx({"a": -0.0075, "b": 0.0, "c": 0.0075})
    assert fig8.dodge(["a", "b"], [0.9]) == pytest.approx({"a": -0.01, "b": 0.01})  # LONE_SPREAD 0.02
    assert fig8.dodge(["a"], [0.9]) == {"a": 0.0}


def stamp_text(fig) -> str:
    return " ".join(" ".join(t.get_text() for t in fig.texts).split())


def test_fig8_with_fewer_than_three_sparsities_says_inside_the_image_that_it_is_illustrative(tmp_path):
    fig, _ = fig8.make(fig8_inputs(tmp_path, sparsities=(0.9,)))
    text = stamp_text(fig)
    assert "illustrative" in text and "fewer than 3 sparsities" in text and "QMIX 3m: 0.9" in text
    assert fig._effmarl_evidence.startswith("illustrative")  # the sidecar records it too
    (tmp_path / "three").mkdir()
    fig, _ = fig8.make(fig8_inputs(tmp_path / "three"))
    assert "fewer than 3 sparsities" not in stamp_text(fig)


# ---- Figs. 13-15: one module, one output per algorithm ---------------------------------------------------------

@pytest.mark.parametrize("variant, title", [("qmix", "QMIX on SMAX"), ("ow_qmix", "OW-QMIX on SMAX"),
                                            ("res_qmix", "RES-QMIX on SMAX")])
def test_the_curves_module_draws_the_algorithm_its_variant_names(tmp_path, variant, title):
    from test_mast_analysis_figures import inputs_for

    curves = importlib.import_module(FIGURES["mast_curves"])
    fig, shown = curves.make(inputs_for(f"mast_curves {variant}", tmp_path), variant=variant)
    assert fig.axes[0].get_title().startswith(title) and set(shown["cfg.algo"]) == {variant}


def test_the_curves_command_needs_a_known_variant(tmp_path, capsys):
    from test_mast_analysis_figures import inputs_for

    from effmarl.cli import main

    inputs = inputs_for("mast_curves ow_qmix", tmp_path)
    assert main(["figure", "mast_curves", *inputs, "--out", str(tmp_path / "f")]) == 2
    assert "--variant is required: one of qmix, ow_qmix, res_qmix" in capsys.readouterr().err
    assert main(["figure", "mast_curves", "--variant", "wqmix", *inputs, "--out", str(tmp_path / "f")]) == 2
    assert main(["figure", "mast_curves", "--variant", "ow_qmix", *inputs, "--out", str(tmp_path / "f")]) == 0
    assert (tmp_path / "f.png").exists()
