"""Extracted triples cached on disk, keyed by the conversation's text and the extractor.

Extraction runs at a few utterances per second on a CPU, and several evaluations (LoCoMo retrieval,
the salience measures) read the same conversations many times; the cache makes the second run free.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Optional

from ..errors import DataError
from ..io import atomic_write_json, content_key
from ..models import cache_dir
from ..schema import Conversation, Triple
from ..text import turn_line
from .inference import extract_conversation


def extraction_cache_path(conv: Conversation, extractor_name: str) -> Path:
    """Where one conversation's extracted triples are cached, keyed by everything that changes them
    (conversation id, its turn texts, the extractor)."""

    digest = content_key([turn_line(t) for t in conv.turns()])
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{conv.id}-{extractor_name}")
    return cache_dir("extracted") / f"{safe}-{digest}.json"


def extractor_key(extractor) -> str:
    """What names an extractor in cache keys: its adapter folder (which is keyed by base model,
    data and steps), else its name; and its weights' dtype when that is not float32."""
    adapter = getattr(extractor, "adapter_dir", None)
    key = Path(adapter).name if adapter else str(getattr(extractor, "name", "extractor"))
    model = getattr(extractor, "model", None)
    dtype = str(next(model.parameters()).dtype).replace("torch.", "") if model is not None else "float32"
    return key if dtype == "float32" else f"{key}-{dtype}"  # a bfloat16 model answers differently


#: Batch size for extracting whole LoCoMo conversations. Measured on 64 LoCoMo turns, 2 cores,
#: offline adapter: 1.41 utterances/s at 8 (the library default), 1.83 at 16, 2.22 at 32; with the
#: prompts' shared start cached (TripleExtractor.shared_prefix) and the 400-step adapter: 3.52 at 16, 3.61 at 32.
LOCOMO_EXTRACTION_BATCH = 32


def extracted_triples(conv: Conversation, extractor, extractor_name: Optional[str] = None,
                      batch_size: int = LOCOMO_EXTRACTION_BATCH) -> list[Triple]:
    """Triples of every turn of ``conv`` from ``extraction.extract_conversation``, cached on disk
    (extraction runs at a few utterances per second on a CPU; a LoCoMo conversation has ~500 turns)."""
    path = extraction_cache_path(conv, extractor_name or extractor_key(extractor))
    if path.is_file():
        try:
            return [Triple.from_dict(d) for d in json.loads(path.read_text(encoding="utf-8"))]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise DataError(f"cached extraction is damaged ({type(e).__name__}): delete {path}") from None
    triples = extract_conversation(conv, extractor, batch_size=batch_size)
    atomic_write_json(path, [t.to_dict() for t in triples], indent=None)  # never a half-written cache
    return triples
