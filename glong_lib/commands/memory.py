"""``glong build INPUT --out MEMDIR`` (conversation -> graph memory) and ``glong memory MEMDIR``
(its statistics)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Optional

from ..errors import DataError
from ..loaders import iter_jsonl, load_conversations
from ..memory import POLICIES, GraphMemory, build_memory
from ..schema import Conversation, Triple
from .common import add_profile_option, print_table


def register(sub) -> None:
    b = sub.add_parser("build", help="build a graph memory from a conversation file")
    b.add_argument("input", help="a conversation file (this project's JSON, MSC, LoCoMo, ...)")
    b.add_argument("--out", required=True, type=Path, help="memory folder to write (replaced atomically)")
    b.add_argument("--conversation", default=None, help="id of the conversation to use (default: the first)")
    src = b.add_mutually_exclusive_group()
    src.add_argument("--triples", type=Path, default=None,
                     help="a `glong extract`/`glong score` JSONL (one object per turn) instead of running models")
    src.add_argument("--gold", action="store_true", help="use the gold triples in INPUT with weight 1.0")
    b.add_argument("--policy", default="append", choices=POLICIES, help="changed facts: keep all, or supersede")
    b.add_argument("--scope", default="session", choices=["session", "dialogue"],
                   help="salience normalisation scope when scoring here (default: session, the paper)")
    b.add_argument("--no-salience", action="store_true", help="extract but keep uniform weights (1.0)")
    b.add_argument("--smoke", action="store_true", help="use the smoke (few-step) extractor/summarizer")
    b.add_argument("--json", action="store_true", help="print the statistics as JSON")
    add_profile_option(b)
    b.set_defaults(func=run_build)

    m = sub.add_parser("memory", help="print the statistics of a saved graph memory")
    m.add_argument("memdir", type=Path, help="a folder written by `glong build`")
    m.add_argument("--json", action="store_true", help="print JSON instead of a table")
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


def read_turn_triples(path: Path, conv: Conversation) -> list[Triple]:
    """Triples from a per-turn JSONL (``conversation``, ``session``, ``turn_id``, ``speaker``,
    ``text``, ``triples`` [, ``weights``]); lines of other conversations are skipped (counted)."""
    turns = conv.turn_by_id()
    out, other = [], 0
    for n, obj in iter_jsonl(path):
        where = f"line {n}"
        if obj.get("conversation") not in (None, conv.id):
            other += 1
            continue
        tid = obj.get("turn_id", obj.get("turn", obj.get("id")))
        if tid not in turns:
            raise DataError(f"turn id {tid!r} is not in conversation {conv.id}", path=path, where=where)
        items, weights = obj.get("triples"), obj.get("weights")
        if not isinstance(items, list) or (weights is not None and (
                not isinstance(weights, list) or len(weights) != len(items))):
            raise DataError("'triples' should be a list (and 'weights', if present, one number per triple)",
                            path=path, where=where)
        for k, d in enumerate(items):
            if not isinstance(d, dict) or not all(isinstance(d.get(f), str) for f in ("subject", "relation", "object")):
                raise DataError(f"triple {k + 1} needs string subject, relation and object", path=path, where=where)
            w = weights[k] if weights is not None else d.get("weight")
            if w is not None and not isinstance(w, (int, float)):
                raise DataError(f"triple {k + 1} has a non-numeric weight", path=path, where=where)
            out.append(Triple(d["subject"], d["relation"], d["object"],
                              speaker=obj.get("speaker", turns[tid].speaker), turn_id=tid,
                              session=obj.get("session", conv.session_of(tid)), weight=w,
                              source=obj.get("text", turns[tid].text)))
    if other:
        print(f"glong build: skipped {other} lines of other conversations in {path.name}", file=sys.stderr)
    return out


def _optional(module: str, names: tuple[str, ...]):
    """``glong_lib.<module>`` if it provides ``names``, else None."""
    try:
        mod = importlib.import_module(f"glong_lib.{module}")
    except ImportError:
        return None
    return mod if all(hasattr(mod, n) for n in names) else None


def model_triples(conv: Conversation, profile: str, smoke: bool, scope: str, salience: bool) -> list[Triple]:
    """Extract (and, unless told not to, weight) the triples of ``conv`` with the profile's models."""
    extraction = _optional("extraction", ("load_extractor", "extract_conversation"))
    if extraction is None:
        raise DataError("glong_lib.extraction is not available; pass --triples FILE or --gold")
    triples = extraction.extract_conversation(conv, extraction.load_extractor(profile, smoke=smoke))
    if not salience:
        return triples
    scoring = _optional("salience", ("load_scorer", "score_conversation"))
    if scoring is None:
        raise DataError("glong_lib.salience is not available; pass --no-salience for uniform weights")
    return scoring.score_conversation(triples, scoring.load_scorer(profile, smoke=smoke), scope=scope)


def run_build(args) -> int:
    conv = pick_conversation(Path(args.input), args.conversation)
    if args.gold:
        triples = None
        if not any(t.triples for t in conv.turns()):
            raise DataError("has no gold triples; drop --gold to extract them", path=args.input)
    elif args.triples is not None:
        triples = read_turn_triples(args.triples, conv)
    else:
        triples = model_triples(conv, args.profile, args.smoke, args.scope, not args.no_salience)
    mem = build_memory(conv, triples, policy=args.policy)
    mem.save(args.out)
    stats = {"conversation": conv.id, "saved to": str(args.out), **mem.stats()}
    print_table(stats, as_json=args.json)
    return 0


def run_memory(args) -> int:
    mem = GraphMemory.load(args.memdir, encoder=_NoEncoder())
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
