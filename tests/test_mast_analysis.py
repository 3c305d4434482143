"""Paper-2 (MAST) analysis: the win-rate statistic, seed alignment of curves, the sparsity selection, Table 1 and the
claims table, against hand-computed values on small synthetic study summaries."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from effmarl.analysis import metrics
from effmarl.analysis.tables import mast_claims, mast_selection, mast_table1, mast_table5, mast_table8, mast_table9
from effmarl.config import ConfigError

EVERY = 100
BASE = {"cfg.algo": "qmix", "cfg.env.map": "3m", "cfg.sparse.method": "mast", "cfg.sparse.sparsity": 0.9,
        "cfg.profile": "test", "cfg.qmix.eval_every": EVERY, "cfg.budget.env_steps": 1000,
        "cfg.mast.td_lambda.burn_in_fraction": 0.375, "cfg.mellowmax.alpha": 1.0, "cfg.mellowmax.omega": 10.0,
        "cfg.mast.dual_buffer.batch_ratio": 3}


def run_rows(study: str, seed: int, wins, jitter: int = 0, q=None, **cfg) -> list[dict]:
    """One run's metrics rows: an evaluation row per value of `wins` at eval_step i*EVERY (env_steps shifted by
    `jitter`), and a training-only row between evaluations (no test_win_rate, no eval_step)."""
    conf = {**BASE, **cfg, "cfg.study": study, "cfg.seed": seed, "git_commit": "abcdef1234"}
    conf["run_id"] = "_".join(f"{k.rsplit('.', 1)[-1]}-{v}" for k, v in cfg.items()) + f"_seed-{seed}"
    rows = []
    for i, w in enumerate(wins):
        rows.append({**conf, "env_steps": i * EVERY + jitter, "eval_step": i * EVERY, "test_win_rate": w,
                     "q_taken_mean": (q if q is not None else 0.1) * (i + 1)})
        rows.append({**conf, "env_steps": i * EVERY + jitter + EVERY // 2, "eval_step": np.nan,
                     "test_win_rate": np.nan, "q_taken_mean": np.nan})
    return rows


def summary(study: str, runs: list[tuple[dict, list]], n_evals: int = 4) -> pd.DataFrame:
    """A metrics summary: `runs` = [(cfg, [final win rate per seed])]; each run evaluates `n_evals` times at its
    final win rate (so the last-K mean is that value)."""
    rows = []
    for cfg, finals in runs:
        for seed, w in enumerate(finals):
            rows += run_rows(study, seed, [w] * n_evals, **cfg)
    return pd.DataFrame(rows)


def write(frame: pd.DataFrame, path) -> str:
    frame.to_parquet(path)
    return str(path)


# ---- the statistic ------------------------------------------------------------------------------------------------

def test_the_statistic_over_eight_seeds_is_their_mean_with_its_t_interval_not_the_interquartile_mean():
    values = [0.9, 0.1, 0.7, 0.3, 0.2, 0.6, 0.5, 0.4]  # mean 0.4625; the IQM would be 0.45 (the middle four)
    per_run = pd.DataFrame({"cfg.study": "s", "run_id": [f"r{i}" for i in range(8)], "g": "a", "win_rate": values})
    stats = metrics.seed_stats(per_run, ["g"]).iloc[0]
    assert stats["mean"] == pytest.approx(0.4625) and stats["seeds"] == 8
    # s = 0.266927 (ddof 1), t_{7, 0.975} = 2.364624: half-width 2.364624 · 0.266927 / √8 = 0.223157
    assert (stats["mean_lo"], stats["mean_hi"]) == pytest.approx((0.4625 - 0.223157, 0.4625 + 0.223157), abs=1e-5)


def test_one_seed_has_no_interval_and_says_so():
    per_run = pd.DataFrame({"cfg.study": "s", "run_id": ["r0"], "g": "a", "win_rate": [0.4]})
    stats = metrics.seed_stats(per_run, ["g"]).iloc[0]
    assert stats["mean"] == 0.4 and stats["seeds"] == 1
    assert np.isnan(stats["mean_lo"]) and np.isnan(stats["mean_hi"]) and np.isnan(stats["std"])
    assert metrics.interval_text(stats["mean_lo"], stats["mean_hi"]) == "no interval (1 seed)"
    assert metrics.seeds_text([1]) == "n = 1 seed" and metrics.seeds_text([2, 3]) == "n = 2-3 seeds"


def test_three_seeds_have_the_student_t_interval_of_their_mean_not_a_bootstrap_one_standard_deviation_wide():
    # 0.6, 0.7, 0.8: mean = 0.7, s = 0.1, half-width t_{2, 0.975} · 0.1 / √3 = 4.302653 · 0.057735 = 0.248414
    per_run = pd.DataFrame({"cfg.study": "s", "run_id": ["r0", "r1", "r2"], "g": "a", "win_rate": [0.6, 0.7, 0.8]})
    stats = metrics.seed_stats(per_run, ["g"]).iloc[0]
    assert (stats["mean_lo"], stats["mean_hi"]) == pytest.approx((0.7 - 0.248414, 0.7 + 0.248414), abs=1e-6)
    # against a dense of 0.8 on every seed, the ratio's interval is that interval over 0.8 (Fieller with v_b = 0)
    dense = pd.DataFrame({"cfg.study": "d", "run_id": ["d0", "d1", "d2"], "g": "a", "win_rate": [0.8] * 3})
    vs = metrics.mast.versus_dense(per_run, dense, ["g"], ["g"]).iloc[0]
    assert (vs["normalised_lo"], vs["normalised_hi"]) == pytest.approx(((0.7 - 0.248414) / 0.8,
                                                                        (0.7 + 0.248414) / 0.8), abs=1e-6)


def test_a_ratio_without_an_interval_says_why_instead_of_blaming_one_seed():
    mine = pd.DataFrame({"cfg.study": "s", "run_id": ["r0", "r1", "r2"], "g": "a", "win_rate": [0.5, 0.5, 0.6]})
    # dense 0.0, 0.0, 0.3: IQM 0.1 with standard error 0.1, so its t-interval reaches 0 and the ratio is unbounded
    dense = pd.DataFrame({"cfg.study": "d", "run_id": ["d0", "d1", "d2"], "g": "a", "win_rate": [0.0, 0.0, 0.3]})
    vs = metrics.mast.versus_dense(mine, dense, ["g"], ["g"]).iloc[0]
    assert np.isnan(vs["normalised_lo"]) and vs["normalised_why"] == "dense's interval reaches 0"
    one = metrics.mast.versus_dense(mine.iloc[:1], dense, ["g"], ["g"]).iloc[0]
    assert one["normalised_why"] == "1 seed"
    assert metrics.mast.versus_dense(mine, dense.iloc[:1], ["g"], ["g"]).iloc[0]["normalised_why"] == "1 dense seed"
    assert metrics.mast.versus_dense(mine, mine, ["g"], ["g"]).iloc[0]["normalised_why"] == ""


def test_final_win_rate_averages_the_last_k_evaluations_of_the_final_tenth_of_the_run():
    wins = list(np.linspace(0, 1, 25))  # evaluations at x = 0, 100, ..., 2400
    frame = pd.DataFrame(run_rows("s", 0, wins) + run_rows("s", 1, [0.2, 0.4, 0.9]))
    final = metrics.final_win_rate(frame).set_index("cfg.seed")
    # the final 10 %: x >= 2160, the last 3 evaluations; seed 1 (x = 0, 100, 200): x >= 180, the last one
    assert final.loc[0, "win_rate"] == pytest.approx(np.mean(wins[22:])) and final.loc[0, "evals"] == 3
    assert final.loc[1, "win_rate"] == pytest.approx(0.9) and final.loc[1, "evals"] == 1
    whole = metrics.final_win_rate(frame, fraction=1.0).set_index("cfg.seed")  # no window: last min(K, available)
    assert whole.loc[0, "win_rate"] == pytest.approx(np.mean(wins[5:])) and whole.loc[0, "evals"] == 20
    assert whole.loc[1, "win_rate"] == pytest.approx(0.5) and whole.loc[1, "evals"] == 3
    assert metrics.final_win_rate(frame, k=2, fraction=1.0).set_index("cfg.seed").loc[1, "win_rate"] == \
        pytest.approx(0.65)
    paper = pd.DataFrame(run_rows("p", 0, list(np.linspace(0, 1, 201))))  # 2 M steps, one evaluation per 10 000
    assert metrics.final_win_rate(paper.assign(eval_step=paper["eval_step"] * 100))["evals"].item() == 20


def test_curves_align_seeds_on_eval_step_not_raw_env_steps():
    # two seeds evaluate at different raw env_steps (jitter 0 and 37) but on the same grid step
    frame = pd.DataFrame(run_rows("s", 0, [0.0, 0.2, 0.4, 0.6], jitter=0)
                         + run_rows("s", 1, [0.2, 0.4, 0.6, 0.8], jitter=37))
    c = metrics.curves(frame, ["cfg.sparse.method"], smooth=False)
    assert list(c["x"]) == [0.0, 100.0, 200.0, 300.0]  # one band per x
    assert (c["seeds"] == 2).all()
    assert list(c["mean"]) == pytest.approx([0.1, 0.3, 0.5, 0.7])
    assert (c["lo"] <= c["mean"]).all() and (c["mean"] <= c["hi"]).all()
    smoothed = metrics.curves(frame, ["cfg.sparse.method"])  # 4 points: the window is clipped to 3
    assert len(smoothed) == 4 and smoothed["mean"].notna().all()
    q = metrics.curves(frame, ["cfg.sparse.method"], value="q_taken_mean", smooth=False)
    assert list(q["x"]) == [0.0, 100.0, 200.0, 300.0] and (q["seeds"] == 2).all()


def test_savgol_is_scipys_filter_with_the_window_at_most_a_third_of_the_series():
    """Figure 13 of the default run smoothed 26 evaluations with a window of 21 and reversed Table 1's order."""
    from scipy.signal import savgol_filter

    y = np.random.default_rng(0).random(90)
    assert metrics.savgol(y) == pytest.approx(savgol_filter(y, 21, 2))  # 90 points: the paper's window
    assert metrics.savgol(y[:26]) == pytest.approx(savgol_filter(y[:26], 7, 2))  # 26 points: 8, made odd
    assert metrics.savgol(y[:10]) == pytest.approx(savgol_filter(y[:10], 3, 2))  # 10 points: window 3
    assert metrics.savgol(y[:8]) == pytest.approx(y[:8])  # a window of 2 is not above the order: as is


