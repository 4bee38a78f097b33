"""LoCoMo, PersonaExt, SAMSum and DialogSum from their public releases, as downloaded, to the files
the project reads (MSC is in :mod:`.msc`). Each reader checks what the project relies on and stops at
the first problem with one line naming the file, the record and the field.

* **LoCoMo** ``locomo10.json`` (snap-research/LoCoMo ``data/``): a list of samples ``{sample_id,
  conversation: {speaker_a, speaker_b, session_N, session_N_date_time}, qa: [{question, answer,
  evidence, category}], ...}``, split by sample id (:data:`.splits.LOCOMO_SPLITS`).
* **PersonaExt** (Cyn7hia/PAED): ``data/ConvAI2/u2t_map_all.json`` (a list of entries
  ``{triplets: [{tokens, head, tail, label}]}``, ``head``/``tail`` token indices), or the zero-shot
  split files ``outputs/data/splits/zero_rte/u2t_map_all/unseen_{5,10,15}_seed_{0..4}/{train,dev,test}.jsonl``
  (one entry a line, same ``triplets``); ``schema.json`` beside them. Each triplet becomes
  ``{utterance: tokens joined by spaces, subject, relation, object}``, duplicates dropped.
* **SAMSum** ``test.json``: a list of ``{id, dialogue, summary}``.
* **DialogSum** ``dialogsum.dev.jsonl`` and ``dialogsum.test.jsonl`` (cylnlp/dialogsum
  ``DialogSum_Data/``): ``{fname, dialogue, summary}`` (test: ``summary1..3``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataError
from ..io import iter_jsonl, read_json
from ..loaders import load_dialogsum, load_locomo, load_personaext_schema, load_samsum
from .splits import LOCOMO_SPLITS

#: Output file of each LoCoMo file, and the splits it holds.
LOCOMO_FILES = {"locomo_dev.json": ("select", "report"), "locomo_test.json": ("test",)}


# --------------------------------------------------------------------------- LoCoMo

def read_locomo(path: Path) -> dict[str, list[dict]]:
    """``{output file name: samples}`` of a ``locomo10.json``. A split is all there or not at all: a
    missing split is left out (a file holding only the development conversations gives only
    ``locomo_dev.json``), a split with some of its samples missing, an unknown or repeated
    ``sample_id`` is a DataError."""
    load_locomo(path)  # every field the readers use, checked with the readers' own messages
    data = read_json(path)
    by_id: dict[str, dict] = {}
    known = {i for ids in LOCOMO_SPLITS.values() for i in ids}
    for r, sample in enumerate(data, start=1):
        sid = sample.get("sample_id")
        if not isinstance(sid, str):
            raise DataError("missing field 'sample_id' (LoCoMo's splits are fixed by it)", path=path,
                            where=f"sample {r}")
        if sid not in known:
            raise DataError(f"field 'sample_id' is {sid!r}, in no split (known: {', '.join(sorted(known))})",
                            path=path, where=f"sample {r}")
        if sid in by_id:
            raise DataError(f"field 'sample_id' {sid!r} appears twice", path=path, where=f"sample {r}")
        by_id[sid] = sample
    out = {}
    for name, splits in LOCOMO_FILES.items():
        ids = [i for s in splits for i in LOCOMO_SPLITS[s]]
        have = [i for i in ids if i in by_id]
        if have and len(have) < len(ids):
            missing = ", ".join(i for i in ids if i not in by_id)
            raise DataError(f"field 'sample_id': {missing} missing ({name} holds the {' and '.join(splits)} "
                            f"split{'s' if len(splits) > 1 else ''}: {', '.join(ids)})", path=path)
        if have:
            out[name] = [by_id[i] for i in ids]
    return out


# --------------------------------------------------------------------------- PersonaExt

def _indices(triplet: dict, key: str, n: int, path: Path, where: str) -> list[int]:
    value = triplet.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(i, int) and not isinstance(i, bool)
                                                           for i in value):
        raise DataError(f"field '{key}' should be a non-empty list of token indices", path=path, where=where)
    if not all(0 <= i < n for i in value):
        raise DataError(f"field '{key}' has an index outside the {n} tokens", path=path, where=where)
    return value


def personaext_pairs(entries: Any, path: Path, label: str = "entry") -> list[dict]:
    """``{utterance, subject, relation, object}`` rows of PAED entries (``{triplets: [...]}``)."""
    rows = []
    for r, entry in entries:
        w = f"{label} {r}"
        triplets = entry.get("triplets") if isinstance(entry, dict) else None
        if not isinstance(triplets, list):
            raise DataError("missing field 'triplets' (a list)", path=path, where=w)
        for k, t in enumerate(triplets, start=1):
            tw = f"{w}, triplet {k}"
            tokens = t.get("tokens") if isinstance(t, dict) else None
            if not isinstance(tokens, list) or not tokens or not all(isinstance(x, str) for x in tokens):
                raise DataError("field 'tokens' should be a non-empty list of strings", path=path, where=tw)
            head, tail = (_indices(t, key, len(tokens), path, tw) for key in ("head", "tail"))
            relation = t.get("label")
            if not isinstance(relation, str) or not relation.strip():
                raise DataError("field 'label' should be the relation name", path=path, where=tw)
            rows.append({"utterance": " ".join(tokens), "subject": " ".join(tokens[i] for i in head),
                         "relation": relation, "object": " ".join(tokens[i] for i in tail)})
    return rows


def personaext_sources(folder: Path) -> tuple[list[Path], Path | None]:
    """The PAED files under ``folder``: ``u2t_map_all.json`` if there is one (the whole data set),
    else every zero-shot split file (``unseen_*_seed_*/{train,dev,test}.jsonl``); and ``schema.json``."""
    folder = Path(folder)
    full = [p for p in (folder / "u2t_map_all.json", folder / "data" / "ConvAI2" / "u2t_map_all.json") if p.is_file()]
    splits = sorted(p for p in folder.rglob("unseen_*_seed_*/*.jsonl") if p.stem in ("train", "dev", "test"))
    schema = next((p for p in (folder / "schema.json", folder / "data" / "ConvAI2" / "schema.json") if p.is_file()),
                  None)
    sources = full[:1] or splits
    if not sources:
        raise DataError("no PersonaExt release here (expected u2t_map_all.json, or the zero-shot split files "
                        "splits/zero_rte/u2t_map_all/unseen_N_seed_S/{train,dev,test}.jsonl)", path=folder)
    return sources, schema


def read_personaext(folder: Path) -> tuple[list[dict], list[Path], Path | None]:
    """PersonaExt pairs (duplicates across files dropped, first seen kept), the files read, and the
    schema file (checked) or None."""
    sources, schema = personaext_sources(folder)
    rows: dict[tuple, dict] = {}
    for path in sources:
        if path.suffix == ".json":
            data = read_json(path)
            entries = list(data.values()) if isinstance(data, dict) else data
            if not isinstance(entries, list):
                raise DataError("expected a list of entries with 'triplets'", path=path)
            found = personaext_pairs(enumerate(entries, start=1), path)
        else:
            found = personaext_pairs(iter_jsonl(path), path, label="line")
        for row in found:
            rows.setdefault(tuple(row.values()), row)
    if schema is not None and not load_personaext_schema(schema):
        raise DataError("field 'relation_types' names no relation", path=schema)
    return list(rows.values()), sources, schema


# --------------------------------------------------------------------------- summaries

def read_samsum(path: Path) -> int:
    """Check SAMSum's ``test.json`` (a list of ``{id, dialogue, summary}``); the number of dialogues."""
    return len(load_samsum(path))


def dialogsum_files(folder: Path) -> dict[str, Path]:
    """``{"dev": path, "test": path}`` of DialogSum's release under ``folder`` (or its
    ``DialogSum_Data/``); a missing one is a DataError naming it."""
    folder = Path(folder)
    root = folder / "DialogSum_Data" if (folder / "DialogSum_Data").is_dir() else folder
    files = {split: root / f"dialogsum.{split}.jsonl" for split in ("dev", "test")}
    for path in files.values():
        if not path.is_file():
            raise DataError("missing: DialogSum's release has dialogsum.dev.jsonl and dialogsum.test.jsonl", path=path)
    return files


def read_dialogsum(path: Path) -> int:
    """Check a DialogSum JSONL file (``fname``, ``dialogue``, ``summary`` or ``summary1``); its size."""
    return len(load_dialogsum(path))
