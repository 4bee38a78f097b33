"""The MSC responder's evaluation (issue 28's third candidate): the adapter for an evaluation, refused
when it saw one of the conversations to score, the memory ablation on held-out prompts built like
the training ones, and the health of the replies. Training (its examples, the held-out split, the
LoRA run) is ``generation.responder``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from tqdm.auto import tqdm

from ..datasets.sampling import sample_conversations
from ..errors import DataError
from ..generation import ECHO_KINDS, clean_reply, echo_kind
from ..generation.responder import (
    RESPONDER_HELD_OUT_SIZES,
    RESPONDER_KINDS,
    cosine_ranker,
    recalls_memory,
    responder_examples,
    train_responder,
)
from ..io import PathLike
from ..loaders import load_conversations, load_msc_persona_facts
from ..lora import read_training_log
from ..models import load_encoder
from ..schema import Conversation
from ..text import recalled_stems, specific_stems, uses_memory
from .metrics import paired_bootstrap


def check_not_trained_on(adapter_dir: PathLike, conversation_ids: Sequence[str]) -> None:
    """Refuse to score conversations a responder adapter was trained on (one line naming them)."""
    seen = set(read_training_log(adapter_dir).get("train_conversations", []))
    overlap = sorted(seen.intersection(conversation_ids))
    if overlap:
        raise DataError(f"the responder adapter {adapter_dir} was trained on {len(overlap)} of the conversations "
                        f"to score (first: {overlap[0]}); score a sample of {RESPONDER_HELD_OUT_SIZES} at seed 42")


def responder_adapter(msc_path: PathLike, conversations: Sequence[Conversation], kind: str = "msc-lora") -> Path:
    """The MSC responder adapter ``kind`` (a key of ``generation.responder.RESPONDER_KINDS``) for an evaluation of
    ``conversations`` from ``msc_path``: trained (or found in the cache) on that file's training
    pool, refused when it saw one of them."""
    if kind not in RESPONDER_KINDS:
        raise DataError(f"unknown responder {kind!r}: one of {', '.join(RESPONDER_KINDS)}")
    adapter = train_responder(msc_path, recall_share=RESPONDER_KINDS[kind])
    check_not_trained_on(adapter, [c.id for c in conversations])
    return adapter


def held_out_examples(msc_path: PathLike, limit: int, size: int = max(RESPONDER_HELD_OUT_SIZES),
                      seed: int = 42) -> tuple[list[dict], set[str]]:
    """(examples, specific stems): training-style prompts (:func:`responder_examples`, memory lines
    ranked by MiniLM cosine) from the held-out conversations (``eval-msc``'s sample of ``size`` at
    ``seed``, in its order), built until ``limit`` of them recall a memory line
    (:func:`recalls_memory`): the inputs of :func:`memory_ablation`."""
    convs = load_conversations(msc_path)
    facts = load_msc_persona_facts(msc_path)
    specific = specific_stems(t.text for c in convs for t in c.turns())
    rank = cosine_ranker(load_encoder("offline"))
    examples: list[dict] = []
    recalling = 0
    for conv in tqdm(sample_conversations(convs, size, seed=seed), desc="held-out prompts", unit="conversation",
                     leave=False):
        new = responder_examples([conv], facts, rank)
        examples += new
        recalling += sum(recalls_memory(e, specific) for e in new)
        if recalling >= limit:
            break
    return examples, specific


def memory_ablation(generator, examples: Sequence[Mapping[str, Any]], specific: set[str],
                    limit: Optional[int] = None) -> dict[str, Any]:
    """Does a responder say what its memory lines hold? A controlled test on prompts built like the
    training ones (:func:`responder_examples`, gold persona facts as memory lines): over the
    examples whose gold reply recalls a memory line (:func:`recalls_memory`; the first ``limit``),
    the responder replies once to the prompt and once to the same prompt without its memory lines,
    and a reply *uses memory* when it says a word the gold reply recalled
    (:func:`~glong_lib.text.uses_memory`). Everything but the memory block is the
    same, so the difference (95% interval over conversations) is what the memory lines did.

    >>> from glong_lib.generation import MemoryEchoGenerator
    >>> from glong_lib.schema import Session, Turn
    >>> s1 = Session(1, [Turn("1", "U", "I have a dog named Rex."), Turn("2", "A", "Nice.")])
    >>> s2 = Session(2, [Turn("3", "U", "Guess what?"), Turn("4", "A", "Is Rex ok?")])
    >>> exs = responder_examples([Conversation("c", ["U", "A"], [s1, s2])], {"c": {1: ["I have a dog named Rex."]}})
    >>> r = memory_ablation(MemoryEchoGenerator(), exs, {"rex"})   # echoes its top memory line, or "I see."
    >>> r["prompts"], r["with memory"], r["without memory"], r["with memory - without"]
    (1, 1, 0, 1.0)
    """
    recalling = ((e, recalled_stems(e["reply"], e["present"], e["memory"], specific)) for e in examples)
    picked = [(e, recalled) for e, recalled in recalling if recalled][:limit]  # recalls_memory's rule
    used: dict[str, list[float]] = {"with": [], "without": []}
    replies = []
    for e, recalled in tqdm(picked, desc="memory ablation", unit="prompt", leave=False):
        pair = {}
        for arm, messages in (("with", e["messages"]), ("without", e["without memory"])):
            pair[arm] = clean_reply(generator.generate(messages).text, None,
                                    getattr(generator, "first_line_only", True))
            used[arm].append(float(uses_memory(pair[arm], recalled)))
        replies.append({"conversation": e["conversation"], "recalled": sorted(recalled), "memory": e["memory"],
                        "utterance": e["present"][-1], "gold": e["reply"], **pair})
    if not picked:
        raise DataError("no example recalls a memory line: nothing to ablate")
    groups = [e["conversation"] for e, _ in picked]
    diff = paired_bootstrap(used["with"], used["without"], groups=groups)
    return {"prompts": len(picked), "conversations": len(set(groups)),
            "with memory": int(sum(used["with"])), "without memory": int(sum(used["without"])),
            "with memory - without": diff["mean_diff"], "ci low": diff["ci_low"], "ci high": diff["ci_high"],
            "replies": replies}


def reply_health(records: Sequence[Mapping[str, Any]], methods: Sequence[str]) -> list[dict]:
    """Per method: replies that are empty or copy the prompt instead of answering (a tag such as
    ``<MEMORY>``, a header, a memory line, five words of the system line or instruction, five words of
    the user's utterance: :func:`~glong_lib.generation.echo_kind`, one column per kind), and the mean
    length in words: a 135M generator sometimes answers with its prompt.

    >>> rows = [{"method": "m", "reply": "<MEMORY>", "memories": [], "query": "hi"},
    ...         {"method": "m", "reply": "Fine, thanks!", "memories": [], "query": "How are you?"}]
    >>> reply_health(rows, ["m"])[0]["prompt echo"]
    1
    """
    out = []
    for method in methods:
        mine = [r for r in records if r["method"] == method]
        kinds = [echo_kind(r["reply"], r["memories"], r.get("query")) for r in mine]
        out.append({"method": method, "replies": len(mine), "empty": sum(not r["reply"].strip() for r in mine),
                    "prompt echo": sum(k is not None for k in kinds),
                    **{f"echo: {k}": kinds.count(k) for k in ECHO_KINDS},
                    "mean words": round(sum(len(r["reply"].split()) for r in mine) / max(1, len(mine)), 1)})
    return out
