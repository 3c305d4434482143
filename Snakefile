# effmarl workflow: configs/*.yaml -> runs -> tidy study tables -> figures and tables.
# `snakemake --cores all` runs configs/default.yaml; choose another profile with --configfile.
from snakemake.utils import min_version, validate

from effmarl.config import expand_all

min_version("9.0")


# The default profile is loaded only when no --configfile is given, so that a profile is never merged
# into another one's studies.
if not workflow.overwrite_configfiles:

    configfile: "configs/default.yaml"


validate(config, "workflow/schemas/config.schema.yaml")
RUNS = expand_all(config)  # {study: {run_id: run config}}, each validated against $defs/run
RESULTS = config["results_dir"]
FIGURES = config["figures_dir"]


include: "workflow/rules/common.smk"
include: "workflow/rules/runs.smk"
include: "workflow/rules/skeleton.smk"
include: "workflow/rules/paper1.smk"


rule all:
    input:
        study_targets(),
    default_target: True
