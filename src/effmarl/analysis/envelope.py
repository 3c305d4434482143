"""`effmarl costs --estimate PROFILE`: what a profile will cost before it runs - an estimate, not a measurement.

Per job, the seconds of work (core-seconds) it is expected to take, from recorded costs rather than guesses:

- **QMIX family (paper 2)**: a start-up (imports, SMAX set-up, the JIT compilation of acting and evaluation: 40 s,
  measured 2026-12-03 on a 10 000-step dense 3m run - its first acting round took 11.7 s and its first evaluation
  14.9 s against 0.2 s and 0.03 s later) plus per env step the cost the published default run measured for its kind
  of method: mast_dense (dense), mast_sweep (MAST) and mast_table1 (the baselines) in
  `<published>/mast/prices.csv` (QMIX_PRICES: the costs table of the last paper-2 run whose Table-1 jobs ran whole
  and alone), each study's job seconds less a start-up per job, per run (its `runs` column: several
  runs share a process), less the run's evaluations, over its 250 000 env steps
  (QMIX, SMAX 3m, 8 copies and 8 updates per round). Another algorithm, map or update ratio scales that per-step cost
  by the resources model's work (`effmarl.resources`: acting + learner updates from benchmarks/results/step_cost.csv,
  its evaluation term left out); evaluations add resources.qmix_eval_seconds (1.2 ms per compiled greedy episode on
  3m, scaled by the map's episode limit). Several runs
  in one process (runs_per_process) pay the start-up once: seeds train in lockstep, and on a CPU S seeds cost S x one
  seed's learner (benchmarks/results/qmix_lockstep_cpu.md, qmix_lockstep_fold.md), so only the start-up is shared.
- **MPE (paper 1)**: 5 s of start-up (a smoke run's 3-episode jobs: 4.8-5.5 CPU-s) plus the resources model's run
  (`resources.offpolicy_seconds`): env steps x the cost of one step and update rounds x the cost of one round, from
  the measured table (`effmarl.step_costs`: MADDPG on the reference storage at N = 3, 12, 24, 48, MASAC and the
  contiguous storage by their measured ratio to it at N = 3 and 12, a round by its batch / 1024; the random policy
  as a step of MADDPG's on the contiguous storage).
- **Fixed jobs** at the default profile's options: the cachegrind counters 358 s on 2 cores (716 CPU-s measured
  2026-12-06 at fill 20 000 with the cheaper fill, beside other jobs), the loop profile 61 s (60.5 CPU-s, the same
  day), `bench qmix` 193 s (measured 2026-12-03, one thread, quiet), and the sampling benchmark and `bench paper1` as
  the published run took them (`<published>/costs.csv`); `bench sparse` 30 s (not measured: its smoke-size job takes
  9 s). Paper 1's part alone (`paper1_jobs`: what `snakemake paper1_part` runs) is scheduled on its own too.
- **Figures, tables, study tables (aggregate), the figure index**: the published run's mean job seconds per kind
  (`<published>/costs.csv`, `mast/costs.csv`), counted from a dry run's job list
  (`snakemake -n --quiet rules --configfile PROFILE > FILE`, `--dry-run FILE`); without it they are left out.

Training jobs are the profile's own (effmarl.studies.expand_all and effmarl.groups.process_groups, as the Snakefile
builds them), less the runs it copies (effmarl.reuse: a run that trains what the reused profile's or an earlier run
trains; the reused profile counted as run at the same commit), so runs of a study whose outputs no workflow rule
registers yet are counted too (the dry run does not list them; the estimate says how many). The makespan on N cores
is a list schedule (`effmarl.analysis.schedule`), longest remaining path first, with the two dependencies that shape
it (a sparsity_from study's runs wait for mast_dense and mast_sweep; a ticket study's for its source) and every
figure and table after all training; a timing
job (a run of a timing study, the sampling benchmark, `bench paper1`: studies.TIMING_RULES and timing_studies) holds
every core while it runs, as the workflow schedules it. Beside it a bound for any greedy order: Graham's, work / N +
(1 - 1/N) x the longest dependency chain, for the jobs that share the machine, plus each timing job's wall time and
the longest shared job it may wait for. Snakemake does not promise longest-first.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from effmarl.analysis.schedule import Job, graham_bound, makespan
from effmarl.methods import method

QMIX_START_S = 40.0
PUBLISHED_QMIX = {"mast_dense": "dense", "mast_sweep": "mast", "mast_table1": "baseline"}  # study -> cost kind
PUBLISHED_QMIX_STEPS = 250_000        # the published Table-1 runs' budget (docs/paper2-study.md)
PUBLISHED_QMIX_EVALS = (314, 32)      # their evaluations x episodes (every 800 steps, 32 episodes)
MPE_START_S = 5.0
# fixed jobs: rule -> (seconds, cores, source); None = read from the published costs.csv under that kind
FIXED = {"paper1_counters": (358.0, 2, "measured 2026-12-06 at the default's options (fill 20 000, 5 layouts): 716 "
                               "CPU-s on 2 driver processes, beside other jobs (configs/default.yaml)"),
         "bench_qmix": (193.0, 1, "measured 2026-12-03: effmarl bench qmix at the default options, 1 thread"),
         "bench_sparse": (30.0, 1, "not measured (smoke size: 9 s)"),
         "paper1_sampling_bench": ("paper 1 micro: sampling_bench", 1, "published/default/costs.csv"),
         "paper1_loop_profile": (61.0, 1, "measured 2026-12-06: 60.5 CPU-s (N = 48, 100 steps, fills 2 000 and "
                                 "30 000, 3 rounds; beside other jobs, so process CPU time)"),
         "bench_paper1": ("benchmark: bench_paper1", 1, "published/default/costs.csv")}
ANALYSIS_KINDS = {"figure": "figures", "table": "tables", "aggregate": "study tables (aggregate)",
                  "figure_index": "figure index"}
COSTS_FILES = ("costs.csv", "mast/costs.csv")
# The costs table that prices QMIX-family training (`qmix_per_step`): the last paper-2 run whose Table-1 jobs ran whole
# (no resumed job) and alone on the machine - the 2026-12-04 default run (ac1c610, snakemake --cores 2, 95 min), kept
# beside the published run's own costs table, which may have neither (its costs.md says how it ran).
QMIX_PRICES = "mast/prices.csv"


# ---- per-run costs ------------------------------------------------------------------------------------------------

def mpe_seconds(cfg: dict) -> float:
    """An MPE run's CPU seconds: start-up + env steps x step cost + update rounds x round cost (module doc)."""
    from effmarl import resources

    return MPE_START_S + resources.offpolicy_seconds(cfg)


