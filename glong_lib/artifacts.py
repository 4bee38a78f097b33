"""Folders glong builds and hands over whole (a trained adapter, a converted model): where one may be
published, its marker with every file's SHA-256, the check that finds damage on load, and the
rename that puts a finished folder in place."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

from .errors import DataError
from .io import PathLike, atomic_write_json, check_writable, fsync_dir, sha256_file

#: The file that marks a folder as an artifact glong wrote (a trained adapter, a converted model):
#: JSON with the SHA-256 of every file beside it, so damage is found on load (:func:`verify_artifact`).
ARTIFACT_MARKER = ".glong-artifact.json"


def _is_own_artifact(folder: Path) -> bool:
    return (folder / ARTIFACT_MARKER).is_file() and not (folder / ARTIFACT_MARKER).is_symlink()


def check_artifact_target(target: PathLike) -> Path:
    """``target`` as a folder an artifact may be published to: absent, an empty folder, or a folder
    holding only an earlier artifact of ours (its marker says so). Anything else (a file, a symlink,
    a folder of the user's files) is refused: publishing replaces the whole folder. Commands call
    this before any work (training takes minutes)."""
    target = Path(target)
    if target.is_symlink():
        raise DataError("is a symlink; refusing to publish an artifact there", path=target)
    if not target.exists():
        return check_writable(target)
    if not target.is_dir():
        raise DataError("exists and is not a folder; refusing to replace it", path=target)
    if any(target.iterdir()) and not _is_own_artifact(target):
        raise DataError(f"folder holds files glong did not write (no {ARTIFACT_MARKER}); "
                        f"refusing to replace it: choose a new or empty folder", path=target)
    return check_writable(target)  # publishing renames a folder into the parent


def write_artifact_marker(folder: PathLike, kind: str) -> None:
    """Mark ``folder`` as a glong artifact of ``kind`` and record each file's SHA-256."""
    folder = Path(folder)
    files = {p.name: sha256_file(p) for p in sorted(folder.iterdir()) if p.is_file() and p.name != ARTIFACT_MARKER}
    atomic_write_json(folder / ARTIFACT_MARKER, {"kind": kind, "sha256": files})


#: A marker is a few KB (one checksum per file); a bigger one is not ours and is not read.
MAX_MARKER_BYTES = 1 << 20


def verify_artifact(folder: PathLike, what: str) -> None:
    """Refuse a marked artifact whose files changed since it was written ("cached X is damaged:
    delete DIR"). A folder without a marker (written before markers existed) cannot be checked. The
    marker may name only regular files beside it (an adapter may come from anyone: a path, a link or
    a FIFO in it would be opened, or block forever)."""
    folder, marker = Path(folder), Path(folder) / ARTIFACT_MARKER
    if not marker.is_file():
        return
    try:
        if marker.is_symlink() or marker.stat().st_size > MAX_MARKER_BYTES:
            raise ValueError("not a small regular file")
        recorded = json.loads(marker.read_text(encoding="utf-8"))["sha256"]
        unsafe = next((n for n in recorded if not isinstance(n, str) or Path(n).name != n or n in (".", "..")
                       or not _regular_or_missing(folder / n)), None)
        if unsafe is not None:
            raise DataError(f"names {str(unsafe)[:80]!r}, which is not a regular file beside it; refusing to "
                            f"read it (delete {folder})", path=marker)
        bad = next((name for name, digest in recorded.items() if sha256_file(folder / name) != digest), None)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        if isinstance(e, DataError):
            raise
        bad = f"{ARTIFACT_MARKER} ({type(e).__name__})"
    if bad is not None:
        raise DataError(f"cached {what} is damaged ({bad} is missing or changed): delete {folder}")


def _regular_or_missing(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True  # reported as missing by the checksum


def publish_folder(tmp: PathLike, target: PathLike, cache: bool = False) -> Path:
    """Put a finished folder (a trained adapter, a converted model) at ``target``, so a half-written
    artifact never stands there (the caches treat a folder at its key as complete). ``tmp`` must be
    a sibling. An earlier folder at ``target`` is moved aside, the new one renamed in, then the old
    one deleted: only when it is ours (:func:`check_artifact_target`; ``cache``: ``target`` lies
    inside glong's own cache), never a folder the user named that holds their files."""
    tmp, target = Path(tmp), Path(target)
    if not cache:
        check_artifact_target(target)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp made it private; the artifact gets the user's usual mode
    old = None
    if target.is_dir() and not target.is_symlink():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
        os.replace(target, old / target.name)
    os.replace(tmp, target)
    fsync_dir(target.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)  # ours: a folder we created holding what we moved aside
    return target
