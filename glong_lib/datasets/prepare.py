"""``glong data prepare``: the public releases, as downloaded, to the layout every benchmark reads.

Every input is optional; whatever is given is read and checked in full first (nothing is written
when any input is bad), then written into ``out`` (absent, empty, or a folder an earlier prepare
wrote: running it again with another input adds to it) with ``manifest.json``: for each data set the
SHA-256 of every source file read, and for each output file its SHA-256, counts and the splits it
holds. ``GLONG_REAL_DATA=out`` then runs every benchmark on it.

Layout (the same as the developers' shared copy, so existing readers work unchanged)::

    msc/msc4_valid.jsonl  msc/msc4_test.jsonl          # split msc-valid, msc-test
    locomo/locomo_dev.json                             # locomo-select + locomo-report
    locomo/locomo_test.json                            # locomo-test
    personaext/personaext_pairs.jsonl  personaext/schema.json
    summaries/samsum_test_819.json  summaries/dialogsum_dev.jsonl  summaries/dialogsum_test.jsonl
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Optional

from ..artifacts import ARTIFACT_MARKER, check_artifact_target, write_artifact_marker
from ..errors import DataError
from ..io import atomic_write_bytes, atomic_write_json, read_json, read_text, save_jsonl, sha256_file
from .msc import MSC_SPLITS, read_msc
from .releases import LOCOMO_FILES, dialogsum_files, read_dialogsum, read_locomo, read_personaext, read_samsum
from .splits import SPLITS

MANIFEST = "manifest.json"
#: The artifact kind written in the output folder's marker.
KIND = "glong-real-data"


def _splits_of(file: str) -> list[str]:
    return [s.name for s in SPLITS.values() if s.file == file]


class _Plan:
    """What one data set will write: output files (bytes, or a producer) with their counts."""

    def __init__(self, name: str, sources: list[Path]):
        self.name, self.sources, self.outputs, self.note = name, sources, {}, ""

    def add(self, file: str, write: Callable[[Path], object], **counts) -> None:
        self.outputs[file] = (write, counts)


def _msc(folder: Path) -> _Plan:
    plans, sources, written = {}, [], 0
    for split in MSC_SPLITS:
        rows, info = read_msc(folder, split)
        sources += info.pop("sources")
        if rows:
            plans[f"msc/msc4_{split}.jsonl"] = (rows, info)
            written += 1
    if not written:
        raise DataError("no conversation with sessions 1-4 in the valid or test files "
                        "(msc_personasummary/session_N/{valid,test}.txt)", path=folder)
    plan = _Plan("msc", sources)
    for file, (rows, info) in plans.items():
        plan.add(file, lambda p, rows=rows: save_jsonl(p, rows), **info)
    return plan


def _locomo(path: Path) -> _Plan:
    plan = _Plan("locomo", [path])
    for name, samples in read_locomo(path).items():
        plan.add(f"locomo/{name}", lambda p, s=samples: atomic_write_json(p, s, indent=None),
                 conversations=len(samples), questions=sum(len(s.get("qa", [])) for s in samples),
                 sample_ids=[s["sample_id"] for s in samples])
    missing = [n for n in LOCOMO_FILES if f"locomo/{n}" not in plan.outputs]
    if missing:
        plan.note = f"not in the input: {', '.join(missing)}"
    return plan


def _personaext(folder: Path) -> _Plan:
    rows, sources, schema = read_personaext(folder)
    plan = _Plan("personaext", sources + ([schema] if schema else []))
    plan.add("personaext/personaext_pairs.jsonl", lambda p: save_jsonl(p, rows), pairs=len(rows),
             utterances=len({r["utterance"] for r in rows}), relations=len({r["relation"] for r in rows}))
    if schema is not None:
        data = schema.read_bytes()
        plan.add("personaext/schema.json", lambda p: atomic_write_bytes(p, data))
    return plan


def _copy(src: Path) -> Callable[[Path], object]:
    data = src.read_bytes()
    return lambda p: atomic_write_bytes(p, data)


def _samsum(path: Path) -> _Plan:
    plan = _Plan("samsum", [path])
    plan.add("summaries/samsum_test_819.json", _copy(path), dialogues=read_samsum(path))
    return plan


def _dialogsum(folder: Path) -> _Plan:
    files = dialogsum_files(folder)
    plan = _Plan("dialogsum", list(files.values()))
    for split, path in files.items():
        plan.add(f"summaries/dialogsum_{split}.jsonl", _copy(path), dialogues=read_dialogsum(path))
    return plan


def _read_manifest(out: Path) -> dict:
    path = out / MANIFEST
    if not path.is_file():
        return {}
    try:
        manifest = json.loads(read_text(path))
    except ValueError:
        raise DataError("not JSON: delete it and run prepare again for every data set", path=path) from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("datasets"), dict):
        raise DataError("field 'datasets' missing: delete it and run prepare again", path=path)
    return manifest


def prepare(out: Path, msc: Optional[Path] = None, locomo: Optional[Path] = None,
            personaext: Optional[Path] = None, samsum: Optional[Path] = None,
            dialogsum: Optional[Path] = None) -> dict:
    """Read and check every input given, then write the layout and ``manifest.json`` into ``out``;
    returns the manifest. Raises DataError (one line: file, record, field) before writing anything
    when an input is bad, and when ``out`` holds files prepare did not write."""
    out = check_artifact_target(out)
    marker = out / ARTIFACT_MARKER
    recorded = read_json(marker) if marker.is_file() else {"kind": KIND}
    if not isinstance(recorded, dict) or recorded.get("kind") != KIND:
        raise DataError("holds another glong artifact (not a prepared data folder); choose a new folder", path=out)
    manifest = _read_manifest(out) if out.is_dir() else {}
    steps = [(msc, _msc), (locomo, _locomo), (personaext, _personaext), (samsum, _samsum), (dialogsum, _dialogsum)]
    if all(src is None for src, _ in steps):
        raise DataError("give at least one of --msc, --locomo, --personaext, --samsum, --dialogsum")
    for src, _ in steps:
        if src is not None and not Path(src).exists():
            raise DataError("no such file or folder", path=src)
    plans = [step(Path(src)) for src, step in steps if src is not None]  # everything read before any write
    datasets = manifest.setdefault("datasets", {})
    for plan in plans:
        entry = {"sources": {str(p): sha256_file(p) for p in plan.sources}, "outputs": {}}
        for file, (write, counts) in plan.outputs.items():
            write(out / file)
            entry["outputs"][file] = {"sha256": sha256_file(out / file), "splits": _splits_of(file), **counts}
        if plan.note:
            entry["note"] = plan.note
        datasets[plan.name] = entry
    manifest.update(format=KIND, version=1)
    atomic_write_json(out / MANIFEST, manifest)
    write_artifact_marker(out, KIND)
    return manifest
