"""Each pipeline stage's settings, one frozen dataclass per stage (endpoint, extractor, salience
source and summarizer, generator, memory), with the choices their fields take."""

from __future__ import annotations

from dataclasses import MISSING, dataclass
from typing import Optional

from .knobs import Checked, knob


@dataclass(frozen=True)
class EndpointSettings(Checked):
    """Where an LM call that leaves the process goes: an OpenAI-compatible server (vLLM, OpenAI ...)
    and how it is asked (``endpoint.Endpoint``). ``base_url`` None: the stage runs here. Retries are
    the openai SDK's own (connection errors, 408, 409, 429, 5xx, with its backoff); ``deadline`` bounds
    one request in all, retries and a server dripping bytes included; ``concurrency`` requests are in
    flight at once (results in input order); ``reply_cache`` keeps every reply on disk
    (``$GLONG_CACHE/replies``) so an interrupted run resumes without asking twice.

    >>> EndpointSettings(concurrency=0)
    Traceback (most recent call last):
    glong_lib.errors.DataError: EndpointSettings.concurrency should be in [1, 256], got 0
    """

    base_url: Optional[str] = knob(None, "OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    model: Optional[str] = knob(None, "the model name the server knows")
    api_key_env: str = knob("OPENAI_API_KEY", "environment variable holding the API key")
    timeout: float = knob(30.0, "seconds to connect, and between two reads of a reply", 0.01, 3600.0)
    deadline: float = knob(300.0, "seconds one request may take in all, retries included", 0.01, 86400.0)
    retries: int = knob(3, "retries of a failed request (the openai SDK's max_retries)", 0, 20)
    concurrency: int = knob(1, "requests in flight at once", 1, 256)
    max_reply_bytes: int = knob(4_000_000, "a reply body longer than this is refused (bytes)", 1000, 1_000_000_000)
    reply_cache: bool = knob(True, "keep replies on disk ($GLONG_CACHE/replies): a resumed run asks once")


#: No endpoint: the stage runs in this process.
LOCAL = EndpointSettings()


#: Where the extractor's training pairs come from: the shipped pairs, or PersonaExt from the real-data folder.
TRAIN_DATA = ("shipped", "personaext")


@dataclass(frozen=True)
class ExtractorSettings(Checked):
    """The triple extractor: base model and its LoRA fine-tuning (paper Appendix B: r=32, alpha=32,
    10 epochs, lr 2e-4, QLoRA on Qwen3-8B). ``glong train-extractor`` options are made from these
    fields (``commands.common.add_stage_options``).

    ``max_steps`` set: train that many steps (the CPU profile); None: train ``epochs`` epochs.
    """

    base: str = knob(MISSING, "base model of the extractor (a hub id or bundled:...)")
    lora_r: int = knob(16, "LoRA rank r", 1, 1024)
    lora_alpha: int = knob(32, "LoRA scale alpha", 1, 4096)
    lora_dropout: float = knob(0.05, "dropout on the LoRA branch", 0.0, 0.9)
    quantize_4bit: bool = knob(False, "QLoRA: the base model in 4 bits (GPU)")
    epochs: float = knob(3.0, "training epochs when no step count is set", 0.01, 1000.0)
    max_steps: Optional[int] = knob(None, "training steps (none: train the epochs)", 1, 1_000_000)
    learning_rate: float = knob(2e-4, "peak learning rate (cosine schedule)", 1e-8, 1.0)
    batch_size: int = knob(8, "training pairs a step", 1, 4096)
    # greedy decoding budget (extraction.TripleExtractor): two triples take ~45 tokens of SmolLM2's
    max_new_tokens: int = knob(64, "longest answer in tokens when extracting", 1, 8192)
    # the shipped pairs are under 120 tokens (tokenize_example)
    max_length: int = knob(256, "longest training example in tokens (longer ones are cut)", 16, 32768)
    train_data: str = knob("shipped", "training pairs: shipped, or PersonaExt from $GLONG_REAL_DATA",
                           choices=TRAIN_DATA)
    endpoint: EndpointSettings = LOCAL  # base_url set: extract through that server (extraction.remote)


#: What the decoder source reads (``salience.decoder_only``), and where a triple's words count.
DECODER_INPUTS = ("dialogue", "triples")
DECODER_WHERE = ("turn", "session")


@dataclass(frozen=True)
class DecoderSourceSettings(Checked):
    """What the decoder-only salience source reads and which attention it keeps (all in its cache
    keys). The defaults were chosen by ``benchmarks/bench_salience.py`` on its selection split
    (DialogSum dev + 40 SAMSum test dialogues) and reported on the other split; see notebook A1."""

    # report split 0.787 within-dialogue AUC (0.762 at 48 rows); the linearised triples 0.591
    input: str = knob("dialogue", "decoder source: what the summary is written from", choices=DECODER_INPUTS)
    layer: int = knob(16, "decoder source: the attention layer read for Eq. 1-3 (16 of SmolLM2's 30; "
                                 "-1, the last, gives 0.675 at 48 rows; negative counts from the end)", -256, 255)
    # the paper's sum favours long triples
    aggregate: str = knob("mean", "decoder source: Eq. 2 over a triple's tokens", choices=("sum", "mean"))
    # the shortest summary within 0.035 of the best on selection (speed)
    max_new_tokens: int = knob(16, "decoder source: tokens of the summary whose attention is read", 1, 4096,
                               option="decoder-tokens")
    where: str = knob("session", "decoder source: a triple's words: in its own turn, or wherever the session says them",
                      choices=DECODER_WHERE)


#: The architectures of the summarizer the suite trains (``summarizer.build_model``).
SUMMARIZER_ARCHS = ("t5", "minilm-ed")


@dataclass(frozen=True)
class SummarizerConfig(Checked):
    """The training recipe of the summarizer the suite trains (``suite:summarizer``; all of it is in
    the trained model's cache key). A smoke profile trains ``SMOKE_SUMMARIZER`` instead."""

    arch: str = knob("t5", "a small T5 from scratch, or MiniLM warm-started on both sides", choices=SUMMARIZER_ARCHS)
    d_model: int = knob(128, "hidden size (t5)", 8, 4096)
    num_layers: int = knob(2, "layers of encoder and decoder (t5)", 1, 48)
    num_heads: int = knob(4, "attention heads (t5)", 1, 64)
    d_ff: int = knob(512, "feed-forward size (t5)", 8, 16384)
    steps: int = knob(600, "training steps", 1, 1_000_000)
    batch_size: int = knob(16, "pairs a step", 1, 4096)
    learning_rate: float = knob(1e-3, "peak learning rate", 1e-8, 1.0)
    warmup_steps: int = knob(100, "linear warm-up steps", 0, 1_000_000)
    max_source_tokens: int = knob(256, "source text cut at this many tokens", 8, 32768)
    max_target_tokens: int = knob(64, "summary cut at this many tokens", 2, 32768)
    # the scorer reads linearised triples, so those first; ("triples", "dialogue") doubles the CPU cost
    inputs: tuple[str, ...] = knob(("triples",), "sources paired with each summary (triples, dialogue)")
    n_test: int = knob(30, "shipped pairs held out for evaluation", 0, 100_000)
    # as written, the central facts come first
    permutations: int = knob(3, "shuffled copies of each triples source", 1, 100)
    seed: int = knob(42, "training seed", 0, 2**32 - 1)


#: The tiny recipe a smoke profile trains (``summarizer.load_summarizer``).
SMOKE_SUMMARIZER = SummarizerConfig(d_model=64, num_layers=2, num_heads=2, d_ff=128, steps=12, batch_size=8,
                                    warmup_steps=2, permutations=1)
#: Where the attention that weighs triples comes from (``salience.SOURCES``).
SALIENCE_SOURCES = ("decoder", "seq2seq")


@dataclass(frozen=True)
class SummarizerSettings(Checked):
    """The salience stage (Eq. 1-3): where the attention that weighs triples comes from.
    ``source="seq2seq"``: an encoder-decoder's cross-attention (the paper), ``model`` being
    ``suite:summarizer`` (trained by the suite with the recipe ``training``) or a hub checkpoint, with
    its limits (beams, summary length, input length: capped for CPU by default, the reference code's
    in the paper profile). ``source="decoder"``: the bundled SmolLM2's attention from its summary onto
    the dialogue, read as ``decoder`` says (chosen by ``benchmarks/bench_salience.py``)."""

    model: str = knob(MISSING, "the encoder-decoder summarizer (suite:summarizer or a hub id)")
    num_beams: int = knob(4, "seq2seq: beams of the summary", 1, 64)
    max_new_tokens: int = knob(48, "seq2seq: longest summary in new tokens", 1, 4096)
    source: str = knob("seq2seq", "where the attention comes from", choices=SALIENCE_SOURCES)
    min_new_tokens: int = knob(5, "seq2seq: shortest summary in new tokens", 0, 4096)
    max_input_tokens: int = knob(512, "seq2seq: input cut at this many tokens", 8, 32768)
    decoder: DecoderSourceSettings = DecoderSourceSettings()
    training: SummarizerConfig = SummarizerConfig()


#: How a prompt shows memories (``generation.format_memory``): the paper's ``s -r-> o`` lines, the
#: reference code's ranked lines, or ``plain`` (the same prompt without its tags, memories as words).
MEMORY_FORMATS = ("arrow", "ranked", "plain")
#: The paper's format (Figure 8): the one default of every function and agent that formats memories.
PAPER_MEMORY_FORMAT = "arrow"
#: The local responders ``glong eval-msc --responder`` offers: the chat model as shipped, and the MSC
#: LoRA adapters of ``generation.responder`` (``generation.responder.RESPONDER_KINDS``: how each is trained).
RESPONDERS = ("plain", "msc-lora", "msc-recall")


@dataclass(frozen=True)
class GeneratorSettings(Checked):
    """The LLM that answers (paper: gpt-4o-mini at temperature 0; here greedy decoding).
    ``memory_format``: how the prompt shows memories (``generation.MEMORY_FORMATS``): the paper's
    ``arrow`` lines under ``<CONTEXT>``/``<MEMORY>`` tags, or ``plain`` (the same words, no markup)."""

    model: str = knob(MISSING, "the model that answers (a hub id, bundled:..., or openai:NAME)")
    # one home of the reply length: a local model's default cap (an endpoint's replies are uncapped
    # unless the option is given: commands.evaluate.reply_cap, generation.make_generator)
    max_new_tokens: int = knob(48, "longest reply of a local model in new tokens (an endpoint's replies are "
                                   "uncapped unless this is given)", 1, 8192)
    memory_format: str = knob(PAPER_MEMORY_FORMAT,
                              "memory lines: the paper's 's -r-> o' under <CONTEXT>/<MEMORY> tags, the "
                              "reference code's ranked lines, or plain (no tags, memories as words)",
                              choices=MEMORY_FORMATS)
    endpoint: EndpointSettings = LOCAL  # base_url set: generate through that server (generation.remote)


#: What a memory does with a changed fact: keep every edge (the paper), or let the newer value of a
#: single-valued relation supersede the older one (``memory.GraphMemory``).
POLICIES = ("append", "supersede")

#: Relations that hold one value at a time (PersonaExt names): where one lives, works, one's job,
#: marital and school status. Under policy ``supersede`` a newer value replaces the older one.
SINGLE_VALUED_RELATIONS = frozenset({
    "live_in_citystatecountry", "live_in_general", "employed_by_company", "employed_by_general",
    "has_profession", "job_status", "marital_status", "school_status",
})


@dataclass(frozen=True)
class MemorySettings(Checked):
    """The graph memory (``memory.GraphMemory``, ``memory.build_memory``, ``glong build``): what a
    changed fact does, when two entity spellings become one node, which relations hold one value.

    >>> MemorySettings(merge_threshold=0.0)
    Traceback (most recent call last):
    glong_lib.errors.DataError: MemorySettings.merge_threshold should be in [1e-06, 1.0], got 0.0
    """

    policy: str = knob("append", "changed facts: keep every edge (paper), or supersede single-valued ones",
                       choices=POLICIES)
    # Measured on MiniLM: "hiking"/"hikes" 0.90 and "portland"/"denver" 0.55 stay apart;
    # "the hospital"/"hospital" 0.95 and "make pasta"/"making pasta" 0.96 merge.
    merge_threshold: float = knob(0.92, "cosine (unit vectors) at or above which two entity spellings become "
                                        "one node", 1e-6, 1.0)
    single_valued: frozenset = knob(SINGLE_VALUED_RELATIONS, "relations that hold one value at a time "
                                                             "(comma-separated)")
