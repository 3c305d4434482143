"""A list schedule of jobs with dependencies on N cores, the cost estimate's makespan (`effmarl.analysis.envelope`):
longest remaining path first, a timing job (`alone`) holding every core, and Graham's bound for any greedy order."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field


@dataclass
class Job:
    name: str
    kind: str                 # "training: <study>", a fixed rule, or an analysis kind
    seconds: float            # core-seconds of work; its wall (benchmark) seconds are seconds / cores
    cores: int = 1
    runs: int = 0
    deps: set[str] = field(default_factory=set)
    alone: bool = False       # a timing job: it holds every core while it runs (studies.TIMING_RULES, timing_studies)


def _tails(jobs: list[Job]) -> dict[str, float]:
    """Each job's longest path to the end (its own seconds / cores included)."""
    after: dict[str, list[str]] = {j.name: [] for j in jobs}
    for j in jobs:
        for d in j.deps:
            after[d].append(j.name)
    by_name = {j.name: j for j in jobs}
    tail: dict[str, float] = {}

    def visit(name: str) -> float:
        if name not in tail:
            j = by_name[name]
            tail[name] = j.seconds / j.cores + max((visit(n) for n in after[name]), default=0.0)
        return tail[name]

    for j in jobs:
        visit(j.name)
    return tail


def makespan(jobs: list[Job], cores: int) -> float:
    """Wall seconds of a list schedule on `cores`: whenever cores are free, start the ready job with the longest
    remaining path that fits (a job takes min(its cores, `cores`) cores for seconds / its cores; a timing job, `alone`,
    takes every core, computing on its own ones)."""
    tail = _tails(jobs)
    left = {j.name: set(j.deps) for j in jobs}
    by_name = {j.name: j for j in jobs}
    ready = [(-tail[j.name], j.name) for j in jobs if not j.deps]
    heapq.heapify(ready)
    running: list[tuple[float, str, int]] = []
    dependants: dict[str, list[str]] = {j.name: [] for j in jobs}
    for j in jobs:
        for d in j.deps:
            dependants[d].append(j.name)
    now, free, finished = 0.0, cores, 0
    while finished < len(jobs):
        waiting = []
        while ready:
            item = heapq.heappop(ready)
            job = by_name[item[1]]
            need = cores if job.alone else min(job.cores, cores)
            if need <= free:
                free -= need
                heapq.heappush(running, (now + job.seconds / job.cores, job.name, need))
            else:
                waiting.append(item)
        for item in waiting:
            heapq.heappush(ready, item)
        now, name, need = heapq.heappop(running)
        free += need
        finished += 1
        for d in dependants[name]:
            left[d].discard(name)
            if not left[d]:
                heapq.heappush(ready, (-tail[d], d))
    return now


def graham_bound(jobs: list[Job], cores: int) -> float:
    """Any greedy list schedule finishes within work / cores + (1 - 1/cores) x the longest dependency chain (Graham)
    for the jobs that share the machine (the chain through every job), plus the timing jobs' (`alone`) wall times in
    series (not a strict bound: a timing job may also wait for the cores to drain)."""
    shared = [j for j in jobs if not j.alone]
    alone = [j for j in jobs if j.alone]
    chain = max(_tails(jobs).values(), default=0.0)  # the longest chain, timing jobs on it included: an upper bound
    bound = sum(j.seconds for j in shared) / cores + (1 - 1 / cores) * chain
    return bound + sum(j.seconds / j.cores for j in alone)
