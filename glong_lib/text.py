"""Text normalisation shared by every stage: one spelling of entities and relations, first-person
resolution, content words, how a turn is written as one line, and which words a reply recalls
(the memory-use probe's rule, which the responder's training shares).

Extraction scores, the memory's node names and the salience evaluation all compare strings; they
must agree on what "the same" means, so the rules live here once.

>>> normalise_entity("  My  ", speaker="Maya"), normalise_relation("Live in-General")
('maya', 'live_in_general')
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from typing import Iterable, Optional, Sequence, Union

from .errors import DataError
from .schema import Turn

#: Words that mean "the speaker" when they stand alone as a subject or object.
FIRST_PERSON = frozenset({"i", "me", "my", "myself", "mine"})

#: Articles dropped by lenient text matching.
ARTICLES = frozenset({"a", "an", "the"})

#: Relation spellings that mean the same relation (PersonaExt's own data spells one relation
#: "have_chidren"; the project's samples use "have_children").
RELATION_ALIASES = {"have_chidren": "have_children"}

#: Words too common to count as content (salience labels, answer matching).
STOPWORDS = frozenset(
    "a an the of to in on at for and or but with by from is are was were be been being i me my we our you "
    "your he him his she her they them their it its this that these those as about into over after before "
    "up down out off so not no do does did have has had will would can could should just very too also "
    "some any all more most own same than then there here what which who whom when where why how".split())

_PUNCT = string.punctuation + "“”‘’«»…–—"
_DIGITS = re.compile(r"\d+")
_POSSESSIVE = re.compile(r"['’]s$")


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


def normalise_text(text: str) -> str:
    """Lower-case, drop articles and punctuation, collapse whitespace (lenient matching).

    >>> normalise_text("  The Golden  Retriever! ")
    'golden retriever'
    """
    words = re.sub(r"[^\w\s']", " ", text.lower()).split()
    return " ".join(w for w in words if w not in ARTICLES)


def normalise_relation(relation: str) -> str:
    """A relation name in one spelling: lower-case snake case (spaces, dashes and other punctuation
    become one underscore), with known alias spellings mapped to one name.

    >>> normalise_relation(" Live in-General "), normalise_relation("Have Chidren"), normalise_relation("like_food")
    ('live_in_general', 'have_children', 'like_food')
    """
    rel = "_".join(re.sub(r"[^\w']", " ", str(relation).lower()).split())
    return RELATION_ALIASES.get(rel, rel)


def normalise_entity(text: str, speaker: Optional[str] = None) -> str:
    """The canonical spelling of an entity: lower case, single spaces, no punctuation at the
    ends; a first-person word ("I", "me", "my", "myself", "mine") becomes the speaker's name.

    >>> normalise_entity("  Golden   Retriever! ")
    'golden retriever'
    >>> normalise_entity("I", speaker="Maya")
    'maya'
    >>> normalise_entity("\\"Leo's dog\\"")
    "leo's dog"
    >>> normalise_entity("my", speaker=None)
    'my'
    """
    # NFC: "café" typed with a combining accent (e + U+0301) is the same entity as with é
    value = " ".join(unicodedata.normalize("NFC", str(text)).split()).strip(_PUNCT + " ").lower()
    if value in FIRST_PERSON and speaker:
        return normalise_entity(speaker)
    return value


def entity_mentions(text: str, known, max_words: int = 4) -> list[str]:
    """The entities of ``known`` (normalised names, a set or mapping) that ``text`` names: every run
    of up to ``max_words`` consecutive words, normalised as an entity, that is in ``known``, longest
    first, in order of appearance; runs made only of stop words ("what", "i") never count.

    >>> entity_mentions("When did Maya adopt her golden retriever?", {"maya", "golden retriever", "her"})
    ['golden retriever', 'maya']
    >>> entity_mentions("What is Ana's dog called?", {"ana", "dog"})
    ['ana', 'dog']
    """
    words = re.findall(r"[\w'’-]+", str(text))
    found: dict[str, int] = {}
    for n in range(min(max_words, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            run = words[i:i + n]
            if all(w.lower() in STOPWORDS for w in run):
                continue
            name = normalise_entity(" ".join(run))
            for name in (name, _POSSESSIVE.sub("", name)):  # "Ana's dog" names "ana" too
                if name in known and name not in found:
                    found[name] = len(found)
    return list(found)


def entity_label(text: str, speaker: Optional[str]) -> str:
    """How an entity is shown: its surface spelling trimmed (the speaker's name for "I").

    >>> entity_label(" i ", "Maya"), entity_label("Golden Retriever!", None)
    ('Maya', 'Golden Retriever')
    """
    if speaker and normalise_entity(text) in FIRST_PERSON:
        text = speaker
    return " ".join(str(text).split()).strip(_PUNCT + " ")


def same_numbers(a: str, b: str) -> bool:
    """Whether two strings carry the same numbers (so "march 2" never merges into "march 3",
    although MiniLM puts them at cosine 0.94).

    >>> same_numbers("march 2", "march 3"), same_numbers("2 dogs", "two dogs"), same_numbers("a", "b")
    (False, False, True)
    """
    return Counter(_DIGITS.findall(a)) == Counter(_DIGITS.findall(b))


def may_merge(a: str, b: str) -> bool:
    """Whether two entity names may merge as spellings of one entity: the same numbers
    (:func:`same_numbers`), and a letter or digit in each. The encoder maps a name of emoji or
    symbols only to its unknown token, so any two such names sit at cosine 1.0 ("😀" and "🎉🎉").

    >>> may_merge("the hospital", "hospital"), may_merge("\U0001F600", "\U0001F389\U0001F389")
    (True, False)
    """
    return same_numbers(a, b) and any(c.isalnum() for c in a) and any(c.isalnum() for c in b)


def content_word_list(text: str) -> list[str]:
    """Lower-case words of ``text`` without stopwords or one-letter tokens, in order, repeats kept.

    >>> content_word_list("Tea, more tea in Denver")
    ['tea', 'tea', 'denver']
    """
    words = re.findall(r"[a-z0-9]+", text.lower().replace("'s", ""))
    return [w for w in words if w not in STOPWORDS and len(w) > 1]


def content_words(text: str) -> set[str]:
    """:func:`content_word_list` as a set.

    >>> sorted(content_words("Maya's new job in Denver"))
    ['denver', 'job', 'maya', 'new']
    """
    return set(content_word_list(text))


def light_stem(word: str) -> str:
    """A crude, predictable stem: drop one ending of ``ing``/``ed``/``es``/``s`` when three letters
    remain, so a triple's lemma ("buy") meets the dialogue's inflection ("buys", "buying").

    >>> [light_stem(w) for w in ["buys", "buying", "moved", "dishes", "bus", "news"]]
    ['buy', 'buy', 'mov', 'dish', 'bus', 'new']
    """
    for ending in ("ing", "ed", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def content_stems_list(text: str) -> list[str]:
    """The content words of ``text`` in order, repeats kept, through :func:`light_stem`.

    >>> content_stems_list("She buys tea, more tea")
    ['buy', 'tea', 'tea']
    """
    return [light_stem(w) for w in content_word_list(text)]


def content_stems(text: str) -> set[str]:
    """:func:`content_words` through :func:`light_stem`.

    >>> sorted(content_stems("She buys flowers"))
    ['buy', 'flower']
    """
    return set(content_stems_list(text))


# --------------------------------------------------------------------------- recalled words

#: A stem is *specific* when fewer than this share of the data set's utterances say it.
SPECIFIC_SHARE = 0.005


def specific_stems(texts: Iterable[str], max_share: float = SPECIFIC_SHARE) -> set[str]:
    """The content stems said in fewer than ``max_share`` of ``texts`` (a document-frequency cut, as
    an IDF weight would make it).

    >>> sorted(specific_stems(["I like tea", "I like Boston", "I like cats", "tea again"], max_share=0.3))
    ['again', 'boston', 'cat']
    """
    seen: Counter = Counter()
    n = 0
    for text in texts:
        n += 1
        seen.update(content_stems(text))
    if n == 0:
        raise DataError("specific_stems needs at least one text")
    return {w for w, c in seen.items() if c / n < max_share}


def recalled_stems(reference: str, present: Sequence[str], earlier_facts: Sequence[str],
                   specific: set[str]) -> frozenset:
    """The specific stems the gold ``reference`` reply takes from ``earlier_facts`` that the texts
    ``present`` in the session so far have not said.

    >>> sorted(recalled_stems("How was Boston? And the cats?", ["I am back!"],
    ...                       ["I live in Boston.", "I have two cats."], {"boston", "cat", "back"}))
    ['boston', 'cat']
    >>> recalled_stems("How was Boston?", ["Back from Boston!"], ["I live in Boston."], {"boston"})
    frozenset()
    """
    facts = set().union(*(content_stems(f) for f in earlier_facts)) if earlier_facts else set()
    said = set().union(*(content_stems(t) for t in present)) if present else set()
    return frozenset((content_stems(reference) & facts & specific) - said)


def uses_memory(reply: str, recalled: Iterable[str]) -> bool:
    """Whether ``reply`` says one of the ``recalled`` stems.

    >>> uses_memory("Did you enjoy Boston?", {"boston"}), uses_memory("Nice!", {"boston"})
    (True, False)
    """
    return bool(content_stems(reply) & set(recalled))


def turn_line(turn: Union[Turn, str]) -> str:
    """A turn as one line, ``Speaker: text`` (strings pass through): how the turn baselines index
    a turn and how the agents write the current context.

    >>> turn_line(Turn("S1:1", "Maya", "I moved to Denver.")), turn_line("Leo: hi")
    ('Maya: I moved to Denver.', 'Leo: hi')
    """
    return turn if isinstance(turn, str) else f"{turn.speaker}: {turn.text}"


def cut_to_tokens(tokenizer, text: str, limit: int) -> str:
    """``text`` cut after its first ``limit`` tokens (whole characters kept; unchanged when shorter).
    Texts far longer than any limit are first cut by characters (a token is at least one), so the
    tokenizer never reads megabytes."""
    text = text[: limit * 16]
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    offsets = enc["offset_mapping"]
    return text if len(offsets) <= limit else text[: offsets[limit - 1][1]]
