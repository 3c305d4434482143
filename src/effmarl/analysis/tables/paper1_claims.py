"""Paper 1, table 7: every number the paper claims beside ours, the ratio, the run that produced ours and
its hardware. A claim the inputs do not cover reads "not measured in this profile", never a made-up value.

Inputs, named: `bench=` the sampling_bench.parquet of `effmarl sampling-bench` (the sampling kernel alone);
`phases=` the phases summaries of the studies that time neighbor against uniform sampling as interleaved pairs (the
sampling rows, inside training, and the end-to-end rows); `scaling=` the phases summary of the study whose runs give
the update share at every N (one budget); `loop_profile=` the loop profile at large N (effmarl.profiling.loop_profile:
the environment step's parts and the sampling round at two buffer fills, the measurement behind a share that
differs from the paper's); `metrics=` the metrics summaries of the study whose
predators learn (the reward claim); `random=` the random policy's metrics (the floor learning must clear);
`counters=` the counters of `effmarl counters`; `ksweep_rounds=` the sampling benchmark's rounds (the k sweep's
time ranking, interleaved and taken alone) and `ksweep_metrics=` the k sweep's metrics summary (its return ranking).
A role given no file counts as not measured. The sampling rows are the paper's measure, the sampling phase per
update round inside training (process CPU time, metrics.end_to_end.sampling_pair_changes), per N and storage, over
the pairs of both algorithms (the phase runs the same code for either), with the kernel alone beside them (uniform
and the headline runs' window, metrics.ksweep.bench_at_k).

Evidence rules: the update shares come from runs of one budget (metrics.require_one_budget); "no degradation" of
the reward is claimed only where every (algorithm, sampler) cell's final predators' return clears the random
policy's, by the lower end of its interval over seeds; otherwise the row says so instead of claiming it. The
intervals of the reward and share rows are the Student-t intervals of stats.mean_interval (coverage tested at 3 and
5 seeds in tests/test_stats_coverage.py), and each verdict follows the interval as printed."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from effmarl.analysis.io import named_inputs
from effmarl.analysis.metrics import (
    RUN_ID,
    change_pct,
    counter_difference,
    evidence,
    final_rewards,
    grid_keys,
    ksweep_headline,
    learned_cells,
    mean_interval,
    paired,
    random_floor,
    require_one_budget,
    run_totals,
    runs,
    steady_state,
)
from effmarl.analysis.metrics.counters import fill_statement
from effmarl.analysis.metrics.ksweep import bench_at_k
from effmarl.analysis.metrics.phases import round_fill, thousands
from effmarl.analysis.metrics.update_share import because

CAPTION = ("Paper 1's claims beside this reproduction. Sampling: the sampling phase per update round inside training, "
           "neighbor against uniform runs trained as interleaved pairs and timed alone (process CPU time, the mean "
           "per-pair change with its 95 % t interval), on the reference storage (openai/maddpg's layout, the "
           "paper's) and our contiguous one, with the sampling kernel alone (`effmarl sampling-bench`) beside it. "
           "End-to-end and phase shares: training runs of the profile, times and shares after the warm-up (from "
           "each run's first update round on), shares from runs of one budget, with whether they match the paper's "
           "and, where not, what takes the rest of the time. "
           "Reward: the predators' final return (last 20 % of episodes) of runs where predators learn, against the "
           "random policy's; claimed only where every cell clears it. Counters: median and range over repeats, at "
           "the buffer fill they ran. "
           "'not measured in this profile' where the profile has no such run.")
REPRODUCES = "Paper 1, table 7 of the specification (the claims table)."
CLAIM = ("All of paper 1's claims: sampling −26.66 % / −27.39 %, end-to-end −10.2 %, reward not degraded, "
         "update share ≈35 % → ≈85 %, fewer cache misses with neighbor sampling.")
NOT_MEASURED = "not measured in this profile"
OUTPUT = {"group": "paper1", "stem": "claims", "when": "paper1*"}
# Each role takes the study that can support its claim (all optional: a claim without its runs says so): end-to-end
# times from the study training neighbor and uniform side by side, the phase shares vs N from a study of one budget
# at every N, the reward from a study whose predators learn, against the random policy.
INPUTS = {"bench": {"result": "paper1_micro/sampling_bench.parquet", "optional": True,
                    "doc": "sampling_bench.parquet of `effmarl sampling-bench`"},
          "counters": {"result": "paper1_micro/counters.parquet", "optional": True,
                       "doc": "counters.parquet of `effmarl counters`"},
          "phases": {"study": ["paper1", "paper1_e2e"], "table": "phases",
                     "where": {"replay.sampler": ["uniform", "neighbor"]}, "optional": True,
                     "doc": "phases.summary.parquet of the studies timing neighbor vs uniform sampling as pairs"},
          "loop_profile": {"result": "paper1_micro/loop_profile.parquet", "optional": True,
                           "doc": "loop_profile.parquet of effmarl.profiling.loop_profile (the rest of the loop)"},
          "scaling": {"study": ["paper1_scale", "paper1"], "table": "phases", "take": "first", "optional": True,
                      "doc": "phases.summary.parquet of the phase-scaling study (one budget at every N)"},
          "metrics": {"study": ["paper1_reward", "paper1"], "take": "first", "optional": True,
                      "doc": "metrics.summary.parquet of the study whose predators learn (the reward claim)"},
          "metrics_n12": {"study": "paper1_reward_n12", "optional": True,
                          "doc": "metrics.summary.parquet of the N = 12 reward study (the N = 12 reward row)"},
          "random": {"study": "skeleton", "optional": True,
                     "doc": "metrics.summary.parquet of the random policy (the floor)"},
          "ksweep_rounds": {"result": "paper1_micro/sampling_bench.rounds.parquet", "optional": True,
                            "doc": "sampling_bench.rounds.parquet of `effmarl sampling-bench --k ...`"},
          "ksweep_metrics": {"study": "paper1_ksweep", "optional": True,
                             "doc": "metrics.summary.parquet of the k-sweep study"}}
REWARD_N = (3, 12)  # the agent counts paper 1 reports rewards for
# What a neighbor-vs-uniform pair may differ in: how transitions are drawn and stored (storages train identically).
DRAW_KEYS = {"cfg.replay.sampler", "cfg.replay.storage", "cfg.replay.neighbor_k"}
N_AGENTS, STORAGE = "cfg.env.n_agents", "cfg.replay.storage"


def with_n12(metrics: pd.DataFrame | None, n12: pd.DataFrame | None) -> pd.DataFrame | None:
    """The reward rows' runs: `metrics` (paper1_reward's, or paper1's where a profile has no reward study) with the
    N = 12 reward study's runs in place of any other N = 12 runs (paper1's at paper scale would else be pooled)."""
    if n12 is None:
        return metrics
    if metrics is None:
        return n12
    return pd.concat([metrics[metrics["cfg.env.n_agents"] != 12], n12], ignore_index=True)


def _hardware(path: str) -> str:
    side = Path(path).with_suffix(".provenance.json")
    if side.exists():
        hw = json.loads(side.read_text()).get("hardware", {})
        return f"{hw.get('cpu_model', '?')}, {hw.get('usable_cores', '?')} cores"
    return "unknown"


def _row(claim, paper, ours, source, hardware, paper_value=None, our_value=None):
    ratio = (f"{our_value / paper_value:.2f}" if paper_value not in (None, 0) and our_value is not None else "")
    return {"claim": claim, "paper": paper, "ours": ours, "ratio ours/paper": ratio, "source": source,
            "hardware": hardware}


# the sampling rows' storages: the paper's layout first, then ours
SAMPLING_STORAGES = (("reference", "reference storage (the paper's layout)"),
                     ("contiguous", "contiguous storage (ours)"))


def _kernel(table: pd.DataFrame | None, n: int, storage: str) -> str | None:
    """The sampling kernel alone at (N, storage): the interleaved micro-benchmark's medians and quartiles."""
    sel = None if table is None else table[(table.storage == storage) & (table.n_agents == n)]
    if sel is None or len(sel) < 2:
        return None
    uni = sel[sel.sampler == "uniform"].iloc[0]
    nb = sel[sel.sampler.str.startswith("neighbor")].iloc[0]
    change = float(change_pct(nb.median_ms, uni.median_ms))
    apart = "quartiles apart" if nb.q75_ms < uni.q25_ms or uni.q75_ms < nb.q25_ms else "quartiles overlap"
    fill = f", buffers of {thousands(uni.fill)} transitions" if "fill" in sel and pd.notna(uni.fill) else ""
    return (f"the sampling kernel alone (interleaved micro-benchmark{fill}, medians over {int(uni.rounds)} rounds): "
            f"{change:+.2f} % (uniform {uni.median_ms:.1f} [{uni.q25_ms:.1f}, {uni.q75_ms:.1f}], neighbor "
            f"{nb.median_ms:.1f} [{nb.q25_ms:.1f}, {nb.q75_ms:.1f}] ms: {apart})")


