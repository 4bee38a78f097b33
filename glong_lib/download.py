"""Fetch the public copies of the real data sets, for users with internet access.

Never called by the tests or the notebooks' offline default. Each entry names the public home of
a data set and the files this suite reads; ``download(name, dest)`` saves them under ``dest`` with
the layout ``loaders`` expects (the same as ``$GLONG_REAL_DATA``). Licences vary (several are
non-commercial): read them at the source before use.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.request
from pathlib import Path

#: name -> (homepage, licence, {relative path: URL})
SOURCES: dict[str, tuple[str, str, dict[str, str]]] = {
    "locomo": ("https://github.com/snap-research/locomo", "CC BY-NC 4.0", {
        "locomo/locomo10.json": "https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json"}),
    "personaext": ("https://github.com/Cyn7hia/PAED", "see repository", {
        "personaext/u2t_map_all.json": "https://raw.githubusercontent.com/Cyn7hia/PAED/main/data/ConvAI2/u2t_map_all.json",
        "personaext/schema.json": "https://raw.githubusercontent.com/Cyn7hia/PAED/main/data/ConvAI2/schema.json"}),
    "msc": ("https://parl.ai/projects/msc/", "see ParlAI (MIT code; data terms at source)", {
        "msc/msc_v0.1.tar.gz": "http://parl.ai/downloads/msc/msc_v0.1.tar.gz"}),
    "samsum": ("https://huggingface.co/datasets/Samsung/samsum", "CC BY-NC-ND 4.0", {}),
    "dialogsum": ("https://github.com/cylnlp/dialogsum", "CC BY-NC-SA 4.0", {
        "summaries/dialogsum_dev.jsonl": "https://raw.githubusercontent.com/cylnlp/dialogsum/main/DialogSum_Data/dialogsum.dev.jsonl",
        "summaries/dialogsum_test.jsonl": "https://raw.githubusercontent.com/cylnlp/dialogsum/main/DialogSum_Data/dialogsum.test.jsonl"}),
    "longmemeval": ("https://github.com/xiaowu0162/LongMemEval", "MIT", {}),
    "conversation-chronicles": ("https://huggingface.co/datasets/jihyoung/ConversationChronicles", "CC BY 4.0", {}),
}


def download(name: str, dest: str | Path, timeout: float = 60.0) -> list[Path]:
    """Download data set ``name`` into ``dest`` (atomic per file); return the files written.

    Data sets served only through the ``datasets`` hub (SAMSum, LongMemEval, Conversation
    Chronicles) have no direct files here: load those with ``datasets.load_dataset``.
    """
    if name not in SOURCES:
        raise ValueError(f"unknown data set '{name}' (choose from {', '.join(SOURCES)})")
    home, _licence, files = SOURCES[name]
    if not files:
        raise ValueError(f"'{name}' has no direct download; see {home}")
    written = []
    for rel, url in files.items():
        target = Path(dest) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".part")
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response, os.fdopen(fd, "wb") as out:
                shutil.copyfileobj(response, out)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        written.append(target)
    return written
