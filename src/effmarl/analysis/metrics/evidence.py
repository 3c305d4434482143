"""When a paper-2 output is evidence, and what it says when it is not: the rule in one place.

An output (every `mast_*` figure and table) is **illustrative** - stamped "illustrative: n seeds, m steps - not
evidence" and kept out of the claims table's value column - when

1. a compared cell (a method, a sparsity, an ablation value, the dense reference ...) rests on fewer than MIN_SEEDS
   seeds: with 1-2 runs the interval of a win rate is absent or spans the differences the paper reports; or
2. dense runs are among its inputs and dense has not reached its plateau (`plateau`): it has not learned (its win
   rate over the final 10 % of training is below LEARNED_FLOOR: at 50 000 steps nothing learns on 3s5z / 2s3z,
   and "within 3 % of a dense model at 0 %" holds trivially), or it still gains over the second half of training:
   its win rate over the final 10 % is above its win rate over the 10 % just before halfway by more than
   max(RISE_TOLERANCE, the seeds' spread of that rise). A comparison with a dense model that is still learning says
   how fast methods learn, not where they end.

Where no dense runs are among an output's inputs, only the seed rule applies and the stamp names the budget (the
steps of its runs) so that a reader can weigh it. Changing the rule changes this module only: every output calls
`judge` and marks itself with what it returns (`analysis.io.mark_evidence`).

Why the window before halfway and not the one just before the final 10 %: with 32 test episodes per evaluation and
three evaluations per window, two adjacent windows of a dense QMIX run on SMAX 3m differ by up to ±0.1 from noise
alone (benchmarks/results/qmix_curve_dense_table1_3m.csv), and the slope near the plateau (0.78 at 250 000 steps,
0.85 at 500 000) moves a window by under 0.01: adjacent windows flag noise, not learning. Over the second half a
curve still learning rises by 0.1 or more and one at its plateau by about 0 ± the seeds' spread: on that benchmark's
three curves cut at 50 000 / 100 000 / 150 000 steps the rule says "still learning" (+0.22, +0.18, +0.16), at
250 000 / 300 000 / 500 000 "plateau" (+0.00 ± 0.08, +0.05 ± 0.07, +0.06 ± 0.10)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from effmarl.analysis.metrics.mast import ALGO, MAP, evaluations
from effmarl.analysis.metrics.runs import run_columns

MIN_SEEDS = 3  # seeds per compared cell below which an output is illustrative
WINDOW = 0.1  # the final 10 % of training (Table 1's statistic) ...
EARLIER_END = 0.5  # ... against the 10 % of training just before halfway
RISE_TOLERANCE = 0.03  # a rise in win rate no larger than this (or than the seeds' spread) is a plateau
LEARNED_FLOOR = 0.1  # dense winning fewer test episodes than this over its final 10 % has not learned the map
PAPER_STEPS = 2_000_000  # the paper's budget per run, named beside ours
DENSE_KEYS = (ALGO, MAP)

PLATEAU_COLUMNS = ["cell", "seeds", "final", "earlier", "rise", "spread", "allowed", "learned", "plateau", "why",
                   "reason"]
# How `shortfalls` says each kind of failed plateau, once for all the dense cells that fail it alike.
WHY = {"not learned": f"dense has not learned (win rate over the final 10 % < {LEARNED_FLOOR:g})",
       "no evaluation": "dense has no evaluation in the 10 % before halfway to show a plateau",
       "learning": ("dense still learning (gain from the 10 % before halfway to the final 10 % above "
                    f"max({RISE_TOLERANCE:g}, the seeds' spread))")}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _label(keys: Sequence[str], values) -> str:
    values = values if isinstance(values, tuple) else (values,)
    return "/".join(str(v) for v in values) if keys else "all runs"


@dataclass(frozen=True)
class Evidence:
    """What an output rests on and the verdict: `seeds` (fewest, most) per compared cell, `steps` (the budgets of its
    runs), `reasons` it is illustrative (empty: evidence) and `notes` (what was checked, for the evidence text)."""

    seeds: tuple[int, int]
    steps: tuple[int, ...]
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def illustrative(self) -> bool:
        return bool(self.reasons)

    @property
    def counts(self) -> str:
        """'3 seeds, 250,000 steps' (the fewest seeds of a compared cell; a range where cells differ)."""
        lo, hi = self.seeds
        seeds = _plural(lo, "seed") if lo == hi else f"{lo}-{hi} seeds"
        steps = "/".join(f"{s:,}" for s in self.steps) if self.steps else "unknown"
        return f"{seeds}, {steps} steps"

    @property
    def text(self) -> str:
        """The stamp: 'illustrative: 1 seed, 50,000 steps — not evidence (<reasons>)', or 'evidence: 3 seeds,
        250,000 steps (<what was checked>)'."""
        if self.illustrative:
            return f"illustrative: {self.counts} — not evidence ({'; '.join(self.reasons)})"
        return f"evidence: {self.counts}" + (f" ({'; '.join(self.notes)})" if self.notes else "")


