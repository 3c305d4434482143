"""Figure 8 as a sweep (issue 35): each method's mean over seeds with its Student-t interval at each sparsity, dense
as a line with its band, methods at one sparsity side by side, and a stamp where the sweep has too few sparsities
to show anything; Figure 12 as what each agent and unit type holds, from hand-made masks."""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest
from matplotlib.container import ErrorbarContainer
from test_mast_analysis import summary, write

from effmarl.analysis.figures import FIGURES
from effmarl.config import ConfigError

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


def test_fig8_with_one_sparsity_says_inside_the_image_that_it_is_illustrative_and_two_bracket_a_breakdown(tmp_path):
    """One sparsity cannot show where a method falls below dense; two can (it holds at one and not at the next: the
    default's 0.95 and 0.99)."""
    fig, _ = fig8.make(fig8_inputs(tmp_path, sparsities=(0.9,)))
    text = stamp_text(fig)
    assert "illustrative" in text and "fewer than 2 sparsities" in text and "QMIX 3m: 0.9" in text
    assert fig._effmarl_evidence.startswith("illustrative")  # the sidecar records it too
    (tmp_path / "two").mkdir()
    fig, _ = fig8.make(fig8_inputs(tmp_path / "two", sparsities=(0.95, 0.99)))
    assert "fewer than" not in stamp_text(fig)


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


# ---- Fig. 12: what each agent and unit type holds of the one budget --------------------------------------------

fig12 = importlib.import_module(FIGURES["mast_fig12"])
T_1 = 12.706204736174698  # Student t, 1 degree of freedom, 0.975 quantile


def hand_masks(per_seed: dict[int, list[int]], types=("stalker", "stalker", "zealot", "zealot", "zealot"),
               game_map="2s3z") -> pd.DataFrame:
    """Masks of 2s3z runs: agent a's active connections per_seed[seed][a], split over two layers (1/4 and 3/4)."""
    rows = []
    for seed, actives in per_seed.items():
        for agent, (unit, active) in enumerate(zip(types, actives, strict=True)):
            for layer, part in (("agent.fc1.weight", active // 4), ("agent.fc2.weight", active - active // 4)):
                rows.append({"cfg.study": "mast_alloc", "run_id": f"seed-{seed}", "git_commit": "abc",
                             "cfg.profile": "t", "cfg.algo": "qmix", "cfg.env.map": game_map, "cfg.seed": seed,
                             "layer": layer, "agent": agent, "unit_type": unit, "active": part, "numel": 1000})
    return pd.DataFrame(rows)


def test_fig12_shows_an_uneven_allocation_as_what_each_agent_and_type_holds_against_an_equal_split(tmp_path):
    # seed 0: stalkers 300, 300, zealots 100, 100, 200 of 1000 -> held = 5 x share = 1.5, 1.5 | 0.5, 0.5, 1.0:
    #   stalkers 1.5, zealots 2/3, shares 60 % / 40 %; seed 1: 200 each -> every agent and type holds 1.0
    masks = hand_masks({0: [300, 300, 100, 100, 200], 1: [200, 200, 200, 200, 200]})
    agents, types = fig12.holdings(masks)
    seed0 = types[types["run_id"] == "seed-0"].set_index("unit_type")
    assert seed0["held"].to_dict() == pytest.approx({"stalker": 1.5, "zealot": 2 / 3})
    assert seed0["share"].to_dict() == pytest.approx({"stalker": 0.6, "zealot": 0.4})
    assert sorted(agents.loc[agents["run_id"] == "seed-0", "held"]) == pytest.approx([0.5, 0.5, 1.0, 1.5, 1.5])
    fig, _ = fig12.make([f"masks={write(masks, tmp_path / 'm.parquet')}"])
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([1.25, 5 / 6])  # stalker (1.5 + 1.0) / 2, zealot (2/3 + 1) / 2
    (bars,) = [c for c in ax.collections if len(c.get_segments()) == 2]
    ends = [tuple(seg[:, 1]) for seg in bars.get_segments()]
    half = T_1 * np.std([1.5, 1.0], ddof=1) / np.sqrt(2)
    assert ends[0] == pytest.approx((1.25 - half, 1.25 + half))
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["2s3z: stalker\n50% of budget", "2s3z: zealot\n50% of budget"]  # (60 + 40) / 2, (40 + 60) / 2


def test_fig12_refuses_runs_whose_agents_are_all_of_one_unit_type(tmp_path):
    masks = hand_masks({0: [300, 300, 400]}, types=("marine",) * 3, game_map="3m")
    with pytest.raises(ConfigError) as err:
        fig12.make([f"masks={write(masks, tmp_path / 'm.parquet')}"])
    assert "several unit types" in err.value.lines[0]


def test_fig12_counts_exactly_the_smax_maps_whose_allies_have_several_unit_types():
    from effmarl.envs.smax import MAPS, scenario_kwargs

    several = []
    for name in MAPS:
        scenario = scenario_kwargs(name)["scenario"]
        if len(set(np.asarray(scenario.unit_types)[: scenario.num_allies].tolist())) > 1:
            several.append(name)
    assert fig12.INPUTS["masks"]["where_some"] == {"env.map": several}
