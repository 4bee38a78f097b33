"""The offline attention source: a decoder-only chat LM's attention, read like Eq. 1-3.

No encoder-decoder checkpoint is installable offline, and the small ones the suite can train
from scratch write word salad whose cross-attention carries no signal (``bench_salience.py``).
The bundled SmolLM2-135M-Instruct writes real summaries, so this source asks it for one and
reads *its self-attention* the way the paper reads cross-attention:

1. prompt: ``"Summarize this dialogue:"`` and the session's turns (``input="dialogue"``), or the
   linearised triples as the paper's summarizer sees them (``input="triples"``);
2. greedy summary ``y_1..y_M``, its attention rows tapped while it is generated (eager attention;
   the rows a teacher-forced re-read would give, with no second pass: :meth:`DecoderSalienceScorer.read`);
3. Eq. 1 on ONE layer (``layer``, chosen on a selection split: the last layer is not the best one
   in a decoder-only model), keeping only the M rows that predict summary tokens and the columns
   of the source text;
4. Eq. 2 over each triple's tokens: with the triples as input its linearised span; with the
   dialogue as input the tokens of its content words where its source turn says them (all the
   turn's content words when none match there; anywhere in the session when its turn is unknown;
   none, so Eq. 2 gives 0, when no turn says them);
   ``aggregate="mean"`` divides by the token count;
5. Eq. 3 (the session maximum) as everywhere else.

This is not the paper's mechanism (no encoder, no cross-attention); notebook 02 names it so.
The text side (the session's lines, each triple's word ranges and token positions, the windows a
long session is read in) is ``positions``; this module is the model side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence, Union

import numpy as np
import torch

from ..config import DECODER_INPUTS as INPUTS
from ..config import DECODER_WHERE as WHERE
from ..config import DecoderSourceSettings
from ..errors import DataError
from ..models import load_causal_lm
from ..schema import Triple, Turn
from ..summarizer import linearise_triples
from .encoder_decoder import SalienceResult
from .equations import AGGREGATES, head_average, layer_saliency, normalise_by_max, position_saliency
from .positions import (  # noqa: F401 (the salience package and notebook 03 import them from here)
    dialogue_text,
    dialogue_triple_ranges,
    positions_in,
    triple_word_ranges,
    turn_windows,
    turns_from_triples,
    utterance_word_ranges,
)

#: A system line of our own: without one, SmolLM2's chat template inserts its default persona,
#: which the model then summarises ("A helpful AI assistant named SmolLM ...").
SYSTEM = "You write short, factual summaries."
PROMPTS = {"dialogue": "Summarize this dialogue:\n{text}",
           "triples": "Summarize these facts about a conversation in one sentence:\n{text}"}


#: The decoder source's settings (``config.DecoderSourceSettings``, a profile's ``summarizer.decoder``).
DEFAULT_DECODER_SOURCE = DecoderSourceSettings()

#: The longest source text (tokens) the decoder source reads in one pass. Eager attention holds
#: heads x n x n floats per layer: 9 x 2048^2 x 4 B = 150 MB here; a 2,000-turn session read whole
#: (~60k tokens) took 7.4 GB and then asked for 51.8 GB. A longer session is read in windows of
#: whole turns (a longer turn is cut to one window); Eq. 3 still divides by the session's maximum.
#: Every shipped sample, LoCoMo and MSC session fits in one window (their scores are unchanged).
WINDOW_TOKENS = 2048


# --------------------------------------------------------------------------- the scorer

@dataclass
class DecoderReading:
    """One reading: the Eq. 1 matrix of every layer read (NaN for the others) over the source
    columns and the rows that write the summary, plus each triple's token positions among them."""

    layers: np.ndarray                 # (layers, source tokens, summary tokens), heads averaged
    heads: np.ndarray                  # the chosen layer before averaging (heads, source, summary)
    positions: list[list[int]]         # per triple, positions among the source columns
    source_text: str
    source_tokens: list[str]
    summary: str
    summary_tokens: list[str] = field(default_factory=list)
    offsets: list[tuple[int, int]] = field(default_factory=list)  # each source column's characters in source_text



class AttentionTap:
    """Forward hooks that keep, for chosen decoder layers, the attention rows that write summary
    tokens, cropped to the source columns ``lo:hi``: during ``generate`` the last row of every call
    (the prefill's last position, then each new token); with ``rows`` a fixed slice of one pass.

    Eager attention returns ``(output, weights)`` from every ``self_attn`` module; nothing else is
    kept, so memory stays at (heads x summary x source) per layer however long the prompt.
    """

    def __init__(self, model, layers: Sequence[int], lo: int, hi: int, rows: Optional[slice] = None):
        self.model, self.layers, self.lo, self.hi, self.slice = model, list(layers), lo, hi, rows
        self.kept: dict[int, list[torch.Tensor]] = {k: [] for k in self.layers}
        self.handles = []

    def __enter__(self):
        blocks = self.model.model.layers
        for k in self.layers:
            self.handles.append(blocks[k].self_attn.register_forward_hook(self._hook(k)))
        return self

    def _hook(self, k):
        def keep(module, args, output):
            weights = output[1]
            if weights is None:
                raise RuntimeError("the model returned no attention: load it with attn_implementation='eager'")
            rows = self.slice if self.slice is not None else slice(-1, None)
            self.kept[k].append(weights[0, :, rows, self.lo:self.hi].float().cpu())
        return keep

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        return False

    def rows(self, k: int) -> torch.Tensor:
        """Layer ``k``'s kept rows, in order: ``(heads, rows, source columns)``."""
        return torch.cat(self.kept[k], dim=1)