# ---- selection ----------------------------------------------------------------------------------------------------

def selection_inputs(tmp_path):
    dense = summary("mast_dense", [({"cfg.sparse.method": "dense"}, [0.8, 0.8, 0.8]),
                                   ({"cfg.sparse.method": "dense", "cfg.env.map": "2s3z"}, [0.5, 0.5])])
    sweep = summary("mast_sweep", [
        ({"cfg.sparse.sparsity": 0.5}, [0.8, 0.8]),  # 1.0 of dense: admissible
        ({"cfg.sparse.sparsity": 0.7}, [0.78, 0.78]),  # 0.975: admissible (within 3 %)
        ({"cfg.sparse.sparsity": 0.9}, [0.7, 0.7]),  # 0.875: not admissible
        ({"cfg.sparse.sparsity": 0.5, "cfg.env.map": "2s3z"}, [0.4, 0.4]),  # 0.8
        ({"cfg.sparse.sparsity": 0.9, "cfg.env.map": "2s3z"}, [0.3, 0.3])])  # 0.6: none admissible
    return write(dense, tmp_path / "dense.parquet"), write(sweep, tmp_path / "sweep.parquet")


def test_selection_picks_the_highest_admissible_sparsity_and_falls_back_to_the_lowest(tmp_path):
    dense, sweep = selection_inputs(tmp_path)
    table = mast_selection.make([f"dense={dense}", f"sweep={sweep}"])
    assert {"algo", "map", "sparsity", "chosen"} <= set(table.columns)
    assert set(table["algo"]) == {"qmix"}  # raw config values, not display names
    cell = table[table["map"] == "3m"].set_index("sparsity")
    assert list(cell["admissible"]) == [True, True, False]
    assert cell["normalised"].to_dict() == pytest.approx({0.5: 1.0, 0.7: 0.975, 0.9: 0.875})
    assert list(cell["chosen"]) == [False, True, False]  # 0.7: the highest admissible
    assert (cell["seeds"] == 2).all() and (cell["dense_seeds"] == 3).all()
    other = table[table["map"] == "2s3z"].set_index("sparsity")
    assert not other["admissible"].any()
    assert list(other["chosen"]) == [True, False]  # none admissible: the lowest swept, still admissible=False
    assert other.loc[0.5, "rule"].startswith("none admissible")
    assert table["chosen"].sum() == 2


