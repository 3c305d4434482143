"""Fault test of the QMIX family under the run harness: a short MAST-QMIX run SIGKILLed at random moments (one of
them inside a checkpoint write) and once SIGTERMed, resumed each time by the same command, ends equal to an
uninterrupted run (metrics bar wall time, the final model, the masks), with no temporary file left."""

from __future__ import annotations

import random
import signal
import time

import pandas as pd
import pytest
import torch
import yaml
from test_harness_fault import kill_in_a_write, progress, start, temporaries

CONFIG = {"study": "fault", "algo": "qmix", "seed": 5, "env": {"backend": "smax", "map": "3m"},
          "budget": {"env_steps": 1000}, "sparse": {"method": "mast", "sparsity": 0.8, "delta_m": 2},
          "qmix": {"num_envs": 2, "eval_episodes": 2, "batch_size": 4, "buffer_size": 200, "eval_every": 100,
                   "checkpoint_every": 50, "target_update_interval": 4, "shared_params": False}}


@pytest.mark.slow
def test_killed_and_sigtermed_mast_run_resumes_to_the_uninterrupted_one(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    whole, faulted = tmp_path / "whole", tmp_path / "faulted"
    proc = start(config, whole)
    assert proc.wait(timeout=900) == 0, proc.stderr.read()

    rng = random.Random(10)
    kills = {"random": 0, "in_write": 0, "sigterm": 0}
    # SIGTERM first, while most of the budget is left: after a late random kill the resumed attempt may finish
    # before the signal arrives (seen once under CI load). A write's temporary file can live under the 0.5 ms
    # poll on an idle machine, so a write kill is tried twice; random kills come within 1 s of progress.
    for kind in ["sigterm", "in_write", "random", "in_write", "random"]:
        before = progress(faulted)
        proc = start(config, faulted)
        if kind == "random":  # after start-up (imports, jit from the disk cache), somewhere in training
            while proc.poll() is None and progress(faulted) <= before:
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 1.0))
            if proc.poll() is None:
                proc.kill()
                proc.wait()
                kills["random"] += 1
        elif kind == "in_write":
            kills["in_write"] += kill_in_a_write(proc, faulted, limit=300.0)
        else:  # SIGTERM once this attempt has checkpointed: every seed saves at the round's end, exit 128 + 15
            while proc.poll() is None and progress(faulted) <= before:
                time.sleep(0.01)
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 128 + signal.SIGTERM, err
            assert "stopped by SIGTERM" in err  # the progress bar may print after the message
            kills["sigterm"] += 1
        if proc.returncode == 0:
            break
    if proc.returncode != 0:
        proc = start(config, faulted)
        assert proc.wait(timeout=900) == 0, proc.stderr.read()

    print("faults:", kills)
    assert kills["sigterm"] == 1 and kills["random"] + kills["in_write"] >= 2, kills
    pd.testing.assert_frame_equal(pd.read_parquet(whole / "metrics.parquet").drop(columns=["wall_s"]),
                                  pd.read_parquet(faulted / "metrics.parquet").drop(columns=["wall_s"]),
                                  check_exact=True)
    a, b = torch.load(whole / "model.pt"), torch.load(faulted / "model.pt")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    ma, mb = torch.load(whole / "masks.pt"), torch.load(faulted / "masks.pt")
    masks_a, masks_b = ma["online"]["topology"]["masks"], mb["online"]["topology"]["masks"]
    assert all(torch.equal(m, masks_b[k]) for k, m in masks_a.items())
    assert temporaries(faulted) == [] and not (faulted / "checkpoint").exists()  # removed at the end
