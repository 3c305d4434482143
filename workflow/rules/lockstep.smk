# Seeds in lockstep: where a study sets seeds_per_process > 1 (qmix family), one job trains that many seeds of
# one configuration in one process (`effmarl train` with --config/--out once per seed); each seed still writes
# its own run directory, so `aggregate` and every figure see ordinary runs. One rule per group, preferred over
# the one-run `train` rule for the files it makes.
from effmarl.config import lockstep_groups

LOCKSTEP = lockstep_groups(config, RUNS)

for _name, (_study, _ids) in LOCKSTEP.items():

    rule:
        name:
            _name
        input:
            [f"{RESULTS}/{_study}/{rid}/config.yaml" for rid in _ids],
        output:
            [f"{RESULTS}/{_study}/{rid}/{f}" for rid in _ids for f in ("metrics.parquet", "phases.parquet",
                                                                       "provenance.json")],
        log:
            f"{RESULTS}/{_study}/logs/{_name}.log",
        params:
            runs=" ".join(f"--config {RESULTS}/{_study}/{rid}/config.yaml --out {RESULTS}/{_study}/{rid}"
                          for rid in _ids),
        threads: 1
        shell:
            "effmarl train {params.runs} --set threads={threads} > {log} 2>&1"

    workflow.ruleorder(_name, "train")
