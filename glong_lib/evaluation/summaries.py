"""ROUGE of a summarizer against reference summaries, and the fixed-summary baseline."""

from __future__ import annotations

from typing import Sequence

from ..schema import SummaryPair
from ..summarizer import training_examples
from .metrics import rouge_l

# --------------------------------------------------------------------------- ROUGE

def mean_rouge_l(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Mean ROUGE-L F1 over pairs (``evaluation.metrics.rouge_l`` on each).

    >>> round(mean_rouge_l(["maya moves to denver"], ["Maya moves to Denver."]), 3)
    1.0
    """
    scores = [rouge_l(h, r) for h, r in zip(hypotheses, references)]
    return sum(scores) / max(1, len(scores))


def best_fixed_summary(train: Sequence[SummaryPair], limit: int = 60) -> str:
    """The baseline sentence: the training summary with the best mean ROUGE-L against the others."""
    pool = [p.summary for p in train][:limit]
    return max(pool, key=lambda s: mean_rouge_l([s] * len(pool), pool))


def generate_summaries(tokenizer, model, sources: Sequence[str], num_beams: int = 4, max_new_tokens: int = 48,
                       max_source_tokens: int = 256, progress: bool = True) -> list[str]:
    """Beam-search summaries, one source at a time (no padding effects on CPU)."""
    import torch
    from tqdm.auto import tqdm

    out = []
    device = next(model.parameters()).device
    for src in tqdm(sources, desc="summaries", disable=not progress):
        ids = tokenizer(src, add_special_tokens=False, truncation=True, max_length=max_source_tokens,
                        return_tensors="pt").input_ids.to(device)
        with torch.no_grad():
            gen = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), num_beams=num_beams,
                                 max_new_tokens=max_new_tokens, min_new_tokens=5, early_stopping=True, do_sample=False)
        out.append(tokenizer.decode(gen[0], skip_special_tokens=True).strip())
    return out


def rouge_report(tokenizer, model, test: Sequence[SummaryPair], train: Sequence[SummaryPair],
                 inputs: Sequence[str] = ("triples", "dialogue"), progress: bool = True) -> list[dict]:
    """ROUGE-L of the summarizer on held-out pairs (dialogue and triple inputs) beside the best
    fixed sentence from the training summaries."""
    refs = [p.summary for p in test]
    fixed = best_fixed_summary(train)
    rows = [{"summarizer input": "fixed sentence (baseline)",
             "ROUGE-L": round(mean_rouge_l([fixed] * len(refs), refs), 3)}]
    for name in inputs:
        sources = [s for s, _ in training_examples(test, [name])]
        hyps = generate_summaries(tokenizer, model, sources, progress=progress)
        rows.append({"summarizer input": name, "ROUGE-L": round(mean_rouge_l(hyps, refs), 3)})
    return rows
