# Seeds in lockstep: where a study sets seeds_per_process > 1 (qmix family), one job trains that many seeds of
# one configuration in one process (`effmarl train` with --config/--out once per seed); each seed still writes
# its own run directory, so `aggregate` and every figure see ordinary runs. One rule per group (LOCKSTEP, from
# common.smk); its runs are left out of the one-run train rules (train_groups).
for _name, (_study, _ids) in LOCKSTEP.items():

    rule:
        name:
            _name
        input:
            [f"{RESULTS}/{_study}/{rid}/config.yaml" for rid in _ids],
        output:
            [f"{RESULTS}/{_study}/{rid}/{name}" for rid in _ids
             for name in (*train_outputs(RUNS[_study][rid]), "provenance.json")],
        log:
            f"{RESULTS}/{_study}/logs/{_name}.log",
        benchmark:
            f"{RESULTS}/{_study}/benchmarks/{_name}.tsv"
        params:
            runs=" ".join(f"--config {RESULTS}/{_study}/{rid}/config.yaml --out {RESULTS}/{_study}/{rid}"
                          for rid in _ids),
        threads: 1
        resources:  # the seeds' requests together: memory and runtime add up (seed by seed on a CPU)
            mem_mb=sum(for_run(RUNS[_study][rid])["mem_mb"] for rid in _ids),
            runtime=sum(for_run(RUNS[_study][rid])["runtime"] for rid in _ids),
            gpu=max(for_run(RUNS[_study][rid])["gpu"] for rid in _ids),
        shell:
            thread_env() + "effmarl train {params.runs} --set threads={threads} > {log} 2>&1"