# ---- Table 1 ------------------------------------------------------------------------------------------------------

BASELINE_WINS = {"tiny": 0.4, "static": 0.6, "set": 0.64, "rigl": 0.72, "rlx2": 0.76}
RATIOS = {"mast": (0.3, 0.25, 0.2), "tiny": (0.3, 0.3, 0.3), "static": (0.3, 0.25, 0.2), "set": (0.3, 0.25, 0.2),
          "rigl": (0.3, 0.25, 0.2), "rlx2": (0.3, 0.5, 0.2)}  # size, train FLOPs, inference FLOPs ratios


def sparsity_summary(frame: pd.DataFrame, method: str | None = None) -> pd.DataFrame:
    runs = frame.drop_duplicates(["cfg.study", "run_id"]).copy()
    m = runs["cfg.sparse.method"] if method is None else pd.Series(method, index=runs.index)
    runs["size_ratio"] = [RATIOS[x][0] for x in m]
    runs["train_flops_ratio"] = [RATIOS[x][1] for x in m]
    runs["inference_flops_ratio"] = [RATIOS[x][2] for x in m]
    runs["dense_size"] = 1000.0
    runs["size"] = runs["size_ratio"] * 1000.0
    return runs


def table1_inputs(tmp_path):
    dense, sweep = selection_inputs(tmp_path)
    sel_path = tmp_path / "selection.csv"
    mast_selection.make([f"dense={dense}", f"sweep={sweep}"]).to_csv(sel_path, index=False)
    baselines = summary("mast_table1", [({"cfg.sparse.method": m, "cfg.sparse.sparsity": 0.7}, [w, w])
                                        for m, w in BASELINE_WINS.items()]
                        + [({"cfg.sparse.method": "set", "cfg.sparse.sparsity": 0.9}, [0.0, 0.0])])  # not chosen
    sweep_frame = pd.read_parquet(sweep)
    sp = pd.concat([sparsity_summary(sweep_frame, "mast"), sparsity_summary(baselines)], ignore_index=True)
    return [f"dense={dense}", f"sweep={sweep}", f"baselines={write(baselines, tmp_path / 'base.parquet')}",
            f"sparsity={write(sp, tmp_path / 'sparsity.parquet')}", f"selection={sel_path}"]


