"""Saving and loading a graph memory so that a memory is never lost.

A memory folder holds the files the memory owns, and nothing else is touched:

* ``memory-<sha>.json``: nodes, edges and counters (everything but the vectors);
* ``entities-<sha>.faiss``: the entity vectors (absent while the memory has no entities);
* ``manifest.json``: the format, and the name, size and SHA-256 of each file above.

A save writes the two data files under new, content-addressed names (each atomically: temporary
file in the same folder, fsync, rename, fsync of the folder), then the manifest, the same way:
renaming the manifest is the one moment the memory changes. A crash before it leaves the old
manifest naming the old files, which are still there; after it, the new memory. Data files that no
manifest names, and temporary files of a killed save, are deleted after the commit (or at the next
save). The folder itself is never removed or renamed, and files of other names in it survive.

One writer at a time, whoever writes: a save holds an exclusive ``fcntl.flock`` on ``.glong.lock``
in the folder from its first file to its cleanup, and a load holds a shared one, so a save never
deletes what another save just committed and a reader never sees a manifest whose files are gone
(a folder without the lock file, saved before locks existed, is read unlocked and retried once).
A lock is waited for ``wait`` seconds at most (``config.LOCK_WAIT_S``). ``query --save-access`` holds
the exclusive lock from load to save (:func:`editing`): a save in between is never silently reverted.
A save first checks the new state with the loader's own checks: a memory that would not load is
never written.

Loading checks the manifest (sizes before reading, then checksums; no symlinks: a memory reads only
its own files), then the memory's invariants (:mod:`.checks`) and refuses a memory that fails
any, naming the first problem.

The first on-disk format (format 1: ``memory.json`` + ``entities.faiss``, no manifest) is no longer
read or written over: such a folder is refused in one line that names its ``memory.json`` and asks
for the memory to be re-built. Files of those names in a current memory folder are the user's.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any, Iterator, Optional

from ..errors import DataError
from ..io import PathLike, atomic_write_bytes, atomic_write_json, fsync_dir, sha256_file
from .checks import (  # noqa: F401  (the field tables, MAX_ABS_TIME_S, check_state: re-exported)
    EDGE_FIELDS,
    MAX_ABS_TIME_S,
    OPTIONAL_EDGE_FIELDS,
    check_index,
    check_loaded,
    check_state,
    checked_state,
    declared_dimension,
)
from .files import LOCK_FILE, index_from, locked, read_own_file

#: Version of the on-disk layout; loading a newer one fails with a request to upgrade.
FORMAT_VERSION = 2
FORMAT_NAME = "glong-memory"
MANIFEST_FILE = "manifest.json"
#: A manifest is a few hundred bytes; a bigger one is not ours and is not read.
MAX_MANIFEST_BYTES = 1 << 20
#: The metadata file of the first layout (format 1, no manifest): recognised only to be refused.
_FORMAT_ONE_FILE = "memory.json"
#: A data file's name: ``memory-`` or ``entities-``, 16 lowercase hex digits of its SHA-256, its suffix.
OWNED_NAME = re.compile(r"^(memory-[0-9a-f]{16}\.json|entities-[0-9a-f]{16}\.faiss)$")
#: Temporary files of an interrupted save (``io.atomic_write_bytes`` names them ``.<name>.<random>.tmp``).
LEFTOVER_NAME = re.compile(r"^\.(memory-[0-9a-f]{16}\.json|entities-[0-9a-f]{16}\.faiss|manifest\.json)\.[^./]+\.tmp$")


# --------------------------------------------------------------------------- saving

def _owned_files(folder: Path) -> list[Path]:
    """The memory's data files and the temporary files a killed save left (under the save's lock)."""
    return [p for p in folder.iterdir() if OWNED_NAME.match(p.name) or LEFTOVER_NAME.match(p.name)]


def _is_memory_folder(folder: Path) -> bool:
    return (folder / MANIFEST_FILE).is_file()


def refuse_format_one(folder: Path) -> None:
    """Refuse, in one line naming its ``memory.json``, a folder that holds a format-1 memory (that
    file and no manifest): this glong neither reads it nor saves over it."""
    path = folder / _FORMAT_ONE_FILE
    if (folder / MANIFEST_FILE).is_file() or (folder / MANIFEST_FILE).is_symlink() or not path.is_file():
        return
    try:
        obj = _read_json_file(path)
    except DataError:
        return  # not ours: the caller's usual checks apply
    if isinstance(obj, dict) and obj.get("format") == FORMAT_NAME and obj.get("format_version") == 1:
        raise DataError("a memory of format 1, which this glong no longer reads: re-build it with "
                        "'glong build ... --out NEW_FOLDER' (or delete this folder and build again)", path=path)


def check_target(directory: PathLike) -> Path:
    """``directory`` as a place a memory may be written: absent, empty, or holding a memory.
    Anything else (a file, a symlink, a folder of other things) is refused with a DataError."""
    folder = Path(directory)
    if folder.is_symlink():
        raise DataError("is a symlink; refusing to write a memory there", path=folder)
    if folder.exists() and not folder.is_dir():
        raise DataError("exists and is not a folder; refusing to write a memory there", path=folder)
    if folder.is_dir():
        refuse_format_one(folder)
    # the lock and the data files of a first save not yet committed (or killed) are ours too
    if (folder.is_dir() and not _is_memory_folder(folder)
            and any(p.name != LOCK_FILE and not OWNED_NAME.match(p.name) and not LEFTOVER_NAME.match(p.name)
                    for p in folder.iterdir())):
        raise DataError("folder holds other files and no glong memory; refusing to write into it", path=folder)
    return folder


class NewerFormat(DataError):
    """A memory written by a newer glong: not damaged, so never replaced (``build --force`` neither)."""


@contextlib.contextmanager
def editing(directory: PathLike, wait: Optional[float] = None) -> Iterator[Path]:
    """Hold the memory's exclusive lock while it is read, changed and saved back (loads and saves
    inside take it again), so no other save falls in between and is lost; the folder must hold a memory."""
    folder = Path(directory)
    if folder.is_symlink() or not folder.is_dir():
        raise DataError("no memory here (not a folder)", path=folder)
    refuse_format_one(folder)
    if not _is_memory_folder(folder):
        raise DataError(f"not a glong memory (no {MANIFEST_FILE})", path=folder)
    with locked(folder, exclusive=True, wait=wait):
        yield folder


def save_memory(state: dict, index, directory: PathLike, wait: Optional[float] = None) -> Path:
    """Write a memory (``GraphMemory.to_json()`` and its faiss index, or None) into ``directory``
    as described in the module docstring. Refuses a folder that holds other files but no memory, and
    a state the loader would refuse (nothing is written then); waits ``wait`` s at most for the lock."""
    folder = check_target(directory)
    try:
        meta = json.dumps(state, ensure_ascii=False, indent=1, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as e:
        raise DataError(f"the new memory cannot be saved as JSON ({e}); nothing written", path=folder) from None
    blob = None
    if index is not None:
        import faiss

        blob = faiss.serialize_index(index).tobytes()
    try:  # what the loader will read back, checked the loader's way before anything is written
        check_loaded(json.loads(meta), index, folder)
    except DataError as e:
        raise DataError(f"the new memory would not load ({e.message}); nothing written", path=folder) from None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DataError(f"cannot create the folder ({e.strerror or type(e).__name__})", path=folder) from None
    with locked(folder, exclusive=True, wait=wait):
        files: dict[str, dict] = {}
        if blob is not None:
            files["index"] = _write_owned(folder, "entities", ".faiss", blob)
        files["meta"] = _write_owned(folder, "memory", ".json", meta)
        manifest = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "files": files}
        if (folder / MANIFEST_FILE).is_symlink():  # a link at our name goes; what it points to stays
            (folder / MANIFEST_FILE).unlink()
        atomic_write_json(folder / MANIFEST_FILE, manifest)  # the commit point
        keep = {f["name"] for f in files.values()}
        for stale in _owned_files(folder):
            if stale.name not in keep and (stale.is_file() or stale.is_symlink()):
                stale.unlink(missing_ok=True)
        fsync_dir(folder)
    return folder


def _write_owned(folder: Path, stem: str, suffix: str, data: bytes) -> dict:
    import hashlib

    digest = hashlib.sha256(data).hexdigest()
    name = f"{stem}-{digest[:16]}{suffix}"
    path = folder / name
    if path.is_symlink() or not path.is_file() or sha256_file(path) != digest:
        if path.is_symlink():
            path.unlink()  # a link at our name is replaced, never written through
        atomic_write_bytes(path, data)
    return {"name": name, "bytes": len(data), "sha256": digest}


# --------------------------------------------------------------------------- loading

def _parse_json(data: bytes, path: Path) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, RecursionError, ValueError) as e:  # ValueError: bad JSON, a 5000-digit int
        first = str(e).splitlines()[0][:100] if str(e) else ""
        raise DataError(f"corrupt or truncated ({type(e).__name__}: {first})", path=path) from None


def _read_json_file(path: Path) -> Any:
    return _parse_json(read_own_file(path, limit=MAX_MANIFEST_BYTES if path.name == MANIFEST_FILE else None), path)


def _check_format(obj: Any, path: Path) -> int:
    if not isinstance(obj, dict) or obj.get("format") != FORMAT_NAME:
        raise DataError(f"not a glong memory file (format is not '{FORMAT_NAME}')", path=path)
    version = obj.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise DataError(f"missing or bad 'format_version' ({version!r})", path=path)
    if version > FORMAT_VERSION:
        raise NewerFormat(f"written by memory format {version}; this glong reads up to format {FORMAT_VERSION}: "
                          f"upgrade glong_lib to use it (the memory is left as it is)", path=path)
    return version


def _verified_bytes(folder: Path, entry: Any, what: str) -> bytes:
    manifest = folder / MANIFEST_FILE
    if not isinstance(entry, dict) or not all(k in entry for k in ("name", "bytes", "sha256")):
        raise DataError(f"manifest entry for the {what} is malformed", path=manifest)
    name, size = entry["name"], entry["bytes"]
    if not isinstance(name, str) or not OWNED_NAME.match(name):
        raise DataError(f"manifest names an unexpected {what} file {name!r}", path=manifest)
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise DataError(f"manifest gives the {what} file a bad size {size!r}", path=manifest)
    path = folder / name
    try:
        data = read_own_file(path, expected=size)
    except DataError as e:
        if e.message.startswith("missing"):
            raise DataError(f"missing {what} file named by the manifest", path=path) from None
        raise
    import hashlib

    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise DataError("corrupt (checksum does not match the manifest)", path=path)
    return data



def _read_unlocked(folder: Path) -> tuple[dict, Optional[Any]]:
    manifest_path = folder / MANIFEST_FILE
    if manifest_path.is_file() or manifest_path.is_symlink():
        manifest = _read_json_file(manifest_path)
        _check_format(manifest, manifest_path)
        files = manifest.get("files")
        if not isinstance(files, dict) or "meta" not in files:
            raise DataError("manifest lists no memory file", path=manifest_path)
        meta_path = folder / str(files["meta"].get("name", "")) if isinstance(files["meta"], dict) else manifest_path
        state = checked_state(_parse_json(_verified_bytes(folder, files["meta"], "memory"), meta_path), meta_path)
        index = None
        if "index" in files:
            index = index_from(_verified_bytes(folder, files["index"], "index"), folder / files["index"]["name"],
                                len(state["nodes"]), declared_dimension(state))
    else:
        refuse_format_one(folder)
        raise DataError(f"not a glong memory (no {MANIFEST_FILE})", path=folder)
    check_index(state, index, meta_path)
    return state, index


def read_memory(directory: PathLike, wait: Optional[float] = None) -> tuple[dict, Optional[Any]]:
    """The checked state and faiss index (or None) of a memory folder written by :func:`save_memory`,
    read under the folder's shared lock. Anything missing, truncated, corrupt, of a newer format or of
    format 1 (:func:`refuse_format_one`), or breaking an invariant raises :class:`DataError` with a
    one-line reason."""
    folder = Path(directory)
    if folder.is_symlink() or not folder.is_dir():
        raise DataError("no memory here (not a folder)", path=folder)
    with locked(folder, exclusive=False, wait=wait) as held:
        try:
            return _read_unlocked(folder)
        except DataError:
            if held:
                raise
    # no lock file (a memory saved before locks): a save may have moved the files; read once more
    return _read_unlocked(folder)


def memory_size(directory: PathLike, wait: Optional[float] = None) -> Optional[int]:
    """How many edges the memory saved in ``directory`` holds, or None where there is none
    (used to refuse replacing a non-empty memory with an empty one)."""
    folder = Path(directory)
    if not folder.is_dir() or not _is_memory_folder(folder):
        return None
    state, _ = read_memory(folder, wait=wait)
    return len(state["edges"])