def sampling_rows(path: str | None, phases: pd.DataFrame | None = None) -> list[dict]:
    """Per N (3, 12: the paper's two numbers) and storage (SAMPLING_STORAGES): the sampling phase per update round
    inside training, neighbor vs uniform, from the interleaved pairs of `phases` (metrics.end_to_end.
    sampling_pair_changes on process CPU time, pooled over both algorithms and every study given: the mean per-pair
    change with its 95 % t interval and verdict, the pairs' mean ms per round, and the buffer fill while the rounds
    ran, metrics.round_fill), then the sampling kernel alone (the micro-benchmark `path`). The ratio to the paper's
    number is given on the paper's layout only, where the interval decides."""
    from effmarl.analysis.metrics.end_to_end import UNDECIDED, by_algorithm, sampling_pair_changes
    from effmarl.analysis.metrics.timed_alone import timed_alone

    table = bench_at_k(pd.read_parquet(path)) if path else None
    steady = None if phases is None or phases.empty else steady_state(phases)
    pairs = pd.DataFrame() if steady is None else sampling_pair_changes(steady)
    rows = []
    for n, paper in ((3, -26.66), (12, -27.39)):
        for storage, name in SAMPLING_STORAGES:
            claim = f"sampling phase, neighbor vs uniform, N={n}, {name}"
            kernel = _kernel(table, n, storage)
            mine = pairs[(pairs[N_AGENTS] == n) & (pairs[STORAGE] == storage)] if len(pairs) else pairs
            parts, sources, value = [], [], None
            if len(mine):
                cell = by_algorithm(mine, by=(N_AGENTS, STORAGE)).iloc[0]
                k = int(cell["pairs"])
                algos = " and ".join(sorted({str(a).upper() for a in mine["cfg.algo"]}))
                interval = ("too few pairs for an interval" if k < 2 else
                            f"95 % t interval [{cell['low']:+.1f}, {cell['high']:+.1f}] %")
                held = round_fill(runs(steady[(steady[N_AGENTS] == n) & (steady[STORAGE] == storage)]))
                fill = "" if held is None else (f"; buffers of {thousands(held[0])}-{thousands(held[1])} "
                                                "transitions while the rounds ran")
                parts.append(f"{cell['change_%']:+.2f} % per update round inside training (process CPU time; mean "
                             f"per-pair change over {k} interleaved pair{'s' * (k != 1)} of {algos} runs, {interval}): "
                             f"{cell['verdict']}; uniform {mine['uniform'].mean():.1f} ms, neighbor "
                             f"{mine['neighbor'].mean():.1f} ms per round{fill}")
                alone = timed_alone(mine["cfg.study"])
                sources.append(f"{', '.join(sorted(set(mine['cfg.study'])))}: {2 * k} runs in {k} pairs, "
                               f"{'not timed alone (illustrative)' if alone.illustrative else 'timed alone'}")
                decided = cell["verdict"] != UNDECIDED and storage == "reference"
                value = float(cell["change_%"]) if decided else None
            if kernel:
                parts.append(kernel)
                sources.append(f"sampling-bench {path}")
            if not parts:
                rows.append(_row(claim, f"{paper} %", NOT_MEASURED, "", ""))
                continue
            rows.append(_row(claim, f"{paper} %", "; ".join(parts), "; ".join(sources),
                             _hardware(path) if kernel else "", paper, value))
    return rows


