"""The endpoint's reply cache: every answer an endpoint gets is kept on disk (sqlite under
``$GLONG_CACHE/replies``, keyed by model, messages and decoding settings), so a run that is
interrupted and started again asks only what it had not yet been answered.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .errors import DataError
from .models import cache_dir


@dataclass
class Reply:
    """One answer: its text, the server's token counts (None when absent or absurd), the seconds it
    took, and whether it came from the reply cache."""

    text: str
    prompt_tokens: Optional[int]
    completion_tokens: Optional[int]
    seconds: float = 0.0
    cached: bool = False


def request_key(request: dict) -> str:
    """The reply cache's key of a request: its model, messages and decoding settings.

    >>> a = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0}
    >>> request_key(a) == request_key(dict(reversed(list(a.items()))))
    True
    >>> request_key(a) == request_key({**a, "max_tokens": 5})
    False
    """
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class DiskReplyCache:
    """Replies on disk, one sqlite row per request key; every put is its own committed transaction
    (atomic: a run killed mid-write loses at most the reply being written). Safe across threads."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
            self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.commit()
        except sqlite3.Error as e:
            raise DataError(f"the reply cache is damaged or unwritable ({e}): delete it", path=self.path) from None

    def get(self, key: str) -> Optional[Reply]:
        with self._lock:
            try:
                row = self._db.execute("SELECT value FROM replies WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as e:
                raise DataError(f"the reply cache is damaged ({e}): delete it", path=self.path) from None
        if row is None:
            return None
        try:
            d = json.loads(row[0])
            return Reply(str(d["text"]), d.get("prompt_tokens"), d.get("completion_tokens"), 0.0, cached=True)
        except (ValueError, KeyError, TypeError):
            raise DataError("the reply cache holds a damaged row: delete it", path=self.path) from None

    def put(self, key: str, reply: Reply) -> None:
        value = json.dumps({"text": reply.text, "prompt_tokens": reply.prompt_tokens,
                            "completion_tokens": reply.completion_tokens}, ensure_ascii=False)
        with self._lock:
            try:
                with self._db:
                    self._db.execute("INSERT OR REPLACE INTO replies (key, value) VALUES (?, ?)", (key, value))
            except sqlite3.Error as e:
                raise DataError(f"cannot write the reply cache ({e})", path=self.path) from None

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]


def default_cache_path() -> Path:
    """``$GLONG_CACHE/replies/replies.sqlite``."""
    return cache_dir("replies") / "replies.sqlite"
