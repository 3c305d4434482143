# Helpers shared by the rule files.
import os
import re
import shlex

from effmarl.methods import METHODS
from effmarl.variants import QMIX_VARIANTS
from effmarl.config import ConfigError
from effmarl.outputs import resolve
from effmarl.groups import workflow_groups
from effmarl.reuse import trained
from effmarl.studies import TIMING_RULES, selection_studies, timing_studies
from effmarl.resources import for_process, for_run
from snakemake.exceptions import WorkflowError

# Final outputs, registered as {group: [paths]} (outputs.smk, bench.smk); the target `all` builds them all.
STUDY_TARGETS = {}


def run_ids(study):
    return list(RUNS[study])


def run_files(study, name):
    """Paths of one output file of every run of a study."""
    return [f"{RESULTS}/{study}/{rid}/{name}" for rid in run_ids(study)]


# Runs trained together in one process where a study sets runs_per_process or seeds_per_process > 1
# (lockstep.smk): {job name: (study, [run ids])}; runs copied from another (COPIES, the Snakefile) train in none, and
# those trained only until the reused profile has run are grouped apart, so the profile's own jobs never change
PROCESS_GROUPS = workflow_groups(config, RUNS, COPIES, PLANNED)


# The files `effmarl train` writes into a run directory besides provenance.json, by algorithm (algos/*.py).
QMIX_FAMILY = QMIX_VARIANTS  # the QMIX family's variants (src/effmarl/variants.py), read live
SPARSE_METHODS = METHODS  # the sparse-training methods (src/effmarl/methods.py): masks.pt where a method has masks


def train_outputs(cfg):
    files = ["metrics.parquet", "phases.parquet"]
    if cfg["algo"] in ("maddpg", "masac"):
        files.append("counters.json")
    elif cfg["algo"] in QMIX_FAMILY:
        files += ["schedule.json", "model.pt", "sparsity.parquet", "layers.parquet", "agent_masks.parquet",
                  "topology.parquet"]
        if SPARSE_METHODS[cfg["sparse"]["method"]].masks:
            files.append("masks.pt")
    return tuple(files)


def train_kind(files):
    """A rule name for a set of run outputs."""
    if "masks.pt" in files:
        return "qmix_sparse"
    if "model.pt" in files:
        return "qmix_dense"
    return "offpolicy" if "counters.json" in files else "random"


# The MAST sparsity selection (paper 2 Table 1: the highest sparsity at which MAST stays within 3 % of dense), table
# mast_selection made from studies mast_dense and mast_sweep. Table 1 in two stages ("all other baselines are
# evaluated under the same sparsity level"): studies with sparsity_from: selection get the sparsity it chose for
# their (algo, map) written into their configs by run_config_selected (runs.smk), so the selection is an output
# with provenance that decides their runs.
SELECTION = f"{FIGURES}/mast/tables/selection.csv"
SELECTED = selection_studies(config)


def ticket_inputs(study, rid):
    """The source run's files a winning or cheating ticket starts from (paper 2 Fig. 10), else none."""
    ticket = RUNS[study][rid].get("sparse", {}).get("ticket", {})
    if ticket.get("kind") not in ("winning", "cheating"):
        return []
    return [f"{ticket['source']}/masks.pt", f"{ticket['source']}/model.pt", f"{ticket['source']}/provenance.json"]


def run_inputs(study, rid):
    """What training a run reads besides its config: a ticket's source run."""
    return ticket_inputs(study, rid)


def train_groups():
    """{kind: (files a run writes, ["<study>/<run_id>", ...], alone)}: one train rule per distinct set of outputs,
    and per whether its runs are timed alone (a timing study's runs, below: kind `<kind>_alone`); runs trained in
    lockstep with other seeds are made by their group's rule, lockstep.smk."""
    grouped = {(study, rid) for study, ids in PROCESS_GROUPS.values() for rid in ids}
    groups = {}
    for study, runs in trained(RUNS, COPIES).items():
        alone = study in TIMING_STUDIES
        for rid, cfg in runs.items():
            if (study, rid) in grouped:
                continue
            files = train_outputs(cfg)
            kind = train_kind(files) + ("_alone" if alone else "")
            groups.setdefault(kind, (files, [], alone))[1].append(f"{study}/{rid}")
    return groups


