"""Files, read and written safely: the one home of file I/O for the library.

* readers that fail with one line naming the file and place (:func:`read_text`, :func:`read_json`,
  :func:`iter_jsonl`);
* atomic writers: a temporary file in the same folder, flushed and fsynced, renamed over the target,
  then the folder fsynced, so a crash leaves the old file or the new one, never a mix
  (:func:`atomic_write_bytes` and the text, JSON and JSON-lines variants);
* content-addressed cache keys (:func:`content_key`, :func:`sha256_file`);
* the shipped sample data, found through ``importlib.resources`` (:func:`data_path`), so the
  samples are there after a plain ``pip install`` as well as in a source checkout.

>>> import tempfile, os
>>> folder = tempfile.mkdtemp()
>>> p = atomic_write_json(os.path.join(folder, "x.json"), {"a": 1})
>>> read_json(p), sorted(os.listdir(folder))
({'a': 1}, ['x.json'])
>>> content_key("same", 1) == content_key("same", 1) != content_key("same", 2)
True
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Union

from .errors import DataError

PathLike = Union[str, Path]


# --------------------------------------------------------------------------- reading

def read_text(path: PathLike) -> str:
    """Read a UTF-8 file, or raise DataError (missing file, not UTF-8, empty)."""
    p = Path(path)
    if not p.is_file():
        raise DataError(_missing_reason(p), path=p)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise DataError(f"cannot read ({e.strerror or type(e).__name__})", path=p) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(f"not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})", path=p) from None
    if not text.strip():
        raise DataError("file is empty", path=p)
    return text


def _missing_reason(p: Path) -> str:
    """Why ``p`` is not a readable file, in words (a dangling link or a link loop is not 'no such file')."""
    if p.is_symlink():
        return "a symlink that leads nowhere (dangling, or a loop)"
    return "no such file" if not p.exists() else "not a file"


#: A JSON escape of a lone UTF-16 surrogate (``\ud800``): valid JSON, but not a character, so
#: tokenizers and UTF-8 writers fail on it far from the file. Searched first: the full check is rare.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _loads(text: str, path: PathLike, where: Optional[str] = None) -> Any:
    """``json.loads`` with every failure as one DataError naming the file (and line): bad JSON, too
    deep, an integer beyond Python's digit limit, a lone surrogate in a string."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"invalid JSON ({e.msg})", path=path,
                        where=where or f"line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise DataError("JSON nested too deeply to read", path=path, where=where) from None
    except ValueError as e:  # int() digit limit: a 5000-digit number
        raise DataError(f"a number too large to read ({str(e).split(';')[0]})", path=path, where=where) from None
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise DataError("text holds a lone UTF-16 surrogate escape (like \\ud800), which is not a character",
                            path=path, where=where) from None
    return obj


def read_json(path: PathLike, lenient: bool = False) -> Any:
    """Parse a JSON file. ``lenient`` repairs the slips of PersonaExt's schema file: ``//``
    comments, trailing commas, and a missing comma between two values on consecutive lines."""
    text = read_text(path)
    if lenient:
        text = re.sub(r'(?m)([,\[\]{}"]|^)([ \t]*)//[^\n]*', r"\1\2", text)
        text = re.sub(r",(\s*[}\]])", r"\1", text)
        text = re.sub(r'(["}\]])(\s*\n\s*)(?=["{\[])', r"\1,\2", text)
    return _loads(text, path)