def learning_verdict(final: pd.DataFrame, floor: tuple[float, int] | None) -> tuple[bool, str]:
    """Whether every (algorithm, sampler) cell of `final` (one `reward` per run) learned (metrics.learned_cells: the
    lower end of its 95 % t-interval over seeds above the random policy's mean return); and the text saying
    by how much."""
    if floor is None:
        return False, "no random-policy runs to show that the predators learned"
    cells = learned_cells(final, floor[0], ["cfg.algo", "cfg.replay.sampler"])
    failed = [f"{c['cfg.algo']}/{c['cfg.replay.sampler']} {c['mean']:.1f}"
              for _, c in cells[~cells["learned"]].iterrows()]
    margin = (cells["mean"] - floor[0]).min()
    text = f"random policy {floor[0]:.1f} ({floor[1]} episodes)"
    if failed:
        return False, f"not claimed: below or within the random policy's return ({text}): {', '.join(failed)}"
    return True, f"every cell above the random policy's return by ≥ {margin:+.1f} ({text})"


def reward_row(metrics: pd.DataFrame | None, random: pd.DataFrame | None = None, n_agents: int | None = None) -> dict:
    """Neighbor − uniform final predators' return (paper 1's measure), paired by study and every grid key except how
    transitions are drawn and stored (algorithm, N, seed …), with the 95 % paired Student-t interval of the mean
    difference (stats.mean_interval over the pairs; the verdict follows it), and the
    margin of every cell over the random policy (`random`). Reference and contiguous runs of one seed train
    identically, so storages are pooled per pair. The source cites the runs that form pairs."""
    claim = "final predators' return, neighbor − uniform" + (f", N={n_agents}" if n_agents is not None else "")
    paper = "no significant degradation"
    if metrics is not None and n_agents is not None and "cfg.env.n_agents" in metrics:
        metrics = metrics[metrics["cfg.env.n_agents"] == n_agents]
    if metrics is None or not {"uniform", "neighbor"} <= set(metrics.get("cfg.replay.sampler", [])):
        study = INPUTS["metrics_n12"]["study"] if n_agents == 12 else INPUTS["metrics"]["study"][0]
        return _row(claim, paper, f"{NOT_MEASURED} (no runs at a budget where predators learn: study {study} trains "
                    "them)", "", "")
    final = final_rewards(metrics, team="predator")
    pair_keys = ["cfg.study", *[k for k in grid_keys(metrics) if k not in DRAW_KEYS | {"cfg.study"}]]
    pairs = paired(final, pair_keys, "cfg.replay.sampler", "reward", "uniform", "neighbor")
    if pairs.empty:
        return _row(claim, paper, NOT_MEASURED, "", "")
    diff = pairs["diff"].to_numpy()
    # the verdict is taken on the interval as printed (2 decimals): a bound of 1e-7 is 0 up to the rounding of the
    # stored returns, and "[+0.00, …]: significantly higher" would contradict itself
    lo, hi = (round(float(b), 2) for b in mean_interval(diff))
    in_pairs = final.merge(pairs[pair_keys], on=pair_keys)
    in_pairs = in_pairs[in_pairs["cfg.replay.sampler"].isin(["uniform", "neighbor"])]
    _, margin = learning_verdict(in_pairs, random_floor(random, n_agents))
    verdict = ("too few pairs for an interval" if len(diff) < 2 else
               "interval contains 0: no significant difference" if lo <= 0 <= hi else
               "significantly lower" if hi < 0 else "significantly higher")
    interval = "no interval" if len(diff) < 2 else f"95 % CI [{lo:+.2f}, {hi:+.2f}]"
    ours = (f"{diff.mean():+.2f} ({interval}, {len(diff)} pairs; uniform mean {pairs['uniform'].mean():.2f}): "
            f"{verdict}; {margin}")
    runs = in_pairs.drop_duplicates(RUN_ID)
    return _row(claim, paper, ours, f"{len(runs)} runs in {len(diff)} pairs "
                f"({', '.join(sorted(set(runs['cfg.study'])))}); predators' return, last 20 % of episodes", "")