def seeds_per_cell(runs: pd.DataFrame, cells: Sequence[str]) -> pd.Series:
    """Per compared cell (group of `cells` columns of `runs`): the number of distinct runs (seeds) it rests on,
    indexed by the cell's label ('qmix/3m/mast'; 'all runs' where `cells` is empty)."""
    ident = run_columns(runs) or ([c for c in ("cfg.seed",) if c in runs])
    cells = [c for c in cells if c in runs]
    if runs.empty:
        return pd.Series(dtype=int)
    groups = runs.groupby(cells, dropna=False, sort=True) if cells else [((), runs)]
    return pd.Series({_label(cells, values): int(len(group.drop_duplicates(ident))) if ident else 1
                      for values, group in groups}, dtype=int)


def budgets(*frames: pd.DataFrame | None) -> tuple[int, ...]:
    """The budgets (env steps per run) of the runs of `frames`: cfg.budget.env_steps, else each run's last
    env_steps."""
    found: set[int] = set()
    for frame in frames:
        if frame is None or frame.empty:
            continue
        if "cfg.budget.env_steps" in frame and frame["cfg.budget.env_steps"].notna().any():
            found |= {int(b) for b in frame["cfg.budget.env_steps"].dropna()}
        elif "env_steps" in frame:
            keys = run_columns(frame)
            last = frame.groupby(keys)["env_steps"].max() if keys else frame["env_steps"].max()
            found |= {int(b) for b in np.atleast_1d(last) if pd.notna(b)}
    return tuple(sorted(found))


def _window_means(ev: pd.DataFrame, keys: list[str], value: str) -> pd.DataFrame:
    """Per run: `final`, the mean of `value` over its evaluations in the final WINDOW of its evaluation grid
    (x >= (1 - WINDOW) x its last x), and `earlier`, over those in [EARLIER_END - WINDOW, EARLIER_END) x its last x."""
    last = ev.groupby(keys)["x"].transform("max")
    final = ev[ev["x"] >= (1 - WINDOW) * last].groupby(keys)[value].mean().rename("final")
    early = ev[(ev["x"] >= (EARLIER_END - WINDOW) * last) & (ev["x"] < EARLIER_END * last)]
    earlier = early.groupby(keys)[value].mean().rename("earlier")
    return pd.concat([final, earlier], axis=1)


