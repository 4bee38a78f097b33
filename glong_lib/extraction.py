"""Triple extraction: utterance -> (subject, relation, object) triples with a LoRA-tuned small LM.

The paper's extractor (PAPER.md section 3.2 and Appendix B) is an instruction-tuned small LM
that answers every utterance with a JSON list of triples. This module holds the whole stage:

* the prompt and the JSON target (``build_messages``, ``format_target``);
* a tolerant parser for the broken JSON small models emit (``parse_output``/``parse_triples``);
* first-person resolution ("i", "my dog" -> the speaker, "Leo's dog") (``resolve_subject``);
* fine-tuning with transformers ``Trainer`` and peft LoRA, loss on the answer tokens only, the
  adapter cached under a key of everything that changes it (``train_extractor``);
* batched greedy generation (``TripleExtractor``, ``load_extractor``, ``extract_conversation``);
* evaluation: P/R/F1 (exact and normalised), relation accuracy, unparseable rate and relation
  confusions (``evaluate_extraction``, ``evaluate_extractor``).

>>> parse_triples('Sure! [{"subject": "i", "relation": "have_pet", "object": "dog"},]')
[{'subject': 'i', 'relation': 'have_pet', 'object': 'dog'}]
>>> resolve_subject("my dog", "Leo")
"Leo's dog"
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, Union

from .errors import DataError
from .models import (BUNDLED_SMOLLM2, Profile, cache_dir, causal_lm_path, choose_device, get_profile,
                     seed_everything)
from .schema import Conversation, Triple, TriplePair, Turn

PathLike = Union[str, Path]

#: Bump when the target format changes: it is part of the adapter cache key (with the prompt's hash).
PROMPT_VERSION = 1

#: The instruction (system message). Short on purpose: on a CPU the prompt's tokens dominate the
#: cost of every training step and every generation (the paper's wording is in PAPER.md, App. B).
#: The first version ("Extract (subject, relation, object) triplets from the text. Answer with ...")
#: made a training example 97 tokens on average; this one makes it 82.
SYSTEM_PROMPT = 'Answer with a JSON list of {"subject", "relation", "object"} triplets, or [] if none.'

#: The user message (the reference code's wording).
USER_TEMPLATE = "Extract triplets:\n{utterance}"

#: LoRA on every linear projection of a Llama/Qwen-style block ("all linear layers", Appendix B).
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")

#: Subjects that mean "the speaker".
FIRST_PERSON = frozenset({"i", "me", "my", "myself", "mine"})

#: Greedy decoding budget: two triples take about 45 tokens of SmolLM2's tokenizer.
MAX_NEW_TOKENS = 64

#: Training steps of the smoke adapter (its own cache key, never mistaken for the full one).
SMOKE_STEPS = 6

#: Training steps of the default adapter of the CPU (offline) profile: 160 steps of 4 pairs, about
#: 0.9 epoch of the shipped pairs in about 6 minutes on 2 cores (notebook 01's default run, training
#: included, aims at 10 minutes). Measured on all 492 gold turns, at the same 6-minute budget:
#: 64 steps of 8 gave exact F1 0.032, 160 steps of 4 gave 0.081 (more updates beat bigger batches
#: here). Profiles meant for a GPU train for the profile's ``train_epochs`` instead.
OFFLINE_STEPS = 160

#: Learning rate of the CPU (offline) profile's default adapter. The paper's 2e-4 is for 10 epochs;
#: with under one epoch on a CPU, 64 steps at 2e-4 learned the JSON format but few relation names
#: (gold F1 0.02 on 60 turns), so the short run takes a larger step. Other profiles use theirs.
OFFLINE_LEARNING_RATE = 1e-3

#: Dev examples scored for the dev-loss curve during training (a fixed head of the dev split).
DEV_LOSS_EXAMPLES = 32

#: Longest training example in tokens (the shipped pairs are under 120).
MAX_LENGTH = 256

_FIELDS = ("subject", "relation", "object")
_KEY_ALIASES = {"subject": "subject", "head": "subject", "subj": "subject",
                "relation": "relation", "predicate": "relation", "rel": "relation", "relationship": "relation",
                "object": "object", "tail": "object", "obj": "object"}


def default_pairs_path() -> Path:
    """The shipped utterance -> triples training pairs (``data/triple_pairs.jsonl``)."""
    return Path(__file__).resolve().parent.parent / "data" / "triple_pairs.jsonl"


# --------------------------------------------------------------------------- prompt and target

def format_target(triples: Iterable[Union[Triple, dict]]) -> str:
    """The answer the model learns: a JSON list of ``{subject, relation, object}``.

    >>> format_target([Triple("i", "have_pet", "dog")])
    '[{"subject": "i", "relation": "have_pet", "object": "dog"}]'
    >>> format_target([])
    '[]'
    """
    rows = []
    for t in triples:
        d = t if isinstance(t, dict) else t.to_dict()
        rows.append({k: d[k] for k in _FIELDS})
    return json.dumps(rows, ensure_ascii=False)


def build_messages(utterance: str, target: Optional[str] = None) -> list[dict]:
    """Chat messages for one utterance: system instruction, user request, optional answer.

    >>> [m["role"] for m in build_messages("I have a dog.", "[]")]
    ['system', 'user', 'assistant']
    >>> build_messages("I have a dog.")[1]["content"]
    'Extract triplets:\\nI have a dog.'
    """
    msgs = [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": USER_TEMPLATE.format(utterance=utterance)}]
    if target is not None:
        msgs.append({"role": "assistant", "content": target})
    return msgs


def render_prompt(tokenizer, utterance: str) -> str:
    """The prompt text the model continues (chat template, generation prompt, no thinking)."""
    return tokenizer.apply_chat_template(build_messages(utterance), tokenize=False,
                                         add_generation_prompt=True, enable_thinking=False)


# --------------------------------------------------------------------------- tolerant parsing

@dataclass
class ParseResult:
    """What the parser made of one model output. ``ok`` is False when no JSON list or object
    could be read at all (the output counts as unparseable); ``repaired`` when it took repairs."""

    triples: list[dict]
    ok: bool
    repaired: bool = False


class _Pairs(list):
    """A JSON object kept as its (key, value) pairs, so repeated keys are not lost."""


def _clean_value(v: Any) -> Optional[str]:
    if isinstance(v, bool) or v is None or isinstance(v, (dict, list)):
        return None
    text = str(v).strip()
    return text or None


def _pairs_to_triples(pairs: Iterable[tuple[str, Any]]) -> list[dict]:
    """Turn a stream of (key, value) pairs into triples. A key seen again starts a new triple
    that keeps the fields before it (a repeated ``object`` reuses subject and relation)."""
    out, current = [], {}
    for key, value in pairs:
        name = _KEY_ALIASES.get(str(key).strip().lower())
        if name is None:
            continue
        if name in current:
            out.append(current)
            current = {k: v for k, v in current.items() if _FIELDS.index(k) < _FIELDS.index(name)}
        current[name] = _clean_value(value)
    out.append(current)
    return [{k: t[k] for k in _FIELDS} for t in out if all(t.get(k) for k in _FIELDS)]


def _collect(value: Any) -> list[dict]:
    """All triples inside a decoded JSON value (lists, objects, nested ``{"triplets": [...]}``)."""
    if isinstance(value, _Pairs):
        nested = [t for _, v in value if isinstance(v, list) for t in _collect(v)]
        if any(str(k).strip().lower() in _KEY_ALIASES for k, _ in value):
            return _pairs_to_triples(value) + nested
        return [t for _, v in value for t in _collect(v)]
    if isinstance(value, list):
        if len(value) == 3 and all(isinstance(v, str) for v in value):  # ["i", "like", "tea"]
            return _pairs_to_triples(zip(_FIELDS, value))
        return [t for v in value for t in _collect(v)]
    return []


def _dedupe(triples: list[dict]) -> list[dict]:
    seen, out = set(), []
    for t in triples:
        key = tuple(t[k] for k in _FIELDS)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out


def _strip_wrappers(text: str) -> str:
    """Drop reasoning blocks and markdown code fences around the answer."""
    text = re.sub(r"(?s)<think>.*?(</think>|$)", " ", text)
    return re.sub(r"```[a-zA-Z]*", " ", text)


def _repair_json(s: str) -> str:
    """Rewrite near-JSON into JSON: single-quoted strings become double-quoted (an apostrophe
    inside a word stays), an unterminated string is closed, trailing commas are dropped, missing
    commas between objects or strings are added, and open brackets are closed. Output cut off
    mid-item (the token budget ran out) keeps only the items completed before the cut.

    >>> _repair_json("[{'a': 'x',}, {'a': 'y")
    '[{"a": "x"}]'
    """
    s = s.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'").replace("\u2019", "'")
    out: list[str] = []
    stack: list[str] = []
    quote = None  # the delimiter of the string we are in, if any
    boundary = None  # (output length, open brackets) after the last complete list item
    string_start = 0
    i = 0
    while i < len(s):
        c = s[i]
        if quote:
            if c == "\\" and i + 1 < len(s):
                out.append(s[i:i + 2])
                i += 2
                continue
            rest = s[i + 1:].lstrip()
            closes = c == quote and (quote == '"' or not rest or rest[0] in ",:}]")
            if closes:
                out.append('"')
                quote = None
            elif c == '"':
                out.append('\\"')  # a double quote inside a single-quoted string
            elif c == "\n":
                out.append('"')  # strings do not span lines in model output: close it
                quote = None
                continue
            else:
                out.append(c)
            i += 1
            continue
        prev = "".join(out).rstrip()[-1:]
        if c in "\"'":
            if prev in ('"', "}", "]") or (prev.isdigit() and prev):
                out.append(",")  # two values in a row: the comma is missing
            quote = c
            out.append('"')
            string_start = len(out)
        elif c in "{[":
            if prev in ("}", "]", '"'):
                out.append(",")
            stack.append("}" if c == "{" else "]")
            out.append(c)
        elif c in "}]":
            _drop_trailing_comma(out)
            if stack:
                out.append(stack.pop())
            if not stack:
                break  # the first complete value is the answer; the rest is prose
            if stack[-1] == "]":
                boundary = (len(out), list(stack))
        else:
            out.append(c)
        i += 1
    if (quote or stack) and boundary is not None:  # cut off: keep the complete items only
        out, stack = out[:boundary[0]], boundary[1]
    elif quote:  # an unterminated string: brackets typed after it belong to the structure
        while len(out) > string_start and out[-1] in ("}", "]", " ", "\n"):
            out.pop()
        out.append('"')
    _drop_trailing_comma(out)
    out.extend(reversed(stack))
    return "".join(out)


def _drop_trailing_comma(out: list[str]) -> None:
    while out and out[-1].isspace():
        out.pop()
    if out and out[-1] == ",":
        out.pop()


_SCAN = re.compile(
    r"""["']?(subject|head|relation|predicate|object|tail)["']?\s*:\s*"""
    r"""(?:"((?:[^"\\\n]|\\.)*)"?|'((?:[^'\n]|'(?![\s]*[,}\]]|$))*)'?|([^,}\]\n\[{"'\s][^,}\]\n]*))""",
    re.IGNORECASE)


