"""Extracted triples cached on disk, keyed by the conversation's text and the extractor.

Extraction runs at a few utterances per second on a CPU, and several evaluations (LoCoMo retrieval,
the salience measures) read the same conversations many times; the cache makes the second run free.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Optional

from ..cache import keyed_path
from ..errors import DataError
from ..io import atomic_write_json, content_key, sha256_file
from ..schema import Conversation, Triple
from ..text import turn_line
from .inference import extract_conversation


def extraction_cache_path(conv: Conversation, extractor_name: str) -> Path:
    """Where one conversation's extracted triples are cached, keyed by everything that changes them
    (conversation id, its turn texts, the extractor)."""

    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{conv.id}-{extractor_name}")
    return keyed_path("extracted", [turn_line(t) for t in conv.turns()], label=safe, suffix=".json")


def extractor_key(extractor) -> str:
    """What names an extractor in cache keys: everything that changes its answers. An adapter is
    named by its folder and a hash of its weights and config (two folders both called ``adapter``
    are two keys; so is an adapter re-trained in place); a zero-shot extractor by its base model;
    both by the decoding budget and the weights' dtype when that is not float32.

    >>> class Zero:  # what it reads: name, adapter_dir, max_new_tokens, model
    ...     name, adapter_dir, max_new_tokens, model = "zero-shot", None, 64, None
    >>> extractor_key(Zero())
    'zero-shot-64'
    """
    known = getattr(extractor, "_glong_cache_key", None)
    if known is not None:
        return known
    adapter = getattr(extractor, "adapter_dir", None)
    model = getattr(extractor, "model", None)
    if adapter:
        key = f"{Path(adapter).name}-{adapter_fingerprint(Path(adapter))}"
    else:
        key = str(getattr(extractor, "name", "extractor"))
        base = getattr(getattr(model, "config", None), "_name_or_path", "")
        if base:  # a zero-shot SmolLM2 and a zero-shot Qwen answer differently
            key += "-" + content_key([str(base)])[:8]
    budget = getattr(extractor, "max_new_tokens", None)
    if budget is not None:
        key += f"-{int(budget)}"  # a shorter budget cuts triples off
    dtype = str(next(model.parameters()).dtype).replace("torch.", "") if model is not None else "float32"
    key = key if dtype == "float32" else f"{key}-{dtype}"  # a bfloat16 model answers differently
    try:
        extractor._glong_cache_key = key  # the weights are hashed once per extractor
    except AttributeError:
        pass
    return key


def adapter_fingerprint(adapter: Path) -> str:
    """12 hex digits naming an adapter's config and weights files by their SHA-256 (a few MB: milliseconds)."""
    files = ("adapter_config.json", "adapter_model.safetensors", "adapter_model.bin")
    return content_key([(name, sha256_file(adapter / name)) for name in files if (adapter / name).is_file()])


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
