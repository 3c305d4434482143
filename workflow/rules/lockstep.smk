# Several runs in one process (qmix family): where a study sets seeds_per_process > 1, one job trains that many
# seeds of one configuration in lockstep; where it sets runs_per_process > 1, one job trains that many runs of
# the study one after another (seeds of one configuration among them in lockstep), sharing imports and compiled
# programs. `effmarl train` gets --config/--out once per run; each run still writes its own run directory, so
# `aggregate` and every figure see ordinary runs. One rule per group (PROCESS_GROUPS, from common.smk); its runs
# are left out of the one-run train rules (train_groups).
for _name, (_study, _ids) in PROCESS_GROUPS.items():

    rule:
        name:
            _name
        input:
            [f"{RESULTS}/{_study}/{rid}/config.yaml" for rid in _ids],
            [path for rid in _ids for path in run_inputs(_study, rid)],
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
        resources:  # lockstep seeds add their memory, runs one after another their runtime (resources.for_process)
            **for_process([RUNS[_study][rid] for rid in _ids]),
        shell:
            thread_env() + "effmarl train {params.runs} --set threads={threads} > {log} 2>&1"
