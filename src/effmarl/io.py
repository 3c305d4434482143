"""Atomic output: every file is written to a temporary sibling and renamed into place, so a killed job
never leaves a half-written file that looks complete. Files get the mode the umask allows (0666 & ~umask),
as `open()` would give them, not mkstemp's 0600; a temporary file a kill leaves behind is named
`.<name>.<random>.tmp` so that `effmarl.checkpoints.remove_strays` can find it."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path in the target's directory; on success it is renamed onto `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        with open(tmp_path, "rb+") as handle:
            os.fsync(handle.fileno())
        os.chmod(tmp_path, 0o666 & ~_umask())
        os.replace(tmp_path, path)
    finally:
        tmp_path.unlink(missing_ok=True)


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