def _scan_pairs(text: str) -> list[dict]:
    """Last resort: read ``key: value`` pairs wherever they are, in order."""
    pairs = []
    for m in _SCAN.finditer(text):
        if m.group(2) is not None:
            try:
                value = json.loads(f'"{m.group(2)}"')
            except ValueError:
                value = m.group(2)
        else:
            value = m.group(3) if m.group(3) is not None else m.group(4)
        pairs.append((m.group(1), value))
    return _pairs_to_triples(pairs)


def parse_output(text: Any) -> ParseResult:
    """Read triples from a model's answer, repairing what small models break. Never raises.

    Tries, in order: strict JSON from each ``[``/``{`` (prose around it is ignored), repaired
    JSON (see ``_repair_json``), then a scan for ``subject: ... relation: ... object: ...``.
    ``head``/``tail`` keys (the reference code's) become ``subject``/``object``.

    >>> parse_output('[{"subject": "i", "relation": "like", "object": "tea"}]').ok
    True
    >>> parse_output("[{'head': 'i', 'relation': 'like', 'tail': 'green tea}]").triples
    [{'subject': 'i', 'relation': 'like', 'object': 'green tea'}]
    >>> parse_output("I cannot find any triplets.")
    ParseResult(triples=[], ok=False, repaired=False)
    """
    try:
        body = _strip_wrappers("" if text is None else str(text))
        starts = [m.start() for m in re.finditer(r"[\[{]", body)][:32]
        if not starts:
            return ParseResult([], ok=False)
        decoder = json.JSONDecoder(object_pairs_hook=_Pairs)
        empty = None  # a valid JSON list with no triple in it ("[]"), if that is all there is
        try:  # 1. valid JSON at the first bracket
            value, _ = decoder.raw_decode(body[starts[0]:])
            triples = _dedupe(_collect(value))
            if triples:
                return ParseResult(triples, ok=True)
            empty = ParseResult([], ok=isinstance(value, (list, _Pairs)))
        except ValueError:
            try:  # 2. the same, repaired
                value = json.loads(_repair_json(body[starts[0]:]), object_pairs_hook=_Pairs)
                triples = _dedupe(_collect(value))
                if triples:
                    return ParseResult(triples, ok=True, repaired=True)
            except ValueError:
                pass
        for start in starts[1:]:  # 3. prose with brackets before the answer
            try:
                value, _ = decoder.raw_decode(body[start:])
            except ValueError:
                continue
            triples = _dedupe(_collect(value))
            if triples:
                return ParseResult(triples, ok=True, repaired=True)
        triples = _dedupe(_scan_pairs(body))  # 4. key: value pairs wherever they are
        if triples:
            return ParseResult(triples, ok=True, repaired=True)
        return empty or ParseResult([], ok=False, repaired=True)
    except Exception:  # the parser must never take a pipeline down; count it as unparseable
        return ParseResult([], ok=False, repaired=False)


