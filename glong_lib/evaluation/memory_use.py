"""Does the memory reach the reply? A probe that counts no n-grams (issue 28).

BLEU and ROUGE reward any reply that shares words with the gold one, remembered or not. This probe
asks one narrower question on real MSC data, whose utterances carry gold persona facts
(``persona_text``):

* a scored turn is a **memory turn** when its gold reply *recalls* an earlier session: it says a
  specific word (a stem used in under 0.5% of the data set's utterances: names, places, hobbies,
  not "like" or "good") that a gold persona fact of an earlier session holds and that the current
  session has not said yet (the user's utterance and every turn before it);
* a reply **uses memory** when it says one of the words the gold reply recalled.

The share of memory turns whose reply uses memory is compared between methods, with intervals over
conversations (the turns of one conversation are not independent). A method that never sees the
earlier sessions can still say such a word by chance; the no-history method measures that chance.
The word rules (``specific_stems``, ``recalled_stems``, ``uses_memory``) live in ``glong_lib.text``,
shared with the responder's training; this module counts them over runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from ..datasets.sampling import session_queries
from ..errors import DataError
from ..loaders import load_conversations, load_msc_persona_facts
from ..schema import Conversation
from ..text import SPECIFIC_SHARE, content_stems, recalled_stems, specific_stems, uses_memory  # noqa: F401 (notebook 05)
from .metrics import paired_bootstrap

#: (conversation id, turn id of the user's utterance) -> the stems the gold reply recalled.
MemoryTurns = dict[tuple[str, str], frozenset]


def memory_turns(conversations: Sequence[Conversation], facts: Mapping[str, Mapping[int, Sequence[str]]],
                 max_share: float = SPECIFIC_SHARE, drop_name_only: bool = False) -> MemoryTurns:
    """Every turn of every conversation whose next turn (the gold reply) recalls an earlier session,
    keyed by (conversation id, the turn's id), with the stems it recalls. ``facts`` maps a
    conversation id to its sessions' gold persona facts (:func:`glong_lib.loaders.load_msc_persona_facts`);
    specific stems are counted over every utterance of ``conversations``. ``drop_name_only`` leaves
    out turns that recall only a speaker's name: every prompt's instruction names the user, so such
    a word reaches prompt and reply without any memory."""
    specific = specific_stems((t.text for c in conversations for t in c.turns()), max_share)
    out: MemoryTurns = {}
    for conv in conversations:
        by_session = facts.get(conv.id, {})
        names = {w for s in conv.speakers for w in content_stems(s)} if drop_name_only else set()
        for session in conv.sessions:
            earlier = [f for index, fs in by_session.items() if index < session.index for f in fs]
            if not earlier:
                continue
            turns = session.turns
            for j in range(len(turns) - 1):
                recalled = recalled_stems(turns[j + 1].text, [t.text for t in turns[: j + 1]], earlier, specific)
                if recalled and not (drop_name_only and set(recalled) <= names):
                    out[(conv.id, turns[j].id)] = recalled
    return out


def gold_triple_facts(conversations: Sequence[Conversation]) -> dict[str, dict[int, list[str]]]:
    """A stand-in for MSC's persona facts on data that carries gold triples instead (the shipped
    samples): each gold triple as its words, per conversation and session, for :func:`memory_turns`."""
    return {c.id: {s.index: [" ".join(t.text().replace("_", " ").split()) for u in s.turns for t in u.triples]
                   for s in c.sessions} for c in conversations}


def memory_use(records: Sequence[dict[str, Any]], turns: MemoryTurns, methods: Sequence[str],
               baseline: str = "No history") -> list[dict[str, Any]]:
    """Per method, over the scored replies that answer a memory turn: how many there are, the share
    whose reply uses memory (95% interval over conversations), the share whose memory lines in the
    prompt held a recalled word (None for methods without memory lines), and the difference to
    ``baseline`` paired on the same turns (interval over conversations)."""
    by_method = {m: {(r["conversation"], r["turn_id"]): r for r in records if r["method"] == m
                     and (r["conversation"], r["turn_id"]) in turns} for m in methods}
    base = by_method.get(baseline, {})
    rows = []
    for method in methods:
        rs = by_method[method]
        if not rs:
            continue
        keys = sorted(rs)
        used = [float(uses_memory(rs[k]["reply"], turns[k])) for k in keys]
        groups = [k[0] for k in keys]
        ci = paired_bootstrap(used, [0.0] * len(used), groups=groups)
        shown = [float(uses_memory(" ".join(rs[k]["memories"]), turns[k])) for k in keys]
        row = {"method": method, "memory turns": len(keys), "conversations": len(set(groups)),
               "reply uses memory": sum(used) / len(used), "ci low": ci["ci_low"], "ci high": ci["ci_high"],
               "recalled word in memory lines": (sum(shown) / len(shown)
                                                 if any(rs[k]["memories"] for k in keys) else None)}
        paired = [k for k in keys if k in base]
        if method != baseline and paired:
            d = paired_bootstrap([float(uses_memory(rs[k]["reply"], turns[k])) for k in paired],
                                 [float(uses_memory(base[k]["reply"], turns[k])) for k in paired],
                                 groups=[k[0] for k in paired])
            row.update({f"- {baseline}": d["mean_diff"], "diff ci low": d["ci_low"], "diff ci high": d["ci_high"]})
        rows.append(row)
    return rows


def memory_turn_replies(agents: Mapping[str, Any], conversations: Sequence[Conversation],
                        turns: MemoryTurns) -> list[dict[str, Any]]:
    """Each agent's reply to each memory turn in ``turns`` and nothing else, as records
    :func:`memory_use` reads: the runner's loop (session 1 fills memory, the context is the session's
    gold turns so far, memory is updated after each session) with the other queries skipped."""
    rows = []
    for conv in conversations:
        asked = [s.index for s in conv.sessions if any((conv.id, t.id) in turns for t in s.turns)]
        for name, agent in agents.items():
            if not asked:
                break
            agent.start(conv)
            for i, session in enumerate(s for s in conv.sessions if s.index <= max(asked)):
                for q in session_queries(session, *conv.speakers) if i > 0 else []:
                    if (conv.id, q.query.id) in turns:
                        r = agent.respond(q.query.text, q.context, q.query.time_s)
                        rows.append({"method": name, "conversation": conv.id, "session": session.index,
                                     "turn_id": q.query.id, "reply": r.text, "memories": r.memories,
                                     "prompt_tokens": r.prompt_tokens})
                if session.index < max(asked):
                    agent.observe_session(session, conv)
    return rows


def used_when_shown(records: Sequence[dict[str, Any]], turns: MemoryTurns, method: str) -> tuple[int, int]:
    """(replies that use memory, memory turns whose memory lines held a recalled word) over the
    memory turns of ``method`` where its prompt's memory lines held one: the generator's part of the
    probe alone (did it say the word it was shown?).

    >>> turns = {("c", "1"): frozenset({"boston"}), ("c", "2"): frozenset({"kayak"})}
    >>> recs = [{"method": "G", "conversation": "c", "turn_id": "1", "reply": "Boston!", "memories": ["in Boston"]},
    ...         {"method": "G", "conversation": "c", "turn_id": "2", "reply": "Kayak?", "memories": ["a dog"]}]
    >>> used_when_shown(recs, turns, "G")
    (1, 1)
    """
    shown = [r for r in records if r["method"] == method and (r["conversation"], r["turn_id"]) in turns
             and uses_memory(" ".join(r["memories"]), turns[(r["conversation"], r["turn_id"])])]
    return sum(uses_memory(r["reply"], turns[(r["conversation"], r["turn_id"])]) for r in shown), len(shown)


def memory_turns_in_file(path) -> MemoryTurns | None:
    """:func:`memory_turns` of an MSC JSONL file whose utterances carry gold persona facts (specific
    words counted over every conversation of the file), else None."""
    path = Path(path)
    if path.is_dir() or path.suffix != ".jsonl":
        return None
    try:
        facts = load_msc_persona_facts(path)
    except DataError:
        return None
    if not any(fs for per in facts.values() for fs in per.values()):
        return None
    return memory_turns(load_conversations(path), facts)


def memory_use_in_file(path, records: Sequence[dict[str, Any]], methods: Sequence[str]) -> list[dict[str, Any]] | None:
    """:func:`memory_use` for an evaluation run on ``path`` when it is MSC JSONL whose utterances
    carry gold persona facts, else None. Specific words are counted over every conversation of the
    file, not only the ones scored."""
    turns = memory_turns_in_file(path)
    return None if turns is None else memory_use(records, turns, methods)
