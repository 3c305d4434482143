"""Times taken alone (issue 34): every workflow job whose output becomes a time, a share of time or a timing ranking
runs with no other workflow job beside it, as Snakemake schedules it. Locally a job that reserves every core of
`--cores` cannot run beside another job (every job reserves at least one); on SLURM it asks for the node
exclusively. The process it measures keeps its configured thread count (1), whatever it reserves. Jobs whose outputs
are not times (rewards, counts, simulated misses, win rates) keep running side by side.

The timing jobs are listed here by hand, from what their outputs feed (docs/paper1.md), not read from the workflow,
so that a study or rule the workflow forgets to mark fails."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT, run_cli

# paper1 and paper1_e2e: the sampling phase inside training, the end-to-end time and the phase breakdown; paper1_scale:
# the phase shares vs N. paper1_ksweep (its time ranking of k comes from the sampling benchmark; its runs give
# returns), paper1_reward (returns), skeleton (returns) and the QMIX studies (win rates) are not timings.
TIMING_STUDIES = {"paper1", "paper1_e2e", "paper1_scale"}
# the interleaved sampling benchmark (also the k sweep's time ranking), the loop profile (the update share's verdict),
# `effmarl bench paper1`
TIMING_RULES = {"paper1_sampling_bench", "paper1_loop_profile", "bench_paper1"}
TRAIN_RULES = ("train_", "pairs_")  # a run's own job, or an interleaved neighbor/uniform pair's (paper1)


def _jobs(text: str) -> list[dict]:
    """The job blocks of a `snakemake -n -p` listing: rule, output, threads (1 where Snakemake prints none),
    resources and shell command."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \S+:\n)", text):
        head = re.match(r"(?:local)?rule (\S+):\n", block)
        if not head:
            continue
        fields = dict(re.findall(r"^    (\w+): (.*)$", block, flags=re.M))
        shell = re.search(r"^Shell command: (.*)$", block, flags=re.M)
        jobs.append({"rule": head.group(1), "output": fields.get("output", ""),
                     "threads": int(fields.get("threads", 1)), "resources": fields.get("resources", ""),
                     "shell": shell.group(1) if shell else ""})
    return jobs


def _is_timing(job: dict) -> bool:
    if job["rule"] in TIMING_RULES:
        return True
    study = re.match(r"results/default/([a-z0-9_]+)/", job["output"])
    return job["rule"].startswith(TRAIN_RULES) and study is not None and study.group(1) in TIMING_STUDIES


def _dry_run(tmp_path, *options: str) -> list[dict]:
    proc = run_cli("snakemake", "paper1_part", "-n", "-p", "--snakefile", str(ROOT / "Snakefile"),
                   "--directory", str(tmp_path), "--configfile", str(ROOT / "configs/default.yaml"), *options)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return _jobs(proc.stdout + proc.stderr)


@pytest.mark.parametrize("cores", [2, 16])
def test_a_timing_job_reserves_every_core_so_it_never_runs_beside_another_job(cores, tmp_path):
    jobs = _dry_run(tmp_path, "--cores", str(cores))
    timing = [job for job in jobs if _is_timing(job)]
    trained = {re.match(r"results/default/([a-z0-9_]+)/", j["output"]).group(1) for j in timing
               if j["rule"].startswith(TRAIN_RULES)}
    assert trained == TIMING_STUDIES and TIMING_RULES <= {j["rule"] for j in timing}
    for job in timing:
        assert job["threads"] == cores, (job["rule"], job["output"][:120], job["threads"])


def test_the_process_a_timing_job_measures_keeps_one_thread_whatever_the_job_reserves(tmp_path):
    for job in _dry_run(tmp_path, "--cores", "16"):
        if not _is_timing(job):
            continue
        assert "OMP_NUM_THREADS=1 " in job["shell"] and "intra_op_parallelism_threads=1" in job["shell"], job["rule"]
        # the 16 cores reserved appear nowhere but in paths, agent counts and windows k (the benchmark's k = 16)
        assert "16" not in re.sub(r"results/\S+|--(?:agents|k|headline-k) [0-9 ]+", "", job["shell"]), job["shell"]
        assert ("--set threads=1 " if job["rule"].startswith(TRAIN_RULES) else "--threads 1 ") in job["shell"]


def test_jobs_whose_outputs_are_not_times_keep_running_side_by_side_under_their_rules(tmp_path):
    """A run that is no timing run keeps its rule (train_offpolicy, train_random, ...) and command, so the runs it
    finished before are not retrained; a timing run has a rule of its own (train_<kind>_alone)."""
    every = _dry_run(tmp_path, "--cores", "16")
    assert {job["rule"] for job in every if _is_timing(job) and job["rule"].startswith("train_")} == {
        "train_offpolicy_alone"}
    jobs = [job for job in every if not _is_timing(job)]
    reward = [job for job in jobs if "/paper1_reward/" in job["output"] and job["rule"].startswith("train_")]
    assert reward and all(job["threads"] == 1 and job["rule"] == "train_offpolicy" for job in reward)
    assert [job["threads"] for job in jobs if job["rule"] == "paper1_counters"] == [2]
    assert all(job["threads"] < 16 for job in jobs)


def test_on_slurm_a_timing_job_and_only_a_timing_job_asks_for_the_node_exclusively(tmp_path):
    jobs = _dry_run(tmp_path, "--workflow-profile", str(ROOT / "workflow/profiles/slurm"))
    assert any(_is_timing(job) for job in jobs)
    for job in jobs:
        exclusive = re.search(r"slurm_extra=['\"]?--exclusive", job["resources"]) is not None
        assert exclusive == _is_timing(job), (job["rule"], job["output"][:120], job["resources"])
        if exclusive:  # the node to itself, one core for the process it measures
            assert "cpus_per_task=1" in job["resources"], job["resources"]


def test_the_end_to_end_study_trains_each_neighbor_uniform_pair_interleaved_in_one_timing_job(tmp_path):
    """paper1 and paper1_e2e (`interleave: true`): one job per pair, both runs' directories its outputs, `--interleave`
    in its command; every run of theirs is trained by such a job, and none by a one-run rule."""
    jobs = _dry_run(tmp_path, "--cores", "16")
    pairs = [job for job in jobs if job["rule"].startswith("pairs_paper1_")]
    runs = [set(re.findall(r"results/default/paper1(?:_e2e)?/([^/\s,]+)/provenance\.json", job["output"]))
            for job in pairs]
    assert pairs and all(len(r) == 2 for r in runs)
    for r in runs:
        uniform, neighbor = sorted(r, key=lambda rid: "sampler-neighbor" in rid)
        assert "sampler-uniform" in uniform and neighbor == uniform.replace("sampler-uniform", "sampler-neighbor")
    assert all(" --interleave " in job["shell"] and job["threads"] == 16 for job in pairs)
    assert {job["rule"].rsplit("_", 1)[0] for job in pairs} == {"pairs_paper1", "pairs_paper1_e2e"}
    assert not [job for job in jobs
                if job["rule"].startswith("train_") and re.search(r"/paper1(_e2e)?/", job["output"])]


def test_max_threads_below_cores_is_refused_before_any_job_since_a_timing_job_could_not_reserve_every_core(tmp_path):
    proc = run_cli("snakemake", "bench_paper1", "-n", "--snakefile", str(ROOT / "Snakefile"), "--directory",
                   str(tmp_path), "--configfile", str(ROOT / "configs/default.yaml"), "--cores", "4",
                   "--max-threads", "2")
    assert proc.returncode != 0
    assert "--max-threads 2 is below --cores 4" in proc.stdout + proc.stderr
