"""Which counter sources this machine can use. Each probe says why when a source is unavailable, so a
counter record can name its source or the reason it has none, never a guess."""

from __future__ import annotations

import shutil
import subprocess


def _run(cmd: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def probe_perf() -> dict:
    """Linux perf hardware counters: usable only if the host's PMU is exposed to us."""
    if shutil.which("perf") is None:
        return {"available": False, "reason": "perf is not installed"}
    try:
        result = _run(["perf", "stat", "-x,", "-e", "instructions", "true"])
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"available": False, "reason": f"perf failed to run: {exc}"}
    out = result.stderr
    if "<not supported>" in out:
        return {"available": False, "reason": "perf runs but hardware event 'instructions' is <not supported> "
                "(no PMU exposed to this machine, e.g. a virtual machine)"}
    if "<not counted>" in out or result.returncode != 0:
        first = (out.strip().splitlines() or ["no output"])[0]
        return {"available": False, "reason": f"perf cannot count hardware events here: {first}"}
    return {"available": True, "reason": None}


def probe_cachegrind() -> dict:
    """valgrind's cachegrind: simulated cache counters, available wherever valgrind runs."""
    if shutil.which("valgrind") is None:
        return {"available": False, "reason": "valgrind is not installed"}
    try:
        result = _run(["valgrind", "--tool=cachegrind", "--cache-sim=yes",
                       "--cachegrind-out-file=/dev/null", "true"])
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"available": False, "reason": f"valgrind failed to run: {exc}"}
    if result.returncode != 0:
        return {"available": False, "reason": f"cachegrind exited {result.returncode}"}
    version = _run(["valgrind", "--version"]).stdout.strip()
    return {"available": True, "reason": None, "version": version}


def probe_torch_profiler() -> dict:
    try:
        import torch.profiler  # noqa: F401
    except ImportError as exc:
        return {"available": False, "reason": f"torch.profiler cannot be imported: {exc}"}
    return {"available": True, "reason": None}


def probe_ncu() -> dict:
    """Nsight Compute kernel metrics: needs an NVIDIA GPU and the `ncu` binary."""
    import torch

    if not torch.cuda.is_available():
        return {"available": False, "reason": "no CUDA GPU visible to torch"}
    if shutil.which("ncu") is None:
        return {"available": False, "reason": "Nsight Compute (ncu) is not installed"}
    return {"available": True, "reason": None}


def probe_all() -> dict[str, dict]:
    return {
        "perf": probe_perf(),
        "cachegrind": probe_cachegrind(),
        "torch_profiler": probe_torch_profiler(),
        "ncu": probe_ncu(),
    }
