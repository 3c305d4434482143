"""The counter driver: the process `perf stat` and valgrind's cachegrind count for `effmarl counters`
(effmarl.profiling.counters keeps the records), and the two tools run over it.

`perf` and `cachegrind` count a whole process, so the sampling work is isolated by subtraction: a driver
process (`python -m effmarl.profiling.counter_driver --driver SPEC`) fills the buffers with deterministic
transitions and then runs R sampling rounds; the same driver with the same fill and 0 rounds is run too, and
(R rounds − 0 rounds) / (sampled transitions) is reported. A round is one update round's sampling phase in
`per_agent` mode: N × [draw B indices, gather those B transitions from all N agents' buffers], so a round
samples N·B transitions. "Per sampled transition" divides by R·N·B.

`gather: numpy` (the default for the simulated counters) measures the storages' NumPy-level gather
(`ReplayBuffer._encode_sample` of each agent's buffer, `np.take` of the contiguous arrays) without the final
`torch.from_numpy`, and the driver then does not import torch, which alone costs about two minutes under
valgrind: a stand-in module providing only `torch.device` takes its place, and any other use fails loudly.
`gather: torch` runs the storages' real `gather` (torch tensors) and pays that import.

Repeats. Cachegrind's simulation is deterministic given the addresses a process touches, so one measurement has
no spread of its own; what changes a count is the address-space layout (where the heap, the mmap'd arenas and
large arrays, the stack and each dict's slots land), and a single layout is one draw of it. Repeat r therefore
gives BOTH driver processes of its difference (R rounds and 0 rounds) the layout `layout(r)`: string-hash seed
PYTHONHASHSEED = r, an mmap'd pad of 0-4 MiB in pages and a heap (brk) pad of 0-64 KiB in 16-byte steps allocated
before anything else and kept alive, and an environment variable of 0-4 KiB that moves the stack. The fill's
transitions stay the same (the spec's `seed`); only where they lie changes. With a fixed layout the drivers are
also fixed in what they execute: OpenBLAS and OpenMP run one thread (their idle worker threads otherwise spin
for as long as the host happens to schedule them, which made two identical runs differ by ~3e6 instructions).
"""

from __future__ import annotations

import json
import mmap
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import numpy as np

CACHEGRIND_EVENTS = ("Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw")
PERF_EVENTS = ("cache-references", "cache-misses", "L1-dcache-load-misses", "LLC-load-misses",
               "dTLB-load-misses", "instructions", "cycles")
# Fixed simulated caches, so the counts do not depend on the host that runs valgrind.
CACHE_CONFIG = {"I1": "32768,8,64", "D1": "32768,8,64", "LL": "8388608,16,64"}
# Address-space layout of a repeat (see `layout`): upper bounds of the pads.
MMAP_PAD_PAGES, PAGE = 1024, 4096  # 0-4 MiB
HEAP_PAD_MAX, ENV_PAD_MAX, PAD_STEP = 65536, 4096, 16
LAYOUT_ENV_VAR = "EFFMARL_LAYOUT_PAD"