def test_table1_holds_all_seven_methods_with_hand_computed_normalised_values(tmp_path):
    table = mast_table1.make(table1_inputs(tmp_path))
    cells = table[(table["map"] == "3m")].set_index("method")
    assert list(cells.index) == ["Dense", "Tiny", "SS", "SET", "RigL", "RLx2", "MAST"]
    assert (cells.loc[cells.index != "Dense", "sparsity"] == 0.7).all() and cells.loc["Dense", "sparsity"] == 0.0
    expected = {"Dense": 1.0, "MAST": 0.78 / 0.8, **{metrics_name: w / 0.8 for metrics_name, w in
                                                     zip(["Tiny", "SS", "SET", "RigL", "RLx2"],
                                                         BASELINE_WINS.values(), strict=True)}}
    assert cells["normalised"].to_dict() == pytest.approx({k: round(v, 4) for k, v in expected.items()})
    assert cells.loc["MAST", "mean"] == pytest.approx(0.78) and cells.loc["SET", "seeds"] == 2  # the 0.9 SET dropped
    assert cells.loc["Dense", ["size_ratio", "train_flops_ratio", "inference_flops_ratio"]].tolist() == [1, 1, 1]
    assert cells.loc["Dense", "size"] == 1000 and cells.loc["MAST", "size"] == 300
    assert cells.loc["MAST", "train_flops_reduction"] == pytest.approx(4.0)
    assert cells.loc["RLx2", "train_flops_ratio"] == pytest.approx(0.5)
    average = table[(table["map"] == "average") & (table["method"] == "MAST")].iloc[0]
    # MAST runs at the chosen sparsity only: 3m at 0.7 and 2s3z at 0.5 (the fallback), both with ratio 0.25
    assert average["train_flops_reduction"] == pytest.approx(4.0) and average["maps"] == "2s3z, 3m"
    (tmp_path / "t5").mkdir()
    t5 = mast_table5.make([a for a in table1_inputs(tmp_path / "t5") if not a.startswith("sparsity=")])
    mast = t5[(t5["map"] == "3m") & (t5["method"] == "MAST")].iloc[0]
    assert mast["win_rate_std"] == 0.0 and mast["normalised_mean"] == pytest.approx(0.975)
    assert mast["win rate"] == "0.780 ± 0.000"
    # the interval of method / dense and the probability of improvement, as Table 1 has them
    assert mast["normalised [95 % CI]"] == "0.975 [0.975, 0.975]" and mast["p_improvement"] == 0.0


