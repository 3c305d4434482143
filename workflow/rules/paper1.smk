# Paper 1 micro-measurements of the sampling phase alone (no training): the interleaved sampling benchmark
# (figure 3) and the counters (figure 4), sized by the profile's `paper1_micro`; the figures and the claims table
# that read them declare so (analysis/figures/paper1_{sampling_bench,counters}.py, tables/paper1_claims.py).
P1_MICRO = f"{RESULTS}/paper1_micro"


rule paper1_sampling_bench:
    output:
        f"{P1_MICRO}/sampling_bench.parquet",
        f"{P1_MICRO}/sampling_bench.csv",
        f"{P1_MICRO}/sampling_bench.md",
        f"{P1_MICRO}/sampling_bench.provenance.json",
        f"{P1_MICRO}/sampling_bench.rounds.parquet",  # every interleaved round: the k sweep's time ranking
    params:
        args=cli_options(config["paper1_micro"]["sampling_bench"]),
        headline_k=headline_k(config),  # paper1's window as this profile runs it: the one its readers quote
        stem=output_stem,
        profile=config.get("profile", "adhoc"),
        threads=MEASURED_THREADS,
    log:
        f"{P1_MICRO}/logs/sampling_bench.log",
    benchmark:
        f"{P1_MICRO}/benchmarks/sampling_bench.tsv"
    threads: job_threads(timing_job("paper1_sampling_bench"))  # a timing job (common.smk): alone
    resources:
        **slurm_options(timing_job("paper1_sampling_bench")),
    shell:
        thread_env("{params.threads}") + "effmarl sampling-bench {params.args} --headline-k {params.headline_k} "
        "--threads {params.threads} "
        "--profile {params.profile} --out {params.stem} > {log} 2>&1"


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


rule paper1_loop_profile:
    """What the rest of the training loop costs at large N (the environment step's parts, the sampling round at two
    buffer fills): the measurement behind the claims' update-share verdict (effmarl.profiling.loop_profile)."""
    output:
        f"{P1_MICRO}/loop_profile.parquet",
        f"{P1_MICRO}/loop_profile.md",
        f"{P1_MICRO}/loop_profile.provenance.json",
    params:
        args=cli_options(config["paper1_micro"]["loop_profile"]),
        stem=output_stem,
        profile=config.get("profile", "adhoc"),
        threads=MEASURED_THREADS,
    log:
        f"{P1_MICRO}/logs/loop_profile.log",
    benchmark:
        f"{P1_MICRO}/benchmarks/loop_profile.tsv"
    threads: job_threads(timing_job("paper1_loop_profile"))  # a timing job (common.smk): alone
    resources:
        **slurm_options(timing_job("paper1_loop_profile")),
    shell:
        thread_env("{params.threads}") + "python -m effmarl.profiling.loop_profile {params.args} "
        "--threads {params.threads} --profile {params.profile} --out {params.stem} > {log} 2>&1"