class DecoderSalienceScorer:
    """Eq. 1-3 on a decoder-only chat LM's self-attention (see the module docstring)."""

    def __init__(self, tokenizer, model, settings: DecoderSourceSettings = DEFAULT_DECODER_SOURCE,
                 name: str = "SmolLM2-135M-Instruct (decoder-only attention)"):
        if settings.input not in INPUTS:
            raise DataError(f"unknown input '{settings.input}' (choose from {', '.join(INPUTS)})")
        if settings.aggregate not in AGGREGATES:
            raise DataError(f"unknown aggregate '{settings.aggregate}' (choose from {', '.join(AGGREGATES)})")
        if settings.where not in WHERE:
            raise DataError(f"unknown where '{settings.where}' (choose from {', '.join(WHERE)})")
        n_layers = model.config.num_hidden_layers
        if not -n_layers <= settings.layer < n_layers:
            raise DataError(f"layer {settings.layer} does not exist (the model has {n_layers})")
        self.tokenizer, self.model, self.settings, self.name = tokenizer, model.eval(), settings, name
        self.window = WINDOW_TOKENS

    def source(self, triples: Sequence[Triple], turns: Optional[Sequence[Turn]]):
        """The text the model summarises, and each triple's character ranges in it."""
        if self.settings.input == "triples":
            text, ranges = linearise_triples(triples)
            return text, [[r] for r in ranges]
        turns = list(turns) if turns else turns_from_triples(triples)
        text, spans = dialogue_text(turns)
        return text, dialogue_triple_ranges(triples, turns, text, spans, self.settings.where)

    @torch.no_grad()
    def read(self, triples: Sequence[Triple], turns: Optional[Sequence[Turn]] = None,
             summary: Optional[Union[str, Sequence[int]]] = None,
             layers: Optional[Sequence[int]] = None) -> DecoderReading:
        """Summarise (or take ``summary``, e.g. a reference, teacher-forced) and keep the attention of
        the rows that write y_1..y_M onto the source columns, for the configured layer (``layers``:
        any others too; the bench reads them all to choose one).

        The rows are tapped *while generating* (:class:`AttentionTap`): the prefill's last row writes
        y_1, each later step's single row writes the next token, exactly the rows a teacher-forced
        re-read would give, without a second pass and without keeping every layer's full matrix."""
        if not triples:
            raise DataError("no triples to score")
        tok, s = self.tokenizer, self.settings
        n_layers = self.model.config.num_hidden_layers
        wanted = sorted({k % n_layers for k in [*(layers or []), s.layer]})
        text, ranges = self.source(triples, turns)
        prompt = tok.apply_chat_template([{"role": "system", "content": SYSTEM},
                                          {"role": "user", "content": PROMPTS[s.input].format(text=text)}],
                                         tokenize=False, add_generation_prompt=True)
        shift = prompt.index(text)
        enc = tok(prompt, add_special_tokens=False, return_offsets_mapping=True)
        source_cols = [i for i, (a, b) in enumerate(enc["offset_mapping"])
                       if shift <= a and b <= shift + len(text) and b > a]
        lo, hi = source_cols[0], source_cols[-1] + 1
        device = next(self.model.parameters()).device
        ids = torch.tensor([enc["input_ids"]], device=device)
        p = ids.shape[1]
        stop = {tok.eos_token_id, tok.pad_token_id}
        if summary is None:
            with AttentionTap(self.model, wanted, lo, hi) as tap:
                out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                          max_new_tokens=s.max_new_tokens, pad_token_id=tok.pad_token_id)
            summary_ids = out[0, p:].tolist()
        else:
            summary_ids = (list(summary) if not isinstance(summary, str)  # token ids as they are
                           else tok(summary, add_special_tokens=False).input_ids)[: s.max_new_tokens]
            full = torch.cat([ids, torch.tensor([summary_ids], device=device)], dim=1)
            with AttentionTap(self.model, wanted, lo, hi, rows=slice(p - 1, p - 1 + len(summary_ids))) as tap:
                self.model(input_ids=full)
        while summary_ids and summary_ids[-1] in stop:
            summary_ids.pop()
        if not summary_ids:
            raise DataError("the model wrote an empty summary: nothing to read attention from")
        m = len(summary_ids)
        stacked = {k: tap.rows(k)[:, :m] for k in wanted}                 # layer -> (H, M, N)
        all_layers = np.full((n_layers, hi - lo, m), np.nan, dtype=np.float32)
        for k, heads in stacked.items():
            all_layers[k] = head_average(heads).numpy()                     # Eq. 1 per layer: (N, M)
        offsets = [(a - shift, b - shift) for a, b in enc["offset_mapping"][lo:hi]]
        positions = [positions_in(offsets, r, text) for r in ranges]
        return DecoderReading(layers=all_layers, heads=stacked[s.layer % n_layers].permute(0, 2, 1).numpy(),
                              positions=positions, offsets=offsets, source_text=text,
                              source_tokens=tok.convert_ids_to_tokens(enc["input_ids"][lo:hi]),
                              summary=tok.decode(summary_ids, skip_special_tokens=True).strip(),
                              summary_tokens=tok.convert_ids_to_tokens(summary_ids))

    def layer_scores(self, reading: DecoderReading, aggregate: Optional[str] = None,
                     rows: Optional[int] = None) -> np.ndarray:
        """Eq. 2 of every triple under every layer read: ``(layers, triples)``, NaN for layers not
        read. ``rows`` keeps only the first summary rows: greedy decoding is causal, so this equals
        the score a shorter ``max_new_tokens`` would give (one reading answers every length)."""
        return layer_saliency(reading.layers[:, :, :rows], reading.positions, aggregate or self.settings.aggregate)

    def score(self, triples: Sequence[Triple], turns: Optional[Sequence[Turn]] = None) -> SalienceResult:
        """Eq. 1-3 with the configured layer and aggregate (session maximum). A session longer than
        ``window`` tokens is read in windows (:meth:`score_windowed`)."""
        if not triples:
            raise DataError("no triples to score")
        if self.settings.input == "dialogue":
            source = list(turns) if turns else turns_from_triples(triples)
            parts = turn_windows(self.tokenizer, source, self.window)
            if parts[0] is not source:
                return self.score_windowed(triples, parts)
        return self._score_once(triples, turns)

    def score_windowed(self, triples: Sequence[Triple], windows: Sequence[Sequence[Turn]]) -> SalienceResult:
        """Eq. 2 of each triple read in the window that holds its turn (a triple whose turn is in none:
        its best window), then Eq. 3 over the whole session. Windows without triples are not read.
        The result carries no attention matrix to draw (there is one per window)."""
        raw = np.full(len(triples), -1.0)
        summaries = []
        known = {t.id for w in windows for t in w}
        for window in windows:
            ids = {t.id for t in window}
            mine = [i for i, t in enumerate(triples) if t.turn_id in ids or t.turn_id not in known]
            if not mine:
                continue
            part = self._score_once([triples[i] for i in mine], window)
            raw[mine] = np.maximum(raw[mine], part.raw)
            summaries.append(part.summary)
        raw = torch.from_numpy(np.clip(raw, 0.0, None))
        if not float(raw.max()) > 0:
            raw = torch.ones_like(raw)
        n = len(triples)
        return SalienceResult(triples=list(triples), raw=raw.numpy(), weights=normalise_by_max(raw).numpy(),
                              summary=" ".join(summaries), input_text="", input_tokens=[], summary_tokens=[],
                              spans=[(0, 0)] * n, attention=np.zeros((0, 0)), head_attention=np.zeros((0, 0, 0)))

    def _score_once(self, triples: Sequence[Triple], turns: Optional[Sequence[Turn]]) -> SalienceResult:
        reading = self.read(triples, turns)
        A = torch.from_numpy(reading.layers[self.settings.layer])          # Eq. 1, done in read()
        raw = position_saliency(A, reading.positions, self.settings.aggregate)
        if not float(raw.max()) > 0:  # no triple's words were found anywhere: every triple alike
            raw = torch.ones_like(raw)
        spans = [(min(p), max(p) + 1) if p else (0, 0) for p in reading.positions]
        return SalienceResult(triples=list(triples), raw=raw.numpy(), weights=normalise_by_max(raw).numpy(),
                              summary=reading.summary, input_text=reading.source_text,
                              input_tokens=reading.source_tokens, summary_tokens=reading.summary_tokens,
                              spans=spans, attention=A.numpy(), head_attention=reading.heads,
                              positions=reading.positions)


def load_decoder_scorer(settings: DecoderSourceSettings = DEFAULT_DECODER_SOURCE, device: Optional[str] = None,
                        **kwargs) -> DecoderSalienceScorer:
    """The decoder-only source on the bundled SmolLM2 (eager attention, so weights come back)."""
    tok, model = load_causal_lm(attn="eager", device=device)
    return DecoderSalienceScorer(tok, model, settings, **kwargs)
