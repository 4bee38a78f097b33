"""The data model shared by every stage: turns, sessions, conversations, triples, edges.

Everything downstream (extraction, salience, memory, retrieval, evaluation) speaks these
dataclasses, so a loader for a new data set only has to produce a ``Conversation``.

Time is kept on a *conversation clock*: seconds since the conversation began. Session 1 starts
at 0; each later session starts ``seconds_since_previous`` after the one before. Real data often
does not know that gap (MSC leaves it empty for some sessions), so ``DEFAULT_SESSION_GAP_S``
(one week) stands in, and ``Session.gap_known`` records that it was assumed.

>>> conv = Conversation("demo", ["A", "B"], [
...     Session(1, [Turn("S1:1", "A", "hi")]),
...     Session(2, [Turn("S2:1", "A", "back")], seconds_since_previous=3600),
...     Session(3, [Turn("S3:1", "A", "again")])])
>>> conv.assign_clock()
>>> [s.start_s for s in conv.sessions]  # each session also lasts 30 s per turn
[0.0, 3630.0, 608460.0]
>>> conv.sessions[2].gap_known
False
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional

#: Assumed gap between sessions when the data does not say (one week, in seconds).
DEFAULT_SESSION_GAP_S = 7 * 24 * 3600

#: Seconds between two consecutive turns of one session on the conversation clock.
#: Only used to order turns inside a session; small against any session gap.
TURN_SPACING_S = 30
#: Times on the conversation clock are seconds; anything beyond ~30,000 years is a corrupt clock
#: (a loader refuses such a gap, a memory such a time).
MAX_ABS_TIME_S = 1e12


class _Fact:
    """What a triple and a stored edge share: the (subject, relation, object) words."""

    subject: str
    relation: str
    object: str

    def text(self) -> str:
        """The fact as one line of text: what the encoder embeds and the summarizer reads."""
        return f"{self.subject} {self.relation} {self.object}"


@dataclass
class Triple(_Fact):
    """One (subject, relation, object) fact, optionally with where it came from.

    >>> Triple("Maya", "have_pet", "cat").text()
    'Maya have_pet cat'
    """

    subject: str
    relation: str
    object: str
    speaker: Optional[str] = None
    turn_id: Optional[str] = None
    session: Optional[int] = None
    weight: Optional[float] = None
    source: Optional[str] = None  # the utterance it was extracted from

    def key(self) -> tuple[str, str, str]:
        return (self.subject, self.relation, self.object)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Triple":
        return cls(
            subject=str(d["subject"]),
            relation=str(d["relation"]),
            object=str(d["object"]),
            speaker=d.get("speaker"),
            turn_id=d.get("turn_id"),
            session=d.get("session"),
            weight=d.get("weight"),
            source=d.get("source"),
        )


@dataclass
class Turn:
    """One utterance. ``triples`` holds gold facts where the data has them (else empty)."""

    id: str
    speaker: str
    text: str
    triples: list[Triple] = field(default_factory=list)
    time_s: float = 0.0  # conversation clock, filled by Conversation.assign_clock()


@dataclass
class Session:
    """One sitting of a conversation. ``start_s`` is on the conversation clock."""

    index: int
    turns: list[Turn]
    seconds_since_previous: Optional[float] = None
    date: Optional[str] = None
    start_s: float = 0.0
    gap_known: bool = True


@dataclass
class Conversation:
    """A multi-session conversation between (usually) two speakers."""

    id: str
    speakers: list[str]
    sessions: list[Session]
    personas: dict[str, list[str]] = field(default_factory=dict)
    source: str = ""
    title: str = ""

    def assign_clock(self, default_gap_s: float = DEFAULT_SESSION_GAP_S) -> None:
        """Set ``start_s`` of each session and ``time_s`` of each turn (seconds since start)."""
        clock = 0.0
        for i, session in enumerate(self.sessions):
            if i > 0:
                gap = session.seconds_since_previous
                session.gap_known = gap is not None
                # the previous session's own duration is small next to any gap; add it anyway
                clock += len(self.sessions[i - 1].turns) * TURN_SPACING_S
                clock += float(gap) if gap is not None else float(default_gap_s)
            session.start_s = clock
            for j, turn in enumerate(session.turns):
                turn.time_s = clock + j * TURN_SPACING_S

    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]

    def turn_by_id(self) -> dict[str, Turn]:
        return {t.id: t for t in self.turns()}

    def session_of(self, turn_id: str) -> int:
        for s in self.sessions:
            if any(t.id == turn_id for t in s.turns):
                return s.index
        raise KeyError(turn_id)


@dataclass
class QA:
    """A question about a conversation with the ids of the turns that hold the answer."""

    conversation: str
    question: str
    answer: str
    evidence: list[str]
    category: str
    asked_in_session: Optional[int] = None
    id: str = ""


@dataclass
class TriplePair:
    """An utterance and the triples it states: training data for the extractor."""

    utterance: str
    triples: list[Triple]
    id: str = ""


@dataclass
class SummaryPair:
    """A dialogue and its reference summary (plus gold triples where the data has them)."""

    id: str
    dialogue: str
    summary: str
    triples: list[Triple] = field(default_factory=list)


@dataclass
class MemoryEdge(_Fact):
    """A stored fact: the directed edge subject -> object of the memory graph, with the paper's
    attributes (relation, weight, created, last accessed) plus provenance (session, turn, text)."""

    subject: str
    relation: str
    object: str
    weight: float
    created_s: float
    last_access_s: float
    session: Optional[int] = None
    turn_id: Optional[str] = None
    speaker: Optional[str] = None
    source_text: str = ""
    superseded_s: Optional[float] = None
    date: Optional[str] = None  # when the fact happened ("7 May 2023"; dates.edge_date), if the session is dated

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["date"] is None:
            del d["date"]  # memories from undated sessions save exactly as before the field existed
        return d
