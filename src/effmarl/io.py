"""Atomic output: every file is written to a temporary sibling and renamed into place, so a killed job
never leaves a half-written file that looks complete. A write that fails for lack of space (ENOSPC, EDQUOT) raises
`OSError(errno, strerror, <the file>)` naming the file it was to write, whatever the writer's own error said (torch's
carries no errno: `unexpected pos`, `basic_ios::clear`, `PytorchStreamWriter failed writing file`), and leaves the
file as it was. Files get the mode the umask allows (0666 & ~umask),
as `open()` would give them, not mkstemp's 0600; a temporary file a kill leaves behind is named
`.<name>.<random>.tmp` so that `effmarl.checkpoints.remove_strays` can find it.

Fault tests name the write at which a process is hit:
`EFFMARL_FAULT_AT=<file-name glob>:<occurrence>[:<signal>[:group] | :ENOSPC]` (e.g. `checkpoint.json:3`,
`state-*.pt:2:SIGTERM`, `model.pt:1:ENOSPC`) sends the process that signal (SIGKILL unless named) during the
occurrence-th atomic write of a file whose name matches, once its temporary file is complete and before the rename,
whatever the machine's speed; with `group`, to its whole process group instead (a workflow job shares Snakemake's:
Snakemake and every job it runs die at once, as in a power loss). With `ENOSPC` that write goes to a full disk: its
temporary file is a link to Linux's /dev/full, so the writer (torch.save, pyarrow, matplotlib, Python) fails with
its own error for a full disk. Read once at import; unset, a write pays one `is None` test."""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import json
import os
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class _Fault:
    """The write `EFFMARL_FAULT_AT` names (module docstring) and how many matching writes this process has made."""

    FULL_DISK = "ENOSPC"

    def __init__(self, spec: str):
        parts = spec.split(":")
        if (len(parts) not in (2, 3, 4) or not parts[1].isdigit() or int(parts[1]) < 1
                or parts[2:] and parts[2] not in (*signal.Signals.__members__, self.FULL_DISK)
                or parts[3:] and (parts[3] != "group" or parts[2] == self.FULL_DISK)):
            raise ValueError(f"EFFMARL_FAULT_AT={spec!r}: expected "
                             "<file-name glob>:<occurrence >= 1>[:<signal>[:group] | :ENOSPC]")
        self.pattern, self.occurrence, self.seen = parts[0], int(parts[1]), 0
        self.full_disk = parts[2:3] == [self.FULL_DISK]
        self.signal = signal.Signals[parts[2]] if len(parts) >= 3 and not self.full_disk else signal.SIGKILL
        self.group = len(parts) == 4

    def hits(self, path: Path) -> bool:
        """Count a write of `path`; True if it is the one named."""
        if fnmatch.fnmatchcase(path.name, self.pattern):
            self.seen += 1
            return self.seen == self.occurrence
        return False

    def before(self, tmp: Path) -> None:
        """Before the writer runs: a full disk's write goes to /dev/full."""
        if self.full_disk:
            tmp.unlink()
            tmp.symlink_to("/dev/full")

    def after(self, path: Path) -> None:
        """Its temporary file complete, not renamed: the signal (a full disk's write cannot get here)."""
        if self.full_disk:  # a writer that wrote nothing: the link to /dev/full must not be renamed into place
            raise RuntimeError(f"EFFMARL_FAULT_AT: the write of {path} to /dev/full reported no error")
        if self.group:
            os.killpg(os.getpgid(0), self.signal)
        os.kill(os.getpid(), self.signal)


_FAULT = _Fault(os.environ["EFFMARL_FAULT_AT"]) if os.environ.get("EFFMARL_FAULT_AT") else None


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path in the target's directory; on success it is renamed onto `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp_path = Path(tmp)
    fault = _FAULT if _FAULT is not None and _FAULT.hits(path) else None
    try:
        try:
            if fault is not None:
                fault.before(tmp_path)
            yield tmp_path
            with open(tmp_path, "rb+") as handle:
                os.fsync(handle.fileno())
            if fault is not None:
                fault.after(path)
            os.chmod(tmp_path, 0o666 & ~_umask())
            os.replace(tmp_path, path)
        except Exception as exc:
            code = _write_errno(exc, tmp_path)
            if code in NO_SPACE:
                raise OSError(code, os.strerror(code), str(path)) from exc
            raise
    finally:
        tmp_path.unlink(missing_ok=True)


NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


def _write_errno(exc: BaseException, tmp: Path) -> int | None:
    """The OS error behind a failed write: the errno of an OSError that `exc` is or was raised from; for an error that
    carries none (torch's writer), the errno a probe write of 64 KiB to the same temporary file meets (a disk that
    filled up refuses it too), or None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, OSError) and exc.errno:
            return exc.errno
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    try:
        with open(tmp, "ab") as probe:
            probe.write(bytes(1 << 16))
            probe.flush()
            os.fsync(probe.fileno())
    except OSError as failed:
        return failed.errno
    return None


def write_with(path: str | Path, writer: Callable[[Path], Any]) -> Path:
    """Atomically write `path` with `writer(tmp_path)`, e.g. `lambda p: df.to_parquet(p)`."""
    with atomic_path(path) as tmp:
        writer(tmp)
    return Path(path)


def write_text(path: str | Path, text: str) -> Path:
    return write_with(path, lambda tmp: tmp.write_text(text))


def write_json(path: str | Path, obj: Any) -> Path:
    return write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def write_parquet(path: str | Path, frame) -> Path:
    return write_with(path, lambda tmp: frame.to_parquet(tmp, index=False))