def _qmix_work(cfg: dict) -> float:
    """The resources model's acting + learning seconds of a QMIX-family run (its evaluation term left out)."""
    from effmarl import resources

    q = cfg.get("qmix", {})
    return resources.qmix_seconds({**cfg, "qmix": {**q, "eval_episodes": 0}})


def qmix_kind(cfg: dict) -> str:
    """The cost kind of a QMIX-family run's method (effmarl/methods.py): the published study that priced it."""
    return method(cfg.get("sparse", {}).get("method", "dense")).cost


def qmix_seconds(cfg: dict, per_step: dict[str, float]) -> float:
    """A QMIX-family run's CPU seconds, its start-up included (module doc)."""
    from effmarl import resources

    reference = {**cfg, "algo": "qmix", "env": {**cfg["env"], "map": "3m"},
                 "qmix": {**cfg["qmix"], "num_envs": 8, "updates_per_round": 8}}
    scale = _qmix_work(cfg) / _qmix_work(reference)
    return (QMIX_START_S + per_step[qmix_kind(cfg)] * cfg["budget"]["env_steps"] * scale
            + resources.qmix_eval_seconds(cfg))


def published_kinds(published: Path) -> pd.DataFrame:
    """The published run's costs tables, concatenated (kind, jobs, job_s, longest_s)."""
    frames = [pd.read_csv(published / name) for name in COSTS_FILES if (published / name).exists()]
    if not frames:
        from effmarl.config import ConfigError

        raise ConfigError([f"--published {published}: none of {', '.join(COSTS_FILES)}"], "effmarl costs")
    table = pd.concat(frames, ignore_index=True)
    return table[table["kind"] != "all jobs"]


def qmix_prices(published: Path) -> pd.DataFrame:
    """The costs table that prices QMIX-family training (QMIX_PRICES under `published`)."""
    path = Path(published) / QMIX_PRICES
    if not path.is_file():
        from effmarl.config import ConfigError

        raise ConfigError([f"--published {published}: no {QMIX_PRICES} (the costs table that prices QMIX training)"],
                          "effmarl costs")
    return pd.read_csv(path)


