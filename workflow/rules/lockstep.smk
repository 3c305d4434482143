# Several runs in one process (qmix family): where a study sets seeds_per_process > 1, one job trains that many
# seeds of one configuration in lockstep; where it sets runs_per_process > 1, one job trains that many runs of
# the study one after another (seeds of one configuration among them in lockstep), sharing imports and compiled
# programs. `effmarl train` gets --config/--out once per run; each run still writes its own run directory, so
# `aggregate` and every figure see ordinary runs. One rule per group (PROCESS_GROUPS, from common.smk); its runs
# are left out of the one-run train rules (train_groups). A study declared `interleave: true` (paper 1's end-to-end
# time) has one job per neighbor/uniform pair, `pairs_<study>_<n>`, whose two runs train alternately
# (`effmarl train --interleave`); in a timing study that job reserves every core, like a run timed alone.
# Snakemake evaluates a rule's `shell:` again when the job runs, after this loop has ended, so the command may not
# read the loop's variables (every job would get the last group's); what differs per group is a param, bound here.
# A job runs again when one of its runs is missing (cut off, or carried to another machine without it). Snakemake
# removes a job's outputs before it runs, which would throw away the runs of the job that had finished (a finished
# run keeps no checkpoint) and train them again from their start: the outputs are declared update() so Snakemake
# leaves them (restoring them if the job fails), and `effmarl train` skips a run finished with the same configuration
# (effmarl.train.train_many), so the job trains only the others. To train a finished run again, remove its directory.
GROUP_SHELL = (thread_env("{params.compute_threads}") + "effmarl train {params.runs}{params.interleave} "
               "--set threads={params.compute_threads} > {log} 2>&1")


for _name, (_study, _ids) in PROCESS_GROUPS.items():

    rule:
        name:
            _name
        input:
            [f"{RESULTS}/{_study}/{rid}/config.yaml" for rid in _ids],
            [path for rid in _ids for path in run_inputs(_study, rid)],
        output:  # update(): kept, not removed, when the job runs again (below)
            [update(f"{RESULTS}/{_study}/{rid}/{name}") for rid in _ids
             for name in (*train_outputs(RUNS[_study][rid]), "provenance.json")],
        log:
            f"{RESULTS}/{_study}/logs/{_name}.log",
        benchmark:
            f"{RESULTS}/{_study}/benchmarks/{_name}.tsv"
        params:
            runs=" ".join(f"--config {RESULTS}/{_study}/{rid}/config.yaml --out {RESULTS}/{_study}/{rid}"
                          for rid in _ids),
            interleave=" --interleave" if _name.startswith("pairs_") else "",
            compute_threads=compute_threads(_study in TIMING_STUDIES),
        threads: job_threads(_study in TIMING_STUDIES)
        resources:  # lockstep seeds add their memory, runs one after another their runtime (resources.for_process)
            **for_process([RUNS[_study][rid] for rid in _ids], interleaved=_name.startswith("pairs_")),
            **slurm_options(_study in TIMING_STUDIES),
        shell:
            GROUP_SHELL