def copy_groups():
    """{kind: (files a run writes, ["<study>/<run_id>", ...])} of the runs copied from another (COPIES): one reuse
    rule per distinct set of outputs (runs.smk)."""
    groups = {}
    for study, rid in COPIES:
        files = train_outputs(RUNS[study][rid])
        groups.setdefault(train_kind(files), (files, []))[1].append(f"{study}/{rid}")
    return groups


def copy_source(run, files=False):
    """The run directory run "<study>/<run_id>" is copied from, or (files) that run's trained files and provenance."""
    study, rid = run.split("/", 1)
    source = COPIES[(study, rid)]
    return [f"{source}/{name}" for name in (*train_outputs(RUNS[study][rid]), "provenance.json")] if files else source


def alternatives(values):
    """A wildcard constraint matching exactly one of `values`."""
    return "|".join(re.escape(v) for v in values)


def thread_env(threads="{threads}"):
    """Shell prefix limiting every thread pool a run may start to `threads` (the rule's {threads} unless given):
    torch (set by the run from its `threads`), BLAS / OpenMP, and JAX's XLA CPU backend (Eigen's thread pool)."""
    return (f"export OMP_NUM_THREADS={threads} MKL_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} "
            f"XLA_FLAGS=\"--xla_cpu_multi_thread_eigen=$([ {threads} -gt 1 ] && echo true || echo false) "
            f"intra_op_parallelism_threads={threads}\"; ")


# Times taken alone (issue 34, docs/running.md): a job whose output becomes a time, a share of time or a timing
# ranking runs with no other workflow job beside it. The timing jobs: every run of a study the catalogue declares
# `timing: true` (configs/studies.yaml, effmarl.studies.timing_studies; they train under rules of their own,
# train_<kind>_alone, from train_groups) and the rules named in effmarl.studies.TIMING_RULES; those two decide.
# Locally such a job reserves every core Snakemake schedules (threads = --cores;
# Snakemake caps a rule's threads at --cores, and `--cores all` is the machine's count), and every job reserves at
# least one, so none starts beside it. On SLURM it asks for the node exclusively (slurm_extra) and one CPU
# (cpus_per_task, the slurm profile's default). Either way the process it measures keeps MEASURED_THREADS: the
# shells of timing jobs pass it, never {threads}.
try:
    TIMING_STUDIES = timing_studies(config)
except ConfigError as error:  # a timing study trains one run per process
    raise WorkflowError(str(error)) from None
MEASURED_THREADS = 1
ALONE_ON_SLURM = "--exclusive"


def total_cores():
    """--cores, or None for a command that schedules no job (`--unlock`, `--summary`, `--lint` without --cores),
    where Snakemake raises on workflow.cores."""
    try:
        return workflow.cores
    except WorkflowError:
        return None


# --max-threads caps every job's threads below --cores: a timing job would no longer reserve every core
if ((TIMING_STUDIES or "paper1" in config.get("bench", {})) and workflow.resource_settings.max_threads is not None
        and total_cores() is not None and workflow.resource_settings.max_threads < total_cores()):
    raise WorkflowError(f"--max-threads {workflow.resource_settings.max_threads} is below --cores "
                        f"{workflow.cores}: paper 1's timing jobs could not reserve every core to run alone "
                        "(docs/running.md, 'Times taken alone'); leave --max-threads out")


def timing_job(rule):
    """Whether the jobs of `rule` are timing jobs (train rules of timing studies' runs are decided in train_groups)."""
    return rule in TIMING_RULES


def job_threads(alone, threads=1):
    """The cores a job reserves: all of --cores for a timing job (alone), else `threads` (also where no --cores is
    given, as for `snakemake --unlock`: nothing is scheduled then)."""
    return (total_cores() or threads) if alone else threads


