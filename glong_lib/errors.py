"""The project's error types. ``GLongError`` is the one the ``glong`` command reports as a
one-line message (exit status 2); any other exception is a bug and shows its traceback.

* :class:`DataError`: malformed or unsupported input (a file, a record, an option value);
* :class:`GenerationError`: a generator backend could not produce a reply;
* :class:`WeightsUnavailable`: a profile names model weights that are not on this machine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Union


class GLongError(Exception):
    """Base of the errors a user can fix (bad input, missing file, unreachable endpoint)."""


class DataError(GLongError, ValueError):
    """Malformed or unsupported input. ``str()`` is one line: where, then what is wrong.

    >>> str(DataError("line has no 'text'", path="a.jsonl", where="line 3"))
    "a.jsonl: line 3: line has no 'text'"
    """

    def __init__(self, message: str, path: Union[str, Path, None] = None, where: Optional[str] = None):
        self.path = str(path) if path is not None else None
        self.where = where
        self.message = " ".join(str(message).split())  # one line, whatever the cause said
        parts = [p for p in (self.path, where, self.message) if p]
        super().__init__(": ".join(parts))


class GenerationError(GLongError, RuntimeError):
    """A generator backend could not produce a reply (HTTP error, timeout, malformed answer)."""


class WeightsUnavailable(GLongError, RuntimeError):
    """A profile's model cannot be loaded here: its weights are neither bundled, nor saved under
    ``$GLONG_MODELS_DIR``, nor reachable on the hub (or it is an API model with no weights at all).
    The message says where the weights are needed."""