def qmix_per_step(kinds: pd.DataFrame) -> dict[str, float]:
    """Seconds per env step of a priced Table-1 run (`qmix_prices`), per kind of method, its start-up and evaluation
    taken off."""
    from effmarl import resources

    evaluations, episodes = PUBLISHED_QMIX_EVALS
    eval_s = evaluations * episodes * resources.QMIX_EVAL_EPISODE_S
    out = {}
    for study, kind in PUBLISHED_QMIX.items():
        row = kinds[kinds["kind"] == f"training: {study}"]
        if row.empty:
            from effmarl.config import ConfigError

            raise ConfigError([f"the published costs have no 'training: {study}' row"], "effmarl costs")
        jobs = row["jobs"].sum()
        runs = row["runs"].sum() if "runs" in row else jobs  # several runs in one process pay one start-up
        out[kind] = ((row["job_s"].sum() - jobs * QMIX_START_S) / runs - eval_s) / PUBLISHED_QMIX_STEPS
    return out


def run_seconds(cfg: dict, per_step: dict[str, float]) -> float:
    from effmarl.variants import QMIX_VARIANTS

    if cfg["algo"] in QMIX_VARIANTS:
        return qmix_seconds(cfg, per_step)
    return mpe_seconds(cfg)


def start_seconds(cfg: dict) -> float:
    return MPE_START_S if cfg["env"]["backend"] == "mpe" else QMIX_START_S


# ---- the job list -------------------------------------------------------------------------------------------------

def dry_run_counts(text: str) -> dict[str, int]:
    """{rule: jobs} from the 'Job stats' table of `snakemake -n` (the first one, if printed twice)."""
    counts: dict[str, int] = {}
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "Job stats:"), None)
    if start is None:
        return counts
    for line in lines[start + 3:]:
        match = re.fullmatch(r"\s*(\S+)\s+(\d+)\s*", line)
        if not match or match.group(1) == "total":
            break
        counts[match.group(1)] = int(match.group(2))
    return counts


def analysis_kind(rule: str) -> str | None:
    if rule == "figure_index":
        return "figure_index"
    if rule == "aggregate":
        return "aggregate"
    if rule.startswith("figure_"):
        return "figure"
    if rule.startswith("table_"):
        return "table"
    return None


def profile_fixed_rules(profile: dict) -> set[str]:
    """The FIXED rules a profile runs, without a dry run: paper 1's micro-measurements where it has a paper1* study
    (the figures that read them are made only then), each `effmarl bench` section it has."""
    paper1 = any(study.startswith("paper1") for study in profile["studies"])
    return {rule for rule in FIXED if (rule.startswith("paper1_") and paper1)
            or (rule.startswith("bench_") and rule.removeprefix("bench_") in profile.get("bench", {}))}


def jobs_of(profile: dict, runs: dict[str, dict[str, dict]], kinds: pd.DataFrame,
            counts: dict[str, int] | None, prices: pd.DataFrame) -> list[Job]:
    """Every job of the profile with its estimated seconds and dependencies; QMIX training priced from `prices`."""
    from effmarl.groups import process_groups
    from effmarl.studies import TIMING_RULES, selection_studies, timing_studies

    per_step = qmix_per_step(prices)
    timing = set(timing_studies(profile))
    jobs: list[Job] = []
    grouped = process_groups(profile, runs)
    in_group = {(study, rid) for study, ids in grouped.values() for rid in ids}
    for name, (study, ids) in grouped.items():
        cfgs = [runs[study][rid] for rid in ids]
        seconds = sum(run_seconds(c, per_step) for c in cfgs) - (len(cfgs) - 1) * start_seconds(cfgs[0])
        jobs.append(Job(name, f"training: {study}", seconds, runs=len(cfgs), alone=study in timing))
    for study, by_id in runs.items():
        for rid, cfg in by_id.items():
            if (study, rid) not in in_group:
                jobs.append(Job(f"{study}/{rid}", f"training: {study}", run_seconds(cfg, per_step), runs=1,
                                alone=study in timing))
    job_of = {(study, rid): name for name, (study, ids) in grouped.items() for rid in ids}
    job_of.update({(s, r): f"{s}/{r}" for s, by_id in runs.items() for r in by_id if (s, r) not in job_of})
    stage1 = {job_of[(s, r)] for s in ("mast_dense", "mast_sweep") if s in runs for r in runs[s]}
    selected = set(selection_studies(profile))
    for job in jobs:
        study = job.kind.removeprefix("training: ")
        if study in selected:
            job.deps |= stage1
        source = profile["studies"][study].get("ticket_source")
        if source:
            job.deps |= {job_of[(source, r)] for r in runs[source]}
    fixed_rules = profile_fixed_rules(profile) if counts is None else {rule for rule in FIXED if counts.get(rule)}
    for rule in sorted(fixed_rules):
        seconds, cores, _ = FIXED[rule]
        if isinstance(seconds, str):
            row = kinds[kinds["kind"] == seconds]
            seconds = float(row["job_s"].sum() / row["jobs"].sum()) if len(row) else 0.0
        deps = set()
        if rule == "bench_sparse" and "run" in profile.get("bench", {}).get("sparse", {}):
            study, _, rid = profile["bench"]["sparse"]["run"].partition("/")
            deps = {job_of[(study, rid)]} if (study, rid) in job_of else set()
        jobs.append(Job(rule, rule, seconds * cores, cores=cores, deps=deps, alone=rule in TIMING_RULES))
    training = {j.name for j in jobs}
    for rule, n in (counts or {}).items():
        kind = analysis_kind(rule)
        if kind is None:
            continue
        row = kinds[kinds["kind"] == ANALYSIS_KINDS[kind]]
        mean = float(row["job_s"].sum() / row["jobs"].sum()) if len(row) else 0.0
        for i in range(n):
            jobs.append(Job(f"{rule}#{i}", ANALYSIS_KINDS[kind], mean, deps=set(training)))
    return jobs


