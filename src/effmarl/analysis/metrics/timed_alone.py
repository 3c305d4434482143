"""Whether times read from training runs were taken alone (issue 34).

A run's phase timers measure wall time t = t_code + t_contention, where t_contention is the time the run waits for
cores that other jobs hold. On the 2-core machines this project runs on, t_contention is not small: the same paper-1
study cost 4.3x the job-seconds beside training and cachegrind jobs, and two seeds of one configuration differed up
to 5.7x in sampling time per round. So a time is read as the code's only where t_contention = 0 by construction: the
run's study is declared `timing: true` in the study catalogue (configs/studies.yaml), and the workflow runs each of
its runs as a job with no other workflow job beside it (workflow/rules/common.smk). Times of any other study's runs
(trained side by side: paper1_reward, whose outputs are returns) are illustrative, and an output showing them says
so (`mark_evidence` for a table, `stamp` for a figure, effmarl.analysis.io).

What the workflow cannot control (another program on the machine) is not ruled out here; docs/running.md says to
run the paper-1 part on a quiet machine.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from effmarl.studies import load_catalogue


@dataclass(frozen=True)
class TimedAlone:
    """The studies an output's in-training times come from, split by whether their runs were timed alone."""

    alone: tuple[str, ...]
    shared: tuple[str, ...]

    @property
    def illustrative(self) -> bool:
        return bool(self.shared) or not self.alone

    @property
    def text(self) -> str:
        if not self.illustrative:
            return (f"timed alone: each run of {', '.join(self.alone)} was a workflow job with the machine to itself, "
                    "or one of an interleaved neighbor/uniform pair that was (a timing study, "
                    "workflow/rules/common.smk)")
        if not self.shared:
            return "illustrative: no runs"
        return (f"illustrative: the runs of {', '.join(self.shared)} trained beside other workflow jobs, so these "
                "in-training times measure the machine's load too (the interleaved sampling benchmark, "
                "paper1/sampling_phase_vs_n, times sampling alone)")


def timed_alone(studies, catalogue: dict[str, dict] | None = None) -> TimedAlone:
    """The verdict for runs of `studies` (names, or a summary table with a `cfg.study` column): alone where the
    catalogue declares the study `timing: true`, shared otherwise (a study the catalogue does not know included)."""
    if isinstance(studies, pd.DataFrame):
        studies = studies["cfg.study"].dropna().unique()
    cat = load_catalogue() if catalogue is None else catalogue
    names = sorted({str(s) for s in studies})
    return TimedAlone(alone=tuple(s for s in names if cat.get(s, {}).get("timing", False)),
                      shared=tuple(s for s in names if not cat.get(s, {}).get("timing", False)))
