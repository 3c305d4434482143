"""Fault test of the QMIX family under the run harness: a short MAST-QMIX run SIGTERMed during a checkpoint, then
SIGKILLed inside a checkpoint's payload, inside its manifest and inside a final output, then out of disk space at its
final torch files (`EFFMARL_FAULT_AT`, see
test_harness_fault.py: each fault lands at a named write however slow the machine), resumed each time by the same
command, ends equal to an uninterrupted run (metrics bar wall time, the final model, the masks), with no temporary
file left."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
import yaml
from test_harness_fault import hit, progress, start, temporaries

CONFIG = {"study": "fault", "algo": "qmix", "seed": 5, "env": {"backend": "smax", "map": "3m"},
          "budget": {"env_steps": 1000}, "sparse": {"method": "mast", "sparsity": 0.8, "delta_m": 2},
          "qmix": {"num_envs": 2, "eval_episodes": 2, "batch_size": 4, "buffer_size": 200, "eval_every": 100,
                   "checkpoint_every": 50, "target_update_interval": 4, "shared_params": False}}
# Each attempt resumes from the last commit and counts its own writes (payload state-*.pt, then checkpoint.json).
# SIGTERM during the 2nd commit: the round ends, the seed has saved, exit 143. A seed that spends its budget
# finishes without a checkpoint, so the kill in model.pt resumes from the last periodic one and replays the rest;
# so do the full disks at its final torch files (torch's own writer fails), which must leave nothing partial.
FAULTS = ["checkpoint.json:2:SIGTERM", "state-*.pt:2", "checkpoint.json:3", "model.pt:1", "masks.pt:1:ENOSPC",
          "model.pt:1:ENOSPC"]


@pytest.mark.slow
def test_killed_and_sigtermed_mast_run_resumes_to_the_uninterrupted_one(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    whole, faulted = tmp_path / "whole", tmp_path / "faulted"
    proc = start(config, whole)
    assert proc.wait(timeout=900) == 0, proc.stderr.read()

    committed = [0]
    for fault in FAULTS:
        name = fault.split(":")[0]
        before = {p.name: p.read_bytes() for p in faulted.glob(name)}
        _, err = hit(config, faulted, fault)
        if fault.endswith("ENOSPC"):  # the file the full disk stopped is as it was: absent, or the good one
            assert {p.name: p.read_bytes() for p in faulted.glob(name)} == before, fault
        committed.append(progress(faulted))
        assert not (faulted / "provenance.json").exists()  # nothing half-written passes for a finished run
        if fault.endswith("SIGTERM"):
            assert "stopped by SIGTERM" in err  # the progress bar may print after the message
    print("env steps committed after each fault:", committed)
    assert committed == sorted(committed) and committed[3] > committed[2] > committed[1] > 0, committed
    proc = start(config, faulted)
    assert proc.wait(timeout=900) == 0, proc.stderr.read()

    pd.testing.assert_frame_equal(pd.read_parquet(whole / "metrics.parquet").drop(columns=["wall_s"]),
                                  pd.read_parquet(faulted / "metrics.parquet").drop(columns=["wall_s"]),
                                  check_exact=True)
    a, b = torch.load(whole / "model.pt"), torch.load(faulted / "model.pt")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    ma, mb = torch.load(whole / "masks.pt"), torch.load(faulted / "masks.pt")
    masks_a, masks_b = ma["online"]["topology"]["masks"], mb["online"]["topology"]["masks"]
    assert all(torch.equal(m, masks_b[k]) for k, m in masks_a.items())
    assert temporaries(faulted) == [] and not (faulted / "checkpoint").exists()  # removed at the end
