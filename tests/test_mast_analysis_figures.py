"""Every paper-2 (MAST) figure module writes a PNG from small synthetic study summaries, including the smoke
profile's case of one seed and win rates of 0, and the tables work on that case too."""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest
import torch
from test_mast_analysis import run_rows, summary, table1_inputs, write

from effmarl.analysis.figures import FIGURES
from effmarl.analysis.io import save_figure
from effmarl.analysis.tables import TABLES
from effmarl.config import ConfigError
from effmarl.methods import METHODS as SPARSE_METHODS

METHODS = list(SPARSE_METHODS)  # every method of the table (effmarl/methods.py)


def masks_summary(seeds: int = 2, unit_types: bool = True) -> pd.DataFrame:
    rows = []
    for seed in range(seeds):
        for layer, numel in (("agent.fc1.weight", 600), ("agent.rnn.ih.weight", 1200), ("agent.fc2.weight", 60)):
            for agent in range(3):
                row = {"cfg.study": "mast_masks", "run_id": f"seed-{seed}", "git_commit": "abc", "cfg.profile": "t",
                       "cfg.algo": "qmix", "cfg.env.map": "2s3z", "cfg.seed": seed, "layer": layer, "agent": agent,
                       "active": 50 + 10 * agent + seed, "numel": numel}
                if unit_types:
                    row["unit_type"] = "stalker" if agent < 2 else "zealot"
                rows.append(row)
    return pd.DataFrame(rows)


def inputs_for(name: str, tmp_path) -> list[str]:
    """Named inputs of figure `name` built from synthetic summaries written under tmp_path."""
    p = lambda frame, stem: write(frame, tmp_path / f"{stem}.parquet")  # noqa: E731
    if name == "mast_fig1":
        f = summary("mast_fig1", [({"cfg.sparse.method": m, "cfg.env.map": "3s5z"}, [0.1 * i, 0.1 * i + 0.05])
                                  for i, m in enumerate(METHODS)])
        return [f"metrics={p(f, 'fig1')}"]
    if name == "mast_fig4":
        f = summary("mast_abl_nstep", [({"cfg.sparse.method": "rigl", "cfg.rlx2.multi_step.n": n,
                                         "cfg.sparse.sparsity": s}, [0.5 - 0.05 * n + s / 10]) for n in (1, 3, 5)
                                       for s in (0.8, 0.9)])
        return [f"metrics={p(f, 'nstep')}"]
    if name in ("mast_fig5", "mast_fig16"):
        rows = []
        for op in ("max", "softmax", "mellowmax", "soft_mellowmax"):
            for seed in range(2):
                rows += run_rows("mast_abl_operator", seed, list(np.linspace(0, 0.8, 30)),
                                 q=0.5 if op == "max" else 0.1, **{"cfg.mellowmax.operator": op})
        return [f"metrics={p(pd.DataFrame(rows), 'operator')}"]
    if name == "mast_fig6":
        f = summary("mast_abl_buffer", [({"cfg.sparse.method": m, "cfg.mast.dual_buffer.enabled": e}, [0.3, 0.4])
                                        for m in ("dense", "mast") for e in (False, True)], n_evals=5)
        return [f"metrics={p(f, 'buffer')}"]
    if name == "mast_fig8":
        fig8 = summary("mast_fig8", [({"cfg.sparse.method": m, "cfg.sparse.sparsity": s}, [0.6 - s / 2, 0.6 - s / 3])
                                     for m in METHODS[1:-1] for s in (0.5, 0.8, 0.9)])
        dense = summary("mast_dense", [({"cfg.sparse.method": "dense"}, [0.7, 0.75])])
        sweep = summary("mast_sweep", [({"cfg.sparse.sparsity": s}, [0.7 - s / 5]) for s in (0.5, 0.8, 0.9)])
        return [f"fig8={p(fig8, 'fig8')}", f"dense={p(dense, 'dense')}", f"sweep={p(sweep, 'sweep')}"]
    if name == "mast_fig10":
        t = summary("mast_tickets", [({"cfg.sparse.method": "static", "cfg.sparse.ticket.kind": k}, [w, w + 0.1])
                                     for k, w in (("random", 0.2), ("winning", 0.5), ("cheating", 0.7))])
        m = summary("mast_sweep", [({}, [0.6, 0.65])])
        return [f"tickets={p(t, 'tickets')}", f"mast={p(m, 'mast')}"]
    if name == "mast_fig11":
        files = []
        for seed in range(2):
            mask = torch.rand(3, 64, 20, generator=torch.Generator().manual_seed(seed)) < 0.1
            path = tmp_path / f"masks{seed}.pt"
            torch.save({"online": {"topology": {"masks": {"agent.fc1.weight": mask}}}}, path)
            files.append(f"mask_files={path}")
        return [f"masks={p(masks_summary(), 'masks')}", *files]
    if name == "mast_fig12":
        alloc = summary("mast_alloc", [({"cfg.sparse.allocation": a}, [w, w]) for a, w in
                                       (("learned", 0.6), ("equal", 0.5), ("by_type", 0.4))])
        return [f"masks={p(masks_summary(), 'masks')}", f"allocation={p(alloc, 'alloc')}"]
    if name.split()[0] == "mast_curves":  # "mast_curves ALGO": its runs relabelled as that algorithm's
        algo = (name.split() + ["qmix"])[1]
        inputs = [a for a in table1_inputs(tmp_path) if not a.startswith("sparsity=")]
        for arg in inputs:  # the same synthetic runs, relabelled as runs of the figure's algorithm
            path = arg.partition("=")[2]
            if path.endswith(".csv"):
                pd.read_csv(path).assign(algo=algo).to_csv(path, index=False)
            else:
                pd.read_parquet(path).assign(**{"cfg.algo": algo}).to_parquet(path)
        return inputs
    raise KeyError(name)


