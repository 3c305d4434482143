# effmarl workflow: configs/*.yaml -> runs -> tidy study tables -> figures and tables.
# `snakemake --cores all` runs configs/default.yaml; choose another profile with --configfile.
import functools
import json
import shlex
import sys

from snakemake.utils import min_version

from effmarl.config import ConfigError, load_yaml, validate
from effmarl.provenance import git_state
from effmarl.reuse import copies, reused_profile, sources, trained_by_this_code
from effmarl.studies import expand_all, headline_k, resolve_profile

min_version("9.0")


# The default profile is loaded only when no --configfile is given, so that a profile is never merged
# into another one's studies.
if not workflow.overwrite_configfiles:

    configfile: "configs/default.yaml"


# The same loading as `effmarl validate` (effmarl.studies.load_profile): the profile's studies resolved against
# the study catalogue (configs/studies.yaml), then schema, finite numbers, cross-field checks, duplicate keys; one
# line per problem, naming the field; no job starts.
try:
    for _path in workflow.overwrite_configfiles or ["configs/default.yaml"]:
        load_yaml(_path)  # refuses a repeated key, which Snakemake's loader would drop silently
    config.update(resolve_profile(config))  # studies: {name: scale} -> the catalogue's studies at that scale
    validate(config, source="profile")
    RUNS = expand_all(config)  # {study: {run_id: run config}}, each validated against $defs/run
    # runs copied, not trained (effmarl.reuse): {(study, run_id): source run directory} - those that train what a
    # complete run of the reused profile (`reuses`) or an earlier run of this one trains
    _commit = functools.cache(lambda: git_state()["commit"])  # asked only where the profile reuses another
    _REUSED = reused_profile(config)
    COPIES = copies(config, RUNS, sources(_REUSED, complete=lambda run_dir: trained_by_this_code(run_dir, _commit())))
    # the copies it makes once the reused profile has run (effmarl.reuse.planned): its jobs are planned on them
    PLANNED = copies(config, RUNS, sources(_REUSED))
except ConfigError as error:
    print(str(error), file=sys.stderr)
    sys.exit(1)
RESULTS = config["results_dir"]

report: "workflow/report/workflow.rst"

FIGURES = config["figures_dir"]


include: "workflow/rules/common.smk"
include: "workflow/rules/runs.smk"
include: "workflow/rules/lockstep.smk"
include: "workflow/rules/paper1.smk"
include: "workflow/rules/bench.smk"
include: "workflow/rules/outputs.smk"  # one rule per figure / table the profile makes (effmarl.outputs)


rule all:
    input:
        f"{FIGURES}/index.md",
    default_target: True


rule paper1_part:
    """One paper's half of a profile (no figure index): `snakemake --cores all paper1_part`."""
    input:
        paper_targets(1),


rule paper2_part:
    """One paper's half of a profile (no figure index): `snakemake --cores all paper2_part`."""
    input:
        paper_targets(2),


rule figure_index:
    """figures/index.md (+ .json): every figure and table with its caption and the runs it shows."""
    input:
        study_targets(),
    output:
        f"{FIGURES}/index.md",
        f"{FIGURES}/index.json",
    params:
        stem=output_stem,
        left_out=shlex.quote(json.dumps([vars(o) for o in LEFT_OUT])),  # declared outputs not made, and why
    log:
        f"{FIGURES}/logs/index.log",
    benchmark:
        f"{FIGURES}/benchmarks/index.tsv"
    shell:
        "effmarl index {input} --out {params.stem} --left-out {params.left_out} > {log} 2>&1"
