# Generic rules for every study: write each run's configuration, train it, aggregate its tables.
import yaml


wildcard_constraints:
    study="[a-z][a-z0-9_]*",
    run_id="[^/]+",
    table="[a-z_]+",


localrules:
    run_config,
    aggregate,



rule run_config:
    """The resolved configuration of one run; it changes (and so re-runs training) when the profile does. A shell
    job: a `run:` block would make Snakemake re-read the whole workflow in a new process for each run."""
    output:
        f"{RESULTS}/{{study}}/{{run_id}}/config.yaml",
    params:
        text=lambda wc: yaml.safe_dump(RUNS[wc.study][wc.run_id], sort_keys=True),
    log:
        f"{RESULTS}/{{study}}/{{run_id}}/config.log",
    wildcard_constraints:
        study=alternatives([s for s in RUNS if s not in SELECTED]),
    shell:
        "effmarl run-config --out {output} > {log} 2>&1 <<'EOF'\n{params.text}EOF"


if SELECTED:

    rule run_config_selected:
        """The configuration of a run whose sparsity the MAST selection decides (sparsity_from: selection): the
        second stage of paper 2's Table 1. The sparsity chosen for the run's (algo, map) is written in."""
        input:
            SELECTION,
        output:
            f"{RESULTS}/{{study}}/{{run_id}}/config.yaml",
        params:
            text=lambda wc: yaml.safe_dump(RUNS[wc.study][wc.run_id], sort_keys=True),
        log:
            f"{RESULTS}/{{study}}/{{run_id}}/config.log",
        wildcard_constraints:
            study=alternatives(SELECTED),
        localrule: True
        shell:
            "effmarl run-config --selection {input} --out {output} > {log} 2>&1 <<'EOF'\n{params.text}EOF"


# One train rule per set of files a run writes (train_outputs in common.smk), each matching only its runs, so
# every file a run writes is a declared output. checkpoint/ is deliberately not one: it is the state a killed
# run resumes from, and Snakemake deletes a job's declared outputs before it runs the job.
# A timing study's runs (common.smk) have rules of their own, train_<kind>_alone: each job reserves every core (on
# SLURM the node) and its process computes with MEASURED_THREADS.
# The command reads no loop variable (Snakemake evaluates `shell:` again when the job runs, after the loop has
# ended): the compute threads are a param, bound per rule here (compute_threads, lockstep.smk's rule for groups).
TRAIN_SHELL = (thread_env("{params.compute_threads}") + "effmarl train --config {input.config} --out "
               "$(dirname {output.provenance}) --set threads={params.compute_threads} > {log} 2>&1")
for _kind, (_files, _runs, _alone) in train_groups().items():

    rule:
        name:
            f"train_{_kind}"
        input:
            config=f"{RESULTS}/{{run}}/config.yaml",
            source=lambda wc: run_inputs(*wc.run.split("/")),
        output:
            **{name.replace(".", "_"): f"{RESULTS}/{{run}}/{name}" for name in _files},
            provenance=f"{RESULTS}/{{run}}/provenance.json",
        log:
            f"{RESULTS}/{{run}}/train.log",
        benchmark:
            f"{RESULTS}/{{run}}/train.benchmark.tsv"
        wildcard_constraints:
            run=alternatives(_runs),
        params:
            compute_threads=compute_threads(_alone),
        threads: job_threads(_alone)
        resources:  # derived from the run's config: what a cluster job must ask for
            mem_mb=lambda wc: run_resources(wc.run, "mem_mb"),
            runtime=lambda wc: run_resources(wc.run, "runtime"),
            gpu=lambda wc: run_resources(wc.run, "gpu"),
            **slurm_options(_alone),
        shell:
            TRAIN_SHELL


# A run that trains what another run trains (COPIES, effmarl.reuse) is copied from it, the source's files its inputs:
# a complete run of the reused profile, or the earlier run of this profile that trains it.
for _kind, (_files, _runs) in copy_groups().items():

    rule:
        name:
            f"reuse_{_kind}"
        input:
            config=f"{RESULTS}/{{run}}/config.yaml",
            source=lambda wc: copy_source(wc.run, files=True),
        output:
            **{name.replace(".", "_"): f"{RESULTS}/{{run}}/{name}" for name in _files},
            provenance=f"{RESULTS}/{{run}}/provenance.json",
        log:
            f"{RESULTS}/{{run}}/reuse.log",
        benchmark:
            f"{RESULTS}/{{run}}/reuse.benchmark.tsv"
        wildcard_constraints:
            run=alternatives(_runs),
        params:
            source=lambda wc: copy_source(wc.run),
        localrule: True
        shell:
            "effmarl reuse-run --source {params.source} --config {input.config} --out $(dirname {output.provenance}) "
            "> {log} 2>&1"


rule aggregate:
    """One tidy table per study and run table (metrics, phases, or any extra table a run writes, such as
    sparsity), with run config columns. Every run's table is a declared input (a table no run writes fails
    when the DAG is built); provenance.json is written last and marks each run complete."""
    input:
        tables=lambda wc: run_files(wc.study, f"{wc.table}.parquet"),
        provenance=lambda wc: run_files(wc.study, "provenance.json"),
    output:
        f"{RESULTS}/{{study}}/{{table}}.summary.parquet",
    log:
        f"{RESULTS}/{{study}}/{{table}}.summary.log",
    benchmark:
        f"{RESULTS}/{{study}}/benchmarks/{{table}}.summary.tsv"
    shell:
        "effmarl aggregate {input.tables} --out {output} > {log} 2>&1"
