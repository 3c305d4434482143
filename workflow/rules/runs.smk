# Generic rules for every study: write each run's configuration, train it, aggregate its tables.
import yaml

from effmarl import io
from effmarl.resources import for_run


wildcard_constraints:
    study="[a-z][a-z0-9_]*",
    run_id="[^/]+",
    table="[a-z_]+",


localrules:
    run_config,
    aggregate,


rule run_config:
    """The resolved configuration of one run; it changes (and so re-runs training) when the profile does."""
    output:
        f"{RESULTS}/{{study}}/{{run_id}}/config.yaml",
    params:
        cfg=lambda wc: RUNS[wc.study][wc.run_id],
    log:
        f"{RESULTS}/{{study}}/{{run_id}}/config.log",
    run:
        io.write_text(output[0], yaml.safe_dump(params.cfg, sort_keys=True))
        io.write_text(log[0], f"resolved configuration written to {output[0]}\n")


rule train:
    """One training run; provenance.json is written last and marks it complete."""
    input:
        f"{RESULTS}/{{study}}/{{run_id}}/config.yaml",
    output:
        metrics=f"{RESULTS}/{{study}}/{{run_id}}/metrics.parquet",
        phases=f"{RESULTS}/{{study}}/{{run_id}}/phases.parquet",
        provenance=f"{RESULTS}/{{study}}/{{run_id}}/provenance.json",
    log:
        f"{RESULTS}/{{study}}/{{run_id}}/train.log",
    threads: 1
    resources:  # derived from the run's config (src/effmarl/resources.py): what a cluster job must ask for
        mem_mb=lambda wc: for_run(RUNS[wc.study][wc.run_id])["mem_mb"],
        runtime=lambda wc: for_run(RUNS[wc.study][wc.run_id])["runtime"],
        gpu=lambda wc: for_run(RUNS[wc.study][wc.run_id])["gpu"],
    shell:
        "effmarl train --config {input} --out $(dirname {output.metrics}) --set threads={threads} > {log} 2>&1"


rule aggregate:
    """One tidy table per study and run table (metrics, phases, or any extra table a run writes, such as
    sparsity), with run config columns. A run's provenance.json is written last, so once it exists every
    table of that run is complete."""
    input:
        lambda wc: run_files(wc.study, "provenance.json"),
    output:
        f"{RESULTS}/{{study}}/{{table}}.summary.parquet",
    params:
        tables=lambda wc: run_files(wc.study, f"{wc.table}.parquet"),
    log:
        f"{RESULTS}/{{study}}/{{table}}.summary.log",
    shell:
        "effmarl aggregate {params.tables} --out {output} > {log} 2>&1"
