"""`effmarl carry-runs` (effmarl.carry): a results tree's finished work travels to another and back, a run still
training and its checkpoint never do, and the workflow resumes from the copy without training a carried run again."""

import json
import os
import re

import pytest

from effmarl.cli import main


def make_run(root, rel, complete=True, commit="abc"):
    run = root / rel
    (run / "checkpoint").mkdir(parents=True)
    (run / "checkpoint" / "state-000000001.pt").write_bytes(b"replay buffer")
    (run / "config.yaml").write_text(f"seed: {rel[-1]}\n")
    (run / "metrics.parquet").write_text("trained")
    if complete:
        (run / "provenance.json").write_text(json.dumps({"git": {"commit": commit, "dirty": False}}))
    return run


@pytest.fixture
def tree(tmp_path):
    src = tmp_path / "results"
    make_run(src, "mast_dense/seed-0")
    make_run(src, "mast_dense/seed-1", complete=False)
    (src / "mast_dense" / "benchmarks").mkdir()
    (src / "mast_dense" / "benchmarks" / "batch_mast_dense_1.tsv").write_text("s\n12.5\n")
    return src


def test_complete_runs_and_benchmark_records_travel_and_a_run_still_training_stays(tree, tmp_path, capsys):
    dest = tmp_path / "saved"
    assert main(["carry-runs", "--from", str(tree), "--to", str(dest)]) == 0
    assert sorted(p.name for p in (dest / "mast_dense" / "seed-0").iterdir()) == [
        "config.yaml", "metrics.parquet", "provenance.json"]  # no checkpoint/
    assert not (dest / "mast_dense" / "seed-1").exists()
    assert (dest / "mast_dense" / "benchmarks" / "batch_mast_dense_1.tsv").read_text() == "s\n12.5\n"
    out = capsys.readouterr().out
    assert "1 complete runs and 1 benchmark records copied" in out and "1 runs still training left behind" in out


def test_a_carried_runs_configuration_is_older_than_its_outputs(tree, tmp_path):
    """Snakemake re-runs a job whose input is newer than an output: the copy keeps training's order."""
    dest = tmp_path / "saved"
    main(["carry-runs", "--from", str(tree), "--to", str(dest)])
    run = dest / "mast_dense" / "seed-0"
    mtime = {p.name: os.stat(p).st_mtime for p in run.iterdir()}
    assert mtime["config.yaml"] < mtime["metrics.parquet"] == mtime["provenance.json"]


def test_carrying_again_copies_nothing_new(tree, tmp_path, capsys):
    dest = tmp_path / "saved"
    main(["carry-runs", "--from", str(tree), "--to", str(dest)])
    capsys.readouterr()
    assert main(["carry-runs", "--from", str(tree), "--to", str(dest)]) == 0
    assert "0 complete runs and 0 benchmark records copied" in capsys.readouterr().out


def test_a_destination_holding_another_training_of_a_run_is_refused_before_anything_is_copied(tree, tmp_path,
                                                                                              capsys):
    dest = tmp_path / "saved"
    make_run(dest, "mast_dense/seed-0", commit="other")
    assert main(["carry-runs", "--from", str(tree), "--to", str(dest)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds another training of this run" in err[0] and "seed-0" in err[0]
    assert not (dest / "mast_dense" / "benchmarks").exists()


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"])
def test_a_damaged_provenance_is_refused_in_one_line(tree, tmp_path, capsys, text):
    (tree / "mast_dense" / "seed-0" / "provenance.json").write_text(text)
    assert main(["carry-runs", "--from", str(tree), "--to", str(tmp_path / "saved")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unreadable provenance" in err[0]
    assert not (tmp_path / "saved").exists()


def test_a_missing_source_is_one_line(tmp_path, capsys):
    assert main(["carry-runs", "--from", str(tmp_path / "nope"), "--to", str(tmp_path / "saved")]) == 2
    assert "no such directory" in capsys.readouterr().err


@pytest.mark.slow
def test_the_workflow_resumed_from_carried_runs_trains_none_of_them_again(smoke_workflow, tmp_path):
    """The smoke workflow's runs carried away and back into a new working directory (no .snakemake, no outputs
    but the runs): a dry run of the same command plans tables and figures and trains only the runs whose
    configuration the selection table makes."""
    from conftest import BIN, ROOT, run_cli

    from effmarl.studies import load_profile, selection_studies

    saved, work = tmp_path / "saved", tmp_path / "work"
    assert main(["carry-runs", "--from", str(smoke_workflow["results"]), "--to", str(saved)]) == 0
    assert main(["carry-runs", "--from", str(saved), "--to", str(work / "results")]) == 0
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    proc = run_cli("snakemake", "-n", "-p", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(work),
                   "--configfile", str(ROOT / "configs/smoke.yaml"), "--config", f"results_dir={work / 'results'}",
                   f"figures_dir={work / 'figures'}", env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    assert "effmarl figure" in out  # the plan is not empty: the figures were not carried
    assert "effmarl reuse-run" not in out
    # only the runs whose sparsity the MAST selection decides train again: their configuration is made from the
    # selection table, an output of figures/ that does not travel (effmarl.carry)
    trained = set(re.findall(r"effmarl train[^\n]*?--out \S*/results/([a-z0-9_]+)/", out))
    assert trained <= set(selection_studies(load_profile(ROOT / "configs/smoke.yaml"))) == {"mast_table1"}


@pytest.mark.slow
def test_a_job_of_several_runs_resumed_with_one_run_finished_trains_only_the_others(tmp_path):
    """A job of several runs cut off after one of them finished (its provenance.json written, its checkpoint gone;
    in place or carried to another machine) and resumed: the job runs again for the unfinished run, and the finished
    one is kept as it was (`effmarl train` skips a run finished with the same configuration), not removed by
    Snakemake before the job and trained again from its start."""
    from conftest import BIN, ROOT, run_cli

    work = tmp_path / "work"
    study = work / "results" / "mast_abl_smm"   # three smoke runs trained in one job, one after another
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}

    def snakemake(*targets):
        return run_cli("snakemake", "--cores", "1", *map(str, targets), "--snakefile", str(ROOT / "Snakefile"),
                       "--directory", str(work), "--configfile", str(ROOT / "configs/smoke.yaml"), "--config",
                       f"results_dir={work / 'results'}", f"figures_dir={work / 'figures'}", env=env, timeout=900)

    runs = [study / f"{rid}_seed-0" for rid in ("alpha-1.0_omega-5.0", "alpha-10.0_omega-5.0", "alpha-10.0_omega-10.0")]
    first = snakemake(*(run / "provenance.json" for run in runs))
    assert first.returncode == 0, first.stderr[-3000:]
    assert "batch_mast_abl_smm" in first.stderr   # the three in one job
    kept, cut = runs[0], runs[-1]
    before = (kept / "provenance.json").read_text()
    for name in ("provenance.json", "metrics.parquet"):   # the unfinished run: no provenance.json, part of its files
        (cut / name).unlink()
    again = snakemake(cut / "provenance.json")
    assert again.returncode == 0, again.stderr[-3000:]
    assert (cut / "provenance.json").is_file() and (cut / "metrics.parquet").is_file()
    assert (kept / "provenance.json").read_text() == before