def plateau(dense: pd.DataFrame, keys: Sequence[str] = DENSE_KEYS, value: str = "test_win_rate") -> pd.DataFrame:
    """Per cell of `keys` of the dense runs `dense` (a metrics summary): `seeds`, `final` (mean over seeds of each
    run's mean win rate over its final 10 % of training), `earlier` (the same over the 10 % before halfway), `rise`
    (mean over seeds of final - earlier, runs with both), `spread` (standard deviation over seeds of that rise; NaN
    for one seed), `learned` (final >= LEARNED_FLOOR), `plateau` (learned, and rise <= max(RISE_TOLERANCE, spread)),
    `allowed` (that bound), `cell` (its label), `why` (a key of WHY, '' at the plateau) and `reason`, the sentence
    saying why not ('' at the plateau)."""
    keys = [k for k in keys if k in dense]
    ev = evaluations(dense, value)
    ident = run_columns(dense) or ["cfg.seed"]
    rows = []
    if ev.empty:
        return pd.DataFrame(columns=[*keys, *PLATEAU_COLUMNS])
    per_run = _window_means(ev, [*keys, *ident], value).reset_index()
    for values, group in (per_run.groupby(keys, dropna=False, sort=True) if keys else [((), per_run)]):
        cell = _label(keys, values)
        name = "dense " + cell
        final = float(group["final"].mean())
        rises = (group["final"] - group["earlier"]).dropna()
        rise = float(rises.mean()) if len(rises) else np.nan
        spread = float(rises.std(ddof=1)) if len(rises) > 1 else np.nan
        learned = bool(final >= LEARNED_FLOOR)
        allowed = max(RISE_TOLERANCE, 0.0 if np.isnan(spread) else spread)
        why = ("not learned" if not learned else "no evaluation" if np.isnan(rise) else
               "learning" if rise > allowed else "")
        if not learned:
            reason = f"{name} has not learned (win rate {final:.2f} over the final 10 %, < {LEARNED_FLOOR:g})"
        elif np.isnan(rise):
            reason = f"{name}: no evaluation in the 10 % before halfway to show a plateau"
        elif rise > allowed:
            reason = (f"{name} still learning (+{rise:.2f} from the 10 % before halfway to the final 10 %, > "
                      f"{allowed:.2f}" + (" = the seeds' spread" if allowed > RISE_TOLERANCE else "") + ")")
        else:
            reason = ""
        rows.append({**dict(zip(keys, values if isinstance(values, tuple) else (values,), strict=True)),
                     "cell": cell, "seeds": int(len(group)), "final": final,
                     "earlier": float(group["earlier"].mean()), "rise": rise, "spread": spread, "allowed": allowed,
                     "learned": learned, "plateau": not reason, "why": why, "reason": reason})
    return pd.DataFrame(rows, columns=[*keys, *PLATEAU_COLUMNS])


def shortfalls(seeds: pd.Series, plateaus: pd.DataFrame | None = None) -> list[str]:
    """What makes an output illustrative, from its seeds per compared cell (`seeds_per_cell`) and, where dense runs
    are among its inputs, their `plateau` table: one sentence per rule broken ([] = evidence)."""
    out = []
    few = seeds[seeds < MIN_SEEDS]
    if len(seeds) and len(few):
        where = "every compared cell" if len(few) == len(seeds) else (
            f"{len(few)} of {len(seeds)} compared cells: " + ", ".join(f"{c} ({n})" for c, n in few.items()))
        out.append(f"fewer than {MIN_SEEDS} seeds in {where}")
    elif not len(seeds):
        out.append("no runs")
    if plateaus is not None:  # one sentence per kind of failure, naming every dense cell that fails so
        for why, text in WHY.items():
            failed = plateaus[plateaus["why"] == why]
            items = [c if why == "no evaluation" else f"{c} {f:.2f}" if why == "not learned" else
                     f"{c} +{r:.2f} > {a:.2f}"
                     for c, f, r, a in zip(failed["cell"], failed["final"], failed["rise"], failed["allowed"],
                                           strict=True)]
            if items:
                out.append(f"{text}: {', '.join(items)}")
    return out


