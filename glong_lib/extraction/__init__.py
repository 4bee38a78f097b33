"""Triple extraction (paper section 3.2): utterance -> (subject, relation, object) triples with a
LoRA-tuned small LM, one module per step:

* ``prompt``: the instruction, the JSON target and the training pairs;
* ``parsing``: a tolerant parser for the broken JSON small models write;
* ``training``: LoRA fine-tuning of the extractor (the machinery it shares with the responder is
  ``glong_lib.lora``), cached by a key of its inputs;
* ``inference``: batched greedy extraction (``TripleExtractor``);
* ``remote``: the same through an OpenAI-compatible server (``RemoteTripleExtractor``), and
  ``load_extractor``, which gives either as the profile's ``extractor.endpoint`` says;
* ``cache``: extracted triples of whole conversations cached on disk (``extracted_triples``).

Scores of an extractor live in ``glong_lib.evaluation.extraction``.

>>> parse_triples('Sure! [{"subject": "i", "relation": "have_pet", "object": "dog"},]')
[{'subject': 'i', 'relation': 'have_pet', 'object': 'dog'}]
"""

from ..lora import LORA_TARGETS, TrainSettings, count_parameters, read_training_log, training_arguments  # noqa: F401
from .cache import LOCOMO_EXTRACTION_BATCH, extracted_triples, extraction_cache_path, extractor_key  # noqa: F401
from .inference import (  # noqa: F401
    MAX_NEW_TOKENS,
    SNAP_CUTOFF,
    Extraction,
    TripleExtractor,
    extract_conversation,
    snap_relation,
)
from .parsing import (  # noqa: F401
    FIELDS,
    MAX_DEPTH,
    MAX_STARTS,
    ParseResult,
    parse_output,
    parse_triples,
    parse_unguarded,
)
from .prompt import (  # noqa: F401
    PROMPT_VERSION,
    SYSTEM_PROMPT,
    USER_TEMPLATE,
    build_messages,
    default_pairs_path,
    format_target,
    load_pairs,
    pairs_hash,
    personaext_path,
    prompt_hash,
    render_prompt,
    split_pairs,
)
from .remote import NO_THINKING, RemoteTripleExtractor, load_extractor, merge_adapter  # noqa: F401
from .training import (  # noqa: F401
    DEV_LOSS_EXAMPLES,
    adapter_dir_for,
    load_base,
    lora_config,
    shipped_adapter,
    tokenize_example,
    train_extractor,
    train_settings,
)
