"""One cost model (effmarl.step_costs): its prices are the measured table's rows, the installed package reads that
same table, and the SLURM requests and the profile estimate price a run alike."""

from __future__ import annotations

import csv
import math
from importlib import resources as package_files

import pandas as pd
import pytest
from conftest import ROOT

from effmarl import resources, step_costs
from effmarl.analysis import envelope

TABLE = ROOT / "benchmarks" / "results" / "step_cost.csv"


def _table() -> pd.DataFrame:
    return pd.read_csv(TABLE)


def test_the_package_reads_the_measured_table_itself():
    assert package_files.files("effmarl").joinpath(step_costs.TABLE).read_bytes() == TABLE.read_bytes()


def test_the_prices_at_every_measured_point_are_the_tables_rows():
    table = _table()
    mpe = table[table["env"].str.startswith("mpe")]
    assert len(mpe) >= 10
    for row in mpe.itertuples():
        n = int(row.env.split("=")[1])
        assert step_costs.offpolicy_costs(row.algo, row.storage, n) == pytest.approx((row.step_s, row.round_s),
                                                                                      rel=1e-12), row.point
    measured = step_costs.measured()
    peaks = mpe.assign(n=mpe["env"].str.removeprefix("mpe N=").astype(int)).groupby("n")["maxrss_mb"].max()
    assert measured.mpe_peak_mb == peaks.astype(float).to_dict()
    dense = table[(table["point"].str.match(r"\d+_qmix_")) & (table["method"] == "dense")].set_index("env")
    for prices, column in ((measured.act_s, "act_s"), (measured.update_s, "update_s"),
                           (measured.episode_len, "episode_len")):
        assert prices == pytest.approx(dense[column].to_dict(), rel=1e-12), column


def test_relative_costs_are_the_measured_ratios_without_discounts():
    cost = _table().set_index("point")["update_s"]
    measured = step_costs.measured()
    for algo, point in (("ow_qmix", "12_ow_qmix_3m"), ("res_qmix", "13_res_qmix_3m"), ("qmix", "08_qmix_3m")):
        assert step_costs.qmix_factor(algo) == pytest.approx(max(1.0, cost[point] / cost["08_qmix_3m"])), algo
    assert step_costs.qmix_factor("not_measured") == max(measured.variant_factor.values())
    per_agent = cost["14_qmix_3m_dense_peragent"] / cost["08_qmix_3m"]
    sparse = cost["15_qmix_3m_mast_peragent"] / cost["14_qmix_3m_dense_peragent"]
    assert measured.per_agent_factor == pytest.approx(max(1.0, per_agent))
    assert measured.sparse_factor == pytest.approx(max(1.0, sparse))


def test_a_variant_with_per_agent_networks_is_priced_by_its_own_per_agent_point_where_one_was_measured():
    """OW-QMIX / RES-QMIX per-agent: their measured per-agent update / QMIX's shared (no discount); QMIX's own
    per-agent factor where no point of the variant was measured; shared networks unchanged."""
    cost = _table().set_index("point")["update_s"]
    base = cost["08_qmix_3m"]
    for algo, point in (("ow_qmix", "18_ow_qmix_3m_dense_peragent"), ("res_qmix", "19_res_qmix_3m_dense_peragent"),
                        ("qmix", "14_qmix_3m_dense_peragent")):
        assert step_costs.qmix_factor(algo, shared=False) == pytest.approx(max(1.0, cost[point] / base)), algo
    rows = [r for r in csv.DictReader(TABLE.read_text().splitlines()) if r["point"] != "18_ow_qmix_3m_dense_peragent"]
    without = step_costs.parse(rows)
    assert step_costs.qmix_factor("ow_qmix", without, shared=False) == pytest.approx(
        without.variant_factor["ow_qmix"] * without.per_agent_factor)
    assert step_costs.qmix_factor("ow_qmix", without) == step_costs.qmix_factor("ow_qmix")


def test_interpolation_is_log_log_and_extrapolates_the_nearest_segment():
    points = {3: 1.0, 12: 16.0}  # slope 2 in log-log
    assert step_costs.interpolate(points, 3) == 1.0
    assert step_costs.interpolate(points, 6) == pytest.approx(4.0)
    assert step_costs.interpolate(points, 48) == pytest.approx(256.0)
    assert step_costs.interpolate({3: 1.0, 12: 16.0, 48: 64.0}, 24) == pytest.approx(32.0)  # slope 1 above 12


def test_an_unmeasured_team_size_is_the_reference_curve_times_the_measured_ratio():
    """MASAC on the contiguous storage at N = 48 (measured at 3 and 12 only), by hand from the table's rows: MADDPG
    on the reference storage at 48 x MASAC-contiguous's ratio to it, extrapolated log-log from 3 and 12."""
    rows = _table().set_index("point")
    ref, mine = rows.loc[["00_maddpg_3_reference", "01_maddpg_12_reference"]], rows.loc[
        ["06_masac_3_contiguous", "07_masac_12_contiguous"]]
    ref48 = rows[(rows["env"] == "mpe N=48") & (rows["algo"] == "maddpg") & (rows["storage"] == "reference")].iloc[0]
    expected = []
    for column in ("step_s", "round_s"):
        r3, r12 = mine[column].iloc[0] / ref[column].iloc[0], mine[column].iloc[1] / ref[column].iloc[1]
        expected.append(ref48[column] * r3 * (48 / 3) ** (math.log(r12 / r3) / math.log(4)))
    assert step_costs.offpolicy_costs("masac", "contiguous", 48) == pytest.approx(tuple(expected))
    # a round of batch 256 costs a quarter of one of 1024
    assert step_costs.offpolicy_costs("masac", "contiguous", 48, batch=256)[1] == pytest.approx(expected[1] / 4)


def test_the_slurm_request_and_the_estimate_price_a_paper1_run_alike():
    cfg = {"algo": "masac", "env": {"backend": "mpe", "n_agents": 24, "max_cycles": 25},
           "budget": {"episodes": 2000}, "replay": {"storage": "reference"},
           "offpolicy": {"warmup": 1024, "batch_size": 512, "update_every": 100}}
    step_s, round_s = step_costs.offpolicy_costs("masac", "reference", 24, batch=512)
    work = 50_000 * step_s + (50_000 - 1024) // 100 * round_s
    assert resources.offpolicy_seconds(cfg) == pytest.approx(work)
    assert envelope.mpe_seconds(cfg) == pytest.approx(envelope.MPE_START_S + work)


def test_a_table_without_a_needed_point_is_refused_in_one_line(tmp_path):
    with TABLE.open() as f:
        rows = [row for row in csv.DictReader(f) if row["point"] != "14_qmix_3m_dense_peragent"]
    with pytest.raises(ValueError, match=r"^step_cost.csv: no measured point for qmix 'dense per-agent'"):
        step_costs.parse(rows)
    with pytest.raises(ValueError, match="no measured point for masac on the paper storage"):
        step_costs.offpolicy_costs("masac", "paper", 3)