def dense_of_cells(dense: pd.DataFrame | None, runs: pd.DataFrame, keys: Sequence[str] = DENSE_KEYS
                   ) -> pd.DataFrame | None:
    """The dense runs of the cells (`keys`: algorithm, map) that `runs` compare, for an output whose own runs hold no
    dense model (an ablation of MAST, Fig. 5's operators): whether dense reached its plateau there says whether the
    budget let the compared runs learn. Another cell's dense runs never decide it. None where there are none."""
    if dense is None or dense.empty or runs.empty or any(k not in dense or k not in runs for k in keys):
        return None
    cells = runs[list(keys)].drop_duplicates()
    mine = dense.merge(cells, on=list(keys), how="inner")
    return mine if len(mine) else None


def judge(runs: pd.DataFrame | Sequence[tuple[pd.DataFrame | None, Sequence[str]]], cells: Sequence[str] = (),
          dense: pd.DataFrame | None = None, dense_keys: Sequence[str] = DENSE_KEYS,
          seeds: pd.Series | None = None) -> Evidence:
    """The verdict on an output: `runs` (a metrics summary whose compared cells are the groups of `cells`, or a list
    of (summary, cells) pairs where parts of an output compare different things), `dense` (the dense runs among its
    inputs, None where there are none; their cells of `dense_keys` count as compared cells too) and `seeds` (seeds
    per compared cell where the caller has them already, e.g. Table 1's cells; replaces the count from `runs`)."""
    parts = [(runs, cells)] if isinstance(runs, pd.DataFrame) else list(runs)
    parts = [(f, c) for f, c in parts if f is not None and not f.empty]
    has_dense = dense is not None and not dense.empty
    if seeds is None:
        counted = [seeds_per_cell(f, c) for f, c in parts]
        if has_dense:
            counted.append(seeds_per_cell(dense, dense_keys).rename(lambda c: f"dense {c}"))
        seeds = pd.concat(counted) if counted else pd.Series(dtype=int)
    plateaus = plateau(dense, dense_keys) if has_dense else None
    steps = budgets(*[f for f, _ in parts], dense)
    notes = []
    if has_dense:
        keys = [k for k in dense_keys if k in plateaus]
        notes.append("dense at its plateau: " + ", ".join(  # a rise the seeds' spread allowed says so
            f"{_label(keys, tuple(r[k] for k in keys))} {r['rise']:+.2f} over the second half"
            + (f", within the seeds' spread {r['allowed']:.2f}" if r["allowed"] > RISE_TOLERANCE
               and r["rise"] > RISE_TOLERANCE else "") for _, r in plateaus.iterrows()))
    else:
        paper = f" of the paper's {PAPER_STEPS:,}" if steps and max(steps) < PAPER_STEPS else ""
        notes.append(f"no dense runs among the inputs: plateau not checked; budget {'/'.join(f'{s:,}' for s in steps)}"
                     f"{paper} steps" if steps else "no dense runs among the inputs: plateau not checked")
    counts = (int(seeds.min()), int(seeds.max())) if len(seeds) else (0, 0)
    return Evidence(counts, steps, tuple(shortfalls(seeds, plateaus)), tuple(notes))


def judge_cells(cells: pd.DataFrame, dense: pd.DataFrame | None, *runs: pd.DataFrame | None,
                keys: Sequence[str] = ("algo", "map", "method")) -> Evidence:
    """The verdict on an output made of Table 1's cells (`metrics.table1_cells`: one row per (algo, map, method) with
    its `seeds`): the seeds of each cell as counted there, dense's plateau per (algo, map) from the `dense` runs, and
    the budget from `runs` (the metrics summaries the cells were made from)."""
    seeds = pd.Series({_label(list(keys), tuple(r[k] for k in keys)): int(r["seeds"]) for _, r in cells.iterrows()},
                      dtype=int)
    return judge([(f, ()) for f in runs if f is not None], dense=dense, seeds=seeds)


def of_cell(frame: pd.DataFrame | None, values: dict) -> pd.DataFrame | None:
    """The runs of `frame` (a metrics summary) in one cell, `values` = {column: value} (e.g. {ALGO: "qmix", MAP:
    "3m"}); None where it has none."""
    if frame is None or frame.empty or any(k not in frame for k in values):
        return None
    mine = frame[np.logical_and.reduce([frame[k] == v for k, v in values.items()])]
    return mine if len(mine) else None



