"""Where G-Long's anchor step loses evidence on LoCoMo, for the triples of one or more extractor adapters.

For every question (categories 1-4, memory from LoCoMo's observation sentences, the recommended
settings, sentences without triples kept whole), with the same memory the ladder in
``bench_retrieval.py`` uses:

* **reach**: whether any evidence turn is among the anchors' 1-hop candidate edges, the ceiling
  the semantic pool and the rerank work under (retrieval with no graph has reach 1 by definition);
* **speaker anchor**: whether a speaker (a hub: ``retrieval.graph.hub_nodes``) is among the 5 anchors,
  in which case the candidates cover a large part of the memory;
* **candidates**: the share of the memory's edges that are candidates.

It answers "why does a better extractor not help G-Long's recommended setting": longer objects
make the entity nodes more specific, so they take the anchor places that speakers took before.

An investigation (issue 14), kept to re-run when the extractor changes.

Run time on 2 shared cores: ``--quick`` does no model work and needs no data: it only checks the
options and writes ``{"skipped": ...}`` (every number here needs LoCoMo and trained adapters); the full
run is minutes per adapter with its LoCoMo triples cached, about an hour per adapter cold.

    # OLD and NEW: two adapter folders (``glong train-extractor --out DIR``, or ones in $GLONG_CACHE/extractor)
    GLONG_REAL_DATA=../shared/data python -m benchmarks.bench_anchor_reach --adapters $OLD $NEW
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from benchmarks._common import add_split_option, bench_parser, real_split, write_results
from glong_lib.config import RECOMMENDED_RETRIEVAL
from glong_lib.datasets import describe
from glong_lib.evaluation.locomo import extracted_triples, locomo_units, with_unextracted
from glong_lib.evaluation.retrieval import memory_before, primed_encoder, question_time
from glong_lib.extraction import load_extractor
from glong_lib.loaders import source_turns
from glong_lib.models import load_encoder
from glong_lib.retrieval import AssociativeRetriever
from glong_lib.retrieval.graph import hub_nodes


def reach(path: Path, adapter: Path, encoder, conversations=None) -> dict[str, float]:
    """Shares of questions with evidence in reach / with a speaker anchor, and the mean candidate share."""
    extractor = load_extractor("offline", adapter=adapter)
    _, units, questions, _ = locomo_units(path, "observations", conversations)
    triples = {c.id: with_unextracted(c, extracted_triples(c, extractor)) for c in units}
    cached = primed_encoder(encoder, questions, units, [t for ts in triples.values() for t in ts])
    settings = replace(RECOMMENDED_RETRIEVAL, k=5)
    rows = []
    for conv in units:
        memory = memory_before(conv, None, cached, triples[conv.id])
        retriever = AssociativeRetriever(memory, settings)
        hubs, n_edges = hub_nodes(memory), max(1, len(memory.edge_ids()))
        for q in (q for q in questions if q.conversation == conv.id):
            trace = retriever.retrieve(q.question, question_time(conv, q)).trace
            reached = {t for eid in trace.candidates for t in source_turns(memory.edge(eid).turn_id or "")}
            rows.append((bool(reached & set(q.evidence)), any(a in hubs for a, _ in trace.anchors),
                         len(trace.candidates) / n_edges))
    n = max(1, len(rows))
    return {"questions": len(rows), "evidence in reach": sum(r[0] for r in rows) / n,
            "speaker among anchors": sum(r[1] for r in rows) / n,
            "candidate share of the memory": sum(r[2] for r in rows) / n}


def main(argv=None) -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--adapters", type=Path, nargs="+", default=[], help="extractor adapter folders")
    parser.add_argument("--conversations", type=int, default=None)
    add_split_option(parser, "locomo", "locomo-dev", "LoCoMo")
    args = parser.parse_args(argv)
    path = real_split(args.split)
    skipped = ("--quick does no model work" if args.quick else
               f"set GLONG_REAL_DATA to a folder holding split '{args.split}'" if path is None else
               "give --adapters" if not args.adapters else None)
    if skipped:
        print(f"skipped: {skipped}")
        write_results(args, {"skipped": skipped}, "bench_anchor_reach")
        return 0
    encoder = load_encoder("offline")
    results = {}
    for adapter in args.adapters:
        results[adapter.name] = reach(path, adapter, encoder, args.conversations)
        print(f"{adapter.name}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                                for k, v in results[adapter.name].items()))
    write_results(args, {"data": describe(args.split), "adapters": results}, "bench_anchor_reach", inputs=[path])
    return 0


if __name__ == "__main__":
    sys.exit(main())