def test_claims_name_their_runs_and_say_what_the_runs_cannot_check(tmp_path):
    claims = mast_claims.make(table1_inputs(tmp_path)).set_index("claim")
    # 2s3z is in these runs (at its fallback sparsity), but on 2 seeds of 4 evaluations: illustrative, not claimed
    # (metrics.evidence; tests/test_mast_evidence.py has the rows with values)
    on_2s3z = claims.loc["training / inference FLOPs reduction, MAST-QMIX on 2s3z"]
    assert on_2s3z["ours"].startswith("not claimed: illustrative: 2 seeds, 1,000 steps — not evidence")
    assert on_2s3z["ratio ours/paper"] == "" and on_2s3z["evidence"] == on_2s3z["ours"].removeprefix("not claimed: ")
    wqmix = claims.loc["average training-FLOPs reduction over maps, MAST-OW-QMIX"]
    assert wqmix["ours"].startswith("not measured")
    qmix = claims.loc["average training-FLOPs reduction over maps, MAST-QMIX"]
    assert qmix["ours"].startswith("not claimed: illustrative") and qmix["ratio ours/paper"] == ""
    assert "mast_dense" in qmix["runs"] and "budget 1,000" in qmix["runs"]
    perf = claims.loc["MAST's win rate relative to dense, every cell"]
    assert "SMAX is not SMAC" in perf["caveat"] and "no swept sparsity within 3 % of dense" in perf["caveat"]
    assert claims.loc["MAST-QMIX win rate on 3s5z with 10 % of the parameters", "ours"].startswith("not measured")
    empty = mast_claims.make([])
    assert empty["ours"].str.startswith("not measured").all()


PROBE = pd.DataFrame({"variant": ["base", "eps", "x10"], "seed": 0, "map": "2s3z", "reward_scale": [1.0, 1.0, 10.0],
                      "env_steps": [100, 200, 300], "learned": [False, False, True],
                      "plateau": [False, False, True], "last_win_rate": [0.0, 0.03, 0.5]})


def test_the_2s3z_row_says_what_the_map_probe_measured_there_where_no_run_trains_on_it(tmp_path):
    path = tmp_path / "probe.csv"
    PROBE.to_csv(path, index=False)
    row = mast_claims.make([f"map_probe={path}"]).set_index("claim").loc[
        "training / inference FLOPs reduction, MAST-QMIX on 2s3z", "ours"]
    assert row.startswith("not measured: needs dense and MAST runs")
    assert row.endswith("measured instead: dense QMIX's probe on 2s3z (one seed a variant, illustrative; "
                        "benchmarks/results/qmix_multitype_maps.md): at SMAX's reward not learned by any of 2 "
                        "variant(s) (last test win rate at most 0.03, through 200 env steps); at SMAX's reward x 10 "
                        "learned by 1 of 1 variant(s), best last test win rate 0.50 at 300 env steps (at its plateau)")
    # runs on 2s3z decide the row themselves: the probe is not quoted there
    with_runs = mast_claims.make([*table1_inputs(tmp_path), f"map_probe={path}"]).set_index("claim").loc[
        "training / inference FLOPs reduction, MAST-QMIX on 2s3z", "ours"]
    assert "probe" not in with_runs
    # a probe on another map says nothing about 2s3z
    PROBE.assign(map="3s5z").to_csv(path, index=False)
    assert "probe" not in mast_claims.make([f"map_probe={path}"]).set_index("claim").loc[
        "training / inference FLOPs reduction, MAST-QMIX on 2s3z", "ours"]


def test_a_map_probe_lacking_a_column_is_refused_naming_the_file_and_the_columns(tmp_path):
    path = tmp_path / "probe.csv"
    PROBE.drop(columns="learned").to_csv(path, index=False)
    with pytest.raises(ConfigError) as err:
        mast_claims.make([f"map_probe={path}"])
    assert str(err.value).count("\n") == 0 and f"map_probe {path}: lacks column(s) learned" in str(err.value)


