# Helpers shared by the rule files.
import os

# Final outputs of each study, registered by the study's own .smk file as {study: [paths]}.
STUDY_TARGETS = {}


def run_ids(study):
    return list(RUNS[study])


def run_files(study, name):
    """Paths of one output file of every run of a study."""
    return [f"{RESULTS}/{study}/{rid}/{name}" for rid in run_ids(study)]


def figure_files(study, stem):
    return [f"{FIGURES}/{study}/{stem}.{ext}" for ext in ("pdf", "png")]


def table_files(study, stem):
    return [f"{FIGURES}/{study}/tables/{stem}.{ext}" for ext in ("csv", "md")]


def output_stem(wildcards, output):
    """The first output's path without extension: the --out argument of figure/table/index commands."""
    return os.path.splitext(output[0])[0]


def study_targets():
    return [path for study in RUNS for path in STUDY_TARGETS.get(study, [])]
