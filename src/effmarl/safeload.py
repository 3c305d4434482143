"""Reading back torch files as data only: opening a shared `results/` or run directory never runs code from it.

Every torch file effmarl reads — checkpoint payloads (harness.py), model.pt and masks.pt (tickets, Figure 11, the
sparse benchmark) — goes through `load_torch`: `torch.load(..., weights_only=True)`, whose unpickler builds tensors,
numbers, strings, bytes, lists, tuples, dicts and sets, plus the types in `SAFE_GLOBALS` below, and refuses a file
that names anything else before building any of it. The manifest's sha256 and checksum detect damage, not tampering
(anyone can recompute both), so they are no reason to trust a file's contents.

SAFE_GLOBALS is the one list of what a file may name beyond plain data: numpy arrays of plain numbers (booleans,
integers, floating point; not object arrays), because paper 1's reference replay storage is openai/maddpg's list of
numpy tuples, kept as it is (resources.py counts its checkpoint's memory) and saved whole in the run state. Run
state is written as data (harness.global_rng_states: RNG states as tensors, numbers, strings, lists and dicts), so
nothing else is needed.

The other formats are data by construction: parquet through pyarrow (which no longer unpickles extension types),
JSON through json, YAML through yaml.safe_load or a SafeLoader subclass (config.py).
"""

from __future__ import annotations

import pickle
import re
from pathlib import Path
from typing import Any

import numpy as np

from effmarl.config import ConfigError

PLAIN_NUMBERS = (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                 np.float16, np.float32, np.float64)
SAFE_GLOBALS = (np.ndarray, np.dtype, np._core.multiarray._reconstruct,
                *(type(np.dtype(t)) for t in PLAIN_NUMBERS))


class UnreadableFile(ConfigError):
    """A torch file that does not load as data only (or at all); `reason` is the short why, for callers that
    report the file their own way (a checkpoint, a ticket's source)."""

    def __init__(self, path: str | Path, reason: str, problem: str):
        self.reason = reason
        super().__init__([problem], str(path))


def _reason(exc: Exception) -> str:
    named = re.search(r"GLOBAL ([\w.]+)|got <class '([\w.]+)'>", str(exc))
    return exc.__class__.__name__ + (f": it names {named.group(1) or named.group(2)}" if named else "")


def load_torch(path: str | Path, *, map_location: Any = None) -> Any:
    """The contents of the torch file at `path`, loaded as data only; any failure is an `UnreadableFile` (a one-line
    ConfigError naming the file)."""
    import torch

    try:
        with torch.serialization.safe_globals(list(SAFE_GLOBALS)):
            return torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # noqa: BLE001  (any unreadable file is one line)
        reason = _reason(exc)
        if isinstance(exc, pickle.UnpicklingError):
            problem = (f"not a data-only torch file ({reason}); effmarl loads only tensors, numbers, strings, lists, "
                       "dicts and numpy arrays of numbers, and runs nothing from a file")
        else:
            problem = f"cannot be read ({reason})"
        raise UnreadableFile(path, reason, problem) from None