def test_ablation_tables_mark_the_default_and_table8_is_an_alpha_by_omega_grid(tmp_path):
    b = summary("mast_abl_b1b2", [({"cfg.mast.dual_buffer.batch_ratio": r}, [w]) for r, w in ((1, 0.2), (3, 0.5))])
    t9 = mast_table9.make([f"metrics={write(b, tmp_path / 'b.parquet')}"]).set_index("b1:b2")
    assert t9.loc[3, "default"] and not t9.loc[1, "default"]
    assert t9.loc[3, "mean"] == 0.5 and t9.loc[3, "seeds"] == 1 and t9.loc[3, "interval"] == "no interval (1 seed)"
    g = summary("mast_abl_smm", [({"cfg.mellowmax.alpha": a, "cfg.mellowmax.omega": o}, [0.1 * a + 0.01 * o] * 2)
                                 for a in (1.0, 5.0) for o in (10.0, 20.0)])
    t8 = mast_table8.make([f"metrics={write(g, tmp_path / 'g.parquet')}"])
    # the evidence column first (metrics.evidence: 2 seeds per cell are illustrative), then the α x ω grid
    assert list(t8.columns) == ["evidence", "α", "ω = 10", "ω = 20"] and len(t8) == 2
    assert t8["evidence"].str.startswith("illustrative: 2 seeds, 1,000 steps — not evidence").all()
    assert t8.iloc[0]["ω = 10"].startswith("0.200") and t8.iloc[0]["ω = 10"].endswith("(n=2)*")


def test_an_ablation_row_is_compared_with_the_default_settings_runs_by_fiellers_interval(tmp_path):
    """Tables 6-10: each value's mean / the default's (B1:B2 = 3) with stats.ratio_interval's bounds on the same
    runs, what the interval shows, and one seed named as why there is none."""
    from effmarl.analysis.metrics.stats import ratio_interval

    low, default = [0.2, 0.3, 0.25], [0.5, 0.6, 0.55]
    b = summary("mast_abl_b1b2", [({"cfg.mast.dual_buffer.batch_ratio": r}, w) for r, w in
                                  ((1, low), (3, default), (7, [0.6, 0.5, 0.55]), (5, [0.5]))])
    t = mast_table9.make([f"metrics={write(b, tmp_path / 'b.parquet')}"]).set_index("b1:b2")
    lo, hi = ratio_interval(low, default)
    assert t.loc[1, "ratio"] == pytest.approx(0.25 / 0.55, abs=1e-3)
    assert (t.loc[1, "ratio_lo"], t.loc[1, "ratio_hi"]) == pytest.approx((lo, hi), abs=1e-3) and hi < 1
    assert t.loc[1, "vs_default"] == f"0.455 [{lo:.3f}, {hi:.3f}] below"
    assert t.loc[1, "p_improvement"] == 0.0 and t.loc[3, "vs_default"] == "default"
    assert t.loc[7, "ratio"] == 1.0 and t.loc[7, "vs_default"].endswith("no difference shown")
    assert t.loc[5, "vs_default"] == "0.909 no interval (1 seed)"
    no_default = b[b["cfg.mast.dual_buffer.batch_ratio"] != 3]
    t = mast_table9.make([f"metrics={write(no_default, tmp_path / 'n.parquet')}"])
    assert (t["vs_default"] == "no default run").all()


def test_table1_and_the_selection_refuse_runs_trained_alike_in_name_only(tmp_path):
    """Every method of a Table-1 cell is trained with identical settings (paper 2): a dense model with a larger
    update ratio than the sweep is refused before any statistic is computed; another map's cell may differ."""
    dense = summary("mast_dense", [({"cfg.sparse.method": "dense", "cfg.qmix.updates_per_round": 8}, [0.8, 0.8]),
                                   ({"cfg.sparse.method": "dense", "cfg.env.map": "2s3z"}, [0.5])])
    sweep = summary("mast_sweep", [({"cfg.sparse.sparsity": 0.5, "cfg.qmix.updates_per_round": 2}, [0.8, 0.8]),
                                   ({"cfg.sparse.sparsity": 0.5, "cfg.env.map": "2s3z"}, [0.4])])
    with pytest.raises(ValueError) as err:
        metrics.select_sparsity(dense, sweep)
    assert str(err.value).splitlines() == [
        "sparsity selection: qmix/3m: runs differ in cfg.qmix.updates_per_round: 2 (sweep); 8 (dense) (every method "
        "of one comparison must be trained alike)"]
    with pytest.raises(ValueError, match="Table 1: qmix/3m: runs differ in cfg.qmix.updates_per_round"):
        metrics.table1_cells(dense, sweep, None, None, pd.DataFrame({"algo": ["qmix"], "map": ["3m"],
                                                                     "sparsity": [0.5], "chosen": [True],
                                                                     "admissible": [True]}))
    metrics.select_sparsity(dense[dense["cfg.env.map"] == "2s3z"], sweep[sweep["cfg.env.map"] == "2s3z"])


