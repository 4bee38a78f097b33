"""Loaders for the shipped samples and the real data formats, plus format detection and stats.

Every loader returns the dataclasses of :mod:`glong_lib.schema` and fails with a one-line
:class:`~glong_lib.errors.DataError` naming the file, the line or record, and what is wrong
(field types are checked, not assumed). The statistics of ``glong inspect`` live in
:mod:`glong_lib.inspection`.

One module per data family (``project``, ``msc``, ``personaext``, ``summaries``, ``locomo``,
``paper_data``), their shared ``checks`` and the format ``detect``-ion; everything is importable from here.

Supported formats (``detect_format`` names):

=====================  ==========================================================================
``glong-conversation`` this project's conversation JSON (``data/conversations/*.json``)
``glong-probes``       retrieval probes JSONL (``data/probes.jsonl``)
``glong-triple-pairs`` utterance -> triples JSONL (``data/triple_pairs.jsonl``)
``glong-summaries``    dialogue -> summary (+ triples) JSONL (``data/summaries.jsonl``)
``glong-extraction``   per-turn triples JSONL that ``glong extract`` and ``glong score`` write
                       (``{conversation, session, turn_id, speaker, text, triples[, weights]}``)
``msc-jsonl``          MSC rebuilt as JSONL (``msc4_valid.jsonl``)
``msc-parlai``         ParlAI ``msc_dialogue`` / ``msc_personasummary`` lines (``session_N/*.txt``)
``msc-episodes``       MSC episodes with ``first_session_dialogue`` ... keys (Theanine's copy)
``personaext-pairs``   PersonaExt pairs ``{utterance, subject, relation, object}``
``personaext-u2t``     PAED's original ``u2t_map_all.json`` (token-index triplets)
``personaext-schema``  PersonaExt relation schema (JSON with trailing commas and comments)
``samsum``             SAMSum JSON list ``{id, dialogue, summary}``
``dialogsum``          DialogSum JSONL ``{fname, dialogue, summary[, summary1..3], topic}``
``locomo``             LoCoMo JSON (``locomo10.json`` layout; its observation sentences: ``load_locomo_observations``)
``longmemeval``        LongMemEval JSON (``longmemeval_s.json``): one haystack of sessions per question
``cc``                 Conversation Chronicles JSONL (``test.jsonl``): ``*_session_dialogue`` + time intervals
``ldagent-msc``        LD-Agent's MSC (``sequential_test.json``): samples of ``{dialog, time_pass}`` sessions
=====================  ==========================================================================
"""

from __future__ import annotations

from .checks import (  # noqa: F401
    _ORDINALS,
    _TIME_UNITS,
    LOCOMO_CATEGORIES,
    _check_conversation,
    _gap,
    _gap_value,
    _need,
    _optional,
    _triples,
    _unique_ids,
)
from .detect import _first_record, detect_format  # noqa: F401
from .dispatch import CONVERSATION_LOADERS, load_conversations  # noqa: F401
from .locomo import (  # noqa: F401
    UNIT_ID_JOIN,
    _locomo_session_keys,
    _regap,
    dialogue_position,
    load_locomo,
    load_locomo_observations,
    parse_locomo_date,
    source_turns,
)
from .msc import _episode_sessions, load_msc_episodes, load_msc_jsonl, load_msc_parlai, load_msc_persona_facts  # noqa: F401
from .paper_data import (  # noqa: F401
    _INTERVAL_COUNTS,
    _INTERVAL_UNITS,
    _LME_DATE,
    _lme_date,
    load_conversation_chronicles,
    load_ldagent_msc,
    load_longmemeval,
    parse_interval,
)
from .personaext import load_personaext, load_personaext_schema, load_personaext_u2t  # noqa: F401
from .project import (  # noqa: F401
    TURN_ID_KEYS,
    load_conversation,
    load_extraction_rows,
    load_probes,
    load_summary_pairs,
    load_triple_pairs,
    row_triples,
    row_turn_id,
)
from .summaries import _SPEAKER_LINE, load_dialogsum, load_samsum, summary_pair_conversation  # noqa: F401