def parse_triples(text: Any) -> list[dict]:
    """The triples in a model's answer as ``{subject, relation, object}`` dicts (never raises).

    >>> parse_triples('[{"subject": "i", "relation": "like", "object": "tea"}, {"subject": "i"')
    [{'subject': 'i', 'relation': 'like', 'object': 'tea'}]
    """
    return parse_output(text).triples


# --------------------------------------------------------------------------- speakers and matching

def resolve_subject(subject: str, speaker: Optional[str]) -> str:
    """Replace a first-person subject by the speaker: "i"/"me"/"myself" -> the speaker, and
    "my X" -> "<speaker>'s X" (the gold of ``data/conversations`` is written so).

    >>> resolve_subject("I", "Maya"), resolve_subject("my sister", "Maya"), resolve_subject("Leo", "Maya")
    ('Maya', "Maya's sister", 'Leo')
    >>> resolve_subject("i", None)
    'i'
    """
    if not speaker:
        return subject
    text = subject.strip()
    low = text.lower()
    if low in FIRST_PERSON:
        return speaker
    if low.startswith("my "):
        return f"{speaker}'s {text[3:].strip()}"
    return text


_ARTICLES = {"a", "an", "the"}

#: Relation spellings that mean the same relation under normalised matching (PersonaExt's own
#: data spells one relation "have_chidren"; the project's samples use "have_children").
RELATION_ALIASES = {"have_chidren": "have_children"}


def normalise_text(text: str) -> str:
    """Lower-case, drop articles and punctuation, collapse whitespace (for lenient matching).

    >>> normalise_text("  The Golden  Retriever! ")
    'golden retriever'
    """
    words = re.sub(r"[^\w\s']", " ", text.lower()).split()
    return " ".join(w for w in words if w not in _ARTICLES)


def normalise_relation(relation: str) -> str:
    """Lower-case snake case, with known alias spellings mapped to one name.

    >>> normalise_relation("Have Chidren"), normalise_relation("like_food")
    ('have_children', 'like_food')
    """
    rel = normalise_text(relation).replace(" ", "_")
    return RELATION_ALIASES.get(rel, rel)


def triple_key(t: Triple, normalised: bool = False) -> tuple[str, str, str]:
    """The (subject, relation, object) used for matching; normalised or exact (case kept)."""
    if normalised:
        return (normalise_text(t.subject), normalise_relation(t.relation), normalise_text(t.object))
    return (t.subject.strip(), t.relation.strip(), t.object.strip())


def partial_match(pred: Triple, gold: Triple) -> bool:
    """Lenient match: same normalised subject and relation, and the objects share a word.

    Exact matching is harsh on abstractive gold ("making pasta" vs "fresh pasta"); this is the
    token-overlap kind of match used by open information extraction benchmarks.

    >>> partial_match(Triple("Leo", "like_activity", "fresh pasta"), Triple("Leo", "like_activity", "making pasta"))
    True
    >>> partial_match(Triple("Leo", "like_food", "pasta"), Triple("Leo", "like_activity", "making pasta"))
    False
    """
    return _keys_overlap(triple_key(pred, True), triple_key(gold, True))


