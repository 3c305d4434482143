"""One run harness for every training stack: run state on disk (checkpoints.py), device, seeds, signals, guard.

What a stack (the off-policy loop of paper 1, the QMIX family of paper 2) provides:
  - a run state: one object with `state_dict() -> dict` (tensors, numpy arrays, plain Python) and
    `load_state_dict(dict)` that together restore the run bit for bit (networks, optimisers, RNG states,
    replay storage, counters, metrics and phase rows so far — everything written at the end);
  - a progress count in its budget unit (`episodes` or `env_steps`) and the budget field's name and value;
  - safe points in its loop (end of an episode or of a collection round) where it calls `Run.checkpoint_due`
    (S seeds in lockstep: each seed's `Run.save_due`, then `Process.stop_if_requested`).
What the harness gives back (`Run(cfg, rundir, budget_field=..., budget=..., unit=...)`):
  - `run.process`: what the runs of one process share — `run.device` (`resolve_device`: `auto` picks cuda when
    present; `cuda` without a GPU is a one-line ConfigError, raised before the run directory exists because
    `train` resolves it first) and the stop signals (SIGTERM/SIGINT). A run on its own makes its own `Process`
    (`with run:` installs the handlers); S seeds in lockstep (the QMIX family) share one: `with Process(device)
    as process:` and each seed's `Run(..., process=process)`;
  - `run.restore(state)`: loads the run directory's checkpoint into `state` if there is one and returns its
    progress (else None). The checkpoint is refused — never loaded, never overwritten — with a one-line
    `CheckpointError` naming the file and how to start afresh when its checksum, format version or manifest
    do not check out, when it was made with another configuration (the resume key: the config without
    budget, threads and profile, which may change), or when its progress is past the budget;
  - `run.save(state, progress)`: the payload (torch.save) is written atomically under a new name, then the
    manifest (format version, payload name, sha256, progress, resume key, its own checksum) is written
    atomically: the manifest's rename is the commit, so a kill at any moment leaves the previous
    checkpoint or the new one, never a mix; the previous payload is removed after the commit;
  - the safe point: `run.checkpoint_due(state, progress, periodic)` saves when `periodic` or when SIGTERM/SIGINT
    arrived since the last safe point, then raises `Interrupted` (exit 128 + signal, one line) in the latter
    case. S runs in lockstep split it: each run saves `if run.save_due(periodic)`, then, once every run has
    saved, `process.stop_if_requested(...)` stops them all. A second signal stops at once (the last checkpoint
    stays valid);
  - the progress display, one for both stacks (`progress`, a tqdm bar of units done / total on stderr, labelled
    by `progress_label`): a run on its own shows it with `run.show_progress(unit)` and each safe point moves it
    to the progress count `checkpoint_due` is given; S seeds in lockstep keep one bar over their summed budgets;
  - on start, stray temporary files of writes killed earlier (and payloads no manifest names) are removed: the
    caller holds the run directory's lock (`runs.locked`; `effmarl train` takes it), so none is another writer's;
  - `guard_finite(phase, step, tree)` / `check_value(phase, step, name, value)`: a NaN/Inf in parameters,
    a loss or a gradient norm raises `Diverged` naming phase, step and value; the last good checkpoint is
    kept because nothing is saved after it;
  - seeds, one derivation for every stack (each function's docstring gives its formula):
    `seed_everything(seed)` (python, numpy, torch), `stream_rng(seed, stream)` (an independent numpy Generator
    per purpose), `episode_seed(seed, index)` (the reset seed of training episode `index`: paper 1's loop, the
    random policy, the QMIX family) and `evaluation_seed(seed, index)` (the reset seed of evaluation episode
    `index`, the QMIX family's greedy evaluations);
    `global_rng_states()` / `set_global_rng_states(states)`: the global generators' states as data.
A payload is read back as data only (`effmarl.safeload.load_torch`: tensors, numbers, strings, lists, dicts and
the few types in `safeload.SAFE_GLOBALS`), so a run state holds nothing else; one that does not load so — a
crafted file, or an older effmarl's payload holding other objects — is refused like a damaged one. The manifest
names the commit that wrote it (`git_commit`).
Errors reach the command line as one line: `ConfigError` (and `CheckpointError`) -> exit 2, `RunStopped`
subclasses -> their `exit_code`.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np

from effmarl.checkpoints import CheckpointStore, remove_strays, resume_key
from effmarl.config import ConfigError


class RunStopped(Exception):
    """A run that stopped before its budget; `str()` is the one-line message, `exit_code` the exit status."""

    exit_code = 1


class Interrupted(RunStopped):
    def __init__(self, signum: int, message: str):
        super().__init__(message)
        self.exit_code = 128 + signum


class Diverged(RunStopped):
    exit_code = 3


# ---------------------------------------------------------------- device and seeds
def resolve_device(name: str):
    import torch

    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError(["field 'device': 'cuda' requested but torch sees no CUDA GPU; use cpu or auto"], "run")
    return torch.device(name)


def seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def stream_rng(seed: int, stream: int) -> np.random.Generator:
    """An independent generator for one purpose (stream 1: the replay sampler's index draws)."""
    return np.random.default_rng([seed, stream])


def episode_seed(seed: int, index: int) -> int:
    """The environment reset seed of training episode `index` (0, 1, …, counted over the run) of run seed `seed`:
    `seed · 100_003 + index`. A round of E environment copies that starts at episode e resets with
    `episode_seed(seed, e)` and the env seeds copy j with that + j, which is `episode_seed(seed, e + j)`: the
    copies play episodes e … e + E − 1. Paper 1's loop, the random policy and the QMIX family alike."""
    return seed * 100_003 + index


EVALUATION_EPISODES_FROM = 2**30  # evaluation episode i is played as training episode 2**30 + i would be


def evaluation_seed(seed: int, index: int) -> int:
    """The environment reset seed of evaluation episode `index` (0, 1, …, counted over all of the run's
    evaluations; an evaluation of E copies that starts at episode i resets with `evaluation_seed(seed, i)`, copy
    j with that + j): `episode_seed(seed, 2**30 + index)` = `seed · 100_003 + 2**30 + index`. Far past any
    training budget, so an evaluation never replays a training episode's start."""
    return episode_seed(seed, EVALUATION_EPISODES_FROM + index)


def global_rng_states() -> dict:
    """The states of the global generators (torch, CUDA, numpy, python) as data: tensors, numbers, strings, lists
    and dicts, which a data-only load reads back (numpy's MT19937 key as an int64 tensor)."""
    import torch

    numpy_state = np.random.get_state(legacy=False)
    version, internal, gauss = random.getstate()
    return {"torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
            "numpy_global": {"bit_generator": numpy_state["bit_generator"],
                             "key": torch.from_numpy(numpy_state["state"]["key"].astype(np.int64)),
                             "pos": int(numpy_state["state"]["pos"]), "has_gauss": int(numpy_state["has_gauss"]),
                             "gauss": float(numpy_state["gauss"])},
            "python": {"version": version, "state": list(internal), "gauss": gauss}}


def set_global_rng_states(states: dict) -> None:
    """Restore `global_rng_states()`; also takes the tuples an older effmarl saved (np.random.get_state(),
    random.getstate())."""
    import torch

    torch.set_rng_state(states["torch"])
    if states["cuda"] is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])
    numpy_state = states["numpy_global"]
    if isinstance(numpy_state, dict):
        numpy_state = {"bit_generator": numpy_state["bit_generator"],
                       "state": {"key": np.asarray(numpy_state["key"].numpy(), dtype=np.uint32),
                                 "pos": numpy_state["pos"]},
                       "has_gauss": numpy_state["has_gauss"], "gauss": numpy_state["gauss"]}
    np.random.set_state(numpy_state)
    python = states["python"]
    random.setstate((python["version"], tuple(python["state"]), python["gauss"]) if isinstance(python, dict)
                    else python)


