# Paper 1 (MADDPG / MASAC, replay storage × sampler): the phase-breakdown figure and the sampling table.
# Each study named paper1* gets these two outputs.
for _study in [s for s in RUNS if s.startswith("paper1")]:
    add_figure(_study, "phase_breakdown", "paper1_phases", phases=[summary(_study, "phases")])
    add_table(_study, "sampling_per_round", "paper1_sampling", phases=[summary(_study, "phases")])


# Paper 1 micro-measurements of the sampling phase alone (no training): the interleaved sampling benchmark
# (figure 3) and the counters (figure 4), sized by the profile's `paper1_micro`; then the claims table.
P1_MICRO = f"{RESULTS}/paper1_micro"


rule paper1_sampling_bench:
    output:
        f"{P1_MICRO}/sampling_bench.parquet",
        f"{P1_MICRO}/sampling_bench.csv",
        f"{P1_MICRO}/sampling_bench.md",
        f"{P1_MICRO}/sampling_bench.provenance.json",
    params:
        args=cli_options(config["paper1_micro"]["sampling_bench"]),
        stem=output_stem,
        profile=config.get("profile", "adhoc"),
    log:
        f"{P1_MICRO}/logs/sampling_bench.log",
    benchmark:
        f"{P1_MICRO}/benchmarks/sampling_bench.tsv"
    threads: 1
    shell:
        "effmarl sampling-bench {params.args} --profile {params.profile} --out {params.stem} > {log} 2>&1"


rule paper1_counters:
    output:
        f"{P1_MICRO}/counters.parquet",
        f"{P1_MICRO}/counters.json",
    params:
        args=cli_options(config["paper1_micro"]["counters"]),
        stem=output_stem,
        profile=config.get("profile", "adhoc"),
    log:
        f"{P1_MICRO}/logs/counters.log",
    benchmark:
        f"{P1_MICRO}/benchmarks/counters.tsv"
    threads: 2  # cachegrind's driver processes side by side (each counted on its own): the longest paper-1 step
    shell:
        "effmarl counters {params.args} --jobs {threads} --profile {params.profile} --out {params.stem} > {log} 2>&1"


# Registered only when the profile has paper-1 studies. Each output takes the study that can support its claim:
# end-to-end times from the study that trains neighbor and uniform side by side (paper1), the phase shares vs N
# from a study of one budget at every N (paper1_scale, else paper1: the paper profile's paper1 has every N), the
# reward from a study whose predators learn (paper1_reward, else paper1) against the random policy (skeleton).
_p1_studies = [s for s in RUNS if s.startswith("paper1")]
if _p1_studies:
    _bench, _counters = [f"{P1_MICRO}/sampling_bench.parquet"], [f"{P1_MICRO}/counters.parquet"]
    add_figure("paper1", "sampling_phase_vs_n", "paper1_sampling_bench", bench=_bench)
    add_figure("paper1", "sampling_counters", "paper1_counters", counters=_counters)
    _p1_pairs = [s for s in ("paper1",) if s in RUNS
                 and {c["replay"]["sampler"] for c in RUNS[s].values()} >= {"uniform", "neighbor"}]
    _scaling = [summary(next(s for s in ("paper1_scale", "paper1") if s in RUNS), "phases")] if (
        {"paper1_scale", "paper1"} & set(RUNS)) else []
    _reward = [summary(s, "metrics") for s in ("paper1_reward",) if s in RUNS] or [summary(s, "metrics")
                                                                                    for s in _p1_pairs]
    _random = [summary("skeleton", "metrics")] if "skeleton" in RUNS else []
    _ksweep = {f"ksweep_{t}": [summary("paper1_ksweep", t)] if "paper1_ksweep" in RUNS else [] for t in ("phases",
                                                                                                     "metrics")}
    add_table("paper1", "claims", "paper1_claims", bench=_bench, counters=_counters,
              phases=[summary(s, "phases") for s in _p1_pairs], scaling=_scaling, metrics=_reward, random=_random,
              **_ksweep)
    if _scaling:
        add_figure("paper1", "phase_scaling", "paper1_scaling", phases=_scaling)
    if _p1_pairs:
        add_figure("paper1", "end_to_end", "paper1_end_to_end", phases=[summary(s, "phases") for s in _p1_pairs])
    if _reward:
        add_figure("paper1", "reward_curves", "paper1_rewards", metrics=_reward, random=_random)
    if "paper1_ksweep" in RUNS:
        add_figure("paper1", "ksweep", "paper1_ksweep",
                   phases=[summary("paper1_ksweep", "phases")], metrics=[summary("paper1_ksweep", "metrics")],
                   random=_random)
