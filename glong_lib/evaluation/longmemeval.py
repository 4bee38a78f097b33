"""Evidence retrieval on LongMemEval (the paper's Tables 4, 5, 7, 13 and Figure 4): every question
has its own haystack of sessions; the memory is built from it (triples from the extractor), the
question is asked after the last session, and a retrieved item hits when it stands for a turn marked
``has_answer``. Hit@k is the paper's Recall@k ("the evidence utterance within the top k"); MRR@20 its
MRR. Abstention questions (no turn marked) are left out and counted.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..checkpoints import Checkpoint
from ..config import PAPER_RETRIEVAL, RetrievalSettings
from ..loaders import load_longmemeval
from ..schema import QA, Conversation
from .locomo import evaluate_on_units
from .retrieval import DEFAULT_METHODS, EvidenceEvaluation


def longmemeval_units(path, questions: Optional[int] = None) -> tuple[list[Conversation], list[QA], dict]:
    """The haystacks and questions of a LongMemEval file (the first ``questions`` of them), the
    questions without evidence turns left out and counted."""
    convs, qas = load_longmemeval(path)
    convs, qas = convs[:questions or len(convs)], qas[:questions or len(qas)]
    kept = [q for q in qas if q.evidence]
    return convs, kept, {"no turn marked has_answer (abstention)": len(qas) - len(kept)}


def evaluate_longmemeval(path, encoder, methods: Sequence[str] = DEFAULT_METHODS, ks: Sequence[int] = (1, 3, 5, 10),
                         questions: Optional[int] = None, extractor=None, extractor_name: Optional[str] = None,
                         settings: Optional[RetrievalSettings] = None, progress: bool = True,
                         checkpoint: Optional[Checkpoint] = None, scorer=None) -> EvidenceEvaluation:
    """Hit@k (the paper's Recall@k), Recall@k and MRR@20 of ``methods`` on LongMemEval, all with the
    same ``settings`` (default the paper's) and edge weights (Eq. 3 with ``scorer``, else uniform);
    graph methods need the ``extractor``."""
    convs, qas, excluded = longmemeval_units(path, questions)
    variants = {m: (m, settings or PAPER_RETRIEVAL) for m in methods}
    return evaluate_on_units(convs, convs, qas, excluded, encoder, variants, ks, extractor, extractor_name,
                             progress, checkpoint, scorer=scorer)