def compute_threads(alone):
    """The threads a job's process computes with (a param of the train and group rules): MEASURED_THREADS for a
    timing job, which reserves every core only to have them to itself; the rule's {threads} for any other job."""
    return MEASURED_THREADS if alone else (lambda wildcards, threads: threads)


def slurm_options(alone):
    """A SLURM job's extra resources: the node to itself for a timing job, none else."""
    return {"slurm_extra": ALONE_ON_SLURM} if alone else {}


def figure_files(study, stem):
    return [f"{FIGURES}/{study}/{stem}.{ext}" for ext in ("pdf", "png")]


def table_files(study, stem):
    return [f"{FIGURES}/{study}/tables/{stem}.{ext}" for ext in ("csv", "md")]


def output_stem(wildcards, output):
    """The first output's path without extension: the --out argument of figure/table/index commands."""
    return os.path.splitext(output[0])[0]


# Figures and tables, registered from what their modules declare (effmarl.outputs, outputs.smk), each made by its
# own job, as {(group, stem): {"name": registered figure/table name, "inputs": {role: [paths]}}}; the roles are
# those the module declares in INPUTS. A group is the folder under FIGURES: a study's name, or a paper ("paper1",
# "mast") for outputs combining studies.
FIGURE_SPECS = {}
TABLE_SPECS = {}


def add_figure(group, stem, name, variant=None, **inputs):
    """Register figure `name` (analysis/figures; its `variant` where the module has several) made from the named
    `inputs` (role=[paths]) as {FIGURES}/<group>/<stem>.{pdf,png}."""
    FIGURE_SPECS[(group, stem)] = {"name": name, "variant": variant,
                                   "inputs": {role: list(paths) for role, paths in inputs.items()}}
    STUDY_TARGETS.setdefault(group, []).extend(figure_files(group, stem))


def add_table(group, stem, name, **inputs):
    """Register table `name` (analysis/tables) made from the named `inputs` (role=[paths]) as
    {FIGURES}/<group>/tables/<stem>.{csv,md}."""
    TABLE_SPECS[(group, stem)] = {"name": name, "inputs": {role: list(paths) for role, paths in inputs.items()}}
    STUDY_TARGETS.setdefault(group, []).extend(table_files(group, stem))


def summary(study, table="metrics"):
    """The tidy study table aggregated from every run's <table>.parquet."""
    return f"{RESULTS}/{study}/{table}.summary.parquet"


def report_targets():
    """Every registered figure (PNG) and table (CSV): what `snakemake --report` shows."""
    return [f"{FIGURES}/{g}/{s}.png" for g, s in FIGURE_SPECS] + [f"{FIGURES}/{g}/tables/{s}.csv" for g, s in TABLE_SPECS]


def paper_targets(paper):
    """A paper's registered outputs: figure groups skeleton and paper1* (paper 1) or mast* (paper 2), and its
    `effmarl bench` sections."""
    mine = (lambda g: g == "skeleton" or g.startswith("paper1")) if paper == 1 else (lambda g: g.startswith("mast"))
    bench = ("bench_paper1",) if paper == 1 else ("bench_qmix", "bench_sparse")
    return [path for group, paths in STUDY_TARGETS.items() for path in paths
            if mine(group) or (group == "bench" and os.path.basename(path).split(".")[0] in bench)]


def study_targets():
    return [path for paths in STUDY_TARGETS.values() for path in paths]


def cli_options(options: dict) -> str:
    """`{"real_steps": 200, "agents": [3, 6]}` -> `--real-steps 200 --agents 3 6` (schema-checked keys)."""
    words = []
    for key, value in options.items():
        words.append(f"--{key.replace('_', '-')}")
        words.extend(str(v) for v in (value if isinstance(value, list) else [value]))
    return shlex.join(words)


def run_resources(run, key):
    """A cluster job's request for run "<study>/<run_id>" (src/effmarl/resources.py, from the run's config)."""
    study, rid = run.split("/", 1)
    return for_run(RUNS[study][rid])[key]
