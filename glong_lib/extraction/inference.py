"""Batched greedy extraction with a trained adapter."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence, Union

from ..artifacts import ARTIFACT_MARKER, verify_artifact, write_artifact_marker
from ..config import ExtractorSettings, Profile, get_profile
from ..errors import DataError
from ..io import PathLike
from ..lora import read_training_log
from ..models import cache_dir, loading
from ..schema import Conversation, Triple
from ..text import cut_to_tokens, resolve_subject
from .parsing import parse_output
from .prompt import load_pairs, render_prompt, training_pairs_path
from .training import load_base, train_extractor


def _cache_argument() -> str:
    """The name ``generate`` takes a key/value cache under: ``cache`` in recent transformers 5
    releases (which warn on the old name), ``past_key_values`` before."""
    from transformers.utils import generic

    return "cache" if hasattr(generic, "_rename_kwargs_for_bc") else "past_key_values"


#: Greedy decoding budget by default (a profile sets its own: ``ExtractorSettings.max_new_tokens``).
MAX_NEW_TOKENS = ExtractorSettings.max_new_tokens

#: The longest utterance the extractor reads, in tokens; the rest of a longer one is cut off. The
#: adapter learns on pairs cut to 256 tokens (``training.tokenize_example``), a chat turn is ~20, and
#: without a bound one 1 MB turn (~250k tokens) asked for a 296 GB attention mask.
MAX_UTTERANCE_TOKENS = 512


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
        self._prefix = None  # (token ids, key/value cache) of the prompts' shared start, on first use

    def generate(self, utterances: Sequence[str], batch_size: int = 8, progress: bool = True) -> list[str]:
        """Greedy answers, batched; batches hold similar lengths (less padding). The prompt's shared
        start (chat template and instruction, about 36 tokens of SmolLM2's 75 on a LoCoMo turn) is run
        through the model once and its key/value cache reused by every batch (:meth:`shared_prefix`)."""
        from tqdm.auto import tqdm

        order = sorted(range(len(utterances)), key=lambda i: len(utterances[i]))
        outputs: list[str] = [""] * len(utterances)
        batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
        for batch in tqdm(batches, desc=f"extract ({self.name})", disable=not progress or len(batches) < 2):
            for i, text in zip(batch, self._generate_batch([utterances[i] for i in batch])):
                outputs[i] = text.strip()
        return outputs

    def shared_prefix(self):
        """(token ids, key/value cache) of what every prompt starts with: computed once per extractor.

        Each batch's rows are laid out as [shared prefix][padding][rest of the prompt], with the
        padding masked out; positions come from the attention mask, so the rest of each prompt sits
        where it would without padding and greedy decoding gives the same answers as feeding the
        whole prompt (tests/test_extraction.py checks that). A batch with a prompt that does not
        start with these ids (a tokenizer merging the prompt's last token with the utterance's
        first) is run whole, left-padded, without the cache."""
        if self._prefix is None:
            import torch

            first, second = (self.tokenizer(render_prompt(self.tokenizer, u), add_special_tokens=False)["input_ids"]
                             for u in ("a", "Z 1"))
            n = next((k for k, (a, b) in enumerate(zip(first, second)) if a != b), min(len(first), len(second)))
            ids = first[:n]
            device = next(self.model.parameters()).device
            with torch.no_grad():
                out = self.model(input_ids=torch.tensor([ids], device=device), use_cache=True)
            cache = getattr(out, "cache", None)
            self._prefix = (ids, cache if cache is not None else out.past_key_values)
        return self._prefix

    def _generate_batch(self, utterances: Sequence[str]) -> list[str]:
        import copy

        import torch

        prefix, prefix_cache = self.shared_prefix()
        tok = self.tokenizer
        prompts = [render_prompt(tok, cut_to_tokens(tok, u, MAX_UTTERANCE_TOKENS)) for u in utterances]
        ids = [tok(p, add_special_tokens=False)["input_ids"] for p in prompts]
        if any(row[:len(prefix)] != prefix for row in ids):
            prefix, prefix_cache = [], None  # an utterance whose first token merged with the prompt's: no reuse
        rests = [row[len(prefix):] for row in ids]
        width = max(len(r) for r in rests)
        pad = tok.pad_token_id
        device = next(self.model.parameters()).device
        input_ids = torch.tensor([prefix + [pad] * (width - len(r)) + r for r in rests], device=device)
        mask = torch.tensor([[1] * len(prefix) + [0] * (width - len(r)) + [1] * len(r) for r in rests], device=device)
        reuse = {}
        if prefix_cache is not None:
            cache = copy.deepcopy(prefix_cache)  # generate extends the cache it is given
            cache.batch_repeat_interleave(len(rests))
            reuse = {_cache_argument(): cache}
        with torch.no_grad():
            gen = self.model.generate(input_ids=input_ids, attention_mask=mask, max_new_tokens=self.max_new_tokens,
                                      do_sample=False, pad_token_id=pad, eos_token_id=tok.eos_token_id, **reuse)
        return tok.batch_decode(gen[:, input_ids.shape[1]:], skip_special_tokens=True)

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
                   zero_shot: bool = False, device: Optional[str] = None,
                   data: Optional[PathLike] = None, bfloat16: bool = False) -> TripleExtractor:
    """The extractor of a profile. Without ``adapter`` it uses the cached default adapter,
    training it on ``data``, else ``prompt.training_pairs_path(profile)`` (PersonaExt for the paper
    profile when the real-data folder is set), else the shipped pairs, on first use (``profile.smoke()``: a few
    steps, under its own key); ``zero_shot`` gives the base model with no adapter.

    ``bfloat16`` runs the merged model in bfloat16 (it is float32 on a CPU by default). On a CPU with
    native bfloat16 arithmetic (AVX512-BF16 or AMX) that was 1.3-1.4x faster (5.1-5.9 utterances/s
    on 2 cores against 3.6-4.4), but greedy answers differed from float32 on 2-4 utterances of 64
    and can differ between CPUs, so the default stays float32: the same numbers for every student
    (``benchmarks/bench_extraction.py --parts throughput`` measures both)."""
    budget = get_profile(profile).extractor.max_new_tokens  # the profile's decoding budget
    if zero_shot:
        tok, model = load_base(profile, device)
        return TripleExtractor(tok, model, name="zero-shot", max_new_tokens=budget)
    if adapter is None:
        adapter = train_extractor(load_pairs(data or training_pairs_path(profile)), profile, device=device)
    adapter = Path(adapter)
    if not (adapter / "adapter_config.json").is_file():
        raise DataError("not a LoRA adapter folder (no adapter_config.json)", path=adapter)
    verify_artifact(adapter, "adapter")  # weights damaged in place load fine and extract nothing
    marked = (adapter / ARTIFACT_MARKER).is_file()
    if not marked:
        check_adapter_weights(adapter)
    import warnings

    from peft import PeftModel

    tok, model = load_base(profile, device)
    with warnings.catch_warnings(), loading("adapter", str(adapter)):
        # peft calls a transformers name deprecated in v5; nothing for a user to act on
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        model = PeftModel.from_pretrained(model, str(adapter))
    if not get_profile(profile).extractor.quantize_4bit:
        model = model.merge_and_unload()  # one plain model: faster generation
        if bfloat16:
            import torch

            model = model.to(torch.bfloat16)
    relations = read_training_log(adapter).get("relations")
    extractor = TripleExtractor(tok, model, name="fine-tuned", adapter_dir=adapter, max_new_tokens=budget,
                                relations=relations)
    if not marked:  # no checksum to trust: the adapter must still extract a plain statement
        check_canary(extractor)
        _mark_cached_adapter(adapter)
    return extractor


#: A statement every trained adapter turns into at least one triple (a shipped training pair's kind);
#: an adapter with no checksum must pass it before use (see :func:`check_canary`).
CANARY = "I adopted a cat named Tom last week."

#: LoRA weights are small (|w| below 1 after training); random bytes written over a float32 tensor
#: give values far beyond this, or NaN.
MAX_ADAPTER_WEIGHT = 1e4


def check_adapter_weights(adapter: Path) -> None:
    """Refuse an adapter whose weights hold a NaN, an infinity or a value beyond
    :data:`MAX_ADAPTER_WEIGHT`: bytes overwritten in place load without complaint and extract nothing
    (sweep F06). Used for adapters without a checksum marker."""
    from safetensors.torch import load_file

    path = adapter / "adapter_model.safetensors"
    if not path.is_file():
        return  # an older .bin adapter: PEFT's own loader reports what it finds
    with loading("adapter", str(adapter)):
        tensors = load_file(str(path))
    for name, w in tensors.items():
        w = w.float()
        if not bool(w.isfinite().all()) or float(w.abs().max()) > MAX_ADAPTER_WEIGHT:
            raise DataError(f"adapter weights are damaged ({name} holds NaN, infinity or |w| > "
                            f"{MAX_ADAPTER_WEIGHT:g}): delete {adapter}")


def check_canary(extractor: "TripleExtractor") -> None:
    """Refuse an adapter that finds no triple in :data:`CANARY` (one greedy call, about a second):
    damaged weights, or an adapter trained for another prompt, would otherwise give 0 triples for
    every turn without a word."""
    if not extractor.extract([CANARY], ["Maya"], progress=False)[0]:
        raise DataError(f"adapter finds no triple in {CANARY!r} (damaged, or trained for another prompt): "
                        f"retrain it or delete {extractor.adapter_dir}")


def _mark_cached_adapter(adapter: Path) -> None:
    """An adapter in glong's own cache trained before artifacts carried checksums gets its marker
    once it has loaded, so damage from then on is found (:func:`artifacts.verify_artifact`); damage done
    before cannot be told apart from the weights themselves."""
    if (adapter / ARTIFACT_MARKER).exists() or adapter.resolve().parent != cache_dir("extractor").resolve():
        return
    try:
        write_artifact_marker(adapter, "lora-adapter")
    except (DataError, OSError):
        pass  # a read-only cache: the adapter still works, unchecked as before


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



