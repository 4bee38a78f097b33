"""One error type for bad input, so every caller (CLI, notebooks, tests) can report it in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Union


class DataError(ValueError):
    """Malformed or unsupported input. ``str()`` is one line: where, then what is wrong.

    >>> str(DataError("line has no 'text'", path="a.jsonl", where="line 3"))
    "a.jsonl: line 3: line has no 'text'"
    """

    def __init__(self, message: str, path: Union[str, Path, None] = None, where: Optional[str] = None):
        self.path = str(path) if path is not None else None
        self.where = where
        self.message = message
        parts = [p for p in (self.path, where, message) if p]
        super().__init__(": ".join(parts))