def share_row(scaling: pd.DataFrame | None, n: int, paper: float, profile: pd.DataFrame | None = None) -> dict:
    """The update-all-trainers share of training time at N = `n`: the mean over the scaling study's reference/uniform
    runs at `n` of each run's share (its update seconds / its total seconds after the warm-up), with the 95 %
    Student-t interval of that mean (stats.mean_interval; none for one run), the runs, seeds and update rounds it
    rests on, and the verdict its interval gives: "matches" where it holds the paper's value, else "differs,
    because" what takes the rest of the time (metrics.update_share.because, with the loop `profile` where given).
    Runs of different budgets are refused (require_one_budget)."""
    claim = f"update-all-trainers share of training time, N={n}"
    totals = None
    if scaling is not None:
        base = steady_state(scaling)
        base = base[(base["cfg.replay.storage"] == "reference") & (base["cfg.replay.sampler"] == "uniform")]
        require_one_budget(base, "table paper1_claims (update share)")
        totals = run_totals(base)
        totals = totals[totals["cfg.env.n_agents"] == n]
    if totals is None or totals.empty or totals.total.sum() == 0:
        return _row(claim, f"≈{paper:.0f} %", NOT_MEASURED, "", "")
    shares = (100 * totals["update"] / totals["total"]).to_numpy()
    share = float(shares.mean())
    lo, hi = mean_interval(shares)
    base_n = base[base["cfg.env.n_agents"] == n]
    held = evidence(base_n, ["cfg.env.n_agents"]).iloc[0]
    interval = "one run, no interval; " if pd.isna(lo) else f"mean of per-run shares, 95 % CI [{lo:.1f}, {hi:.1f}] %; "
    # the verdict is taken on the interval as printed (one decimal)
    lo, hi = round(lo, 1), round(hi, 1)
    verdict = ("" if pd.isna(lo) else f": matches: the paper's ≈{paper:.0f} % lies in the interval" if lo <= paper <= hi
               else f": differs, because {because(base_n, n, paper, profile)}")
    return _row(claim, f"≈{paper:.0f} %", f"{share:.1f} % (reference/uniform; {interval}{int(held['runs'])} runs, "
                f"{int(held['update_rounds'])} update rounds each){verdict}",
                f"{', '.join(sorted(set(totals['cfg.study'])))}: {len(totals)} runs", "", paper, share)


