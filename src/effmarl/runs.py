"""A run's output directory: results/<study>/<run_id>/ with tables, JSON and provenance, and its one writer.

provenance.json is written last, so its presence marks a run that finished.

One writer: `locked(directories)` holds an exclusive lock on each run directory for the life of its `with` block
(`effmarl train` takes it before any compute: train.py). The lock is the operating system's — flock on
`.<run_id>.lock` beside the directory — so it ends when its process ends, however it ends (SIGKILL, power loss):
a killed holder leaves at most that file, which stops nobody. A second writer is refused at once with `RunDirBusy`
(a ConfigError: one line `effmarl: <dir>: …` naming the holder's pid, host and start time). The lock file lives
beside the directory, not in it, so that taking the lock creates nothing in the directory and a finished run
directory holds only what the run wrote; a clean release removes it. A process may take a lock it holds again.

Where the lock cannot be trusted, the run goes on with a one-line warning on stderr: a file system that refuses
locks (flock fails with ENOLCK or EOPNOTSUPP: NFS without a lock daemon, some FUSE file systems) and NFS mounted with
`nolock` or `local_lock=flock|all`, whose locks only this host sees (`local_only_locks`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import socket
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pandas as pd

from effmarl import io, provenance
from effmarl.config import ConfigError


class RunDir:
    def __init__(self, path: str | Path, config: dict):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.config = config
        self.started_at = provenance.utc_now()

    @property
    def checkpoint_dir(self) -> Path:
        return self.path / "checkpoint"

    def write_table(self, name: str, rows: list[dict] | pd.DataFrame) -> Path:
        frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
        return io.write_parquet(self.path / f"{name}.parquet", frame)

    def write_json(self, name: str, obj) -> Path:
        return io.write_json(self.path / f"{name}.json", obj)

    def finish(self, **extra) -> Path:
        rec = provenance.record(self.config, started_at=self.started_at, extra=extra or None)
        return io.write_json(self.path / "provenance.json", rec)


# ---------------------------------------------------------------- one writer
class RunDirBusy(ConfigError):
    """Another process holds the run directory's lock; the one line names the directory and the holder."""


UNLOCKABLE = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS)
_HELD: dict[Path, list] = {}  # lock file -> [its descriptor (None: not lockable), times taken] held by this process


def lock_path(directory: str | Path) -> Path:
    """The lock file of a run directory: `.<name>.lock` beside it (symbolic links resolved: one lock per directory)."""
    real = Path(os.path.realpath(directory))
    return real.parent / f".{real.name}.lock"


@contextlib.contextmanager
def locked(directories: Iterable[str | Path]) -> Iterator[None]:
    """Hold the lock of every directory in `directories` for the `with` block (module docstring); raise `RunDirBusy`
    for the first one another process holds, having released those taken before it."""
    taken: list[Path] = []
    try:
        for directory in directories:
            taken.append(_acquire(Path(directory)))
        yield
    finally:
        for lock in reversed(taken):
            _release(lock)


def _warn(directory: Path, problem: str) -> None:
    print(f"effmarl: {directory}: warning: {problem}; a second writer into it would not be refused", file=sys.stderr)


def _acquire(directory: Path) -> Path:
    lock = lock_path(directory)
    if lock in _HELD:
        _HELD[lock][1] += 1
        return lock
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file where a directory above the run directory should be
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(directory)) from None
    reason = local_only_locks(lock.parent)
    if reason:
        _warn(directory, reason)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise RunDirBusy([f"in use by another effmarl run ({holder}); refused, nothing written — run this "
                              "command again once that run has ended"], str(directory)) from None
        except OSError as exc:
            os.close(fd)
            if exc.errno not in UNLOCKABLE:
                raise OSError(exc.errno, exc.strerror, str(lock)) from exc
            _warn(directory, f"its file system cannot lock {lock.name} ({errno.errorcode[exc.errno]})")
            _HELD[lock] = [None, 1]
            return lock
        # the lock must be on the file the name still holds: a holder that ended removed its file (module docstring)
        with contextlib.suppress(FileNotFoundError):
            if os.path.samestat(os.stat(lock), os.fstat(fd)):
                break
        os.close(fd)
    record = {"pid": os.getpid(), "host": socket.gethostname(), "started": provenance.utc_now()}
    try:
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(record).encode())
    except OSError as exc:  # a full disk: the lock is given back and the file named
        lock.unlink(missing_ok=True)
        os.close(fd)
        raise OSError(exc.errno, exc.strerror, str(lock)) from exc
    _HELD[lock] = [fd, 1]
    return lock


def _holder(fd: int) -> str:
    """The holder's record in the lock file, as words."""
    try:
        record = json.loads(os.pread(fd, 4096, 0))
        return f"pid {record['pid']} on host {record['host']}, started {record['started']}"
    except (OSError, ValueError, TypeError, KeyError):
        return "its holder is starting and has not written its pid, host and start time yet"


def _release(lock: Path) -> None:
    entry = _HELD[lock]
    entry[1] -= 1
    if entry[1]:
        return
    del _HELD[lock]
    lock.unlink(missing_ok=True)  # while still locked: a writer that opened the file before sees it gone and retries
    if entry[0] is not None:
        os.close(entry[0])


def _unescape(field: str) -> str:
    """A path as /proc/self/mountinfo writes it (space, tab, newline, backslash as octal escapes)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def local_only_locks(path: str | Path, mountinfo: str | None = None) -> str | None:
    """Why locks on `path` would be seen by this host only — it lies on an NFS mount with `nolock` or
    `local_lock=flock|all` — or None. `mountinfo`: the text of /proc/self/mountinfo (read when None; None where
    there is none)."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text()
        except OSError:
            return None
    target = os.path.realpath(path)
    best: tuple[str, str, list[str]] | None = None
    for line in mountinfo.splitlines():
        mount_fields, _, fs_fields = line.partition(" - ")
        fields, fs = mount_fields.split(), fs_fields.split()
        if len(fields) < 6 or len(fs) < 3:
            continue
        mount = _unescape(fields[4])
        inside = target == mount or target.startswith(mount.rstrip("/") + "/")
        if inside and (best is None or len(mount) >= len(best[0])):
            best = (mount, fs[0], fields[5].split(",") + fs[2].split(","))
    if best is None or not best[1].startswith("nfs"):
        return None
    local = [o for o in best[2] if o in ("nolock", "local_lock=flock", "local_lock=all")]
    return f"nfs mount {best[0]} with {', '.join(local)}: its locks are seen by this host only" if local else None
