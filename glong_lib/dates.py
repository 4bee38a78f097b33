"""Relative dates in what people say ("yesterday", "last week", "two months ago"), resolved against
the date-time of the session they were said in, so a fact stored in memory carries when it happened.

A LoCoMo question asks "When did Caroline go to the support group?" and the evidence turn, said on
8 May 2023, reads "I went to a support group yesterday"; the answer is 7 May 2023. The conversation
clock orders facts, but only an absolute date answers the question, so the memory stores one on
each edge (``MemoryEdge.date``): the resolved date when the source sentence has a relative
expression, otherwise the session's day. The wording follows LoCoMo's answers ("7 May 2023",
"the week before 9 June 2023", "May 2023", "2022").

>>> from datetime import datetime
>>> said = datetime(2023, 5, 8, 13, 56)
>>> resolve_date("I went to a support group yesterday!", said)
'7 May 2023'
>>> resolve_date("We moved here two years ago.", said), resolve_date("Nothing dated here.", said)
('2021', None)
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Optional

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMBERS = {"a": 1, "an": 1, "one": 1, "a couple of": 2, "a couple": 2, "couple of": 2, "two": 2, "three": 3,
            "a few": 3, "few": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_COUNT = r"(\d+|a couple of|a couple|couple of|a few|few|an|a|one|two|three|four|five|six|seven|eight|nine|ten)"

_PATTERNS = [  # (regex, kind); the earliest match in the sentence wins
    (r"\bthe day before yesterday\b", "day-2"),
    (r"\b(yesterday|last night)\b", "day-1"),
    (r"\b(today|tonight|this (morning|afternoon|evening))\b", "day+0"),
    (r"\btomorrow\b", "day+1"),
    (rf"\b{_COUNT} (day|week|month|year)s? ago\b", "ago"),
    (r"\b(last|past) (week|weekend)\b", "week-1"),
    (r"\bnext (week|weekend)\b", "week+1"),
    (r"\blast month\b", "month-1"),
    (r"\bnext month\b", "month+1"),
    (r"\blast year\b", "year-1"),
    (r"\bnext year\b", "year+1"),
    (rf"\blast ({'|'.join(_WEEKDAYS)})\b", "weekday-"),
    (rf"\b(this|next|on) ({'|'.join(_WEEKDAYS)})\b", "weekday+"),
]
_COMPILED = [(re.compile(p, re.IGNORECASE), kind) for p, kind in _PATTERNS]


def day_label(d: date) -> str:
    """A day as LoCoMo writes it.

    >>> day_label(date(2023, 5, 7))
    '7 May 2023'
    """
    return f"{d.day} {d:%B %Y}"


def _shift_month(d: date, months: int) -> date:
    total = d.year * 12 + d.month - 1 + months
    return date(total // 12, total % 12 + 1, 1)


def resolve_date(text: str, said: datetime) -> Optional[str]:
    """The absolute date of the first relative date expression in ``text``, said at ``said``;
    None when there is none.

    >>> said = datetime(2023, 6, 9, 10, 0)   # a Friday
    >>> [resolve_date(t, said) for t in ("last week", "three days ago", "last Saturday", "next month")]
    ['the week before 9 June 2023', '6 June 2023', '3 June 2023', 'July 2023']
    >>> [resolve_date(t, said) for t in ("a few weeks ago", "last year", "this Sunday")]
    ['the week of 19 May 2023', '2022', '11 June 2023']
    """
    found = [(m.start(), m, kind) for rx, kind in _COMPILED for m in [rx.search(text or "")] if m]
    if not found:
        return None
    _, m, kind = min(found, key=lambda f: f[0])
    try:
        return _resolve(m, kind, said.date())
    except (OverflowError, ValueError):  # "1000000 days ago": before year 1, not a date to store
        return None


def _resolve(m: re.Match, kind: str, day: date) -> str:
    """The date label of one matched expression ``m`` of ``kind``, said on ``day``."""
    if kind.startswith("day"):
        return day_label(day + timedelta(days=int(kind[3:])))
    if kind == "week-1":
        return f"the week before {day_label(day)}"
    if kind == "week+1":
        return f"the week after {day_label(day)}"
    if kind.startswith("month"):
        return f"{_shift_month(day, int(kind[5:])):%B %Y}"
    if kind.startswith("year"):
        return str(day.year + int(kind[4:]))
    if kind == "ago":
        n = int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1).lower()]
        unit = m.group(2).lower()
        if unit == "day":
            return day_label(day - timedelta(days=n))
        if unit == "week":
            return f"the week of {day_label(day - timedelta(weeks=n))}"
        if unit == "month":
            return f"{_shift_month(day, -n):%B %Y}"
        if not 1 <= day.year - n:
            raise ValueError("before year 1")
        return str(day.year - n)
    target = _WEEKDAYS.index(m.group(m.lastindex).lower())
    if kind == "weekday-":
        back = (day.weekday() - target) % 7 or 7
        return day_label(day - timedelta(days=back))
    ahead = (target - day.weekday()) % 7
    return day_label(day + timedelta(days=ahead))


def edge_date(source: Optional[str], session_date: Optional[str]) -> Optional[str]:
    """What a stored fact records as its date: the resolved relative date of its source sentence,
    else the session's day; None when the session has no date.

    >>> edge_date("I adopted a cat yesterday", "2023-05-08T13:56:00"), edge_date("I like tea", "2024-03-02")
    ('7 May 2023', '2 March 2024')
    >>> edge_date("yesterday", None) is None
    True
    """
    if not session_date or not isinstance(session_date, str):
        return None
    try:
        said = datetime.fromisoformat(session_date)
    except ValueError:
        return None
    return resolve_date(source or "", said) or day_label(said.date())