MAST_FIGURES = sorted(n for n in FIGURES if n.startswith("mast_fig") or n == "mast_curves")


def test_every_paper2_figure_is_registered():
    assert MAST_FIGURES == sorted([*(f"mast_fig{n}" for n in (1, 4, 5, 6, 8, 10, 11, 12, 16)), "mast_curves"])
    assert {"mast_selection", "mast_claims", *[f"mast_table{n}" for n in (1, 5, 6, 7, 8, 9, 10)]} <= set(TABLES)


@pytest.mark.parametrize("name", MAST_FIGURES)
def test_figure_writes_a_png_from_synthetic_input(name, tmp_path):
    module = importlib.import_module(FIGURES[name])
    assert module.CAPTION.startswith("Paper 2, Figure") and module.INPUTS
    inputs = inputs_for(name, tmp_path)
    fig, shown = module.make(inputs)
    texts = " ".join(t.get_text() for ax in fig.axes for t in [*ax.texts, ax.title]
                     + ([*ax.get_legend().get_texts()] if ax.get_legend() else []))
    assert "seed" in texts or "n=" in texts  # every aggregate says how many seeds it rests on
    written = save_figure(fig, tmp_path / name, inputs, shown, name=name, caption=module.CAPTION)
    png = [w for w in written if w.suffix == ".png"][0]
    assert png.exists() and png.stat().st_size > 5000


