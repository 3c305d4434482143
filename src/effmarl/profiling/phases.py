"""Phase timing built into the training loop: cheap enough to leave on.

    timer = PhaseTimer(sync=torch.cuda.synchronize if on_gpu else None)
    with timer.phase("env_step"):
        ...
    rows = timer.snapshot(episode=ep)   # per-phase seconds since the last snapshot

For each phase p the timer sums, over its calls c, two clocks read at the call's start s_c and end e_c:

    seconds(p)     = Σ_c perf_counter(e_c) − perf_counter(s_c)      (wall time)
    cpu_seconds(p) = Σ_c process_time(e_c) − process_time(s_c)      (CPU time of every thread of this process)

Wall time includes what other processes take from this one (a second job, a browser on the same cores); process
CPU time counts only this process's own work, so it does not grow when the machine is shared (it can exceed the
wall time when torch runs a phase on several threads, and it does not count a GPU kernel's run time, only the CPU
waiting in `sync`). Each row carries both: {**labels, phase, seconds, cpu_seconds, calls}.

On a GPU, `sync` runs before each clock read so asynchronous kernels are charged to the phase that
launched them.

A run's phase rows are saved in its checkpoints; rows written before cpu_seconds existed simply lack the column
(a table of old and new rows reads NaN there), and a `mark` of the older form {phase: (seconds, calls)} is still
accepted by `since` (its cpu_seconds since then are unknown: NaN).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import defaultdict
from collections.abc import Callable, Iterator

Mark = dict[str, tuple[float, int, float]]  # {phase: (seconds, calls, cpu_seconds)}; older marks lack cpu_seconds


class PhaseTimer:
    def __init__(self, sync: Callable[[], None] | None = None, enabled: bool = True):
        self._sync = sync
        self.enabled = enabled
        self._seconds: dict[str, float] = defaultdict(float)
        self._cpu: dict[str, float] = defaultdict(float)
        self._calls: dict[str, int] = defaultdict(int)

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        if self._sync:
            self._sync()
        start, start_cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            if self._sync:
                self._sync()
            self._seconds[name] += time.perf_counter() - start
            self._cpu[name] += time.process_time() - start_cpu
            self._calls[name] += 1

    def totals(self) -> dict[str, float]:
        return dict(self._seconds)

    def mark(self) -> Mark:
        """The running totals {phase: (seconds, calls, cpu_seconds)}, to measure a later interval with `since`."""
        return {name: (secs, self._calls[name], self._cpu[name]) for name, secs in self._seconds.items()}

    def since(self, mark: dict[str, tuple], **labels) -> list[dict]:
        """Rows {**labels, phase, seconds, cpu_seconds, calls} for the time accumulated since `mark`, without
        resetting: several readers (e.g. seeds trained in lockstep, each writing its own phases table) can share one
        timer. A mark of the older form (seconds, calls) gives cpu_seconds NaN for the phases it holds."""
        rows = []
        for name, secs in self._seconds.items():
            before = mark.get(name, (0.0, 0, 0.0))
            if self._calls[name] <= before[1]:
                continue
            cpu_before = before[2] if len(before) > 2 else math.nan
            rows.append({**labels, "phase": name, "seconds": secs - before[0],
                         "cpu_seconds": self._cpu[name] - cpu_before, "calls": self._calls[name] - before[1]})
        return rows

    def snapshot(self, **labels) -> list[dict]:
        """Rows {**labels, phase, seconds, cpu_seconds, calls} for the time accumulated since the last snapshot."""
        rows = [{**labels, "phase": name, "seconds": secs, "cpu_seconds": self._cpu[name], "calls": self._calls[name]}
                for name, secs in self._seconds.items()]
        self._seconds.clear()
        self._cpu.clear()
        self._calls.clear()
        return rows
