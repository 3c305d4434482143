"""Phase timing built into the training loop: cheap enough to leave on.

    timer = PhaseTimer(sync=torch.cuda.synchronize if on_gpu else None)
    with timer.phase("env_step"):
        ...
    rows = timer.snapshot(episode=ep)   # per-phase seconds since the last snapshot

On a GPU, `sync` runs before each clock read so asynchronous kernels are charged to the phase that
launched them.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from collections.abc import Callable, Iterator


class PhaseTimer:
    def __init__(self, sync: Callable[[], None] | None = None, enabled: bool = True):
        self._sync = sync
        self.enabled = enabled
        self._seconds: dict[str, float] = defaultdict(float)
        self._calls: dict[str, int] = defaultdict(int)

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        if self._sync:
            self._sync()
        start = time.perf_counter()
        try:
            yield
        finally:
            if self._sync:
                self._sync()
            self._seconds[name] += time.perf_counter() - start
            self._calls[name] += 1

    def totals(self) -> dict[str, float]:
        return dict(self._seconds)

    def mark(self) -> dict[str, tuple[float, int]]:
        """The running totals {phase: (seconds, calls)}, to measure a later interval with `since`."""
        return {name: (secs, self._calls[name]) for name, secs in self._seconds.items()}

    def since(self, mark: dict[str, tuple[float, int]], **labels) -> list[dict]:
        """Rows {**labels, phase, seconds, calls} for the time accumulated since `mark`, without resetting: several
        readers (e.g. seeds trained in lockstep, each writing its own phases table) can share one timer."""
        return [{**labels, "phase": name, "seconds": secs - mark.get(name, (0.0, 0))[0],
                 "calls": self._calls[name] - mark.get(name, (0.0, 0))[1]}
                for name, secs in self._seconds.items() if self._calls[name] > mark.get(name, (0.0, 0))[1]]

    def snapshot(self, **labels) -> list[dict]:
        """Rows {**labels, phase, seconds, calls} for the time accumulated since the last snapshot."""
        rows = [{**labels, "phase": name, "seconds": secs, "calls": self._calls[name]}
                for name, secs in self._seconds.items()]
        self._seconds.clear()
        self._calls.clear()
        return rows
