"""Attention-aware importance of triples (paper section 3.2, Eq. 1-3).

A summarizer reads a session and writes a summary; the triples it looks at while writing are the
important ones. Five modules, one job each:

* ``equations``: Eq. 1 (:func:`head_average`), Eq. 2 (:func:`triple_saliency`, and
  :func:`position_saliency` over any token positions), Eq. 3 (:func:`normalise_by_max`), and the
  token bookkeeping (:func:`token_spans`);
* ``encoder_decoder``: the paper's source, an encoder-decoder summarizer's cross-attention
  (:class:`SalienceScorer`; the authors' T5 in the hub and paper profiles);
* ``decoder_only``: the offline source, the bundled SmolLM2's self-attention from the rows that
  write its summary, one chosen layer (:class:`DecoderSalienceScorer`);
* ``positions``: the text that source reads, where each triple's words are in it and which tokens
  they cover (:func:`dialogue_text`, :func:`dialogue_triple_ranges`, :func:`positions_in`);
* ``sessions``: whole conversations, Eq. 3 over a scope (``session``, the paper; ``dialogue``,
  the authors' code): :func:`score_conversation`, and :func:`weigh_session` for one session at a
  time (what the agent does as sessions arrive).

Every scorer answers ``score(triples, turns=None) -> SalienceResult``; :func:`load_scorer` gives a
profile's own.
"""

from __future__ import annotations

from typing import Union

from ..config import SALIENCE_SOURCES, Profile, get_profile
from ..errors import DataError
from ..summarizer import linearise_triples  # noqa: F401  (the paper source's input text)
from .decoder_only import (  # noqa: F401
    DEFAULT_DECODER_SOURCE,
    INPUTS,
    PROMPTS,
    SYSTEM,
    WHERE,
    DecoderReading,
    DecoderSalienceScorer,
    DecoderSourceSettings,
    dialogue_text,
    dialogue_triple_ranges,
    load_decoder_scorer,
    positions_in,
    triple_word_ranges,
    turns_from_triples,
    utterance_word_ranges,
)
from .encoder_decoder import SalienceResult, SalienceScorer, load_seq2seq_scorer  # noqa: F401
from .equations import (  # noqa: F401
    AGGREGATES,
    head_average,
    layer_saliency,
    normalise_by_group,
    normalise_by_max,
    position_saliency,
    token_spans,
    triple_saliency,
)
from .sessions import SCOPES, score_conversation, session_turns, weigh_session, with_weights  # noqa: F401

#: Attention sources by name: what ``profile.summarizer.source`` and ``load_scorer(source=...)`` take.
SOURCES = SALIENCE_SOURCES


def load_scorer(profile: Union[str, Profile] = "offline", source: str = "", **kwargs):
    """The salience scorer of a profile (``profile.summarizer.source`` unless ``source`` says
    otherwise): offline the decoder-only SmolLM2 source, chosen by ``benchmarks/bench_salience.py``,
    read as ``profile.summarizer.decoder`` says (``--salience-layer`` and the other ``--salience-*``
    options); ``source="seq2seq"`` the suite's small encoder-decoder (trained and cached on first
    use); hub and paper the paper's T5 through the encoder-decoder scorer."""
    p = get_profile(profile)
    source = source or p.summarizer.source
    if source not in SOURCES:
        raise DataError(f"unknown salience source '{source}' (choose from {', '.join(SOURCES)})")
    if source == "decoder":
        kwargs.setdefault("settings", p.summarizer.decoder)
        return load_decoder_scorer(**kwargs)
    return load_seq2seq_scorer(p, **kwargs)
