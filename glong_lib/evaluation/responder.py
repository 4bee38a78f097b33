"""The MSC responder's protocol (issue 28's third candidate): the training examples it learns from,
the conversations held out for the evaluation, and the tests of what it learned. The training run
itself is ``generation.responder`` (SmolLM2-135M with a LoRA adapter, on ``glong_lib.lora``).

The bundled 135M chat model was never shown a prompt whose memory block answers the turn, and its
replies show it (they echo the prompt or ignore the memory). This module builds such prompts from
real MSC conversations, with the gold reply as target:

* **prompt**: the suite's ``plain`` prompt (:func:`~glong_lib.generation.build_prompt`), the current
  session's last :data:`RESPONDER_CONTEXT_LINES` gold turns as context, and as memory the
  :data:`RESPONDER_MEMORY_LINES` gold persona facts of *earlier* sessions (both speakers, the
  ``persona_text`` MSC attaches to an utterance) closest to the user's utterance by MiniLM cosine,
  as a retriever would rank them;
* **target**: the agent's gold reply; the loss is on the reply tokens only.

The split is by conversation and fixed here: every conversation that ``glong eval-msc`` scores at
its default seed with ``--conversations`` 20 or 100 (:data:`RESPONDER_HELD_OUT_SIZES`, drawn by
:func:`~glong_lib.evaluation.msc.sample_conversations`) is held out, the rest are the training pool.
:func:`check_not_trained_on` refuses an evaluation that would score a conversation the adapter saw.
The examples are built here because they are the evaluation's queries (``msc.session_queries``) and
its memory-use rule (``memory_use``); the five pipeline stages never import the evaluation.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from tqdm.auto import tqdm

from ..cache import keyed_path
from ..config import get_profile
from ..errors import DataError
from ..generation import ECHO_KINDS, SYSTEM_TEMPLATE, build_prompt, clean_reply, echo_kind
from ..generation.responder import (
    RESPONDER_BATCH,
    RESPONDER_LR,
    RESPONDER_MAX_LENGTH,
    RESPONDER_STEPS,
    adapter_in_pointer,
    remember_recipe,
    responder_settings,
    train_responder_adapter,
)
from ..io import PathLike, content_key, sha256_file
from ..loaders import load_conversations, load_msc_persona_facts
from ..lora import read_training_log
from ..models import load_encoder, seed_everything
from ..schema import Conversation
from ..text import turn_line
from ..vectors import unit_vectors
from .memory_use import recalled_stems, specific_stems, uses_memory
from .metrics import paired_bootstrap
from .msc import sample_conversations, session_queries

#: The evaluation's sample sizes (at seed 42) whose conversations are never trained on.
RESPONDER_HELD_OUT_SIZES = (20, 100)
#: Memory lines per training prompt (the paper's top-3 retrieved memories).
RESPONDER_MEMORY_LINES = 3
#: Context lines per training prompt (the evaluation's queries see 0-5 earlier turns of the session).
RESPONDER_CONTEXT_LINES = 2
#: ``msc-recall``: the share of training examples whose gold reply recalls one of the prompt's memory
#: lines (:func:`recalls_memory`). In MSC's own order about 1 reply in 12 does; the plain adapter
#: sees that rate, too few for a 135M model to learn that a memory line can answer the turn.
RESPONDER_RECALL_SHARE = 0.5
#: Bump when the way training examples are built changes: the recipe pointer (:func:`recipe_key`)
#: then names a new adapter instead of finding the old one.
RESPONDER_RECIPE_VERSION = 1
#: The responders :func:`train_responder` builds, by the name ``glong eval-msc --responder`` takes,
#: and the share of recall examples each trains on (None: MSC's own order, no selection).
RESPONDER_KINDS = {"msc-lora": None, "msc-recall": RESPONDER_RECALL_SHARE}


def responder_examples(conversations: Sequence[Conversation], facts: Mapping[str, Mapping[int, Sequence[str]]],
                       rank=None, memory_lines: int = RESPONDER_MEMORY_LINES,
                       context_lines: int = RESPONDER_CONTEXT_LINES) -> list[dict[str, Any]]:
    """Training examples (``messages``, ``reply``, ``conversation``, ``memory``, ``present``) from
    every query of sessions 2 and later: the plain prompt with the earlier sessions' gold facts as
    memory lines, the gold reply as target. ``rank(utterance, facts) -> facts`` orders the candidate
    facts (default: as said); the first ``memory_lines`` are kept (``memory``). ``present`` is what
    the session has said so far (every turn before the reply, the utterance included); ``without
    memory`` is the same prompt with no memory lines (:func:`memory_ablation`'s control).

    >>> from glong_lib.schema import Session, Turn
    >>> s1 = Session(1, [Turn("1", "U", "I have a cat."), Turn("2", "A", "Nice.")])
    >>> s2 = Session(2, [Turn("3", "U", "Guess what?"), Turn("4", "A", "Is the cat ok?")])
    >>> c = Conversation("c1", ["U", "A"], [s1, s2])
    >>> ex = responder_examples([c], {"c1": {1: ["I have a cat."], 2: []}})
    >>> ex[0]["reply"], ex[0]["messages"][1]["content"].splitlines()[1]
    ('Is the cat ok?', '- I have a cat.')
    """
    out = []
    for conv in conversations:
        user, agent = conv.speakers[0], conv.speakers[1]
        said = facts.get(conv.id, {})
        for session in conv.sessions[1:]:
            earlier = [f for index, fs in sorted(said.items()) if index < session.index for f in fs]
            for q in session_queries(session, user, agent):
                ranked = rank(q.query.text, earlier) if rank is not None and earlier else earlier
                context = [turn_line(t) for t in q.context][-context_lines:] if context_lines else []
                memory = list(ranked[:memory_lines])
                messages = build_prompt(agent, user, context, memory, q.query.text, "plain")
                out.append({"messages": messages, "reply": q.reference.text, "conversation": conv.id,
                            "memory": memory, "present": [t.text for t in q.context] + [q.query.text],
                            "without memory": build_prompt(agent, user, context, [], q.query.text, "plain")})
    return out


def recalls_memory(example: Mapping[str, Any], specific: set[str]) -> bool:
    """Whether an example's gold reply takes a specific word from one of its memory lines that the
    session has not said yet: the memory-use probe's rule
    (:func:`~glong_lib.evaluation.memory_use.recalled_stems`) applied to the lines in the prompt.

    >>> ex = {"reply": "How is Rex?", "memory": ["I have a dog named Rex."], "present": ["Hi!"]}
    >>> recalls_memory(ex, {"rex"}), recalls_memory({**ex, "present": ["Rex is ill."]}, {"rex"})
    (True, False)
    """
    return bool(recalled_stems(example["reply"], example["present"], example["memory"], specific))


def pick_examples(examples: Sequence[dict], n: int, recall_share: Optional[float], specific: set[str],
                  seed: int = 42) -> list[dict]:
    """``n`` training examples: the first ``n`` when ``recall_share`` is None (the order given),
    else ``round(n * recall_share)`` whose reply recalls a memory line (:func:`recalls_memory`) and
    the rest from those that do not, each part in the order given, then shuffled with ``seed``.
    Fewer when ``examples`` runs out of either kind.

    >>> exs = [{"reply": w, "memory": ["rex"], "present": []} for w in ("rex", "hi", "hello", "rex!")]
    >>> [e["reply"] for e in pick_examples(exs, 2, 0.5, {"rex"}, seed=0)]
    ['rex', 'hi']
    """
    if recall_share is None:
        return list(examples[:n])
    want = round(n * recall_share)
    recall = [e for e in examples if recalls_memory(e, specific)][:want]
    other = [e for e in examples if not recalls_memory(e, specific)][: n - want]
    picked = recall + other
    random.Random(seed).shuffle(picked)
    return picked


def cosine_ranker(encoder):
    """``rank(utterance, facts)`` for :func:`responder_examples`: facts by cosine to the utterance
    under ``encoder`` (a sentence-transformers model), most similar first, ties in the order said."""
    def rank(utterance: str, candidates: Sequence[str]) -> list[str]:
        vectors = unit_vectors(encoder, [utterance, *candidates])
        scores = vectors[1:] @ vectors[0]
        order = sorted(range(len(candidates)), key=lambda i: (-float(scores[i]), i))
        return [candidates[i] for i in order]

    return rank


def split_msc_for_responder(conversations: Sequence[Conversation],
                            sizes: Sequence[int] = RESPONDER_HELD_OUT_SIZES, seed: int = 42) -> tuple[list, list]:
    """(held out, training pool): the conversations ``sample_conversations(conversations, n, seed)``
    draws for any ``n`` of ``sizes``, and the rest, both in file order.

    >>> from glong_lib.schema import Conversation
    >>> convs = [Conversation(str(i), ["A", "B"], []) for i in range(10)]
    >>> [[c.id for c in part] for part in split_msc_for_responder(convs, sizes=(3,), seed=1)]
    [['1', '2', '4'], ['0', '3', '5', '6', '7', '8', '9']]
    """
    held = {c.id for n in sizes for c in sample_conversations(conversations, n, seed=seed)}
    return [c for c in conversations if c.id in held], [c for c in conversations if c.id not in held]


def recipe_key(msc_path: PathLike, steps: int, seed: int, learning_rate: float,
               recall_share: Optional[float]) -> str:
    """A key for everything that decides a responder adapter before its examples are built (the MSC
    file's bytes, the options, this module's constants, the prompt template, the encoder): the cache
    keeps a pointer ``recipe-KEY.json`` to the adapter it gave, so finding a trained adapter does not
    rank every training prompt again (several minutes on 2 cores)."""
    profile = get_profile("offline")
    return content_key(sha256_file(msc_path), steps, seed, learning_rate, recall_share, RESPONDER_RECIPE_VERSION,
                       RESPONDER_HELD_OUT_SIZES, RESPONDER_MEMORY_LINES, RESPONDER_CONTEXT_LINES, RESPONDER_BATCH,
                       RESPONDER_MAX_LENGTH, SYSTEM_TEMPLATE, profile.encoder, profile.extractor)


def train_responder(msc_path: PathLike, steps: int = RESPONDER_STEPS, seed: int = 42,
                    learning_rate: float = RESPONDER_LR, force: bool = False, device: Optional[str] = None,
                    recall_share: Optional[float] = None) -> Path:
    """Train (or find in the cache) the MSC responder adapter from the MSC JSONL at ``msc_path``
    and return its folder. Examples come from the training pool only
    (:func:`split_msc_for_responder`), conversations shuffled with ``seed``; ``steps`` x the batch
    size of them are used, a ``recall_share`` of them (when given) replies that recall a memory
    line (:func:`pick_examples`). ``training.json`` beside the adapter lists the training
    conversations and how many examples recall."""
    if not Path(msc_path).is_file():
        raise DataError("no such MSC file to train a responder on", path=msc_path)
    pointer = keyed_path("responder", label="recipe", suffix=".json",
                         digest=recipe_key(msc_path, steps, seed, learning_rate, recall_share))
    found = None if force else adapter_in_pointer(pointer)  # damaged: build the examples, find it by its data
    if found is not None:
        return found
    convs = load_conversations(msc_path)
    _, pool = split_msc_for_responder(convs)
    if not pool:
        raise DataError(f"{msc_path} has {len(convs)} conversations: none left to train a responder on "
                        f"(the evaluation's samples of {RESPONDER_HELD_OUT_SIZES} are held out)")
    seed_everything(seed)
    picked = random.Random(seed).sample(pool, len(pool))
    examples: list[dict] = []
    facts = load_msc_persona_facts(msc_path)
    rank = cosine_ranker(load_encoder("offline"))
    specific = _specific_stems_of(convs)
    n = steps * RESPONDER_BATCH
    want = n if recall_share is None else round(n * recall_share)  # examples that must recall (None: any)
    recalling = 0
    for conv in tqdm(picked, desc="responder prompts", unit="conversation", leave=False):
        new = responder_examples([conv], facts, rank)  # only as many as needed: encoding is the slow part
        examples += new
        if recall_share is None:
            recalling = len(examples)
        else:
            recalling += sum(recalls_memory(e, specific) for e in new)
        if recalling >= want and len(examples) - recalling >= n - want:
            break
    examples = pick_examples(examples, n, recall_share, specific, seed)
    settings = responder_settings(examples, steps, seed, learning_rate)
    log = {"train_conversations": sorted({e["conversation"] for e in examples}), "recall_share": recall_share,
           "recall_examples": sum(recalls_memory(e, specific) for e in examples)}
    target = train_responder_adapter(examples, settings, log, device, force)
    remember_recipe(pointer, target)
    return target


def check_not_trained_on(adapter_dir: PathLike, conversation_ids: Sequence[str]) -> None:
    """Refuse to score conversations a responder adapter was trained on (one line naming them)."""
    seen = set(read_training_log(adapter_dir).get("train_conversations", []))
    overlap = sorted(seen.intersection(conversation_ids))
    if overlap:
        raise DataError(f"the responder adapter {adapter_dir} was trained on {len(overlap)} of the conversations "
                        f"to score (first: {overlap[0]}); score a sample of {RESPONDER_HELD_OUT_SIZES} at seed 42")


def responder_adapter(msc_path: PathLike, conversations: Sequence[Conversation], kind: str = "msc-lora") -> Path:
    """The MSC responder adapter ``kind`` (a key of :data:`RESPONDER_KINDS`) for an evaluation of
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
    specific = _specific_stems_of(convs)
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


def _specific_stems_of(conversations: Sequence[Conversation]) -> set[str]:
    """The specific stems of every utterance of ``conversations``, as ``memory_use.memory_turns`` counts them."""
    return specific_stems(t.text for c in conversations for t in c.turns())


def memory_ablation(generator, examples: Sequence[Mapping[str, Any]], specific: set[str],
                    limit: Optional[int] = None) -> dict[str, Any]:
    """Does a responder say what its memory lines hold? A controlled test on prompts built like the
    training ones (:func:`responder_examples`, gold persona facts as memory lines): over the
    examples whose gold reply recalls a memory line (:func:`recalls_memory`; the first ``limit``),
    the responder replies once to the prompt and once to the same prompt without its memory lines,
    and a reply *uses memory* when it says a word the gold reply recalled
    (:func:`~glong_lib.evaluation.memory_use.uses_memory`). Everything but the memory block is the
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
