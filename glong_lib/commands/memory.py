"""``glong build INPUT --out MEMDIR`` (conversation -> graph memory) and ``glong memory MEMDIR``
(its statistics)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

from ..errors import DataError
from ..loaders import load_conversations, load_extraction_rows, row_triples, row_turn_id
from ..memory import LOCK_FILE, GraphMemory, NewerFormat, build_memory, check_target, memory_size
from ..models import LazyEncoder
from ..schema import Conversation, Triple
from .common import add_profile_option, add_stage_options, add_wait_option, print_table, profile_from


def register(sub) -> None:
    b = sub.add_parser("build", help="build a graph memory from a conversation file")
    b.add_argument("input", help="a conversation file (this project's JSON, MSC, LoCoMo, ...)")
    b.add_argument("--out", required=True, type=Path,
                   help="memory folder to write (atomically; other files in it are kept)")
    b.add_argument("--conversation", default=None, help="id of the conversation to use (default: the first)")
    src = b.add_mutually_exclusive_group()
    src.add_argument("--triples", type=Path, default=None,
                     help="a `glong extract`/`glong score` JSONL (one object per turn) instead of running models")
    src.add_argument("--gold", action="store_true",
                     help="use the gold triples in INPUT (weighed by the salience scorer unless --no-salience)")
    add_stage_options(b.add_argument_group("the memory (config.MemorySettings)"), "memory")
    b.add_argument("--scope", default="session", choices=["session", "dialogue"],
                   help="salience normalisation scope when scoring here (default: session, the paper)")
    b.add_argument("--no-salience", action="store_true",
                   help="keep uniform weights (1.0): no salience scorer is loaded")
    b.add_argument("--json", action="store_true", help="print the statistics as JSON")
    b.add_argument("--force", action="store_true",
                   help="replace a non-empty memory in --out even when the new one is empty")
    add_wait_option(b)
    add_profile_option(b, smoke=True, salience=True)
    b.set_defaults(func=run_build)

    m = sub.add_parser("memory", help="print the statistics of a saved graph memory")
    m.add_argument("memdir", type=Path, help="a folder written by `glong build`")
    m.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_wait_option(m)
    m.set_defaults(func=run_memory)


def pick_conversation(path: Path, wanted: Optional[str]) -> Conversation:
    """The conversation called ``wanted`` in ``path``, or the first one (saying so on stderr)."""
    convs = load_conversations(path)
    if wanted is not None:
        for c in convs:
            if c.id == wanted:
                return c
        raise DataError(f"no conversation '{wanted}' (it holds {', '.join(c.id for c in convs[:5])}"
                        f"{', ...' if len(convs) > 5 else ''})", path=path)
    if len(convs) > 1:
        print(f"glong build: {path.name} holds {len(convs)} conversations; using the first, '{convs[0].id}' "
              f"(choose with --conversation)", file=sys.stderr)
    return convs[0]


def read_turn_triples(path: Path, conv: Conversation) -> tuple[list[Triple], int]:
    """Triples from a per-turn JSONL (``loaders.load_extraction_rows``), and how many lines of other
    conversations were skipped; a row's turn id must be one of ``conv``'s turns."""
    turns = conv.turn_by_id()
    session_of = {t.id: s.index for s in conv.sessions for t in s.turns}
    out, other = [], 0
    for n, obj in load_extraction_rows(path):
        if obj.get("conversation") not in (None, conv.id):
            other += 1
            continue
        tid = row_turn_id(obj)
        where = f"line {n}"
        if not isinstance(tid, str) or tid not in turns:
            raise DataError(f"turn id {tid!r} is not in conversation {conv.id}", path=path, where=where)
        speaker, session, text = _turn_fields(obj, turns[tid], session_of[tid], path, where)
        out.extend(row_triples(obj, tid, speaker, session, text))  # types checked by load_extraction_rows
    return out, other


def _turn_fields(obj: dict, turn, session: int, path: Path, where: str) -> tuple[str, int, str]:
    """A line's ``speaker``, ``session`` and ``text``, checked (a wrong type would be saved into the
    memory, which the loader then refuses); each defaults to the conversation's own turn."""
    speaker, text = obj.get("speaker", turn.speaker), obj.get("text", turn.text)
    for key, value in (("speaker", speaker), ("text", text)):
        if not isinstance(value, str):
            raise DataError(f"'{key}' should be text, got {type(value).__name__}", path=path, where=where)
    given = obj.get("session", session)
    if not isinstance(given, int) or isinstance(given, bool):
        raise DataError(f"'session' should be an integer, got {given!r}", path=path, where=where)
    if given != session:
        raise DataError(f"session {given} is not the session of turn {turn.id} ({session})", path=path, where=where)
    return speaker, session, text


