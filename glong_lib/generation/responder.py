"""Training a responder: SmolLM2-135M with a LoRA adapter fine-tuned to answer from its memory lines
(issue 28's third candidate). :class:`~glong_lib.generation.LocalChatGenerator` loads the adapter
(``adapter=``).

The bundled 135M chat model was never shown a prompt whose memory block answers the turn, and its
replies show it (they echo the prompt or ignore the memory). :func:`train_responder` builds such
prompts from real MSC conversations, with the gold reply as target:

* **prompt**: the suite's ``plain`` prompt (:func:`~glong_lib.generation.build_prompt`), the current
  session's last :data:`RESPONDER_CONTEXT_LINES` gold turns as context, and as memory the
  :data:`RESPONDER_MEMORY_LINES` gold persona facts of *earlier* sessions (both speakers, the
  ``persona_text`` MSC attaches to an utterance) closest to the user's utterance by MiniLM cosine,
  as a retriever would rank them;
* **target**: the agent's gold reply; the loss is on the reply tokens only (the LoRA machinery it
  shares with the extractor, ``glong_lib.lora``); the adapter lands in the cache under the hash of
  its settings.

The queries are the MSC evaluation's (``datasets.sampling.session_queries``), and a reply *recalls*
a memory line by the memory-use probe's rule (``text.recalled_stems``). The split is by
conversation and fixed here: every conversation that ``glong eval-msc`` scores at its default seed
with ``--conversations`` 20 or 100 (:data:`RESPONDER_HELD_OUT_SIZES`, drawn by
``datasets.sampling.sample_conversations``) is held out, the rest are the training pool;
``evaluation.responder.check_not_trained_on`` refuses an evaluation that would score a conversation
the adapter saw.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from tqdm.auto import tqdm

from ..cache import keyed_path
from ..config import BUNDLED_SMOLLM2, get_profile
from ..datasets.sampling import sample_conversations, session_queries
from ..errors import DataError
from ..io import PathLike, atomic_write_json, content_key, json_digest, sha256_file
from ..loaders import load_conversations, load_msc_persona_facts
from ..lora import (
    TrainSettings,
    answer_only_example,
    check_prompt_prefix,
    load_causal_lm,
    lora_config,
    run_training,
    save_adapter,
    wrap_for_training,
)
from ..models import load_encoder, seed_everything
from ..schema import Conversation
from ..text import recalled_stems, specific_stems, turn_line
from ..vectors import unit_vectors
from .prompt import SYSTEM_TEMPLATE, build_prompt

#: Optimiser steps, batch size and learning rate on 2 CPU cores (about 15 minutes).
RESPONDER_STEPS, RESPONDER_BATCH, RESPONDER_LR = 150, 4, 1e-3
#: Longest training example in tokens (prompt + reply).
RESPONDER_MAX_LENGTH = 256
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


def tokenize_reply_example(tokenizer, messages, reply: str, max_length: int = RESPONDER_MAX_LENGTH) -> dict:
    """Token ids of prompt + reply with ``labels`` -100 on the prompt (loss on the reply and its
    end-of-turn token). A prompt longer than ``max_length`` loses its oldest tokens, so the reply,
    the instruction and the memory block stay."""
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    full = tokenizer.apply_chat_template([*messages, {"role": "assistant", "content": reply}], tokenize=False)
    check_prompt_prefix(prompt, full)
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    reply_ids = tokenizer(full[len(prompt):], add_special_tokens=False)["input_ids"][:max_length // 2]
    prompt_ids = prompt_ids[-(max_length - len(reply_ids)):]
    return answer_only_example(prompt_ids + reply_ids, len(prompt_ids))


def responder_settings(examples: Sequence[Mapping[str, Any]], steps: int = RESPONDER_STEPS, seed: int = 42,
                       learning_rate: float = RESPONDER_LR) -> TrainSettings:
    """The adapter's settings (LoRA shape from the offline extractor); their hash names the cache folder."""
    x = get_profile("offline").extractor
    data = json_digest([[e["messages"], e["reply"]] for e in examples], length=16, sort_keys=False)
    return TrainSettings(base=BUNDLED_SMOLLM2, data=data,
                         max_steps=steps, epochs=1.0, learning_rate=learning_rate, batch_size=RESPONDER_BATCH,
                         lora_r=x.lora_r, lora_alpha=x.lora_alpha, lora_dropout=x.lora_dropout, seed=seed,
                         dev_fraction=0.0, prompt=hashlib.sha256(SYSTEM_TEMPLATE.encode()).hexdigest()[:12])


def responder_dir(settings: TrainSettings) -> Path:
    """The cache folder of the responder adapter these settings produce."""
    return keyed_path("responder", label="offline", digest=settings.key())


def adapter_in_pointer(pointer: Path) -> Optional[Path]:
    """The cached adapter a recipe pointer (``{"adapter": NAME}`` beside it) names, or None when the
    pointer is missing, damaged, names a path outside its folder, or the adapter is gone."""
    if not pointer.is_file():
        return None
    try:
        name = json.loads(pointer.read_text())["adapter"]
    except (ValueError, KeyError, TypeError):
        return None
    found = pointer.parent / name if isinstance(name, str) and Path(name).name == name else None
    return found if found is not None and (found / "adapter_config.json").is_file() else None


def remember_recipe(pointer: Path, adapter: Path) -> None:
    """Write the recipe pointer that names ``adapter`` (see :func:`adapter_in_pointer`)."""
    atomic_write_json(pointer, {"adapter": adapter.name})


def train_responder_adapter(examples: Sequence[Mapping[str, Any]], settings: TrainSettings,
                            log: Optional[Mapping[str, Any]] = None, device: Optional[str] = None,
                            force: bool = False) -> Path:
    """Fine-tune the responder on ``examples`` (``messages`` and the gold ``reply``) for
    ``settings.max_steps`` steps and return the adapter's cache folder (:func:`responder_dir`; an
    adapter already there is reused unless ``force``). ``training.json`` beside it holds the
    settings, the loss history and ``log``. The caller seeds the run (``models.seed_everything``)."""
    from datasets import Dataset

    target = responder_dir(settings)
    if (target / "adapter_config.json").is_file() and not force:
        return target
    tok, model = load_causal_lm(settings.base, settings.quantize_4bit, device, for_training=True)
    config = lora_config(settings.lora_r, settings.lora_alpha, settings.lora_dropout, settings.targets)
    model, trainable, total = wrap_for_training(tok, model, config)
    data = Dataset.from_list([tokenize_reply_example(tok, e["messages"], e["reply"]) for e in examples])
    steps = settings.max_steps
    history, seconds = run_training(model, tok, settings, data, None, steps, steps, device)
    record = {"settings": settings.as_log(), "key": settings.key(), "kind": "msc-responder",
              "examples": len(examples), "steps": steps, **(log or {}),
              "trainable_parameters": trainable, "total_parameters": total, "train_seconds": round(seconds, 1),
              "log_history": history}
    save_adapter(model, tok, record, target, cache=True)
    return target


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
    (:func:`~glong_lib.text.recalled_stems`) applied to the lines in the prompt.

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


def _specific_stems_of(conversations: Sequence[Conversation]) -> set[str]:
    """The specific stems of every utterance of ``conversations``, as ``memory_use.memory_turns`` counts them."""
    return specific_stems(t.text for c in conversations for t in c.turns())
