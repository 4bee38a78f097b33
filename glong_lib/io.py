"""Files, read and written safely: the one home of file I/O for the library.

* readers that fail with one line naming the file and place (:func:`read_text`, :func:`read_json`,
  :func:`iter_jsonl`);
* atomic writers: a temporary file in the same folder, flushed and fsynced, renamed over the target,
  then the folder fsynced, so a crash leaves the old file or the new one, never a mix
  (:func:`atomic_write_bytes` and the text, JSON and JSON-lines variants);
* content-addressed cache keys (:func:`json_digest`, :func:`content_key`, :func:`sha256_file`;
  ``cache.keyed_path`` makes them cache paths);
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


# --------------------------------------------------------------------------- cache keys

def json_digest(obj: Any, length: int = 12, sort_keys: bool = True, ensure_ascii: bool = False) -> str:
    """The first ``length`` hex digits of the SHA-256 of ``obj``'s JSON (values JSON cannot write as
    ``str``): the hash under every cache key. The defaults are the scheme; ``sort_keys=False`` and
    ``ensure_ascii=True`` re-create the keys the adapters and the summarizer were cached under before
    there was one scheme, so those caches stay valid.

    >>> json_digest({"b": 1, "a": "é"}) == json_digest({"a": "é", "b": 1})
    True
    >>> json_digest(["x"], length=8) == content_key("x", length=8)  # parts are hashed as a JSON list
    True
    """
    blob = json.dumps(obj, sort_keys=sort_keys, default=str, ensure_ascii=ensure_ascii)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:length]


def content_key(*parts: Any, length: int = 12) -> str:
    """A short hex digest of ``parts`` (their JSON, keys sorted: :func:`json_digest`): the cache key
    of an artifact made from them, so a change to any input names a new artifact instead of reusing
    a stale one. ``cache.keyed_path`` turns it into a cache path."""
    return json_digest(parts, length)


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