def build_triples(conv: Conversation, args) -> list[Triple]:
    """The triples ``glong build`` stores: gold (``--gold``) or the profile's extractor's, weighed by
    Eq. 1-3 unless ``--no-salience`` (``pipeline.weighted_triples``, the step every memory takes)."""
    from ..extraction import load_extractor  # heavy (torch): only when used
    from ..pipeline import weighted_triples
    from ..salience import load_scorer

    profile = profile_from(args)
    mode = "gold" if args.gold else "model"
    if mode == "gold" and not any(t.triples for t in conv.turns()):
        raise DataError("has no gold triples; drop --gold to extract them", path=args.input)
    extractor = load_extractor(profile) if mode == "model" else None
    scorer = None if args.no_salience else load_scorer(profile)
    return weighted_triples(conv, mode, extractor, scorer, scope=args.scope)


def run_build(args) -> int:
    check_target(args.out)  # before any model loads: a bad --out fails in a second
    old = _old_size(args.out, args.force, args.wait)  # so does a damaged, newer or locked memory there
    conv = pick_conversation(Path(args.input), args.conversation)
    skipped = 0
    if args.triples is not None:
        triples, skipped = read_turn_triples(args.triples, conv)
    else:
        triples = build_triples(conv, args)
    # the profile's encoder (loaded on first use); the saved memory records which one it was
    mem = build_memory(conv, triples, encoder=LazyEncoder(profile_from(args)),
                       settings=profile_from(args).memory)
    if old and not mem.edge_ids() and not args.force:
        raise DataError(f"the new memory is empty and would replace one with {old} edges; nothing written "
                        f"(check --triples/--conversation, or pass --force)", path=args.out)
    mem.save(args.out, wait=args.wait)
    if skipped:
        print(f"glong build: skipped {skipped} lines of other conversations in {args.triples.name}", file=sys.stderr)
    stats = {"conversation": conv.id, "saved to": str(args.out), **mem.stats()}
    print_table(stats, as_json=args.json)
    return 0


def _old_size(folder: Path, force: bool, wait: Optional[float] = None) -> Optional[int]:
    """Edges of the memory already in ``folder`` (None: none there). A memory that does not load is
    replaced only with ``--force``: without it, the error says so. A memory of a newer format, or one
    another process holds, is not damaged: that error stands as it is."""
    try:
        return memory_size(folder, wait=wait)
    except NewerFormat:
        raise
    except DataError as e:
        if e.path is not None and Path(e.path).name == LOCK_FILE:
            raise
        if force:
            return None
        raise DataError(f"{e}; to replace this damaged memory, pass --force") from None


def run_memory(args) -> int:
    mem = GraphMemory.load(args.memdir, encoder=_NoEncoder(), wait=args.wait)
    stats = {"memory": str(args.memdir), **mem.stats()}
    if not args.json:
        stats["growth (session: nodes/edges)"] = ", ".join(
            f"{r['session']}: {r['nodes']}/{r['edges']}" for r in mem.growth()) or "-"
    else:
        stats["growth"] = mem.growth()
    print_table(stats, as_json=args.json)
    return 0


class _NoEncoder:
    """Statistics need no vectors: loading MiniLM just to count would cost seconds."""

    def encode(self, *_, **__):  # pragma: no cover - never called by stats()
        raise RuntimeError("this memory was loaded for statistics only")
