"""``glong inspect``: detect a data file's format and describe it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from .io import PathLike
from .loaders import (
    CONVERSATION_LOADERS,
    detect_format,
    load_conversations,
    load_extraction_rows,
    load_locomo,
    load_personaext_schema,
    load_probes,
    load_summary_pairs,
    load_triple_pairs,
)
from .schema import Conversation

# --------------------------------------------------------------------------- detection and stats

def _conversation_stats(convs: list[Conversation]) -> dict[str, Any]:
    turns = [t for c in convs for t in c.turns()]
    sessions = [s for c in convs for s in c.sessions]
    stats: dict[str, Any] = {
        "conversations": len(convs),
        "sessions": len(sessions),
        "turns": len(turns),
        "turns per session (mean)": round(len(turns) / max(1, len(sessions)), 1),
        "sessions with unknown gap": sum(1 for c in convs for s in c.sessions[1:] if not s.gap_known),
    }
    gold = [tr for t in turns for tr in t.triples]
    if gold:
        stats["gold triples"] = len(gold)
        stats["turns with triples"] = sum(1 for t in turns if t.triples)
        stats["relations"] = len({tr.relation for tr in gold})
    return stats


def inspect_file(path: PathLike) -> dict[str, Any]:
    """Detect, load and summarise any supported file. Returns a flat dict of statistics."""
    p = Path(path)
    fmt = detect_format(p)
    stats: dict[str, Any] = {"file": p.name, "format": fmt}
    if fmt == "locomo":
        convs, qas = load_locomo(p)
        stats.update(_conversation_stats(convs))
        stats["questions"] = len(qas)
        for name, count in sorted(Counter(q.category for q in qas).items()):
            stats[f"questions: {name}"] = count
    elif fmt in CONVERSATION_LOADERS:
        stats.update(_conversation_stats(load_conversations(p)))
    elif fmt == "glong-probes":
        probes = load_probes(p)
        stats["probes"] = len(probes)
        stats["conversations"] = len({q.conversation for q in probes})
        for name, count in sorted(Counter(q.category for q in probes).items()):
            stats[f"probes: {name}"] = count
    elif fmt in ("personaext-pairs", "personaext-u2t", "glong-triple-pairs"):
        pairs = load_triple_pairs(p)
        triples = [t for pr in pairs for t in pr.triples]
        stats.update({"pairs (utterances)": len(pairs), "triples": len(triples),
                      "utterances with no triple": sum(1 for pr in pairs if not pr.triples),
                      "relations": len({t.relation for t in triples})})
        for rel, count in Counter(t.relation for t in triples).most_common(5):
            stats[f"top relation: {rel}"] = count
    elif fmt == "glong-extraction":
        rows = [row for _, row in load_extraction_rows(p)]
        stats.update({"turns": len(rows), "conversations": len({r.get("conversation") for r in rows}),
                      "triples": sum(len(r["triples"]) for r in rows),
                      "weighted": any("weights" in r or any("weight" in t for t in r["triples"]) for r in rows)})
    elif fmt == "personaext-schema":
        stats["relations"] = len(load_personaext_schema(p))
    elif fmt in ("samsum", "dialogsum", "glong-summaries"):
        pairs = load_summary_pairs(p)
        stats["pairs"] = len(pairs)
        stats["dialogue lines (mean)"] = round(sum(d.dialogue.count("\n") + 1 for d in pairs) / len(pairs), 1)
        stats["summary words (mean)"] = round(sum(len(d.summary.split()) for d in pairs) / len(pairs), 1)
        if any(d.triples for d in pairs):
            stats["gold triples"] = sum(len(d.triples) for d in pairs)
    return stats
