"""The paper's attention source: an encoder-decoder summarizer's cross-attention (Eq. 1-3).

:class:`SalienceScorer` writes the session's triples as one text (:func:`linearise_triples`, the
reference code's format), lets the summarizer write a summary with beam search, re-reads that
summary teacher-forced with eager attention, and applies Eq. 1-3 to the last decoder layer's
cross-attention. The ``hub`` and ``paper`` profiles run the authors' T5 through it; the suite's
own small encoder-decoders (``glong_lib.summarizer``) too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
import torch

from ..config import get_profile
from ..errors import DataError
from ..schema import Triple, Turn
from ..summarizer import linearise_triples, load_summarizer
from .equations import head_average, normalise_by_max, token_spans, triple_saliency


@dataclass
class SalienceResult:
    """Weights of one session's triples, with what is needed to draw them."""

    triples: list[Triple]
    raw: np.ndarray                 # Eq. 2, one per triple
    weights: np.ndarray             # Eq. 3 with the session maximum
    summary: str
    input_text: str
    input_tokens: list[str]
    summary_tokens: list[str]
    spans: list[tuple[int, int]]    # token range of each triple in the input
    attention: np.ndarray           # Eq. 1 A, (input tokens, summary tokens)
    head_attention: np.ndarray      # last layer before averaging, (heads, input tokens, summary tokens)
    truncated: int = 0              # triples cut off by the input length limit (raw score 0)
    positions: Optional[list[list[int]]] = None  # decoder-only dialogue input: token positions per triple

    def table(self) -> list[dict[str, Any]]:
        """One row per triple: the triple, its token count, raw score and weight."""
        return [{"triple": t.text(), "tokens": b - a, "raw": round(float(r), 3), "weight": round(float(w), 3)}
                for t, (a, b), r, w in zip(self.triples, self.spans, self.raw, self.weights)]


class SalienceScorer:
    """Scores triples with an encoder-decoder summarizer's cross-attention (Eq. 1-3).

    ``tokenizer`` must be a fast tokenizer (offsets); ``model`` any transformers encoder-decoder
    loaded with ``attn_implementation="eager"`` (other attention kernels return no weights).
    """

    def __init__(self, tokenizer, model, num_beams: int = 4, max_new_tokens: int = 48,
                 min_new_tokens: int = 5, max_input_tokens: int = 512, name: str = ""):
        if not getattr(tokenizer, "is_fast", False):
            raise DataError("the salience scorer needs a fast tokenizer (for character offsets)")
        self.tokenizer, self.model = tokenizer, model.eval()
        self.num_beams, self.max_new_tokens, self.min_new_tokens = num_beams, max_new_tokens, min_new_tokens
        self.max_input_tokens, self.name = max_input_tokens, name

    def encode(self, triples: Sequence[Triple]) -> tuple[str, list[int], list[tuple[int, int]], int]:
        """Linearise, tokenise (no special tokens, as the reference code), locate each triple."""
        if not triples:
            raise DataError("no triples to score")
        text, ranges = linearise_triples(triples)
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True,
                             truncation=True, max_length=self.max_input_tokens)
        spans = token_spans(enc["offset_mapping"], ranges, text)
        truncated = sum(1 for a, b in spans if a == b)
        return text, list(enc["input_ids"]), spans, truncated

    @torch.no_grad()
    def summarise(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Beam search as in the reference code (4 beams); lengths from the profile (``SummarizerSettings``:
        capped for CPU by default, the reference code's 10-150 tokens in the paper profile)."""
        return self.model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                                   num_beams=self.num_beams, max_new_tokens=self.max_new_tokens,
                                   min_new_tokens=self.min_new_tokens, early_stopping=True, do_sample=False)[0]

    @torch.no_grad()
    def cross_attention(self, input_ids: torch.Tensor, summary_ids: torch.Tensor) -> torch.Tensor:
        """Teacher-forced pass over the summary; the LAST decoder layer's cross-attention (H, M, N).

        ``summary_ids`` is what ``generate`` returns: the decoder start token, then the M summary
        tokens y_1..y_M. The decoder reads it shifted right (all but the last id), so row j is the
        step that writes y_{j+1}: exactly M rows, one per summary token (Eq. 2 sums over j = 1..M).
        """
        out = self.model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                         decoder_input_ids=summary_ids[None, :-1], output_attentions=True)
        if not out.cross_attentions or out.cross_attentions[-1] is None:
            raise RuntimeError("the model returned no cross-attention: load it with attn_implementation='eager'")
        return out.cross_attentions[-1][0]

    def score(self, triples: Sequence[Triple], turns: Optional[Sequence[Turn]] = None) -> SalienceResult:
        """Summarise the triples, then Eq. 1 -> Eq. 2 -> Eq. 3 (session maximum). ``turns`` is
        accepted for a common interface with the decoder-only source and not used: the paper's
        summarizer reads the triples only."""
        text, ids, spans, truncated = self.encode(triples)
        device = next(self.model.parameters()).device
        input_ids = torch.tensor([ids], device=device)
        summary_ids = self.summarise(input_ids)
        heads = self.cross_attention(input_ids, summary_ids).float().cpu()   # (H, M, N)
        A = head_average(heads)                                             # Eq. 1
        raw = triple_saliency(A, spans)                                     # Eq. 2
        weights = normalise_by_max(raw)                                     # Eq. 3
        tok = self.tokenizer
        return SalienceResult(
            triples=list(triples), raw=raw.numpy(), weights=weights.numpy(),
            summary=tok.decode(summary_ids, skip_special_tokens=True).strip(), input_text=text,
            input_tokens=tok.convert_ids_to_tokens(ids),
            summary_tokens=tok.convert_ids_to_tokens(summary_ids[1:].tolist()),  # y_1..y_M, one per row
            spans=spans, attention=A.numpy(), head_attention=heads.permute(0, 2, 1).numpy(), truncated=truncated)


def load_seq2seq_scorer(profile="offline", **kwargs) -> SalienceScorer:
    """The encoder-decoder scorer of a profile: the suite's small summarizer (trained and cached on
    first use) for ``offline``, the paper's T5 for hub/paper; beams and length limits from the
    profile's ``SummarizerSettings`` unless ``kwargs`` set them; ``device`` moves the model there."""
    device = kwargs.pop("device", None)
    s = get_profile(profile).summarizer
    limits = dict(num_beams=s.num_beams, max_new_tokens=s.max_new_tokens, min_new_tokens=s.min_new_tokens,
                  max_input_tokens=s.max_input_tokens)
    tokenizer, model, name = load_summarizer(profile)
    model = model.to(device) if device else model
    return SalienceScorer(tokenizer, model, name=name, **{**limits, **kwargs})
