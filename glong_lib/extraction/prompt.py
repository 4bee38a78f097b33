"""The extractor's prompt and JSON target, and the training pairs it learns from."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

from ..config import Profile, get_profile
from ..datasets import REAL_DATA_ENV, split_file  # noqa: F401  (REAL_DATA_ENV: re-exported, read here before)
from ..errors import DataError
from ..io import PathLike, data_path
from ..loaders import load_triple_pairs
from ..schema import Triple, TriplePair
from .parsing import FIELDS as _FIELDS

#: Bump when the target format changes: it is part of the adapter cache key (with the prompt's hash).
PROMPT_VERSION = 1

#: The instruction (system message). Short on purpose: on a CPU the prompt's tokens dominate the
#: cost of every training step and every generation (the paper's wording: Appendix B of arXiv 2606.13115).
#: The first version ("Extract (subject, relation, object) triplets from the text. Answer with ...")
#: made a training example 97 tokens on average; this one makes it 82.
SYSTEM_PROMPT = 'Answer with a JSON list of {"subject", "relation", "object"} triplets, or [] if none.'

#: The user message (the reference code's wording).
USER_TEMPLATE = "Extract triplets:\n{utterance}"



def default_pairs_path() -> Path:
    """The shipped utterance -> triples training pairs (``data/triple_pairs.jsonl``)."""
    return data_path("triple_pairs.jsonl")


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



# --------------------------------------------------------------------------- data for training

def personaext_path() -> Optional[Path]:
    """PersonaExt's utterance -> triples file in the real-data folder (``$GLONG_REAL_DATA``, split
    ``personaext``; ``glong data prepare`` writes it), or None when the variable is unset or the
    folder does not hold it."""
    return split_file("personaext")


def training_pairs_path(profile: Union[str, Profile] = "offline") -> Optional[Path]:
    """The pairs a profile's default adapter trains on: PersonaExt from the real-data folder for a
    profile with ``train_data="personaext"`` (the paper's), refused in one line naming the file
    looked for when ``GLONG_REAL_DATA`` does not hold it (never the shipped pairs in its place);
    None (the shipped pairs) for the other profiles.

    >>> training_pairs_path("offline") is None
    True
    """
    if get_profile(profile).extractor.train_data != "personaext":
        return None
    path = personaext_path()
    if path is None:
        folder = os.environ.get(REAL_DATA_ENV) or f"${REAL_DATA_ENV}"
        raise DataError(f"the {get_profile(profile).name} profile's extractor trains on PersonaExt and "
                        f"{Path(folder) / 'personaext' / 'personaext_pairs.jsonl'} is not there: set {REAL_DATA_ENV} "
                        "to the real-data folder, or say what to train on (--data FILE)")
    return path


def load_pairs(path: Optional[PathLike] = None) -> list[TriplePair]:
    """Training pairs: the shipped ones, or any file ``loaders.load_triple_pairs`` reads
    (PersonaExt lines sharing an utterance become one pair)."""
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


def prompt_hash() -> str:
    """A short hash of the system prompt and user template (part of the adapter cache key)."""
    return hashlib.sha256((SYSTEM_PROMPT + "\n" + USER_TEMPLATE).encode()).hexdigest()[:8]

