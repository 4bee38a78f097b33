"""``glong score INPUT --out OUT.jsonl``: add salience weights (Eq. 1-3) to an extraction file.

INPUT is what ``glong extract`` writes: one JSON object per turn with ``conversation``,
``session``, a turn id, ``speaker``, ``text`` and ``triples`` (a list of ``{subject, relation,
object}``). Each session's triples are summarised and weighed together; every triple gains a
``weight``. Rows and keys are otherwise written back unchanged.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import DataError
from ..loaders import load_extraction_rows, row_triples, row_turn_id
from ..schema import Conversation, Session, Triple, Turn
from .common import add_profile_option, profile_from


def register(sub) -> None:
    p = sub.add_parser("score", help="add attention-aware weights (Eq. 1-3) to extracted triples, per session")
    p.add_argument("input", type=Path, help="a JSONL file written by 'glong extract'")
    p.add_argument("--out", type=Path, required=True, help="the JSONL file to write (same rows, triples weighted)")
    p.add_argument("--scope", choices=("session", "dialogue"), default="session",
                   help="Eq. 3 divides by the session maximum (paper) or the dialogue maximum (reference code)")
    add_profile_option(p, smoke=True, salience=True)
    p.set_defaults(func=run)


def read_rows(path: Path) -> list[dict]:
    """Rows of an extraction file (``loaders.load_extraction_rows``), each with a conversation and
    a session, so that triples can be weighed session by session."""
    return [row for _, row in load_extraction_rows(path, need=("conversation", "session"))]


def weigh_rows(rows: list[dict], scorer, scope: str = "session") -> list[dict]:
    """Copies of the rows with a ``weight`` on every triple, each conversation scored on its own."""
    from ..pipeline import weighted_triples

    out = [dict(r, triples=[dict(t) for t in r["triples"]]) for r in rows]
    by_conv: dict[str, list[tuple[dict, Triple]]] = {}
    turns: dict[str, dict[int, list[Turn]]] = {}
    for n, row in enumerate(out, start=1):
        cid, tid = str(row["conversation"]), str(row_turn_id(row, n))
        speaker, text = str(row.get("speaker", "Speaker")), str(row.get("text", ""))
        if text:  # every turn, with or without triples: a source that reads the dialogue needs them all
            turns.setdefault(cid, {}).setdefault(row["session"], []).append(Turn(tid, speaker, text))
        for t, triple in zip(row["triples"], row_triples(row, tid, speaker, row["session"], text or None)):
            by_conv.setdefault(cid, []).append((t, triple))
    for cid, items in by_conv.items():
        sessions = [Session(index, ts) for index, ts in turns.get(cid, {}).items()]
        conv = Conversation(cid, sorted({t.speaker for s in sessions for t in s.turns}), sessions) if sessions else None
        weighted = weighted_triples(conv, scorer=scorer, scope=scope, triples=[tr for _, tr in items])
        for (t, _), w in zip(items, weighted):
            t["weight"] = round(float(w.weight), 4)
    return out


def run(args) -> int:
    from ..io import check_not_input, check_output_file, save_jsonl
    from ..salience import load_scorer

    check_not_input(args.out, args.input)
    check_output_file(args.out)
    rows = read_rows(args.input)
    if not any(r["triples"] for r in rows):
        raise DataError("no triples to score", path=args.input)
    out = weigh_rows(rows, load_scorer(profile_from(args)), scope=args.scope)
    save_jsonl(args.out, out)
    n = sum(len(r["triples"]) for r in out)
    print(f"weighted {n} triples in {len(out)} turns -> {args.out.name}")
    return 0