def training_rows(phases: pd.DataFrame | None, metrics: pd.DataFrame | None, scaling: pd.DataFrame | None = None,
                  random: pd.DataFrame | None = None, profile: pd.DataFrame | None = None) -> list[dict]:
    """The end-to-end rows (N = 12, reference storage), one per algorithm: the mean per-pair change of neighbor vs
    uniform with its t interval and verdict (metrics.end_to_end; 'undecided' where the interval contains 0, and then
    no ratio), the source saying whether the runs were timed alone (metrics.timed_alone); then the reward and
    update-share rows."""
    from effmarl.analysis.metrics.end_to_end import ALGO, UNDECIDED, by_algorithm, paired_clocks
    from effmarl.analysis.metrics.timed_alone import timed_alone

    rows = []
    claim = "end-to-end training time, neighbor vs uniform, N=12"
    sel = None if phases is None else steady_state(phases)
    if sel is not None:
        sel = sel[(sel["cfg.env.n_agents"] == 12) & (sel["cfg.replay.storage"] == "reference")]
    # neighbor vs uniform runs of one study and configuration (algorithm, seed, budget ...): a run without its
    # counterpart (e.g. paper1_scale's short uniform-only runs) forms no pair
    pairs, wall = (pd.DataFrame(), pd.DataFrame()) if sel is None or sel.empty else paired_clocks(sel)
    if pairs.empty:
        rows.append(_row(claim, "-10.2 %", NOT_MEASURED, "", ""))
    walls = by_algorithm(wall).set_index(ALGO) if not wall.empty else None
    for _, algo in (by_algorithm(pairs).iterrows() if not pairs.empty else ()):
        mine = pairs[pairs[ALGO] == algo[ALGO]]
        n = int(algo["pairs"])
        interval = ("too few pairs for an interval" if n < 2 else
                    f"95 % t interval [{algo['low']:+.1f}, {algo['high']:+.1f}] %")
        decided = algo["verdict"] != UNDECIDED
        alone = timed_alone(mine["cfg.study"])
        studies = ", ".join(sorted(set(mine["cfg.study"])))
        on_wall = ("" if walls is None or algo[ALGO] not in walls.index else
                   f"; wall clock {walls.loc[algo[ALGO], 'change_%']:+.2f} %, {walls.loc[algo[ALGO], 'verdict']}")
        rows.append(_row(f"{claim}, {str(algo[ALGO]).upper()}", "-10.2 %",
                         f"{algo['change_%']:+.2f} % of process CPU time (mean per-pair change over {n} pairs, "
                         f"{interval}): {algo['verdict']}{on_wall}",
                         f"{studies}: {2 * n} runs in {n} pairs, "
                         f"{'timed alone' if not alone.illustrative else 'not timed alone (illustrative)'}", "",
                         -10.2, float(algo["change_%"]) if decided else None))
    rows += [reward_row(metrics, random, n) for n in REWARD_N]
    rows += [share_row(scaling, n, paper, profile) for n, paper in ((3, 35.0), (48, 85.0))]
    return rows