# ---------------------------------------------------------------- signals
class StopSignals:
    """While active, SIGTERM/SIGINT only set `signum`; the loop acts on it at its next safe point.
    A second signal raises `Interrupted` at once. Handlers are installed only in the main thread."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self):
        self.signum: int | None = None
        self._old: dict[int, Any] = {}

    def _handle(self, signum, frame):
        if self.signum is not None:
            raise Interrupted(signum, f"stopped by {signal.Signals(signum).name} (second signal) before the "
                              "next safe point; the last checkpoint is kept — run the same command to resume")
        self.signum = signum

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for s in self.SIGNALS:
                self._old[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for s, old in self._old.items():
            signal.signal(s, old)
        self._old.clear()


# ---------------------------------------------------------------- divergence guard
def _walk(tree: Any, prefix: str):
    import torch

    if isinstance(tree, torch.nn.Module):
        for name, p in tree.named_parameters():
            yield f"{prefix}.{name}", p
    elif isinstance(tree, torch.Tensor):
        if tree.is_floating_point():
            yield prefix, tree
    elif isinstance(tree, dict):
        for k, v in tree.items():
            yield from _walk(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(tree, list | tuple):
        for i, v in enumerate(tree):
            yield from _walk(v, f"{prefix}.{i}" if prefix else str(i))


def guard_finite(phase: str, step: int, tree: Any) -> None:
    """Raise `Diverged` if any floating tensor / module parameter in `tree` holds a NaN or an Inf."""
    import torch

    named = list(_walk(tree, ""))
    if not named:
        return
    with torch.no_grad():
        total = torch.stack([t.detach().float().sum() for _, t in named]).sum()
        if torch.isfinite(total):
            return
        for name, t in named:
            bad = ~torch.isfinite(t.detach())
            if bad.any():
                value = t.detach()[bad].flatten()[0].item()
                raise Diverged(f"diverged in phase {phase} at step {step}: parameter {name} holds {value} "
                               f"({int(bad.sum())} non-finite values); the last good checkpoint is kept")
    # every tensor is finite and only their sum overflowed: huge, but not (yet) NaN/Inf


def check_value(phase: str, step: int, name: str, value) -> None:
    """Raise `Diverged` if a loss or a gradient norm is NaN or infinite (one .item(): a GPU sync)."""
    v = float(value.item() if hasattr(value, "item") else value)
    if not np.isfinite(v):
        raise Diverged(f"diverged in phase {phase} at step {step}: {name} is {v}; the last good checkpoint is kept")


# ---------------------------------------------------------------- progress
NO_PROGRESS_VAR = "EFFMARL_NO_PROGRESS"


def _interactive() -> bool:
    return sys.stderr.isatty()


def progress(total: int, *, initial: int = 0, desc: str, unit: str):
    """The progress display of a training run, both stacks: a tqdm bar of n / `total` `unit`s on stderr, starting
    at n = `initial` (a resumed run), redrawn at most once a second. Shown only on a terminal and unless
    EFFMARL_NO_PROGRESS=1: a log file (a workflow job) and a captured stderr get no bar, so an error stays the
    one line it is; `write` (tqdm's) still prints above a bar or, without one, plainly."""
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit=unit, mininterval=1, file=sys.stderr,
                disable=not _interactive() or os.environ.get(NO_PROGRESS_VAR) == "1")