def test_figures_and_tables_survive_the_smoke_case_of_one_seed_and_zero_win_rates(tmp_path):
    dense = summary("mast_dense", [({"cfg.sparse.method": "dense"}, [0.0])], n_evals=2)
    sweep = summary("mast_sweep", [({"cfg.sparse.sparsity": 0.9}, [0.0])], n_evals=2)
    d, s = write(dense, tmp_path / "d.parquet"), write(sweep, tmp_path / "s.parquet")
    sel = importlib.import_module(TABLES["mast_selection"]).make([f"dense={d}", f"sweep={s}"])
    assert sel["chosen"].tolist() == [True] and "dense win rate is 0" in sel["note"].iloc[0]
    sel.to_csv(tmp_path / "sel.csv", index=False)
    curves = importlib.import_module(FIGURES["mast_curves"])
    fig, shown = curves.make([f"dense={d}", f"sweep={s}", f"baselines={s}", f"selection={tmp_path / 'sel.csv'}"])
    legend = " ".join(t.get_text() for t in fig.axes[0].get_legend().get_texts())
    assert "n = 1 seed" in legend
    save_figure(fig, tmp_path / "f13", [d], shown)
    # Fig. 15 with no RES-QMIX runs: a panel that says so, no crash
    fig, _ = curves.make([f"dense={d}", f"sweep={s}", f"baselines={s}", f"selection={tmp_path / 'sel.csv'}"],
                         variant="res_qmix")
    assert "no runs" in fig.axes[0].get_title() or fig.axes[0].texts
    fig1 = importlib.import_module(FIGURES["mast_fig1"])
    fig, shown = fig1.make([f"metrics={d}"])
    assert any("no CI" in t.get_text() for t in fig.axes[0].texts)
    t1 = importlib.import_module(TABLES["mast_table1"]).make(
        [f"dense={d}", f"sweep={s}", f"baselines={s}", f"sparsity={s}", f"selection={tmp_path / 'sel.csv'}"])
    assert t1.loc[t1["method"] == "MAST", "normalised"].isna().all()  # dense wins 0 %: no ratio
    fig12 = importlib.import_module(FIGURES["mast_fig12"])  # one seed: bars without an interval
    fig, _ = fig12.make([f"masks={write(masks_summary(1), tmp_path / 'm.parquet')}"])
    assert [t.get_text().split("\n")[0] for t in fig.axes[0].get_xticklabels()] == ["2s3z: stalker", "2s3z: zealot"]


def _fig8_inputs(tmp_path, fig8_budget: int = 1000, table1: bool = False) -> list[str]:
    fig8 = summary("mast_fig8", [({"cfg.sparse.method": "tiny", "cfg.sparse.sparsity": s,
                                   "cfg.budget.env_steps": fig8_budget}, [0.5, 0.5]) for s in (0.5, 0.9)])
    dense = summary("mast_dense", [({"cfg.sparse.method": "dense"}, [0.7, 0.75])])
    sweep = summary("mast_sweep", [({"cfg.sparse.sparsity": s}, [0.7 - s / 5]) for s in (0.5, 0.9)])
    args = [f"fig8={write(fig8, tmp_path / 'fig8.parquet')}", f"dense={write(dense, tmp_path / 'dense.parquet')}",
            f"sweep={write(sweep, tmp_path / 'sweep.parquet')}"]
    if table1:  # Table 1's baselines at the chosen 0.5: Tiny there replaces mast_fig8's point, SET is new
        base = summary("mast_table1", [({"cfg.sparse.method": m, "cfg.sparse.sparsity": 0.5}, [w, w])
                                       for m, w in (("tiny", 0.1), ("set", 0.6))])
        args.append(f"baselines={write(base, tmp_path / 'base.parquet')}")
    return args


def test_fig8_refuses_baselines_trained_with_another_budget(tmp_path):
    """The default profile once fed Fig. 8 with 50 000-step baselines beside 250 000-step MAST and dense runs: a
    panel of methods trained differently is refused with one line naming the setting and the inputs."""
    module = importlib.import_module(FIGURES["mast_fig8"])
    with pytest.raises(ConfigError) as err:
        module.make(_fig8_inputs(tmp_path, fig8_budget=500))
    assert len(err.value.lines) == 1
    assert "cfg.budget.env_steps: 1000 (dense, sweep); 500 (fig8)" in err.value.lines[0]
    module.make(_fig8_inputs(tmp_path))  # alike: drawn


def test_fig8_takes_table1_baselines_at_their_points_and_its_own_grid_elsewhere(tmp_path):
    module = importlib.import_module(FIGURES["mast_fig8"])
    _, shown = module.make(_fig8_inputs(tmp_path, table1=True))
    points = shown.drop_duplicates(["cfg.study", "run_id"]).groupby(
        ["cfg.sparse.method", "cfg.sparse.sparsity"])["cfg.study"].agg(lambda s: sorted(set(s)))
    assert points[("tiny", 0.5)] == ["mast_table1"] and points[("tiny", 0.9)] == ["mast_fig8"]
    assert points[("set", 0.5)] == ["mast_table1"]
    dense, sweep = _fig8_inputs(tmp_path)[1:]
    _, shown = module.make([dense, sweep, _fig8_inputs(tmp_path, table1=True)[-1]])  # Table 1's runs alone
    assert set(shown["cfg.study"]) == {"mast_table1", "mast_dense", "mast_sweep"}