# ---- paper 1's part ------------------------------------------------------------------------------------------------

# The rules of `snakemake paper1_part` besides the skeleton and paper1* studies' training and their figures and tables.
PAPER1_RULES = ("paper1_counters", "paper1_sampling_bench", "paper1_loop_profile", "bench_paper1")


def paper1_jobs(jobs: list[Job]) -> list[Job]:
    """Paper 1's part of `jobs` (the Snakefile's paper1_part: workflow/rules/common.smk, paper_targets): training of
    the skeleton and paper1* studies, PAPER1_RULES, and the figure and table jobs whose rule names a paper-1 group
    (the per-study aggregates, seconds each, are not told apart and are left out); dependencies outside it dropped."""
    def mine(job: Job) -> bool:
        study = job.kind.removeprefix("training: ")
        if study != job.kind:
            return study == "skeleton" or study.startswith("paper1")
        rule = job.name.split("#")[0]
        return rule in PAPER1_RULES or (analysis_kind(rule) in ("figure", "table")
                                        and ("_paper1" in rule or "_skeleton" in rule))

    part = [j for j in jobs if mine(j)]
    names = {j.name for j in part}
    return [Job(j.name, j.kind, j.seconds, j.cores, j.runs, j.deps & names, j.alone) for j in part]


# ---- the table ----------------------------------------------------------------------------------------------------

# The workflow's training rules (workflow/rules/runs.smk, lockstep.smk; group names from groups.process_groups): one
# run (train_<kind>, train_<kind>_alone), seeds in one process (batch_<study>_<n>, lockstep_<study>_<n>) and
# interleaved neighbor/uniform pairs (pairs_<study>_<n>).
TRAINING_RULE_PREFIXES = ("train_", "batch_", "lockstep_", "pairs_")


def dry_run_training_jobs(counts: dict[str, int]) -> int:
    """How many training jobs a dry run's job stats (dry_run_counts) schedule."""
    return sum(n for rule, n in counts.items() if rule.startswith(TRAINING_RULE_PREFIXES))


def estimate(profile_path: str, published: str, dry_run: str | None, cores: list[int]) -> tuple[pd.DataFrame, dict]:
    from effmarl.reuse import from_reused, planned, trained
    from effmarl.studies import expand_all, load_profile

    profile = load_profile(profile_path)
    runs = expand_all(profile)
    # runs copied rather than trained (effmarl.reuse), the reused profile's runs taken as run (it runs first)
    copied = planned(profile, runs)
    kinds, prices = published_kinds(Path(published)), qmix_prices(Path(published))
    counts = dry_run_counts(Path(dry_run).read_text()) if dry_run else None
    jobs = jobs_of(profile, trained(runs, copied), kinds, counts, prices)
    frame = pd.DataFrame([{"kind": j.kind, "runs": j.runs, "core_s": j.seconds, "job_s": j.seconds / j.cores}
                          for j in jobs])
    table = frame.groupby("kind", sort=False).agg(jobs=("core_s", "size"), runs=("runs", "sum"),
                                                  job_s=("job_s", "sum"), core_s=("core_s", "sum"),
                                                  longest_job_s=("job_s", "max"))
    table = table.reset_index().sort_values("job_s", ascending=False)
    total = pd.DataFrame([{"kind": "all jobs", "jobs": len(frame), "runs": int(frame["runs"].sum()),
                           "job_s": frame["job_s"].sum(), "core_s": frame["core_s"].sum(),
                           "longest_job_s": frame["job_s"].max()}])
    table = pd.concat([table, total], ignore_index=True)
    table["job_h"] = table["job_s"] / 3600
    summary = {"profile": str(profile_path), "job_h": frame["job_s"].sum() / 3600,
               "core_h": frame["core_s"].sum() / 3600,
               "makespan_s": {c: makespan(jobs, c) for c in cores}, "bound_s": {c: graham_bound(jobs, c)
                                                                            for c in cores},
               "alone_s": sum(j.seconds / j.cores for j in jobs if j.alone),
               "paper1_makespan_s": {c: makespan(paper1_jobs(jobs), c) for c in cores},
               "training_jobs": int((frame["runs"] > 0).sum()), "runs": int(frame["runs"].sum()),
               "copied_runs": len(copied), "reused_runs": from_reused(profile, copied),
               "reuses": profile.get("reuses"),
               "dry_run_training_jobs": None if counts is None else dry_run_training_jobs(counts),
               "per_step_ms": {k: 1000 * v for k, v in qmix_per_step(prices).items()}}
    return table, summary


