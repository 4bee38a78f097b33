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
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator, Union

from .errors import DataError

PathLike = Union[str, Path]


# --------------------------------------------------------------------------- reading

def read_text(path: PathLike) -> str:
    """Read a UTF-8 file, or raise DataError (missing file, not UTF-8, empty)."""
    p = Path(path)
    if not p.is_file():
        raise DataError("no such file" if not p.exists() else "not a file", path=p)
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


def read_json(path: PathLike, lenient: bool = False) -> Any:
    """Parse a JSON file. ``lenient`` repairs the slips of PersonaExt's schema file: ``//``
    comments, trailing commas, and a missing comma between two values on consecutive lines."""
    text = read_text(path)
    if lenient:
        text = re.sub(r'(?m)([,\[\]{}"]|^)([ \t]*)//[^\n]*', r"\1\2", text)
        text = re.sub(r",(\s*[}\]])", r"\1", text)
        text = re.sub(r'(["}\]])(\s*\n\s*)(?=["{\[])', r"\1,\2", text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"invalid JSON ({e.msg})", path=path, where=f"line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise DataError("JSON nested too deeply to read", path=path) from None


def iter_jsonl(path: PathLike) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for each non-blank line; every line must be a JSON object."""
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(f"invalid JSON ({e.msg})", path=path, where=f"line {n}") from None
        except RecursionError:
            raise DataError("JSON nested too deeply to read", path=path, where=f"line {n}") from None
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


def atomic_write_bytes(path: PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically: temporary sibling, fsync, rename, fsync the folder.
    A failure (including a full disk or a missing permission) raises :class:`DataError` naming the
    file and leaves any previous file untouched."""
    path = Path(path)
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


def publish_folder(tmp: PathLike, target: PathLike) -> Path:
    """Put a finished folder (a trained adapter, a converted model) at ``target``: any previous
    folder there is removed, then ``tmp`` renamed in, so a half-written artifact never stands at
    ``target`` (the caches treat a folder at its key as complete). ``tmp`` must be a sibling."""
    import shutil

    tmp, target = Path(tmp), Path(target)
    shutil.rmtree(target, ignore_errors=True)
    os.replace(tmp, target)
    fsync_dir(target.parent)
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


# --------------------------------------------------------------------------- checkpoints

class Checkpoint:
    """An append-only JSON-lines log of finished units of a long run, so a killed run resumes where
    it stopped instead of starting again.

    The first line records the run's settings; each later line is one finished unit
    (``{"key": ..., "value": ...}``), appended, flushed and fsynced. A line cut short by a kill is
    ignored on reading (that unit simply runs again). Resuming with other settings is refused.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> c = Checkpoint(path, {"k": 5})
    >>> c.add("q1", [1, 2]); c.add("q2", [3])
    >>> Checkpoint(path, {"k": 5}, resume=True).done
    {'q1': [1, 2], 'q2': [3]}
    """

    def __init__(self, path: PathLike, settings: dict, resume: bool = False):
        self.path = Path(path)
        self.settings = json.loads(json.dumps(settings, default=str))
        self.done: dict[str, Any] = {}
        if self.path.exists():
            if not resume:
                raise DataError("checkpoint exists: pass --resume to continue that run, or remove the file",
                                path=self.path)
            self._read()
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise DataError(f"cannot create the folder ({e.strerror})", path=self.path) from None
            self._append({"checkpoint": self.settings})

    def _read(self) -> None:
        lines = read_text(self.path).splitlines()
        try:
            header = json.loads(lines[0])
        except (json.JSONDecodeError, IndexError):
            raise DataError("not a glong checkpoint (bad first line)", path=self.path) from None
        if not isinstance(header, dict) or header.get("checkpoint") != self.settings:
            raise DataError(f"checkpoint was written by a run with other settings "
                            f"({header.get('checkpoint') if isinstance(header, dict) else header}); "
                            f"remove it or use the same options", path=self.path)
        for n, line in enumerate(lines[1:], start=2):
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                if n == len(lines):
                    break  # the last line was cut short by a kill: that unit runs again
                raise DataError("corrupt checkpoint", path=self.path, where=f"line {n}") from None
            if not isinstance(row, dict) or "key" not in row:
                raise DataError("corrupt checkpoint", path=self.path, where=f"line {n}")
            self.done[str(row["key"])] = row.get("value")

    def _append(self, obj: dict) -> None:
        try:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(obj, ensure_ascii=False, allow_nan=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            raise DataError(f"cannot write the checkpoint ({e.strerror})", path=self.path) from None

    def add(self, key: str, value: Any) -> None:
        """Record one finished unit."""
        self.done[str(key)] = value
        self._append({"key": str(key), "value": value})
