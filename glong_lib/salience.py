"""Attention-aware importance of triples (paper section 3.2, Eq. 1-3).

A summarizer reads all the triples of a session written as one text and writes a summary; the
triples it looks at while writing are the important ones. Concretely, with the last decoder
layer's cross-attention ``Attn_h(x_i, y_j)`` (input token ``x_i``, summary token ``y_j``, head ``h``):

* Eq. 1  ``A[i, j] = mean_h Attn_h(x_i, y_j)``                     -> :func:`head_average`
* Eq. 2  ``S(t_k) = sum_{i in tokens(t_k)} sum_j A[i, j]``         -> :func:`triple_saliency`
* Eq. 3  ``w_k = S(t_k) / max_k' S(t_k')``                          -> :func:`normalise_by_max`

The paper takes the maximum over the session; the authors' code over every session of the
dialogue. :func:`score_conversation` offers both (``scope="session"`` / ``"dialogue"``).

Around the equations: :func:`linearise_triples` writes the triples as the reference code does
(``"{subject} {relation} {object}. "`` concatenated) and :func:`token_spans` maps each triple to
its tokens through the fast tokenizer's character offsets; :class:`SalienceScorer` generates the
summary with beam search, re-reads it teacher-forced with eager attention, and applies Eq. 1-3.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence, Union

import numpy as np
import torch

from .config import Profile
from .errors import DataError
from .models import load_causal_lm
from .schema import Triple
from .summarizer import linearise_triples, load_summarizer

SCOPES = ("session", "dialogue")


# --------------------------------------------------------------------------- Eq. 1-3 (pure)

def head_average(cross_attn: torch.Tensor) -> torch.Tensor:
    """Eq. 1: average one decoder layer's cross-attention over its heads.

    ``cross_attn`` has the shape transformers returns for one example, ``(H, M, N)`` (heads,
    summary tokens, input tokens), optionally with a leading batch dimension of 1. The result
    ``A`` is indexed as in the paper, ``A[i, j]`` = input token ``i``, summary token ``j``: shape
    ``(N, M)``.

    Two heads, one summary token, three input tokens:

    >>> attn = torch.tensor([[[0.6, 0.2, 0.2]], [[0.2, 0.2, 0.6]]])
    >>> head_average(attn)
    tensor([[0.4000],
            [0.2000],
            [0.4000]])
    """
    attn = torch.as_tensor(cross_attn, dtype=torch.float32)
    if attn.dim() == 4 and attn.shape[0] == 1:
        attn = attn[0]
    if attn.dim() != 3:
        raise DataError(f"cross-attention should be (heads, summary, input), got shape {tuple(attn.shape)}")
    return attn.mean(dim=0).transpose(0, 1)


def triple_saliency(A: torch.Tensor, spans: Sequence[tuple[int, int]]) -> torch.Tensor:
    """Eq. 2: raw saliency of each triple, the attention mass on its tokens summed over the summary.

    ``A`` is ``(N, M)`` from :func:`head_average`; ``spans[k] = (start, end)`` are the half-open
    input-token positions of triple ``k``. An empty span (a triple cut off by truncation) scores 0.

    Input tokens 0-1 are triple 0, tokens 2-4 triple 1; two summary tokens:

    >>> A = torch.tensor([[0.5, 0.1], [0.2, 0.1], [0.1, 0.4], [0.1, 0.2], [0.1, 0.2]])
    >>> triple_saliency(A, [(0, 2), (2, 5)])
    tensor([0.9000, 1.1000])
    """
    A = torch.as_tensor(A, dtype=torch.float32)
    if A.dim() != 2:
        raise DataError(f"A should be (input, summary), got shape {tuple(A.shape)}")
    n = A.shape[0]
    per_token = A.sum(dim=1)  # sum over summary tokens j
    scores = []
    for k, (start, end) in enumerate(spans):
        if not 0 <= start <= end <= n:
            raise DataError(f"span {k} ({start}, {end}) is outside the {n} input tokens")
        scores.append(per_token[start:end].sum())
    return torch.stack(scores) if scores else torch.zeros(0)


def normalise_by_max(scores: torch.Tensor, maximum: Optional[float] = None) -> torch.Tensor:
    """Eq. 3: divide raw scores by their maximum, so the top triple weighs 1 and all lie in (0, 1].

    ``maximum`` overrides the divisor: the dialogue-wide maximum of the reference code.

    >>> normalise_by_max(torch.tensor([0.9, 1.1, 0.55]))
    tensor([0.8182, 1.0000, 0.5000])
    >>> normalise_by_max(torch.tensor([0.9, 1.1]), maximum=2.2)
    tensor([0.4091, 0.5000])
    """
    scores = torch.as_tensor(scores, dtype=torch.float32)
    if scores.numel() == 0:
        return scores
    top = float(scores.max()) if maximum is None else float(maximum)
    if not top > 0:
        raise DataError(f"cannot normalise: the maximum raw score is {top} (must be > 0)")
    return scores / top


def token_spans(offsets: Sequence[tuple[int, int]], char_ranges: Sequence[tuple[int, int]],
                text: str) -> list[tuple[int, int]]:
    """Map character ranges to half-open token ranges using a fast tokenizer's offset mapping.

    A token belongs to the triple that holds its first non-space character, so tokenizers that
    glue a leading space (or "▁") onto a word still land in the right triple; special tokens
    (offsets ``(0, 0)``) belong to none. Triples with no token (truncated away) get ``(n, n)``.

    >>> token_spans([(0, 4), (5, 8), (8, 10), (10, 11), (11, 15)], [(0, 10), (11, 16)], "Maya likes Tea .")
    [(0, 3), (4, 5)]
    """
    owner = []
    for start, end in offsets:
        while start < end and text[start].isspace():
            start += 1
        owner.append(next((k for k, (a, b) in enumerate(char_ranges) if a <= start < b), None)
                     if end > start else None)
    n = len(offsets)
    spans = []
    for k in range(len(char_ranges)):
        positions = [i for i, o in enumerate(owner) if o == k]
        spans.append((positions[0], positions[-1] + 1) if positions else (n, n))
    return spans


# --------------------------------------------------------------------------- the scorer

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
        """Beam search as in the reference code (4 beams), with lengths capped for CPU."""
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

    def score(self, triples: Sequence[Triple]) -> SalienceResult:
        """Summarise the triples, then Eq. 1 -> Eq. 2 -> Eq. 3 (session maximum)."""
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


class CausalSalienceScorer:
    """ALTERNATIVE, not the paper's method: the decoder-only analogue of Eq. 1-3.

    A pretrained chat LM (the bundled SmolLM2) is asked to summarise the linearised triples; its
    summary is re-read teacher-forced with eager attention, and the last layer's attention from
    each position that *writes* a summary token back to the triples' tokens plays the role of
    the cross-attention. Columns are cropped to the triple text (the chat template around it is
    outside every span, so Eq. 2 is unchanged by the crop).
    """

    PROMPT = "Summarise these facts about a conversation in one sentence:\n{facts}"

    def __init__(self, tokenizer, model, max_new_tokens: int = 32, name: str = "SmolLM2 (decoder-only analogue)"):
        self.tokenizer, self.model, self.max_new_tokens, self.name = tokenizer, model.eval(), max_new_tokens, name

    @torch.no_grad()
    def score(self, triples: Sequence[Triple]) -> SalienceResult:
        if not triples:
            raise DataError("no triples to score")
        tok = self.tokenizer
        facts, ranges = linearise_triples(triples)
        prompt = tok.apply_chat_template([{"role": "user", "content": self.PROMPT.format(facts=facts)}],
                                         tokenize=False, add_generation_prompt=True)
        shift = prompt.index(facts)
        enc = tok(prompt, add_special_tokens=False, return_offsets_mapping=True)
        spans = token_spans(enc["offset_mapping"], [(a + shift, b + shift) for a, b in ranges], prompt)
        ids = torch.tensor([enc["input_ids"]], device=next(self.model.parameters()).device)
        out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                  max_new_tokens=self.max_new_tokens, pad_token_id=tok.pad_token_id)
        summary_ids = out[0, ids.shape[1]:]
        full = out[:, : ids.shape[1] + len(summary_ids)]
        attn = self.model(input_ids=full, output_attentions=True).attentions[-1][0]  # (H, L, L)
        p, m = ids.shape[1], len(summary_ids)
        lo, hi = spans[0][0], max(b for _, b in spans)
        heads = attn[:, p - 1: p - 1 + m, lo:hi].float().cpu()  # rows that write y_1..y_M
        crop = [(a - lo, b - lo) for a, b in spans]
        A = head_average(heads)
        raw = triple_saliency(A, crop)
        return SalienceResult(
            triples=list(triples), raw=raw.numpy(), weights=normalise_by_max(raw).numpy(),
            summary=tok.decode(summary_ids, skip_special_tokens=True).strip(), input_text=facts,
            input_tokens=tok.convert_ids_to_tokens(enc["input_ids"][lo:hi]),
            summary_tokens=tok.convert_ids_to_tokens(summary_ids.tolist()), spans=crop, attention=A.numpy(),
            head_attention=heads.permute(0, 2, 1).numpy())


def load_causal_scorer(**kwargs) -> CausalSalienceScorer:
    """The decoder-only alternative on the bundled SmolLM2 (eager attention)."""
    tok, model = load_causal_lm(attn="eager")
    return CausalSalienceScorer(tok, model, **kwargs)


def load_scorer(profile: Union[str, Profile] = "offline", **kwargs) -> SalienceScorer:
    """The scorer of a profile: the suite's own summarizer offline (trained and cached on first
    use; ``profile.smoke()`` trains a few steps under its own cache key), the paper's T5 for hub/paper."""
    tokenizer, model, name = load_summarizer(profile)
    return SalienceScorer(tokenizer, model, name=name, **kwargs)


