"""What a setting is: a ``knob`` field carries its help, range and choices, and ``Checked`` refuses a
value outside them when the settings object is made; plus the waits every command shares."""

from __future__ import annotations

import math
from dataclasses import field, fields
from typing import Optional

from ..errors import DataError

#: How long a command waits for a lock another glong process holds (a memory folder's
#: ``.glong.lock``, the model cache's conversion lock) before it gives up with one line naming the
#: holder's pid: the one default of ``--wait SECONDS`` (build, query, memory).
LOCK_WAIT_S = 60.0
#: How long a command waits for another process that is building the same cache entry (converting
#: the bundled SmolLM2, training the summarizer): minutes of work, worth waiting for.
CACHE_LOCK_WAIT_S = 1800.0


def knob(default, help: str, low=None, high=None, choices=None, option: Optional[str] = None):
    """A settings field that carries its own help text, range and choices (``dataclasses`` metadata):
    the one source the settings' check and the command line's options are made from.
    ``option`` names the command-line flag when it differs from the field's name; ``MISSING``: no default."""
    return field(default=default, metadata={"help": help, "low": low, "high": high, "choices": choices,
                                            "option": option})


def check_field(owner: str, f, value) -> None:
    """Refuse ``value`` for field ``f`` of ``owner`` (a class name) with one line when it is outside
    the field's range or choices (its ``knob`` metadata).

    >>> from dataclasses import fields
    >>> from glong_lib.config import RetrievalSettings
    >>> hops = {x.name: x for x in fields(RetrievalSettings)}["hops"]
    >>> check_field("RetrievalSettings", hops, 0)
    Traceback (most recent call last):
    glong_lib.errors.DataError: RetrievalSettings.hops should be in [1, 5], got 0
    """
    meta = f.metadata
    if value is None and f.default is None:  # "not set" (a step count, an endpoint's URL)
        return
    if meta.get("choices") is not None and value not in meta["choices"]:
        raise DataError(f"{owner}.{f.name} should be one of {', '.join(map(str, meta['choices']))}, got {value!r}")
    low, high = meta.get("low"), meta.get("high")
    if low is None and high is None:
        return
    for v in (value if isinstance(value, tuple) else (value,)):
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        if not ok or (low is not None and v < low) or (high is not None and v > high):
            span = f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"
            raise DataError(f"{owner}.{f.name} should be in {span}, got {value!r}")


class Checked:
    """Mixin of the settings dataclasses: every ``knob`` field is checked when the object is made."""

    def __post_init__(self):
        for f in fields(self):
            check_field(type(self).__name__, f, getattr(self, f.name))