def _each(cells: pd.DataFrame, dense: pd.DataFrame | None, runs: tuple, by: list[str]) -> dict[tuple, Evidence]:
    columns = {"algo": DENSE_KEYS[0], "map": DENSE_KEYS[1]}
    out = {}
    for values, group in cells.groupby(by, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        where = {columns[k]: v for k, v in zip(by, values, strict=True)}
        out[values] = judge_cells(group, of_cell(dense, where), *(of_cell(f, where) for f in runs))
    return out


@dataclass(frozen=True)
class CellsEvidence:
    """An output of several Table-1 cells judged as a whole (`whole`, `judge_cells`) and cell by cell (`cells`: per
    (algo, map), `algos`: per algorithm over its maps; each by its own dense only). Where its cells agree (all
    evidence, or all illustrative) it says one verdict, the whole's, on every row; where one algorithm's dense still
    learns and another's has levelled off, each row says its own cell's (`of`) and the first line (`text`) which
    cells are evidence and which are not - one cell's dense never makes another cell illustrative."""

    whole: Evidence
    cells: dict[tuple, Evidence]
    algos: dict[tuple, Evidence]

    @property
    def mixed(self) -> bool:
        return len({v.illustrative for v in self.cells.values()}) > 1

    @property
    def illustrative(self) -> bool:
        return self.whole.illustrative

    @property
    def text(self) -> str:
        if not self.mixed:
            return self.whole.text
        good = [f"{'/'.join(c)} ({v.counts})" for c, v in self.cells.items() if not v.illustrative]
        bad = [f"{'/'.join(c)} ({'; '.join(v.reasons)})" for c, v in self.cells.items() if v.illustrative]
        return (f"evidence per cell (column `evidence`), {len(good)} of {len(self.cells)} cells on evidence: "
                + ", ".join(good) + "; illustrative: " + ", ".join(bad))

    def of(self, *key) -> str:
        """The verdict a row of cell `key` says: (algo, map), or (algo,) for an algorithm's average over maps."""
        if not self.mixed:
            return self.whole.text
        return (self.cells if len(key) == 2 else self.algos).get(key, self.whole).text

    def rows(self, algos, maps) -> list[str]:
        """The verdict of each row of a table of Table-1 cells, from its `algo` and `map` columns."""
        return [self.of(a, m) for a, m in zip(algos, maps, strict=True)]


def judge_each_cell(cells: pd.DataFrame, dense: pd.DataFrame | None, *runs: pd.DataFrame | None) -> CellsEvidence:
    """The verdicts on an output made of Table 1's cells (`metrics.table1_cells` rows), whole and per cell: each
    (algo, map) and each algorithm by `judge_cells` on its own rows, its own dense runs and its own runs."""
    return CellsEvidence(judge_cells(cells, dense, *runs), _each(cells, dense, runs, ["algo", "map"]),
                         _each(cells, dense, runs, ["algo"]))


def judge_runs_each_cell(runs: pd.DataFrame, cells: Sequence[str], dense: pd.DataFrame | None) -> CellsEvidence:
    """`judge(runs, cells, dense=dense)` whole and per (algorithm, map) of `runs` (a metrics summary, e.g. a
    sparsity sweep), each cell by its own runs and its own dense (`CellsEvidence.of(algo, map)`)."""
    per = {}
    keys = [k for k in DENSE_KEYS if k in runs]
    for values, _ in (runs.groupby(keys, sort=True) if len(keys) == len(DENSE_KEYS) else []):
        where = dict(zip(keys, values, strict=True))
        per[values] = judge(of_cell(runs, where), cells, dense=of_cell(dense, where))
    return CellsEvidence(judge(runs, cells, dense=dense), per, {})