# --------------------------------------------------------------------------- conversations

def with_weights(triples: Sequence[Triple], raw: Sequence[float], maximum: float) -> list[Triple]:
    """Copies of ``triples`` whose ``.weight`` is Eq. 3 with the given maximum (``raw / maximum``).

    >>> [t.weight for t in with_weights([Triple("a", "r", "b"), Triple("c", "r", "d")], [0.5, 1.0], 2.0)]
    [0.25, 0.5]
    """
    weights = normalise_by_max(torch.tensor(np.asarray(raw, dtype=np.float64)), maximum=maximum).numpy()
    return [replace(t, weight=float(w)) for t, w in zip(triples, weights)]


def score_conversation(triples: Sequence[Triple], scorer, scope: str = "session") -> list[Triple]:
    """Copies of ``triples`` with ``.weight`` set, each session scored on its own.

    ``scope="session"`` divides by the session's own maximum (the paper); ``"dialogue"`` by the
    maximum raw score over every session given (the reference code), so a session whose triples
    drew less attention keeps weights below 1. Triples with no session form one group.
    """
    if scope not in SCOPES:
        raise DataError(f"unknown scope '{scope}' (choose from {', '.join(SCOPES)})")
    groups: dict[Any, list[int]] = {}
    for i, t in enumerate(triples):
        groups.setdefault(t.session, []).append(i)
    raw = np.zeros(len(triples), dtype=np.float64)
    for idx in groups.values():
        raw[idx] = scorer.score([triples[i] for i in idx]).raw
    out = list(triples)
    dialogue_max = raw.max() if len(raw) else 0.0
    for idx in groups.values():
        top = raw[idx].max() if scope == "session" else dialogue_max
        for i, t in zip(idx, with_weights([triples[i] for i in idx], raw[idx], top)):
            out[i] = t
    return out


