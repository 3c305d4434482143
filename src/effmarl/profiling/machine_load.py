"""What else ran on the machine while a benchmark measured: a benchmark's times are only the code's where it had the
cores to itself (a second busy process on a 2-core VM can double a time), so every benchmark output says how busy the
rest of the machine was during its measurement, instead of leaving the reader to guess.

    with MachineLoad() as load:
        ...  # the measurement
    load.text  # 'taken alone: other processes used 1 % of the 2 cores' | 'beside other work: ... 48 % ...'

Others' share = (busy CPU time of the whole machine − this process's own, children included) / (wall time × cores),
from the kernel's counters: /proc/stat's first line (user, nice, system, irq, softirq, steal jiffies; idle and iowait
are not busy) and os.times(). Below ALONE (10 %) the benchmark counts as taken alone. Where /proc/stat cannot be read
(not Linux) the share is unknown and the text says so."""

from __future__ import annotations

import os
import time
from pathlib import Path

ALONE = 0.10  # others' share of the cores below which a measurement counts as taken alone
STAT = Path("/proc/stat")
BUSY_FIELDS = (0, 1, 2, 5, 6, 7)  # user, nice, system, irq, softirq, steal (idle 3 and iowait 4 are not busy)


def busy_seconds(stat: Path = STAT) -> float | None:
    """Busy CPU seconds of the whole machine since boot (all cores), or None where /proc/stat is unreadable."""
    try:
        fields = stat.read_text().splitlines()[0].split()[1:]
        return sum(int(fields[i]) for i in BUSY_FIELDS if i < len(fields)) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def own_seconds() -> float:
    """CPU seconds of this process and its finished children (user + system)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class MachineLoad:
    """Context manager: on exit, `others` is the share of the machine's cores that other processes kept busy while the
    block ran (module docstring; None where unknown), `cores` the machine's count, `seconds` the block's wall time."""

    def __init__(self, stat: Path = STAT, cores: int | None = None):
        self.stat, self.cores = stat, cores or os.cpu_count() or 1
        self.others: float | None = None
        self.seconds = 0.0

    def __enter__(self) -> MachineLoad:
        self._busy, self._own, self._wall = busy_seconds(self.stat), own_seconds(), time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self._wall
        busy = busy_seconds(self.stat)
        if busy is None or self._busy is None or self.seconds <= 0:
            return
        others = (busy - self._busy) - (own_seconds() - self._own)
        self.others = min(1.0, max(0.0, others / (self.seconds * self.cores)))

    @property
    def alone(self) -> bool | None:
        return None if self.others is None else self.others < ALONE

    @property
    def text(self) -> str:
        if self.others is None:
            return "machine load unknown (no /proc/stat): not known to be taken alone"
        share = f"other processes used {100 * self.others:.0f} % of the {self.cores} cores"
        return f"taken alone: {share}" if self.alone else f"beside other work: {share} while it measured"

    def record(self) -> dict:
        """The provenance entry: others' share, cores, seconds, alone."""
        return {"others_share": self.others, "cores": self.cores, "seconds": round(self.seconds, 3),
                "alone": self.alone, "text": self.text}