def _keys_overlap(p: tuple[str, str, str], g: tuple[str, str, str]) -> bool:
    """``partial_match`` on normalised keys (computed once per triple by ``score_partial``)."""
    return p[:2] == g[:2] and bool(set(p[2].split()) & set(g[2].split()))


def score_partial(pred: Sequence[Sequence[Triple]], gold: Sequence[Sequence[Triple]]) -> dict[str, float]:
    """P/R/F1 under ``partial_match``: precision counts predictions matching some gold triple of
    their utterance, recall counts gold triples matched by some prediction.

    >>> g = [[Triple("Leo", "like_food", "italian food"), Triple("Leo", "like_activity", "making pasta")]]
    >>> p = [[Triple("Leo", "like_activity", "fresh pasta"), Triple("Leo", "own", "pasta")]]
    >>> score_partial(p, g)
    {'precision': 0.5, 'recall': 0.5, 'f1': 0.5}
    """
    hit_pred = hit_gold = n_pred = n_gold = 0
    for p_list, g_list in zip(pred, gold):
        p_keys = [triple_key(t, True) for t in p_list]
        g_keys = [triple_key(t, True) for t in g_list]
        n_pred += len(p_keys)
        n_gold += len(g_keys)
        hit_pred += sum(any(_keys_overlap(p, g) for g in g_keys) for p in p_keys)
        hit_gold += sum(any(_keys_overlap(p, g) for p in p_keys) for g in g_keys)
    precision = hit_pred / n_pred if n_pred else 0.0
    recall = hit_gold / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def fact_detection(pred: Sequence[Sequence[Triple]], gold: Sequence[Sequence[Triple]]) -> dict[str, float]:
    """P/R/F1 of the yes/no question "does this utterance carry a fact?" (non-empty answer).

    >>> fact_detection([[Triple("a", "b", "c")], [Triple("a", "b", "c")], []], [[Triple("a", "b", "c")], [], []])
    {'precision': 0.5, 'recall': 1.0, 'f1': 0.6667}
    """
    said = [bool(p) for p in pred]
    true = [bool(g) for g in gold]
    return prf(sum(s and t for s, t in zip(said, true)), sum(said), sum(true))


def prf(tp: int, n_pred: int, n_gold: int) -> dict[str, float]:
    """Precision, recall and F1 from counts (0 where undefined).

    >>> prf(2, 4, 3)
    {'precision': 0.5, 'recall': 0.6667, 'f1': 0.5714}
    """
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4)}


def score_triples(pred: Sequence[Sequence[Triple]], gold: Sequence[Sequence[Triple]],
                  normalised: bool = False) -> dict[str, float]:
    """Micro P/R/F1 over utterances: a predicted triple is right when the same utterance has a
    gold triple with the same key (duplicates count once).

    >>> g = [[Triple("Maya", "have_pet", "cat")], []]
    >>> p = [[Triple("Maya", "have_pet", "a cat"), Triple("Maya", "like", "tea")], []]
    >>> score_triples(p, g)["f1"], score_triples(p, g, normalised=True)["f1"]
    (0.0, 0.6667)
    """
    if len(pred) != len(gold):
        raise DataError(f"{len(pred)} predictions for {len(gold)} gold utterances")
    tp = n_pred = n_gold = 0
    for p_list, g_list in zip(pred, gold):
        p_keys = {triple_key(t, normalised) for t in p_list}
        g_keys = {triple_key(t, normalised) for t in g_list}
        tp += len(p_keys & g_keys)
        n_pred += len(p_keys)
        n_gold += len(g_keys)
    return {**prf(tp, n_pred, n_gold), "tp": tp, "predicted": n_pred, "gold": n_gold}


def align_relations(pred: Sequence[Sequence[Triple]], gold: Sequence[Sequence[Triple]]) -> list[tuple[str, str]]:
    """(gold relation, predicted relation) for each gold triple that a prediction of the same
    utterance talks about: their normalised objects share a word (the best overlap wins).

    >>> align_relations([[Triple("i", "own", "a cat")]], [[Triple("Maya", "have_pet", "cat")]])
    [('have_pet', 'own')]
    """
    pairs = []
    for p_list, g_list in zip(pred, gold):
        for g in g_list:
            g_words = set(normalise_text(g.object).split())
            best, best_overlap = None, 0.0
            for p in p_list:
                p_words = set(normalise_text(p.object).split())
                overlap = len(g_words & p_words) / max(1, len(g_words | p_words))
                if overlap > best_overlap:
                    best, best_overlap = p, overlap
            if best is not None:
                pairs.append((g.relation, best.relation))
    return pairs


def relation_confusions(pairs: Sequence[tuple[str, str]], top: int = 10) -> list[tuple[str, str, int]]:
    """The most frequent (gold, predicted, count) relation mistakes among aligned pairs.

    >>> relation_confusions([("a", "b"), ("a", "b"), ("a", "a"), ("c", "d")])
    [('a', 'b', 2), ('c', 'd', 1)]
    """
    counts = Counter((g, p) for g, p in pairs if g != p)
    return [(g, p, n) for (g, p), n in counts.most_common(top)]


