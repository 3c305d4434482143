# Helpers shared by the rule files.
import os
import shlex

# Final outputs, registered by the study .smk files as {group: [paths]}; the target `all` builds them all.
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


# Figures and tables, registered by the study .smk files and made by the generic figure and table rules
# (outputs.smk), as {(group, stem): {"name": registered figure/table name, "inputs": [paths]}}. A group is
# the folder under FIGURES: a study's name, or a paper ("paper1", "mast") for outputs combining studies.
FIGURE_SPECS = {}
TABLE_SPECS = {}


def add_figure(group, stem, name, inputs):
    """Register figure `name` (analysis/figures) made from `inputs` as {FIGURES}/<group>/<stem>.{pdf,png}."""
    FIGURE_SPECS[(group, stem)] = {"name": name, "inputs": list(inputs)}
    STUDY_TARGETS.setdefault(group, []).extend(figure_files(group, stem))


def add_table(group, stem, name, inputs):
    """Register table `name` (analysis/tables) made from `inputs` as {FIGURES}/<group>/tables/<stem>.{csv,md}."""
    TABLE_SPECS[(group, stem)] = {"name": name, "inputs": list(inputs)}
    STUDY_TARGETS.setdefault(group, []).extend(table_files(group, stem))


def summary(study, table="metrics"):
    """The tidy study table aggregated from every run's <table>.parquet."""
    return f"{RESULTS}/{study}/{table}.summary.parquet"


def study_targets():
    return [path for paths in STUDY_TARGETS.values() for path in paths]


def cli_options(options: dict) -> str:
    """`{"real_steps": 200, "agents": [3, 6]}` -> `--real-steps 200 --agents 3 6` (schema-checked keys)."""
    words = []
    for key, value in options.items():
        words.append(f"--{key.replace('_', '-')}")
        words.extend(str(v) for v in (value if isinstance(value, list) else [value]))
    return shlex.join(words)