def write(profile: str, published: str, dry_run: str | None, cores: list[int], out: str) -> list[Path]:
    from effmarl import io, provenance

    table, s = estimate(profile, published, dry_run, cores)
    missing = (s["training_jobs"] - s["dry_run_training_jobs"]) if s["dry_run_training_jobs"] is not None else None
    lines = [f"# Estimated cost of {profile} (an estimate, not a measurement)", "",
             f"Job time (the sum of the jobs' benchmark seconds, what `effmarl costs` adds up): **{s['job_h']:.2f} "
             f"h**; core time (a job's seconds times the cores it keeps busy): {s['core_h']:.2f} core-hours; "
             f"{s['runs']} runs in {s['training_jobs']} training jobs.", ""]
    if s["copied_runs"]:
        lines += [f"Runs copied, not trained (effmarl.reuse): {s['copied_runs']}, of which {s['reused_runs']} from "
                  f"{s['reuses']}'s runs, counted as trained there (run that profile first, at the same commit; a "
                  "run it has not trained at this commit trains here), and the rest from an earlier run of this "
                  "profile.", ""]
    for c in cores:
        lines.append(f"- {c} cores: makespan {s['makespan_s'][c] / 60:.0f} min (longest remaining path first); any "
                     f"greedy order within {s['bound_s'][c] / 60:.0f} min (Graham's bound).")
    lines.append("- Paper 1's part alone (`snakemake paper1_part`: the skeleton and paper1* studies, the "
                 "micro-measurements, bench paper1 and their figures and tables): " + ", ".join(
                     f"{s['paper1_makespan_s'][c] / 60:.0f} min on {c} cores" for c in cores) + ".")
    lines.append(f"- Timing jobs, each alone on the machine whatever its cores (studies.TIMING_RULES and the timing "
                 f"studies' runs): {s['alone_s'] / 60:.0f} min in series, in every makespan above.")
    per_step = ", ".join(f"{k} {v:.3f} ms" for k, v in s["per_step_ms"].items())
    lines += ["", f"QMIX on SMAX 3m per env step (from {published}/{QMIX_PRICES}, start-up and evaluation taken "
              f"off): {per_step}; start-up {QMIX_START_S:.0f} s per process.", ""]
    if dry_run is None:
        lines += ["No dry run given: figures, tables, study tables and the index are not counted.", ""]
    elif missing:
        lines += [f"The dry run ({dry_run}) trains {s['dry_run_training_jobs']} jobs, the profile "
                  f"{s['training_jobs']}: "
                  f"{missing} training jobs belong to studies whose outputs no rule registers yet (counted here, "
                  "not built by `snakemake` until registered).", ""]
    lines += ["Sources and model: `effmarl.analysis.envelope` (module doc).", "",
              table.to_markdown(index=False, floatfmt=("", ".0f", ".0f", ".0f", ".0f", ".0f", ".2f"))]
    rec = provenance.record(inputs=[str(Path(published) / n) for n in COSTS_FILES] + ([dry_run] if dry_run else []),
                            extra={"kind": "costs-estimate", "profile": profile, "summary": s})
    stem = Path(out)
    return [io.write_text(stem.with_suffix(".csv"), table.to_csv(index=False)),
            io.write_text(stem.with_suffix(".md"), "\n".join(lines) + "\n"),
            io.write_json(stem.with_suffix(".provenance.json"), rec)]
