"""Provenance: what produced an output — code version, configuration, packages, hardware, seed, time."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from effmarl import __version__
from effmarl.config import config_hash

# The packages whose versions decide a result; recorded beside every output.
TRACKED_PACKAGES = [
    "effmarl", "torch", "numpy", "pandas", "pyarrow", "jax", "jaxlib", "jaxmarl", "mpe2", "pettingzoo",
    "snakemake", "matplotlib", "seaborn", "jsonschema", "PyYAML",
]


# Written by the Dockerfile: present only in this project's image, not in just any container.
IMAGE_MARKER = Path("/etc/effmarl-image")


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_state() -> dict:
    """Commit and dirty flag of the checkout the code runs from (or EFFMARL_GIT_COMMIT, set in the image)."""
    source = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True, timeout=10).stdout.strip()
        status = subprocess.run(["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, check=True, timeout=10).stdout
        return {"commit": commit, "dirty": bool(status.strip()), "source": "git"}
    except (OSError, subprocess.SubprocessError):
        pass
    if os.environ.get("EFFMARL_GIT_COMMIT"):
        return {"commit": os.environ["EFFMARL_GIT_COMMIT"], "dirty": None, "source": "EFFMARL_GIT_COMMIT"}
    return {"commit": None, "dirty": None, "source": "unknown: not a git checkout and EFFMARL_GIT_COMMIT unset"}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib() -> float | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


def hardware() -> dict:
    """The machine. GPUs and torch's threads come from torch where this process imported it (training,
    benchmarks, env-info); a process that never did (figures, tables, aggregation: ~0.7 s of import each)
    records them as null, not probed."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {**_machine(), "gpus": None, "cuda": None, "torch_threads": None}
    gpus = []
    if torch.cuda.is_available():
        gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return {**_machine(), "gpus": gpus, "cuda": torch.version.cuda if gpus else None,
            "torch_threads": torch.get_num_threads()}


def _machine() -> dict:
    return {
        "machine": platform.machine(),
        "system": f"{platform.system()} {platform.release()}",
        "cpu_model": _cpu_model(),
        "logical_cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "memory_gib": _memory_gib(),
    }


def in_container() -> bool:
    """Inside some container: Docker's /.dockerenv, podman's /run/.containerenv, or this project's image's
    EFFMARL_CONTAINER (buildah run creates neither file)."""
    return (Path("/.dockerenv").exists() or Path("/run/.containerenv").exists()
            or bool(os.environ.get("EFFMARL_CONTAINER")))


def project_image() -> str | None:
    """The first line of IMAGE_MARKER (the image's version and the commit it was built from) when this runs in
    this project's image, else None."""
    try:
        lines = IMAGE_MARKER.read_text().splitlines()
    except OSError:
        return None
    return lines[0].strip() if lines and lines[0].strip() else f"unnamed ({IMAGE_MARKER} is empty)"


def environment() -> dict:
    """Everything about where a result is produced, without the run-specific parts."""
    return {
        "effmarl_version": __version__,
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "packages": package_versions(),
        "hardware": hardware(),
        "git": git_state(),
        "in_container": in_container(),
        "project_image": project_image(),
    }


def record(config: dict | None = None, *, started_at: str | None = None, seed: int | None = None,
           inputs: list[str] | None = None, extra: dict | None = None) -> dict:
    """The provenance record written beside an output."""
    rec = environment()
    rec.update({
        "command": sys.argv,
        "started_at": started_at,
        "finished_at": utc_now(),
        "seed": seed if seed is not None else (config or {}).get("seed"),
        "config": config,
        "config_hash": config_hash(config) if config is not None else None,
        "inputs": inputs or [],
    })
    rec.update(extra or {})
    return rec


def describe(info: dict) -> str:
    """`effmarl env-info`'s text: an `environment()` record with its counter probes (profiling.tools.probe_all) under
    "counters", one fact per line."""
    hw = info["hardware"]
    lines = [
        f"effmarl {info['effmarl_version']} on Python {info['python']} ({info['python_executable']})",
        f"git: {info['git']['commit'] or 'unknown'}" + (" (dirty)" if info["git"]["dirty"] else ""),
        f"container: {'yes' if info['in_container'] else 'no'}",
        f"project image: yes ({info['project_image']})" if info["project_image"] else
        f"project image: no (no {IMAGE_MARKER}, which this project's Dockerfile writes)",
        f"CPU: {hw['cpu_model']}, {hw['usable_cores']} usable of {hw['logical_cores']} logical cores, "
        f"{hw['memory_gib']} GiB memory, {hw['machine']}, {hw['system']}",
        f"GPU: {', '.join(hw['gpus']) + ' (CUDA ' + str(hw['cuda']) + ')' if hw['gpus'] else 'none'}",
        "packages: " + ", ".join(f"{k} {v or 'not installed'}" for k, v in info["packages"].items()),
        "counter sources:",
    ]
    for name, probe in info["counters"].items():
        state = "usable" if probe["available"] else f"unavailable — {probe['reason']}"
        lines.append(f"  {name}: {state}")
    return "\n".join(lines)