def evaluate_extraction(pred: Sequence[Sequence[Triple]], gold: Sequence[Sequence[Triple]],
                        parsed_ok: Optional[Sequence[bool]] = None, top_confusions: int = 10) -> dict[str, Any]:
    """Every extraction measure in one flat dict (plus ``confusions``, a list).

    >>> r = evaluate_extraction([[Triple("Maya", "own", "cat")]], [[Triple("Maya", "have_pet", "cat")]], [True])
    >>> r["f1 exact"], r["relation accuracy"], r["unparseable rate"], r["confusions"]
    (0.0, 0.0, 0.0, [('have_pet', 'own', 1)])
    """
    exact = score_triples(pred, gold)
    norm = score_triples(pred, gold, normalised=True)
    partial = score_partial(pred, gold)
    detect = fact_detection(pred, gold)
    pairs = align_relations(pred, gold)
    ok = list(parsed_ok) if parsed_ok is not None else [True] * len(pred)
    return {
        "utterances": len(gold), "gold triples": exact["gold"], "predicted triples": exact["predicted"],
        "precision exact": exact["precision"], "recall exact": exact["recall"], "f1 exact": exact["f1"],
        "precision norm": norm["precision"], "recall norm": norm["recall"], "f1 norm": norm["f1"],
        "f1 partial": partial["f1"], "fact detection f1": detect["f1"], "aligned": len(pairs),
        "relation accuracy": round(sum(g == p for g, p in pairs) / len(pairs), 4) if pairs else 0.0,
        "unparseable rate": round(1 - sum(ok) / len(ok), 4) if ok else 0.0,
        "confusions": relation_confusions(pairs, top_confusions),
    }


# --------------------------------------------------------------------------- data for training

def load_pairs(path: Optional[PathLike] = None) -> list[TriplePair]:
    """Training pairs: the shipped ones, or any file ``loaders.load_triple_pairs`` reads
    (PersonaExt lines sharing an utterance become one pair)."""
    from .loaders import load_triple_pairs

    pairs = load_triple_pairs(path or default_pairs_path())
    if not pairs:
        raise DataError("no training pairs", path=path)
    return pairs


def split_pairs(pairs: Sequence[TriplePair], dev_fraction: float = 0.1, seed: int = 42,
                max_train: Optional[int] = None, max_dev: Optional[int] = None) -> tuple[list, list]:
    """Seeded train/dev split by utterance (one pair per utterance, so no utterance is on both
    sides). ``max_train``/``max_dev`` cap the sizes after the split.

    >>> tr, dev = split_pairs([TriplePair(f"u{i}", []) for i in range(10)], 0.2)
    >>> len(tr), len(dev), sorted(p.utterance for p in tr + dev) == sorted(f"u{i}" for i in range(10))
    (8, 2, True)
    """
    import random

    if not 0 <= dev_fraction < 1:
        raise DataError(f"dev_fraction must be in [0, 1), got {dev_fraction}")
    utterances = sorted({p.utterance for p in pairs})
    random.Random(seed).shuffle(utterances)
    n_dev = int(round(len(utterances) * dev_fraction))
    dev_set = set(utterances[:n_dev])
    train = [p for p in pairs if p.utterance not in dev_set]
    dev = [p for p in pairs if p.utterance in dev_set]
    return train[:max_train] if max_train else train, dev[:max_dev] if max_dev else dev


def pairs_hash(pairs: Sequence[TriplePair]) -> str:
    """A short content hash of training pairs (part of the adapter cache key)."""
    h = hashlib.sha256()
    for p in pairs:
        h.update(p.utterance.encode())
        h.update(format_target(p.triples).encode())
    return h.hexdigest()[:16]


def tokenize_example(tokenizer, utterance: str, target: str, max_length: int = MAX_LENGTH) -> dict[str, list[int]]:
    """Token ids of prompt + answer, with ``labels`` = -100 on the prompt so the loss is on the
    answer (and its end-of-turn token) only."""
    prompt = render_prompt(tokenizer, utterance)
    full = tokenizer.apply_chat_template(build_messages(utterance, target), tokenize=False, enable_thinking=False)
    if not full.startswith(prompt):
        raise DataError("the chat template does not render the prompt as a prefix of the full example")
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    ids = tokenizer(full, add_special_tokens=False)["input_ids"][:max_length]
    labels = [-100] * min(len(prompt_ids), len(ids)) + ids[len(prompt_ids):]
    return {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels}


# --------------------------------------------------------------------------- model, LoRA, training

def lora_config(profile: Union[str, Profile] = "offline"):
    """peft LoRA settings of a profile, on every linear projection."""
    from peft import LoraConfig

    p = get_profile(profile)
    return LoraConfig(r=p.lora_r, lora_alpha=p.lora_alpha, lora_dropout=p.lora_dropout, bias="none",
                      target_modules=list(LORA_TARGETS), task_type="CAUSAL_LM")


def count_parameters(model) -> tuple[int, int]:
    """(trainable, total) parameter counts."""
    total = sum(p.numel() for p in model.parameters())
    return sum(p.numel() for p in model.parameters() if p.requires_grad), total


