"""One way to name a cache entry: ``$GLONG_CACHE/NAMESPACE/LABEL-KEY[SUFFIX]``, where KEY is the
content hash of everything that makes the entry (settings objects, model identity, input text), so
a change to any of them is a new entry, never a stale one.

Who uses it (namespace, what the key hashes):

* ``extracted``: one conversation's triples; label = conversation id + ``extraction.extractor_key``
  (the adapter's weights hash or the zero-shot base, decoding budget, dtype), key = its turn texts;
* ``extractor`` and ``responder``: LoRA adapters; label = profile, key = ``lora.TrainSettings.key()``
  (``responder`` also holds ``recipe-KEY.json`` pointers);
* ``summarizer``: the suite summarizer; label = arch and steps, key = its config, data and code version;
* ``salience``: one scorer reading; key = ``salience.cache.reading_key`` (scorer identity, triples, turns);
* ``splits``: a LoCoMo split's samples; label = split name, key = the file's SHA-256 and the sample ids.

Keys are :func:`~glong_lib.io.json_digest` of the parts; the adapters and the summarizer pass the
options that re-create the keys their caches were written under (see there).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from .io import json_digest
from .models import cache_dir


def keyed_path(namespace: str, *parts: Any, label: str = "", suffix: str = "", digest: Optional[str] = None,
               length: int = 12, sort_keys: bool = True, ensure_ascii: bool = False) -> Path:
    """``cache_dir(namespace) / f"{label}-{key}{suffix}"`` (no dash without a label), with ``key`` the
    :func:`~glong_lib.io.json_digest` of ``parts`` (``io.content_key(*parts)`` with the default
    options), or ``digest`` where the caller already has it (a settings object's ``key()``).
    The namespace folder is created; the entry is not.

    >>> from glong_lib.io import content_key
    >>> from glong_lib.models import cache_root
    >>> p = keyed_path("splits", "file-sha256", ("conv-42",), label="locomo-report", suffix=".json")
    >>> key = content_key("file-sha256", ("conv-42",))
    >>> p.relative_to(cache_root()).as_posix() == f"splits/locomo-report-{key}.json"
    True
    >>> keyed_path("responder", label="offline", digest="b01d686dc74d").name
    'offline-b01d686dc74d'
    """
    key = digest if digest is not None else json_digest(parts, length, sort_keys, ensure_ascii)
    return cache_dir(namespace) / (f"{label}-{key}{suffix}" if label else f"{key}{suffix}")