def progress_label(cfg: dict, n_seeds: int = 1, resumed: bool = False) -> str:
    """`<algo> <map or N=n_agents> <seed s | S seeds>`, with " (resumed)" when a checkpoint was loaded."""
    env = cfg["env"]
    where = env.get("map") or (f"N={env['n_agents']}" if "n_agents" in env else "")
    seeds = f"seed {cfg['seed']}" if n_seeds == 1 else f"{n_seeds} seeds"
    return f"{cfg['algo']} {where} {seeds}" + (" (resumed)" if resumed else "")


# ---------------------------------------------------------------- the run
class Process:
    """What the runs trained in one process share: the device and the stop signals. A `Run` on its own makes its
    own; S seeds in lockstep (the QMIX family) share one, entered once (`with Process(device) as process:`)."""

    def __init__(self, device: str):
        self.device = resolve_device(device)
        self.signals = StopSignals()

    def __enter__(self) -> Process:
        self.signals.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.signals.__exit__(*exc)

    @property
    def stop_requested(self) -> bool:
        return self.signals.signum is not None

    def stop_if_requested(self, where: str) -> None:
        """The end of a safe point, once every run of the process has saved (`Run.save_due`): raise `Interrupted`
        if SIGTERM/SIGINT arrived. `where`: the progress and what was saved where."""
        if self.stop_requested:
            name = signal.Signals(self.signals.signum).name
            raise Interrupted(self.signals.signum, f"stopped by {name} {where} — run the same command again to "
                              "resume")


class Run:
    """One run's harness; see the module docstring."""

    def __init__(self, cfg: dict, rundir, *, budget_field: str, budget: int, unit: str,
                 process: Process | None = None):
        self.cfg, self.rundir = cfg, rundir
        self.budget_field, self.budget, self.unit = budget_field, budget, unit
        self.process = process if process is not None else Process(cfg["device"])
        self.device = self.process.device
        self.store = CheckpointStore(rundir.checkpoint_dir)
        self.key = resume_key(cfg)
        self.removed = remove_strays(Path(rundir.path)) + self.store.clean()
        self.manifest = self.store.check(self.key, budget_field, budget)  # refused before the run is built
        self.bar = None

    def __enter__(self) -> Run:
        self.process.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.close_progress()
        self.process.__exit__(*exc)

    def show_progress(self, unit: str) -> None:
        """Show this run's `progress` bar: from the checkpoint's progress (0 for a fresh run) to the budget, moved
        by each `checkpoint_due`, closed when the run's `with` block ends."""
        start = 0 if self.manifest is None else self.manifest["progress"]
        self.bar = progress(self.budget, initial=start, desc=progress_label(self.cfg, resumed=start > 0), unit=unit)

    def advance(self, progress: int) -> None:
        """Move the progress bar (if shown) to `progress`."""
        if self.bar is not None:
            self.bar.update(progress - self.bar.n)

    def close_progress(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def restore(self, state) -> int | None:
        if self.manifest is None:
            return None
        state.load_state_dict(self.store.read_payload(self.manifest))
        return self.manifest["progress"]

    def save(self, state, progress: int) -> None:
        self.store.save(state.state_dict(), self.key, progress, self.unit)

    @property
    def stop_requested(self) -> bool:
        return self.process.stop_requested

    def save_due(self, periodic: bool) -> bool:
        """Whether this safe point saves the run: when `periodic`, or when a stop was requested (every run of the
        process saves before `Process.stop_if_requested` stops them)."""
        return periodic or self.stop_requested

    def checkpoint_due(self, state, progress: int, periodic: bool) -> None:
        """A run's safe point on its own: move the progress bar (if shown) to `progress`; save if `periodic` or a stop
        was requested; then stop if requested."""
        self.advance(progress)
        if self.save_due(periodic):
            self.save(state, progress)
        self.process.stop_if_requested(f"at {progress} {self.unit}; run state saved in {self.store.dir}")
