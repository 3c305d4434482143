"""Run state on disk: the resume key and the checkpoint store (a manifest that is the commit point, and a payload).

    resume_key(cfg)        the part of a config a checkpoint must match: everything but budget, threads, profile
    CheckpointStore(dir)   checkpoint/checkpoint.json (format version, payload name, sha256, progress, resume key,
                           the commit that wrote it, its own checksum) + checkpoint/state-<seq>.pt (torch.save);
                           `save` writes the payload atomically under a new name, then the manifest atomically —
                           its rename is the commit — then removes the previous payload (a commit that fails, a
                           full disk say, removes the new payload: the previous checkpoint stays as it was);
                           `check` / `load` refuse (CheckpointError, one line naming the file and how to start
                           afresh) a checkpoint whose manifest, checksum, format, configuration or progress do not
                           check out, and read the payload as data only (safeload.load_torch)
    remove_strays(dir)     temporary files of killed atomic writes
The run harness (harness.py) drives it for every training stack.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from effmarl import io, safeload
from effmarl.config import ConfigError

FORMAT_VERSION = 1
MANIFEST = "checkpoint.json"
PAYLOAD_RE = re.compile(r"^state-\d+\.pt$")
TMP_RE = re.compile(r"^\..+\.[A-Za-z0-9_]+\.tmp$")  # io.atomic_path's temporary names
NOT_RESUME_KEY = ("budget", "threads", "profile")


class CheckpointError(ConfigError):
    """A checkpoint that cannot be resumed; the message names the file and how to start afresh."""

    def __init__(self, path: Path, problem: str, directory: Path):
        super().__init__([f"{problem}; it was not loaded and is left as it is; to start this run afresh, "
                          f"delete {directory}"], str(path))


@functools.cache
def written_by() -> str | None:
    """The commit of the effmarl that writes checkpoints in this process (provenance.git_state), or None."""
    from effmarl.provenance import git_state

    return git_state()["commit"]


# ---------------------------------------------------------------- resume key
def resume_key(cfg: dict) -> dict:
    """The part of a config a checkpoint must match: everything but budget, threads and profile."""
    key = {k: v for k, v in cfg.items() if k not in NOT_RESUME_KEY}
    return json.loads(json.dumps(key, sort_keys=True, default=str))


def _flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(obj, dict) and obj:
        out: dict[str, Any] = {}
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: obj}


def key_differences(old: dict, new: dict) -> list[str]:
    a, b = _flatten(old), _flatten(new)
    return sorted(k for k in set(a) | set(b) if a.get(k, "<absent>") != b.get(k, "<absent>"))


# ---------------------------------------------------------------- checkpoint store
def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _manifest_digest(manifest: dict) -> str:
    body = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def remove_strays(directory: Path) -> list[Path]:
    """Remove temporary files of killed atomic writes in `directory` (not recursive)."""
    removed = []
    if directory.is_dir():
        for p in directory.iterdir():
            if p.is_file() and TMP_RE.match(p.name):
                p.unlink(missing_ok=True)
                removed.append(p)
    return removed


class CheckpointStore:
    """checkpoint/checkpoint.json (the manifest, the commit point) + checkpoint/state-<seq>.pt (the payload)."""

    def __init__(self, directory: str | Path):
        self.dir = Path(directory)
        self.manifest_path = self.dir / MANIFEST

    def _refuse(self, path: Path, problem: str) -> CheckpointError:
        return CheckpointError(path, problem, self.dir)

    def clean(self) -> list[Path]:
        """Remove stray temporary files and payloads no manifest names (a kill between payload and commit)."""
        removed = remove_strays(self.dir)
        if not self.dir.is_dir():
            return removed
        named = None
        if self.manifest_path.exists():
            try:
                named = json.loads(self.manifest_path.read_text()).get("file")
            except (ValueError, OSError, AttributeError):
                return removed  # a broken manifest: touch nothing, read_manifest refuses it
        for p in self.dir.iterdir():
            if PAYLOAD_RE.match(p.name) and p.name != named:
                p.unlink(missing_ok=True)
                removed.append(p)
        return removed

    def read_manifest(self) -> dict | None:
        if not self.manifest_path.exists():
            legacy = self.dir / "state.pt"
            if legacy.exists():
                raise self._refuse(legacy, "checkpoint without a checksum manifest (written by an older effmarl)")
            return None
        try:
            manifest = json.loads(self.manifest_path.read_text())
        except (ValueError, UnicodeDecodeError) as exc:
            raise self._refuse(self.manifest_path, f"corrupted checkpoint manifest ({exc.__class__.__name__})") \
                from None
        if not isinstance(manifest, dict) or manifest.get("manifest_sha256") != _manifest_digest(manifest):
            raise self._refuse(self.manifest_path, "corrupted checkpoint manifest (its checksum does not match)")
        if manifest.get("format_version") != FORMAT_VERSION:
            raise self._refuse(self.manifest_path, f"checkpoint format version {manifest.get('format_version')!r}, "
                               f"this effmarl reads version {FORMAT_VERSION}")
        return manifest

    def check(self, key: dict, budget_field: str, budget: int) -> dict | None:
        """The manifest of a checkpoint that may be resumed (matching `key`, within `budget`, payload intact),
        or None if there is none; cheap next to building a run, so it runs before anything is built."""
        manifest = self.read_manifest()
        if manifest is None:
            return None
        diff = key_differences(manifest["resume_key"], key)
        if diff:
            raise self._refuse(self.manifest_path, "checkpoint made with a different configuration (fields "
                               f"{', '.join(diff[:6])}{' …' if len(diff) > 6 else ''} differ; only budget, "
                               "threads and profile may change)")
        progress = manifest["progress"]
        if progress > budget:
            raise self._refuse(self.manifest_path, f"checkpoint is at {progress} {manifest['unit']}, past "
                               f"{budget_field} {budget} (a budget of at least {progress} resumes it)")
        payload = self.dir / manifest["file"]
        if not payload.exists():
            raise self._refuse(payload, "checkpoint payload missing")
        if _sha256(payload) != manifest["sha256"]:
            raise self._refuse(payload, "corrupted checkpoint (its sha256 does not match the manifest)")
        return manifest

    def load(self, key: dict, budget_field: str, budget: int) -> tuple[dict, int] | None:
        """(payload, progress) of a verified checkpoint matching `key` within `budget`, or None if none."""
        manifest = self.check(key, budget_field, budget)
        return None if manifest is None else (self.read_payload(manifest), manifest["progress"])

    def read_payload(self, manifest: dict) -> dict:
        """The payload of a manifest `check` has verified, loaded as data only: a file that checks out but does not
        load so (damaged before its manifest was written, crafted with a recomputed manifest, or an older
        effmarl's payload holding other objects) is refused."""
        payload = self.dir / manifest["file"]
        try:
            return safeload.load_torch(payload)
        except safeload.UnreadableFile as exc:
            raise self._refuse(payload, f"unreadable checkpoint ({exc.reason})") from None

    def save(self, state: dict, key: dict, progress: int, unit: str) -> Path:
        import torch

        previous = self.read_manifest()
        seq = (previous["sequence"] + 1) if previous else 0
        payload = self.dir / f"state-{seq:09d}.pt"
        digest: dict[str, str] = {}

        def write(tmp: Path) -> None:
            torch.save(state, tmp)
            digest["sha256"] = _sha256(tmp)

        io.write_with(payload, write)
        manifest = {"format_version": FORMAT_VERSION, "sequence": seq, "file": payload.name,
                    "sha256": digest["sha256"], "bytes": payload.stat().st_size, "progress": int(progress),
                    "unit": unit, "resume_key": key, "git_commit": written_by()}
        manifest["manifest_sha256"] = _manifest_digest(manifest)
        try:
            io.write_json(self.manifest_path, manifest)  # the commit
        except OSError:  # a failed commit (a full disk): the new payload goes, the previous checkpoint stays
            payload.unlink(missing_ok=True)
            raise
        if previous and previous["file"] != payload.name:
            (self.dir / previous["file"]).unlink(missing_ok=True)
        return payload
