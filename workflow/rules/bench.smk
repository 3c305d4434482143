# `effmarl bench` sections as workflow steps: each section named under the profile's `bench` runs once and
# writes a markdown table (+ csv, + provenance sidecar) under {FIGURES}/bench/, listed in the figure index.
BENCH = f"{FIGURES}/bench"


_PAPER1 = config.get("bench", {}).get("paper1", {})


rule bench_paper1:
    """Paper-1 engine benchmark: the paper-faithful, today's and the batched + vectorised training loops end to
    end. Its sampling section (batch modes, stacked layout, the memory floor) stays a command of its own
    (`effmarl bench paper1 --sections sampling`): the workflow's one sampling-phase measurement is
    paper1_sampling_bench."""
    output:
        md=f"{BENCH}/bench_paper1.md",
        loops=f"{BENCH}/bench_paper1.loops.csv",
        provenance=f"{BENCH}/bench_paper1.provenance.json",
    params:
        args=cli_options({key: value for key, value in _PAPER1.items() if key != "threads"}),
        stem=output_stem,
        profile=config.get("profile", "adhoc"),
        threads=_PAPER1.get("threads", MEASURED_THREADS),  # the profile's, else 1
    log:
        f"{BENCH}/logs/bench_paper1.log",
    benchmark:
        f"{BENCH}/logs/bench_paper1.benchmark.tsv"
    threads: job_threads(timing_job("bench_paper1"))  # a timing job (common.smk): alone
    resources:
        **slurm_options(timing_job("bench_paper1")),
    shell:
        thread_env("{params.threads}") + "effmarl bench paper1 {params.args} --sections loops "
        "--threads {params.threads} "
        "--profile {params.profile} --out {params.stem} > {log} 2>&1"


if "paper1" in config.get("bench", {}):
    STUDY_TARGETS.setdefault("bench", []).append(f"{BENCH}/bench_paper1.md")


rule bench_qmix:
    """Paper-2 engine benchmark: acting (Python vs jitted SMAX runner), training throughput and the lockstep cost
    of S seeds, MAST's mask work against a dense update."""
    output:
        md=f"{BENCH}/bench_qmix.md",
        csv=f"{BENCH}/bench_qmix.csv",
        provenance=f"{BENCH}/bench_qmix.provenance.json",
    params:
        args=cli_options(config.get("bench", {}).get("qmix", {})),
        stem=output_stem,
        profile=config.get("profile", "adhoc"),
    log:
        f"{BENCH}/logs/bench_qmix.log",
    benchmark:
        f"{BENCH}/logs/bench_qmix.benchmark.tsv"
    threads: 2
    shell:
        thread_env() + "effmarl bench qmix {params.args} --threads {threads} --profile {params.profile} "
        "--out {params.stem} > {log} 2>&1"


if "qmix" in config.get("bench", {}):
    STUDY_TARGETS.setdefault("bench", []).append(f"{BENCH}/bench_qmix.md")


# The sparse-inference measurement: a trained sparse run's per-agent networks (bench.sparse.run, "<study>/<run
# id>" of this profile) or, without it, a fresh network of the given size.
_SPARSE = config.get("bench", {}).get("sparse", {})
_SPARSE_RUN = [f"{RESULTS}/{_SPARSE['run']}/{name}" for name in ("model.pt", "masks.pt")] if "run" in _SPARSE else []


rule bench_sparse:
    """Sparse agent-network inference in wall-clock time (dense, masked dense, mask multiply, CSR, compacted) with
    the theoretical FLOPs ratio beside it."""
    input:
        _SPARSE_RUN,
    output:
        md=f"{BENCH}/bench_sparse.md",
        csv=f"{BENCH}/bench_sparse.csv",
        provenance=f"{BENCH}/bench_sparse.provenance.json",
    params:
        args=cli_options({k: v for k, v in _SPARSE.items() if k != "run"}),
        run=f"--run {RESULTS}/{_SPARSE['run']}" if "run" in _SPARSE else "",
        stem=output_stem,
        profile=config.get("profile", "adhoc"),
    log:
        f"{BENCH}/logs/bench_sparse.log",
    benchmark:
        f"{BENCH}/logs/bench_sparse.benchmark.tsv"
    threads: 1
    shell:
        thread_env() + "effmarl bench sparse {params.run} {params.args} --threads {threads} "
        "--profile {params.profile} --out {params.stem} > {log} 2>&1"


if _SPARSE:
    STUDY_TARGETS.setdefault("bench", []).append(f"{BENCH}/bench_sparse.md")
