"""A benchmark says what else ran while it measured: others' share of the cores from the kernel's busy counters less
the benchmark's own CPU time, computed by hand on a fake /proc/stat."""

import os

import pytest

from effmarl.profiling import machine_load


def stat_line(busy_jiffies: int, idle: int = 1000) -> str:
    # user nice system idle iowait irq softirq steal: the busy ones sum to `busy_jiffies`
    return f"cpu  {busy_jiffies} 0 0 {idle} 7 0 0 0 0 0\ncpu0 1 2 3 4\n"


@pytest.mark.parametrize(("busy_jiffies", "own", "share", "alone"), [
    # 2 cores, 1 s: the machine was busy 1.5 s, the benchmark 0.5 s itself: others (1.5 - 0.5) / 2 = 50 %
    (150, 0.5, 0.5, False),
    # busy 0.6 s, own 0.5 s: others 0.1 / 2 = 5 %, below the 10 % of "alone"
    (60, 0.5, 0.05, True),
])
def test_others_share_is_the_machines_busy_time_less_its_own_over_wall_time_and_cores(
        tmp_path, monkeypatch, busy_jiffies, own, share, alone):
    stat = tmp_path / "stat"
    stat.write_text(stat_line(0))
    clock, cpu = iter([0.0, 1.0]), iter([10.0, 10.0 + own])
    monkeypatch.setattr(machine_load.time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(machine_load, "own_seconds", lambda: next(cpu))
    monkeypatch.setattr(machine_load.os, "sysconf", lambda name: 100 if name == "SC_CLK_TCK" else os.sysconf(name))
    with machine_load.MachineLoad(stat=stat, cores=2) as load:
        stat.write_text(stat_line(busy_jiffies))
    assert load.others == pytest.approx(share) and load.alone is alone
    assert load.text.startswith("taken alone" if alone else "beside other work")
    assert f"other processes used {100 * share:.0f} % of the 2 cores" in load.text
    assert load.record()["others_share"] == pytest.approx(share)


def test_an_unreadable_proc_stat_leaves_the_load_unknown_and_says_so(tmp_path):
    with machine_load.MachineLoad(stat=tmp_path / "missing") as load:
        pass
    assert load.others is None and load.alone is None and "unknown" in load.text