def iter_jsonl(path: PathLike) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for each non-blank line; every line must be a JSON object."""
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        obj = _loads(line, path, where=f"line {n}")
        if not isinstance(obj, dict):
            raise DataError(f"expected a JSON object, got {type(obj).__name__}", path=path, where=f"line {n}")
        yield n, obj


# --------------------------------------------------------------------------- atomic writing

def fsync_dir(folder: PathLike) -> None:
    """Make a rename inside ``folder`` durable (POSIX; a no-op where folders cannot be opened)."""
    try:
        fd = os.open(str(folder), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _kind_of(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket or other special file"


def check_output_file(path: PathLike, probe: bool = True) -> Path:
    """``path`` as a file an output may be written to (replaced atomically): absent, or a regular
    file. A symlink, folder, device or FIFO is refused: the atomic rename would replace it (as root,
    ``--out /dev/null`` would replace the system's). Commands call this before any work; with
    ``probe``, a file is created and removed beside it (:func:`check_writable`), so a read-only
    folder is found before the work, not after it.

    >>> import tempfile, os
    >>> check_output_file(os.path.join(tempfile.mkdtemp(), "new.json")).name
    'new.json'
    >>> check_output_file(tempfile.mkdtemp())
    Traceback (most recent call last):
    glong_lib.errors.DataError: ...: is a folder, not a file; refusing to replace it
    """
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise DataError(f"cannot check it ({e.strerror or type(e).__name__})", path=path) from None
    if mode is not None and not stat.S_ISREG(mode):
        raise DataError(f"is {_kind_of(mode)}, not a file; refusing to replace it", path=path)
    return check_writable(path) if probe else path


def check_writable(path: PathLike) -> Path:
    """``path`` after creating and removing a temporary file in the nearest existing folder above it
    (what an atomic write or a publish will need): a read-only or immutable folder, or a file in
    the way, is one line before the work instead of a lost result after it."""
    path = Path(path)
    parent = next(p for p in (path.parent.absolute(), *path.parent.absolute().parents) if os.path.lexists(p))
    try:
        if not parent.is_dir():
            raise NotADirectoryError(20, f"{parent} is not a folder")
        fd, tmp = tempfile.mkstemp(prefix=".glong-probe.", suffix=".tmp", dir=parent)
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise DataError(f"cannot write here ({e.strerror or type(e).__name__})", path=path) from None
    return path


def check_not_input(out: PathLike, *inputs: Optional[PathLike]) -> None:
    """Refuse an output that is one of the command's inputs (the same file by any name): writing
    it would replace what the command reads, before anything else is checked.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "conv.json"); _ = open(p, "w").write("{}")
    >>> check_not_input(os.path.join(os.path.dirname(p), ".", "conv.json"), p)
    Traceback (most recent call last):
    glong_lib.errors.DataError: ...: is also the command's input; writing it would destroy the input: ...
    """
    for given in inputs:
        if given is not None and os.path.exists(out) and os.path.exists(given) and os.path.samefile(out, given):
            raise DataError("is also the command's input; writing it would destroy the input: choose another --out",
                            path=out)


def atomic_write_bytes(path: PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically: temporary sibling, fsync, rename, fsync the folder.
    A failure (including a full disk or a missing permission) raises :class:`DataError` naming the
    file and leaves any previous file untouched; so does a target that is not a regular file
    (:func:`check_output_file`)."""
    path = check_output_file(path, probe=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise DataError(f"cannot write here ({e.strerror or type(e).__name__})", path=path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise DataError(f"cannot write ({e.strerror or type(e).__name__})", path=path) from None
        raise
    fsync_dir(path.parent)
    return path


def atomic_write_text(path: PathLike, text: str) -> Path:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: PathLike, obj: Any, indent: Union[int, None] = 1) -> Path:
    """:func:`atomic_write_bytes` for JSON (NaN and infinity refused: they are not JSON)."""
    try:
        text = json.dumps(obj, ensure_ascii=False, indent=indent, allow_nan=False)
    except ValueError as e:
        raise DataError(f"cannot write it as JSON ({e})", path=path) from None
    return atomic_write_text(path, text + "\n")


def save_jsonl(path: PathLike, rows: Iterable[dict]) -> Path:
    """Write JSON lines atomically (one object per line)."""
    try:
        text = "".join(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n" for row in rows)
    except ValueError as e:
        raise DataError(f"cannot write it as JSON ({e})", path=path) from None
    return atomic_write_text(path, text)


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


# --------------------------------------------------------------------------- cache keys

def content_key(*parts: Any, length: int = 12) -> str:
    """A short hex digest of ``parts`` (their JSON, keys sorted): the cache key of an artifact
    made from them, so a change to any input names a new artifact instead of reusing a stale one."""
    blob = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:length]


def sha256_file(path: PathLike) -> str:
    """The SHA-256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# --------------------------------------------------------------------------- shipped data

def data_dir() -> Path:
    """The shipped samples: ``glong_lib/data`` inside an installed wheel (``importlib.resources``),
    or the checkout's top-level ``data/`` in an editable install."""
    shipped = importlib.resources.files("glong_lib") / "data"
    if shipped.is_dir():
        return Path(str(shipped))
    return Path(__file__).resolve().parent.parent / "data"


def data_path(*parts: str) -> Path:
    """A shipped sample file, e.g. ``data_path("probes.jsonl")``; a missing one is a DataError.

    >>> data_path("probes.jsonl").name
    'probes.jsonl'
    """
    path = data_dir().joinpath(*parts)
    if not path.exists():
        raise DataError("shipped sample not found (is the package installed with its data?)", path=path)
    return path