def test_probability_of_improvement_counts_pairs_and_half_ties():
    # x = 1, 2, 3 against y = 2, 2: pairs won 0 + 0 + 2, tied 0 + 2 + 0 -> (2 + 0.5 * 2) / 6
    assert metrics.probability_of_improvement([1, 2, 3], [2, 2]) == pytest.approx(0.5)
    assert metrics.probability_of_improvement([3, 4], [1, 2]) == 1.0
    assert metrics.probability_of_improvement([0.5, 0.9, 0.1], [0.6]) == pytest.approx(1 / 3)  # only 0.9 beats 0.6
    assert np.isnan(metrics.probability_of_improvement([1.0], []))


def test_table1_and_selection_say_how_likely_a_method_beats_dense(tmp_path):
    table = mast_table1.make(table1_inputs(tmp_path))
    cells = table[(table["map"] == "3m")].set_index("method")
    # dense wins 0.8 in each of 3 runs; every baseline's 2 runs win less (0.4 ... 0.76): P = 0; MAST 0.78 < 0.8: 0
    assert (cells.loc[["Tiny", "SS", "SET", "RigL", "RLx2", "MAST"], "p_improvement"] == 0).all()
    assert pd.isna(cells.loc["Dense", "p_improvement"])
    # constant runs: the interval collapses on the ratio itself
    assert cells.loc["MAST", "normalised_lo"] == pytest.approx(0.78 / 0.8, abs=1e-4)
    assert cells.loc["MAST", "normalised_hi"] == pytest.approx(0.78 / 0.8, abs=1e-4)
    dense, sweep = selection_inputs(tmp_path)
    sel = mast_selection.make([f"dense={dense}", f"sweep={sweep}"]).set_index(["map", "sparsity"])
    assert sel.loc[("3m", 0.5), "p_improvement"] == pytest.approx(0.5)  # 0.8 vs 0.8 everywhere: all ties
    assert sel.loc[("2s3z", 0.9), "p_improvement"] == 0.0


# ---- defects of the published default run (issue: paper 2 on the default profile) --------------------------------

def test_table10_prints_the_delta_m_the_runs_used_beside_the_configured_one(tmp_path):
    """The default run printed Δm = 100 / 200 / 400 where its 50 000-step runs scaled them to 2 / 5 / 10 updates."""
    from effmarl.analysis.tables import mast_table10

    runs = [({"cfg.sparse.delta_m": dm, "cfg.budget.env_steps": 50_000, "cfg.qmix.scale_schedules": True}, [0.5])
            for dm in (100, 200, 400)]
    table = mast_table10.make([f"metrics={write(summary('mast_abl_dm', runs), tmp_path / 'm.parquet')}"])
    assert table[["Δm", "Δm used"]].astype(str).values.tolist() == [["100", "2"], ["200", "5"], ["400", "10"]]


