"""Conversations from a file of any supported format, or a folder of them: ``detect_format``, then
the format's loader (:data:`CONVERSATION_LOADERS`)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..errors import DataError
from ..io import PathLike
from ..schema import Conversation
from .checks import _unique_ids
from .detect import detect_format
from .locomo import load_locomo
from .msc import load_msc_episodes, load_msc_jsonl, load_msc_parlai
from .paper_data import load_conversation_chronicles, load_ldagent_msc, load_longmemeval
from .project import load_conversation

CONVERSATION_LOADERS: dict[str, Callable] = {
    "glong-conversation": load_conversation,
    "msc-jsonl": load_msc_jsonl,
    "msc-parlai": load_msc_parlai,
    "msc-episodes": load_msc_episodes,
    "locomo": load_locomo,
    "longmemeval": load_longmemeval,
    "cc": load_conversation_chronicles,
    "ldagent-msc": load_ldagent_msc,
}


def load_conversations(path: PathLike) -> list[Conversation]:
    """Load a conversation file of any supported format, or every ``*.json`` in a folder."""
    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("*.json"))
        if not files:
            raise DataError("folder holds no *.json conversation files", path=p)
        convs = [c for f in files for c in load_conversations(f)]
        _unique_ids([c.id for c in convs], p, "conversation id")
        return convs
    fmt = detect_format(p)
    loader = CONVERSATION_LOADERS.get(fmt)
    if loader is None:
        raise DataError(f"a '{fmt}' file holds no conversations", path=p)
    result = loader(p)
    if isinstance(result, tuple):  # LoCoMo returns (conversations, questions)
        result = result[0]
    return result if isinstance(result, list) else [result]