def ksweep_row(ksweep_rounds: pd.DataFrame | None, ksweep_metrics: pd.DataFrame | None,
               phases: pd.DataFrame | None, random: pd.DataFrame | None = None) -> dict:
    """The k sweep's headline (metrics.ksweep.headline: the fastest k by the interleaved sampling benchmark's
    rounds `ksweep_rounds`, whether it is separated from the next by the paired interval of their per-rep time
    ratio, the k of the best return of the k sweep's training runs `ksweep_metrics` and whether they clear the
    `random` policy's return) beside the k the end-to-end runs (`phases`) use."""
    claim, paper = "neighbor window k of the headline runs", "one k, chosen by a k sweep (the paper's k unpublished)"
    if ksweep_rounds is None or ksweep_rounds.empty:
        return _row(claim, paper, NOT_MEASURED + " (no interleaved sampling-benchmark rounds)", "", "")
    head = ksweep_headline(ksweep_rounds, ksweep_metrics, random)
    used = ""
    if phases is not None and "cfg.replay.neighbor_k" in phases:
        ks = sorted({int(k) for k in phases.loc[phases["cfg.replay.sampler"] == "neighbor", "cfg.replay.neighbor_k"]})
        used = f" Headline runs use k = {', '.join(map(str, ks))}." if ks else ""
    ks = sorted(int(k) for k in set(head["times"]["k"])) if not head["times"].empty else []
    source = f"sampling-bench rounds (interleaved, alone): k = {', '.join(map(str, ks))}"
    if ksweep_metrics is not None and "cfg.study" in ksweep_metrics:
        source += f"; return: {', '.join(sorted(set(ksweep_metrics['cfg.study'])))}"
    return _row(claim, paper, head["text"] + used, source, "")


def counter_rows(counters: pd.DataFrame | None) -> list[dict]:
    """Cache misses per sampled transition, neighbor vs uniform, reference storage (paper 1, figure 4): median and
    range over the repeats of each sampler, whether the two ranges are apart (the difference is outside the spread
    of the measurement), and the buffer fill they ran at against the simulated last level
    (metrics.counters.fill_statement)."""
    rows = []
    for n in REWARD_N:
        for metric, name in (("D1m", "first-level (D1)"), ("DLm", "last-level")):
            claim = f"{name} data-cache misses per sampled transition, neighbor vs uniform, N={n}"
            paper = "fewer misses (figure 4)"
            diff = None
            if counters is not None and not counters.empty:
                diff = counter_difference(counters, "cachegrind", metric, "reference", n)
            if not diff:
                rows.append(_row(claim, paper, NOT_MEASURED, "", ""))
                continue
            u, nb = diff["uniform"], diff["neighbor"]
            apart = ("outside the spread" if diff["separated"] else "within the spread: no difference shown")
            ours = (f"{u['median']:.1f} [{u['lo']:.1f}, {u['hi']:.1f}] -> {nb['median']:.1f} "
                    f"[{nb['lo']:.1f}, {nb['hi']:.1f}] ({diff['change_pct']:+.1f} %, median [range] over "
                    f"{diff['repeats']} repeats): {apart}{fill_statement(counters, n)}")
            rows.append(_row(claim, paper, ours, "cachegrind (simulated caches), reference storage", ""))
    return rows


def make(inputs: list[str]) -> pd.DataFrame:
    named = named_inputs(inputs, INPUTS, "table paper1_claims", required=False)
    bench = named["bench"][0] if named["bench"] else None

    def read(role):
        return pd.concat([pd.read_parquet(p) for p in named[role]], ignore_index=True) if named[role] else None

    phases, metrics = read("phases"), with_n12(read("metrics"), read("metrics_n12"))
    scaling = read("scaling")
    random = read("random")
    rows = (sampling_rows(bench, phases) + training_rows(phases, metrics, scaling, random, read("loop_profile"))
            + counter_rows(read("counters")))
    rows.append(ksweep_row(read("ksweep_rounds"), read("ksweep_metrics"), phases, random))
    from effmarl.provenance import hardware

    hw = hardware()
    for r in rows:
        if r["ours"] != NOT_MEASURED and not r["hardware"]:
            r["hardware"] = f"{hw['cpu_model']}, {hw['usable_cores']} cores"
    return pd.DataFrame(rows)