def load_base(profile: Union[str, Profile] = "offline", device: Optional[str] = None, for_training: bool = False):
    """Tokenizer (left padding) and base causal LM of a profile's extractor. The paper profile
    loads 4-bit (QLoRA) and needs a CUDA GPU with ``bitsandbytes``."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    p = get_profile(profile)
    path = causal_lm_path(p.extractor_base)
    tok = AutoTokenizer.from_pretrained(path)
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    device = choose_device(device)
    if p.quantize_4bit:
        if device != "cuda":
            raise RuntimeError(f"profile '{p.name}' loads {p.extractor_base} in 4 bits: it needs a CUDA GPU")
        from transformers import BitsAndBytesConfig

        quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.float16)
        model = AutoModelForCausalLM.from_pretrained(path, quantization_config=quant, device_map="auto")
        if for_training:
            from peft import prepare_model_for_kbit_training

            model = prepare_model_for_kbit_training(model)
        return tok, model
    dtype = torch.bfloat16 if device == "cuda" and p.extractor_base != BUNDLED_SMOLLM2 else torch.float32
    config = AutoConfig.from_pretrained(path)
    quant = getattr(config, "quantization_config", None)
    method = quant.get("quant_method") if isinstance(quant, dict) else getattr(quant, "quant_method", None)
    if str(getattr(method, "value", method)) == "gguf":
        # the converted bundled copy is plain float32 but its config still names the GGUF file;
        # left in, transformers treats the model as quantized and Trainer refuses to train it
        del config.quantization_config
    model = AutoModelForCausalLM.from_pretrained(path, config=config, dtype=dtype).to(device)
    return tok, model


@dataclass
class TrainSettings:
    """Everything that changes an adapter; its hash names the cache folder."""

    base: str
    data: str
    max_steps: int  # -1: train for ``epochs``
    epochs: float
    learning_rate: float
    batch_size: int
    lora_r: int
    lora_alpha: int
    lora_dropout: float
    targets: tuple = LORA_TARGETS
    seed: int = 42
    dev_fraction: float = 0.1
    max_train: Optional[int] = None
    prompt_version: int = PROMPT_VERSION
    prompt: str = ""  # hash of the instruction and user template: a new prompt is a new adapter

    def key(self) -> str:
        blob = json.dumps(self.__dict__, sort_keys=True, default=list)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def prompt_hash() -> str:
    """A short hash of the system prompt and user template (part of the adapter cache key)."""
    return hashlib.sha256((SYSTEM_PROMPT + "\n" + USER_TEMPLATE).encode()).hexdigest()[:8]


def default_max_steps(profile: Union[str, Profile] = "offline") -> int:
    """Steps of a profile's default adapter: ``OFFLINE_STEPS`` on the CPU profile, else -1
    (train for the profile's ``train_epochs``, e.g. the paper's 10).

    >>> default_max_steps("offline"), default_max_steps("paper")
    (160, -1)
    """
    return OFFLINE_STEPS if get_profile(profile).name == "offline" else -1


def default_learning_rate(profile: Union[str, Profile] = "offline") -> float:
    """Learning rate of a profile's default adapter: ``OFFLINE_LEARNING_RATE`` on the CPU
    profile (a short run), else the profile's own (the paper's 2e-4).

    >>> default_learning_rate("offline"), default_learning_rate("paper")
    (0.001, 0.0002)
    """
    p = get_profile(profile)
    return OFFLINE_LEARNING_RATE if p.name == "offline" else p.learning_rate


def train_settings(pairs: Sequence[TriplePair], profile: Union[str, Profile] = "offline",
                   max_steps: Optional[int] = None, smoke: bool = False, seed: int = 42,
                   learning_rate: Optional[float] = None, dev_fraction: float = 0.1,
                   max_train: Optional[int] = None) -> TrainSettings:
    """Settings from the profile (LoRA r/alpha/dropout, epochs, lr, batch size), with overrides."""
    p = get_profile(profile)
    if max_steps is None:
        max_steps = SMOKE_STEPS if smoke else default_max_steps(p)
    steps = max_steps if max_steps > 0 else -1
    return TrainSettings(base=p.extractor_base, data=pairs_hash(pairs), max_steps=steps, epochs=p.train_epochs,
                         learning_rate=learning_rate or default_learning_rate(p), batch_size=p.batch_size,
                         lora_r=p.lora_r, lora_alpha=p.lora_alpha, lora_dropout=p.lora_dropout, seed=seed,
                         dev_fraction=dev_fraction, max_train=max_train, prompt=prompt_hash())


def adapter_dir_for(settings: TrainSettings, profile: Union[str, Profile] = "offline") -> Path:
    """The cache folder of the adapter these settings produce."""
    return cache_dir("extractor") / f"{get_profile(profile).name}-{settings.key()}"


def read_training_log(adapter_dir: PathLike) -> dict[str, Any]:
    """The ``training.json`` written beside an adapter (settings, loss history, timings)."""
    path = Path(adapter_dir) / "training.json"
    if not path.is_file():
        return {}
    return json.loads(path.read_text())


def train_extractor(pairs: Optional[Sequence[TriplePair]] = None, profile: Union[str, Profile] = "offline",
                    max_steps: Optional[int] = None, out: Optional[PathLike] = None, smoke: bool = False,
                    seed: int = 42, learning_rate: Optional[float] = None, dev_fraction: float = 0.1,
                    max_train: Optional[int] = None, eval_points: int = 4, force: bool = False,
                    device: Optional[str] = None) -> Path:
    """Fine-tune the profile's extractor with LoRA and return the adapter folder.

    Uses transformers ``Trainer`` with a padding collator that pads labels with -100 (prompt
    tokens are already -100), so the loss is on the answer tokens only. The dev split (by
    utterance) is evaluated ``eval_points`` times for the dev-loss curve. Without ``out`` the
    adapter goes to the cache under a key of base model, data hash, steps, LoRA settings, lr,
    batch size and seed, and an adapter already there is reused (unless ``force``).
    """
    from datasets import Dataset
    from peft import get_peft_model
    from transformers import DataCollatorForSeq2Seq, Trainer, TrainingArguments

    pairs = list(pairs) if pairs is not None else load_pairs()
    settings = train_settings(pairs, profile, max_steps, smoke, seed, learning_rate, dev_fraction, max_train)
    target = Path(out) if out else adapter_dir_for(settings, profile)
    if (target / "adapter_config.json").is_file() and not force:
        return target
    seed_everything(seed)
    train, dev = split_pairs(pairs, dev_fraction, seed, max_train=max_train)
    if not train:
        raise DataError("no training pairs left after the dev split")
    tok, model = load_base(profile, device, for_training=True)
    model = get_peft_model(model, lora_config(profile))
    trainable, total = count_parameters(model)
    tok.padding_side = "right"  # training pads on the right; positions then start at 0

    def to_dataset(rows):
        return Dataset.from_list([tokenize_example(tok, p.utterance, format_target(p.triples)) for p in rows])

    train_ds, dev_ds = to_dataset(train), (to_dataset(dev[:DEV_LOSS_EXAMPLES]) if dev else None)
    steps_per_epoch = -(-len(train_ds) // settings.batch_size)
    total_steps = settings.max_steps if settings.max_steps > 0 else int(steps_per_epoch * settings.epochs)
    eval_every = max(1, total_steps // max(1, eval_points))
    with tempfile.TemporaryDirectory() as scratch:
        args = TrainingArguments(
            output_dir=scratch, per_device_train_batch_size=settings.batch_size,
            per_device_eval_batch_size=max(8, settings.batch_size), max_steps=settings.max_steps,
            num_train_epochs=settings.epochs, learning_rate=settings.learning_rate, lr_scheduler_type="cosine",
            warmup_steps=0.05, weight_decay=0.0, logging_steps=max(1, min(10, total_steps // 20)),
            eval_strategy="steps" if dev_ds is not None else "no", eval_steps=eval_every,
            save_strategy="no", report_to="none", seed=seed, data_seed=seed, dataloader_num_workers=0,
            use_cpu=choose_device(device) == "cpu", fp16=get_profile(profile).quantize_4bit,
            disable_tqdm=False, remove_unused_columns=False)
        collator = DataCollatorForSeq2Seq(tok, padding=True, label_pad_token_id=-100)
        trainer = Trainer(model=model, args=args, train_dataset=train_ds, eval_dataset=dev_ds,
                          data_collator=collator, processing_class=tok)
        start = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - start
    tok.padding_side = "left"
    log = {"settings": settings.__dict__ | {"targets": list(settings.targets)}, "key": settings.key(),
           "profile": get_profile(profile).name, "train_pairs": len(train), "dev_pairs": len(dev),
           "steps": total_steps, "trainable_parameters": trainable, "total_parameters": total,
           "train_seconds": round(seconds, 1), "log_history": trainer.state.log_history,
           "relations": sorted({t.relation for p in pairs for t in p.triples})}
    _save_adapter(model, tok, log, target)
    return target


def _save_adapter(model, tok, log: dict, target: Path) -> None:
    """Write adapter + tokenizer + training.json to a temporary sibling, then rename it in."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    (tmp / "training.json").write_text(json.dumps(log, indent=1, default=str))
    if target.exists():
        shutil.rmtree(target)
    os.replace(tmp, target)