def test_an_output_of_runs_trained_at_two_commits_is_refused_in_one_line_naming_them(tmp_path, capsys):
    """Table 1 of the default run compared dense and the sweep (commit 538d4ff) with baselines of 9fcbb18."""
    from effmarl.cli import main

    dense = summary("mast_dense", [({"cfg.sparse.method": "dense"}, [0.8, 0.8])])
    baselines = summary("mast_table1", [({"cfg.sparse.method": "rigl"}, [0.7, 0.7, 0.7])])
    baselines["git_commit"] = "9fcbb18938"
    code = main(["figure", "mast_fig8", f"dense={write(dense, tmp_path / 'd.parquet')}",
                 f"sweep={write(dense.assign(**{'cfg.study': 'mast_sweep'}), tmp_path / 's.parquet')}",
                 f"baselines={write(baselines, tmp_path / 'b.parquet')}", "--out", str(tmp_path / "f")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "runs of 2 commits" in err[0] and "9fcbb18938: mast_table1 (3 runs)" in err[0], err[0]
    assert "abcdef1234: mast_dense (2 runs), mast_sweep (2 runs)" in err[0], err[0]
    assert not (tmp_path / "f.png").exists()


def declared_inputs(tmp_path):
    """Table 1 with a declared sparsity (the default profile's): the baselines ran at 0.9 while the selection's 3 %
    rule chose 0.7 (selection_inputs: MAST / dense 1.0, 0.975, 0.875 at 0.5, 0.7, 0.9)."""
    dense, sweep = selection_inputs(tmp_path)
    sel_path = tmp_path / "selection.csv"
    mast_selection.make([f"dense={dense}", f"sweep={sweep}"]).to_csv(sel_path, index=False)
    baselines = summary("mast_table1", [({"cfg.sparse.method": m, "cfg.sparse.sparsity": 0.9}, [w, w])
                                        for m, w in BASELINE_WINS.items()])
    sp = pd.concat([sparsity_summary(pd.read_parquet(sweep), "mast"), sparsity_summary(baselines)], ignore_index=True)
    write(sp, tmp_path / "sparsity.parquet")
    return dense, sweep, write(baselines, tmp_path / "base.parquet"), sel_path


def test_table1_at_a_declared_sparsity_keeps_its_baselines_and_takes_mast_there_not_at_the_selections(tmp_path):
    dense, sweep, baselines, sel_path = declared_inputs(tmp_path)
    args = [f"dense={dense}", f"sweep={sweep}", f"baselines={baselines}", f"selection={sel_path}"]
    table = mast_table1.make([*args, f"sparsity={tmp_path / 'sparsity.parquet'}"])
    cells = table[table["map"] == "3m"].set_index("method")
    assert list(cells.index) == ["Dense", "Tiny", "SS", "SET", "RigL", "RLx2", "MAST"]
    assert (cells.loc[cells.index != "Dense", "sparsity"] == 0.9).all()
    assert cells.loc["MAST", "mean"] == pytest.approx(0.7) and cells.loc["MAST", "normalised"] == pytest.approx(0.875)
    assert cells.loc["RigL", "mean"] == pytest.approx(0.72) and cells.loc["RigL", "seeds"] == 2
    # the selection says whether MAST is within 3 % there (0.875: no) and what the rule would choose (0.7)
    assert not cells["selection_admissible"].any() and (cells["selected_sparsity"] == 0.7).all()
    t5 = mast_table5.make(args).set_index(["map", "method"])
    assert t5.loc[("3m", "MAST"), "sparsity"] == 0.9 and t5.loc[("3m", "MAST"), "win_rate_mean"] == pytest.approx(0.7)


def test_the_cell_sparsity_is_the_baselines_else_the_selections_and_one_per_cell(tmp_path):
    dense, sweep, baselines, sel_path = declared_inputs(tmp_path)
    selection, base = pd.read_csv(sel_path), pd.read_parquet(baselines)
    cells = metrics.cell_sparsity(selection, base).set_index("map")
    assert cells.loc["3m", ["sparsity", "selected_sparsity", "sparsity_source"]].tolist() == [0.9, 0.7,
                                                                                             "baseline runs"]
    assert cells.loc["3m", "admissible"] is not None and not cells.loc["3m", "admissible"]  # 0.875 at 0.9
    # 2s3z has no baselines: the selection's choice (the lowest swept, none admissible)
    assert cells.loc["2s3z", ["sparsity", "sparsity_source"]].tolist() == [0.5, "selection"]
    # Figures 13-15 draw the same runs: MAST and the baselines at 0.9 on 3m
    frames = {"dense": pd.read_parquet(dense), "sweep": pd.read_parquet(sweep), "baselines": base}
    drawn = metrics.learning_curve_runs("qmix", frames, metrics.cell_sparsity(selection, base))
    on3m = drawn[drawn["cfg.env.map"] == "3m"]
    assert set(on3m.loc[on3m["cfg.sparse.method"] != "dense", "cfg.sparse.sparsity"]) == {0.9}
    assert set(on3m["cfg.sparse.method"]) == {"dense", "mast", *BASELINE_WINS}
    # baselines at two sparsities, neither the selection's: refused in one line
    mixed = pd.concat([base, base.assign(**{"cfg.sparse.sparsity": 0.95, "run_id": base["run_id"] + "x"})])
    with pytest.raises(ConfigError, match="3m: baselines at sparsities 0.9, 0.95"):
        metrics.cell_sparsity(selection, mixed)


def test_a_run_whose_soft_mellowmax_is_off_has_the_max_operator_whatever_its_operator_field_says():
    """The schema fills mellowmax.operator (soft_mellowmax) into every run; it acts only where the part is on
    (effmarl.components): a RigL or dense run with the switch unset or false targets with the max."""
    frame = pd.DataFrame({"cfg.sparse.method": ["rigl", "rigl", "rigl", "mast", "mast", "dense"],
                          "cfg.mellowmax.enabled": [None, True, True, None, False, None],
                          "cfg.mellowmax.operator": ["soft_mellowmax", "max", "soft_mellowmax", "mellowmax",
                                                     "soft_mellowmax", "soft_mellowmax"]})
    assert metrics.operator_of(frame).tolist() == ["max", "max", "soft_mellowmax", "mellowmax", "max", "max"]
