# Helpers shared by the rule files.
import os

# Each study's rule file registers the final outputs it produces here: {study: [paths]}.
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


def study_targets():
    return [path for study in RUNS for path in STUDY_TARGETS.get(study, [])]