# --------------------------------------------------------------------------- extraction

@dataclass
class Extraction:
    """One utterance's result: the raw model output, what was parsed from it, and the triples."""

    utterance: str
    speaker: Optional[str]
    output: str
    ok: bool
    triples: list[Triple] = field(default_factory=list)
    snapped: list[tuple[str, str]] = field(default_factory=list)  # (relation written, schema relation)


#: How close (difflib ratio) an unknown relation must be to a schema relation to be snapped onto it.
SNAP_CUTOFF = 0.7


def snap_relation(relation: str, known: Sequence[str], cutoff: float = SNAP_CUTOFF) -> str:
    """The schema relation closest in spelling to ``relation`` (itself when known, or when nothing
    is close enough). A short fine-tune keeps some of the base model's own names ("have_profession"
    for the schema's "has_profession"); snapping keeps the memory's relation vocabulary consistent.

    >>> known = ["has_profession", "have_pet", "like_food"]
    >>> snap_relation("have_profession", known), snap_relation("have_pet", known), snap_relation("weather", known)
    ('has_profession', 'have_pet', 'weather')
    """
    if not known or relation in known:
        return relation
    close = difflib.get_close_matches(relation, known, n=1, cutoff=cutoff)
    return close[0] if close else relation


class TripleExtractor:
    """A causal LM (optionally with a merged LoRA adapter) that extracts triples in batches.
    With ``relations`` (the adapter's training relations), relation names outside that schema are
    snapped onto the closest one (``snap_relation``); each ``Extraction`` lists what was snapped."""

    def __init__(self, tokenizer, model, name: str = "extractor", adapter_dir: Optional[Path] = None,
                 max_new_tokens: int = MAX_NEW_TOKENS, relations: Optional[Sequence[str]] = None):
        self.tokenizer = tokenizer
        self.model = model.eval()
        self.name = name
        self.adapter_dir = adapter_dir
        self.max_new_tokens = max_new_tokens
        self.relations = sorted(relations or [])

    def generate(self, utterances: Sequence[str], batch_size: int = 8, progress: bool = True) -> list[str]:
        """Greedy answers, batched with left padding; batches hold similar lengths (less padding)."""
        import torch
        from tqdm.auto import tqdm

        order = sorted(range(len(utterances)), key=lambda i: len(utterances[i]))
        outputs: list[str] = [""] * len(utterances)
        device = next(self.model.parameters()).device
        self.tokenizer.padding_side = "left"
        batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
        for batch in tqdm(batches, desc=f"extract ({self.name})", disable=not progress or len(batches) < 2):
            prompts = [render_prompt(self.tokenizer, utterances[i]) for i in batch]
            enc = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
            with torch.no_grad():
                gen = self.model.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False,
                                          pad_token_id=self.tokenizer.pad_token_id,
                                          eos_token_id=self.tokenizer.eos_token_id)
            texts = self.tokenizer.batch_decode(gen[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
            for i, text in zip(batch, texts):
                outputs[i] = text.strip()
        return outputs

    def extract_detailed(self, utterances: Sequence[str], speakers: Optional[Sequence[Optional[str]]] = None,
                         batch_size: int = 8, progress: bool = True) -> list[Extraction]:
        """Raw output, parse status and triples (first person resolved) for each utterance."""
        speakers = list(speakers) if speakers is not None else [None] * len(utterances)
        if len(speakers) != len(utterances):
            raise DataError(f"{len(speakers)} speakers for {len(utterances)} utterances")
        results = []
        for utt, spk, out in zip(utterances, speakers, self.generate(utterances, batch_size, progress)):
            parsed = parse_output(out)
            relations = [snap_relation(d["relation"], self.relations) for d in parsed.triples]
            triples = [Triple(resolve_subject(d["subject"], spk), rel, d["object"], speaker=spk, source=utt)
                       for d, rel in zip(parsed.triples, relations)]
            snapped = [(d["relation"], rel) for d, rel in zip(parsed.triples, relations) if d["relation"] != rel]
            results.append(Extraction(utt, spk, out, parsed.ok, triples, snapped))
        return results

    def extract(self, utterances: Sequence[str], speakers: Optional[Sequence[Optional[str]]] = None,
                batch_size: int = 8, progress: bool = True) -> list[list[Triple]]:
        """Triples for each utterance; first-person subjects become the speaker when given."""
        return [r.triples for r in self.extract_detailed(utterances, speakers, batch_size, progress)]


def load_extractor(profile: Union[str, Profile] = "offline", adapter: Optional[PathLike] = None,
                   smoke: bool = False, zero_shot: bool = False, device: Optional[str] = None,
                   data: Optional[PathLike] = None) -> TripleExtractor:
    """The extractor of a profile. Without ``adapter`` it uses the cached default adapter,
    training it on the shipped pairs (or ``data``) on first use; ``smoke`` trains only
    ``SMOKE_STEPS`` under its own key; ``zero_shot`` gives the base model with no adapter."""
    if zero_shot:
        tok, model = load_base(profile, device)
        return TripleExtractor(tok, model, name="zero-shot")
    if adapter is None:
        adapter = train_extractor(load_pairs(data), profile, smoke=smoke, device=device)
    adapter = Path(adapter)
    if not (adapter / "adapter_config.json").is_file():
        raise DataError("not a LoRA adapter folder (no adapter_config.json)", path=adapter)
    from peft import PeftModel

    tok, model = load_base(profile, device)
    model = PeftModel.from_pretrained(model, str(adapter))
    if not get_profile(profile).quantize_4bit:
        model = model.merge_and_unload()  # one plain model: faster generation
    relations = read_training_log(adapter).get("relations")
    return TripleExtractor(tok, model, name="fine-tuned", adapter_dir=adapter, relations=relations)


def extract_conversation(conv: Conversation, extractor: TripleExtractor, sessions: Optional[Sequence[int]] = None,
                         batch_size: int = 8, progress: bool = True) -> list[Triple]:
    """Triples of every turn (of the chosen sessions), with speaker, turn id, session and source."""
    turns = [(s.index, t) for s in conv.sessions if sessions is None or s.index in sessions for t in s.turns]
    found = extractor.extract([t.text for _, t in turns], [t.speaker for _, t in turns], batch_size, progress)
    out = []
    for (session, turn), triples in zip(turns, found):
        for tr in triples:
            tr.turn_id, tr.session, tr.speaker, tr.source = turn.id, session, turn.speaker, turn.text
            out.append(tr)
    return out


# --------------------------------------------------------------------------- evaluation helpers

def gold_turns(conversations: Sequence[Conversation], n: Optional[int] = None, seed: int = 42) -> list[Turn]:
    """Turns of the gold conversations for evaluation: all of them, or a seeded sample of ``n``
    that keeps the share of turns with and without facts."""
    import random

    turns = [t for c in conversations for t in c.turns()]
    if n is None or n >= len(turns):
        return turns
    rng = random.Random(seed)
    with_facts = [t for t in turns if t.triples]
    without = [t for t in turns if not t.triples]
    k = round(n * len(with_facts) / len(turns))
    return rng.sample(with_facts, k) + rng.sample(without, n - k)


def evaluate_extractor(extractor: TripleExtractor, turns: Sequence[Turn], batch_size: int = 8,
                       progress: bool = True) -> tuple[dict[str, Any], list[Extraction]]:
    """Run the extractor on gold turns and score it (first person resolved to the speaker).
    Returns the measures (``evaluate_extraction``) plus ``seconds`` and ``utterances/s``."""
    start = time.perf_counter()
    results = extractor.extract_detailed([t.text for t in turns], [t.speaker for t in turns], batch_size, progress)
    seconds = time.perf_counter() - start
    report = evaluate_extraction([r.triples for r in results], [t.triples for t in turns], [r.ok for r in results])
    report["seconds"] = round(seconds, 1)
    report["utterances/s"] = round(len(turns) / seconds, 2) if seconds else 0.0
    return report, results


def evaluate_on_pairs(extractor: TripleExtractor, pairs: Sequence[TriplePair], batch_size: int = 8,
                      progress: bool = True) -> tuple[dict[str, Any], list[Extraction]]:
    """Score on held-out pairs (subjects stay as written, e.g. "i", as in the pairs)."""
    turns = [Turn(p.id or str(i), "", p.utterance, p.triples) for i, p in enumerate(pairs)]
    return evaluate_extractor(extractor, turns, batch_size, progress)


def save_jsonl(path: PathLike, rows: Iterable[dict]) -> Path:
    """Write JSON lines atomically (temporary sibling, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


__all__ = [
    "SYSTEM_PROMPT", "USER_TEMPLATE", "LORA_TARGETS", "FIRST_PERSON", "MAX_NEW_TOKENS", "SMOKE_STEPS",
    "format_target", "build_messages", "render_prompt", "ParseResult", "parse_output", "parse_triples",
    "resolve_subject", "normalise_text", "triple_key", "prf", "score_triples", "align_relations",
    "relation_confusions", "evaluate_extraction", "load_pairs", "split_pairs", "pairs_hash", "tokenize_example",
    "lora_config", "count_parameters", "load_base", "TrainSettings", "train_settings", "adapter_dir_for",
    "read_training_log", "train_extractor", "Extraction", "TripleExtractor", "load_extractor",
    "extract_conversation", "gold_turns", "evaluate_extractor", "evaluate_on_pairs", "save_jsonl",
]