def layout(repeat: int) -> dict:
    """The address-space layout of repeat `repeat`'s driver processes: `hash_seed` (PYTHONHASHSEED, = repeat),
    `mmap_pad` (bytes of an anonymous mapping made first: 0-4 MiB in whole pages, so every later mapping — the
    interpreter's object arenas, large arrays — lands that much lower), `heap_pad` (bytes malloc'd from the brk
    heap first: 0-64 KiB in 16-byte steps, moving the small array buffers by whole pages and within a page) and
    `env_pad` (characters of an extra environment variable: 0-4 KiB in 16-byte steps, moving the stack). Drawn
    from a Generator seeded by `repeat`, so a repeat's layout is the same on every run."""
    rng = np.random.default_rng(repeat)
    return {"hash_seed": int(repeat), "mmap_pad": int(rng.integers(0, MMAP_PAD_PAGES + 1)) * PAGE,
            "heap_pad": int(rng.integers(0, HEAP_PAD_MAX // PAD_STEP)) * PAD_STEP,
            "env_pad": int(rng.integers(0, ENV_PAD_MAX // PAD_STEP)) * PAD_STEP}


_LAYOUT_PADS: list = []  # kept alive for the driver's lifetime


def apply_layout(spec: dict) -> None:
    """Allocate the spec's layout pads (an mmap of `mmap_pad` bytes, a heap block of `heap_pad` bytes) and keep
    them; pages of the mapping are never touched. A spec without a layout gets none."""
    lay = spec.get("layout") or {}
    if lay.get("mmap_pad"):
        _LAYOUT_PADS.append(mmap.mmap(-1, lay["mmap_pad"]))
    if lay.get("heap_pad"):
        _LAYOUT_PADS.append(bytearray(lay["heap_pad"]))  # above 512 bytes: malloc, below its mmap threshold


# ------------------------------------------------------------------------------------------------ driver
def _torch_standin() -> types.ModuleType:
    module = types.ModuleType("torch")
    module.device = str

    def missing(name):
        raise RuntimeError(f"torch.{name} used in a gather: numpy counter driver (torch is not imported there)")

    module.__getattr__ = missing
    return module


def fill_storage(storage, obs_dims: list[int], n_actions: list[int], fill: int, seed: int) -> None:
    """`fill` deterministic transitions, each stored with freshly allocated arrays (as a training loop stores them):
    every value is drawn first, in one array per field and agent, and transition j stores copies of row j. Under
    cachegrind the fill is simulated too (both driver processes of a difference pay it) and costs most of a driver:
    one copy per stored array instead of a draw, a cast and an index made the fill about 2.4x cheaper (0.32 s ->
    0.13 s natively at N = 12 and 5 000 transitions), which is what lets the counters run at a fill whose buffers
    cannot fit in the simulated last level."""
    rng = np.random.default_rng(seed)
    n = len(obs_dims)
    obs = [rng.standard_normal((fill, d), dtype=np.float32) for d in obs_dims]
    nxt = [rng.standard_normal((fill, d), dtype=np.float32) for d in obs_dims]
    act = [np.eye(a, dtype=np.float32)[rng.integers(a, size=fill)] for a in n_actions]
    rew, done = rng.standard_normal((fill, n), dtype=np.float32), np.zeros((fill, n), np.float32)
    for j in range(fill):
        storage.add([o[j].copy() for o in obs], [a[j].copy() for a in act], rew[j].copy(),
                    [o[j].copy() for o in nxt], done[j].copy())


def numpy_gather(storage, indices: np.ndarray):
    """The storage's gather up to (not including) the conversion to torch tensors."""
    if hasattr(storage, "buffers"):
        index = indices.tolist()
        return [buffer.sample_index(index) for buffer in storage.buffers]
    return {k: np.take(v, indices, axis=0) for k, v in storage.data.items()}


def build(spec: dict):
    """Storage (filled) and sampler of a driver spec."""
    from effmarl.replay import make_sampler, make_storage

    backend = "numpy" if spec["gather"] == "numpy" else "torch"
    storage = make_storage({"storage": spec["storage"], "buffer_size": spec["capacity"], "backend": backend},
                           spec["obs_dims"], spec["n_actions"])
    fill_storage(storage, spec["obs_dims"], spec["n_actions"], spec["fill"], spec["seed"])
    sampler = make_sampler({"sampler": spec["sampler"], "neighbor_k": spec["k"]})
    return storage, sampler


def sampling_rounds(storage, sampler, spec: dict, rounds: int, rng: np.random.Generator) -> None:
    """`rounds` sampling phases of per_agent update rounds: the training loop's `effmarl.replay.sampling_round`,
    with the numpy-only gather when `gather: numpy`."""
    from effmarl.replay import sampling_round

    gather = numpy_gather if spec["gather"] == "numpy" else None
    for _ in range(rounds):
        sampling_round(storage, sampler, rng, spec["batch"], len(spec["obs_dims"]), gather=gather)


def driver(spec: dict) -> None:
    apply_layout(spec)
    if spec["gather"] == "numpy":
        sys.modules.setdefault("torch", _torch_standin())
    storage, sampler = build(spec)
    sampling_rounds(storage, sampler, spec, spec["rounds"], np.random.default_rng(spec["seed"] + 1))


# ------------------------------------------------------------------------------------------------ tools
def _driver_cmd(spec: dict, rounds: int) -> list[str]:
    return [sys.executable, "-m", "effmarl.profiling.counter_driver", "--driver",
            json.dumps({**spec, "rounds": rounds})]


def _driver_env(spec: dict) -> dict:
    """The driver's environment: the layout's string-hash seed (fixed per repeat: two drivers with the same fill
    and different seeds differ in their dict layouts), its environment pad, and one BLAS / OpenMP thread."""
    lay = spec.get("layout") or {}
    return {**os.environ, "PYTHONHASHSEED": str(lay.get("hash_seed", 0)), "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", LAYOUT_ENV_VAR: "x" * int(lay.get("env_pad", 0))}


def parse_cachegrind(path: str | Path) -> dict[str, int]:
    events = summary = None
    for line in Path(path).read_text().splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:"):
            summary = [int(x) for x in line.split()[1:]]
    if events is None or summary is None:
        raise ValueError(f"{path}: no events/summary lines (not a cachegrind output file?)")
    return dict(zip(events, summary, strict=True))


def run_cachegrind(spec: dict, rounds: int) -> dict[str, int]:
    caches = {**CACHE_CONFIG, **spec.get("caches", {})}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cachegrind.out"
        cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", f"--cachegrind-out-file={out}",
               *[f"--{k}={v}" for k, v in caches.items()], *_driver_cmd(spec, rounds)]
        result = subprocess.run(cmd, capture_output=True, text=True, check=False, env=_driver_env(spec))
        if result.returncode != 0:
            raise RuntimeError(f"cachegrind driver failed ({result.returncode}): {result.stderr[-2000:]}")
        counts = parse_cachegrind(out)
    counts["D1m"] = counts["D1mr"] + counts["D1mw"]
    counts["DLm"] = counts["DLmr"] + counts["DLmw"]
    return counts


def parse_perf_csv(text: str) -> dict[str, float | None]:
    """`perf stat -x,` lines: value,unit,event,...; <not counted>/<not supported> become None."""
    out = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) < 3 or parts[2] == "":
            continue
        event = parts[2].split(":")[0]
        try:
            out[event] = float(parts[0])
        except ValueError:
            out[event] = None
    return out


def run_perf(spec: dict, rounds: int) -> dict[str, float | None]:
    cmd = ["perf", "stat", "-x,", "-e", ",".join(PERF_EVENTS), *_driver_cmd(spec, rounds)]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False, env=_driver_env(spec))
    if result.returncode != 0:
        raise RuntimeError(f"perf stat driver failed ({result.returncode}): {result.stderr[-2000:]}")
    return parse_perf_csv(result.stderr)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--driver":
        driver(json.loads(sys.argv[2]))
    else:
        raise SystemExit("usage: python -m effmarl.profiling.counter_driver --driver SPEC_JSON "
                         "(use `effmarl counters`)")
