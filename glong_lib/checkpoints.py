"""Checkpoints of long runs: an append-only JSON-lines log of finished units (:class:`Checkpoint`),
so a killed run resumes where it stopped (``--checkpoint FILE --resume``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .errors import DataError
from .io import PathLike, read_text


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

    def __init__(self, path: PathLike, settings: dict, resume: bool = False, value_kind: type = object):
        self.path = Path(path)
        self.settings = json.loads(json.dumps(settings, default=str))
        self.value_kind = value_kind
        self.done: dict[str, Any] = {}
        if self.path.is_dir() or (self.path.exists() and not self.path.is_file()):
            raise DataError("is a folder or special file, not a checkpoint file", path=self.path)
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
        except (ValueError, RecursionError, IndexError):  # ValueError: bad JSON, or a 5000-digit number
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
            except (ValueError, RecursionError) as e:  # a number beyond int's digit limit, nesting too deep
                raise DataError(f"corrupt checkpoint ({type(e).__name__}: {str(e)[:60]}); remove the file",
                                path=self.path, where=f"line {n}") from None
            if not isinstance(row, dict) or "key" not in row or not isinstance(row.get("value"), self.value_kind):
                raise DataError("corrupt checkpoint (a line without a finished unit); remove the file",
                                path=self.path, where=f"line {n}")
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
