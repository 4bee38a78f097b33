"""The named splits of the real data sets, and where each lies under ``$GLONG_REAL_DATA``.

A benchmark or command asks for a split by name (``locomo-report``, ``msc-valid``), never for a
file: :func:`split_path` finds the file that ``glong data prepare`` writes for it (the same layout
as the developers' shared copy) and, for a LoCoMo split that is part of a file, a copy holding only
its samples. Every number a benchmark prints says the split it comes from.

LoCoMo's ten conversations are split once, here, by sample id (:data:`LOCOMO_SPLITS`): **select**
(conv-26, 30, 41) chooses every setting, **report** (conv-42, 43) gives the numbers to quote, and
**test** (the other five) is kept back: nothing is ever chosen on it. ``locomo-dev`` is select and
report together (the file ``locomo/locomo_dev.json``).

>>> SPLITS["locomo-report"].samples
('conv-42', 'conv-43')
>>> SPLITS["msc-valid"].file
'msc/msc4_valid.jsonl'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..cache import keyed_path
from ..errors import DataError
from ..io import atomic_write_json, read_json, sha256_file

#: Where the real data sets live (``docs/data.md``); read, never copied into the project.
REAL_DATA_ENV = "GLONG_REAL_DATA"

#: LoCoMo's splits by ``sample_id``, fixed here once (the order is the release's).
LOCOMO_SPLITS = {"select": ("conv-26", "conv-30", "conv-41"),
                 "report": ("conv-42", "conv-43"),
                 "test": ("conv-44", "conv-47", "conv-48", "conv-49", "conv-50")}


@dataclass(frozen=True)
class Split:
    """A named split: the file under the real-data folder that holds it, the LoCoMo sample ids it
    keeps of that file (empty: the whole file), and what it is for."""

    name: str
    file: str
    purpose: str
    samples: tuple[str, ...] = ()


def _splits(*items: Split) -> dict[str, Split]:
    return {s.name: s for s in items}


SPLITS = _splits(
    Split("msc-valid", "msc/msc4_valid.jsonl", "MSC valid: sessions 1-4 (and 5 where the release has it)"),
    Split("msc-test", "msc/msc4_test.jsonl", "MSC test: held out"),
    Split("locomo-select", "locomo/locomo_dev.json", "LoCoMo selection: chooses every setting",
          LOCOMO_SPLITS["select"]),
    Split("locomo-report", "locomo/locomo_dev.json", "LoCoMo report: the numbers to quote, nothing chosen on it",
          LOCOMO_SPLITS["report"]),
    Split("locomo-dev", "locomo/locomo_dev.json", "LoCoMo selection + report"),
    Split("locomo-test", "locomo/locomo_test.json", "LoCoMo test: never used to choose anything"),
    Split("personaext", "personaext/personaext_pairs.jsonl", "PersonaExt utterance -> triple pairs"),
    Split("samsum-test", "summaries/samsum_test_819.json", "SAMSum test"),
    Split("dialogsum-dev", "summaries/dialogsum_dev.jsonl", "DialogSum dev"),
    Split("dialogsum-test", "summaries/dialogsum_test.jsonl", "DialogSum test"),
)


def split_names(prefix: str = "") -> list[str]:
    """The split names starting with ``prefix`` (``"locomo"``, ``"msc"``), in the table's order.

    >>> split_names("msc")
    ['msc-valid', 'msc-test']
    """
    return [name for name in SPLITS if name.startswith(prefix)]


def real_data_folder() -> Optional[Path]:
    """``$GLONG_REAL_DATA`` as a path, or None when the variable is unset or empty."""
    folder = os.environ.get(REAL_DATA_ENV)
    return Path(folder) if folder else None


def _split(name: str) -> Split:
    if name not in SPLITS:
        raise DataError(f"unknown split '{name}' (choose from {', '.join(SPLITS)})")
    return SPLITS[name]


def split_file(name: str, folder: Optional[Path] = None) -> Optional[Path]:
    """The file holding split ``name`` under ``folder`` (default ``$GLONG_REAL_DATA``), or None when
    the folder is not set or does not hold it (the caller then skips and says so)."""
    split = _split(name)
    folder = Path(folder) if folder is not None else real_data_folder()
    path = folder / split.file if folder is not None else None
    return path if path is not None and path.is_file() else None


def split_path(name: str, folder: Optional[Path] = None) -> Path:
    """A file holding exactly split ``name``: :func:`split_file` itself, or for a LoCoMo split that is
    part of its file (``locomo-select``, ``locomo-report``) a copy of just its samples, written once
    to the cache (keyed by the source's SHA-256). A missing file is a DataError that says how to
    make it."""
    split = _split(name)
    path = split_file(name, folder)
    if path is None:
        where = f"{folder}/{split.file}" if folder is not None else f"${REAL_DATA_ENV}/{split.file}"
        hint = (f"set {REAL_DATA_ENV} to the folder 'glong data prepare' wrote"
                if folder is None and real_data_folder() is None else "'glong data prepare' writes it")
        raise DataError(f"split '{name}' needs {where} ({hint})")
    if not split.samples:
        return path
    target = keyed_path("splits", sha256_file(path), split.samples, label=name, suffix=".json")
    if not target.is_file():
        atomic_write_json(target, locomo_samples(path, split.samples))
    return target


def locomo_samples(path: Path, ids: tuple[str, ...]) -> list[dict]:
    """The samples of a LoCoMo file with these ``sample_id``\\ s, in the order of ``ids``; a missing
    one is a DataError naming the file and the id."""
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError("LoCoMo file should be a JSON list of samples", path=path)
    by_id = {s.get("sample_id"): s for s in data if isinstance(s, dict)}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise DataError(f"no sample with 'sample_id' {', '.join(missing)}", path=path)
    return [by_id[i] for i in ids]


def describe(name: str) -> dict:
    """What a benchmark records beside its numbers: the split's name, what it is for, its file and
    (LoCoMo) its sample ids.

    >>> describe("locomo-select")["samples"]
    ['conv-26', 'conv-30', 'conv-41']
    """
    split = _split(name)
    samples = list(split.samples or (LOCOMO_SPLITS["select"] + LOCOMO_SPLITS["report"] if name == "locomo-dev"
                                     else LOCOMO_SPLITS["test"] if name == "locomo-test" else ()))
    return {"split": name, "purpose": split.purpose, "file": split.file, **({"samples": samples} if samples else {})}
