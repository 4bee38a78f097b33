"""Graph memory at scale: insertion throughput, size on disk and in RAM, query latency.

Synthetic triples over a fixed vocabulary of entities (about one entity per two edges, speakers as
hubs), inserted session by session (1,000 edges per ``add_triples`` call). Entity vectors come from
``HashEncoder`` (random unit vectors keyed by the string's hash, 384-d like MiniLM), so the numbers
measure the memory (faiss + networkx + bookkeeping), not the encoder; real MiniLM encoding adds
about 1.2 ms per new entity on 2 CPU cores (MiniLM encodes about 800 short sentences a second there).

Run time on 2 shared cores: ``--quick`` (1k edges) about 2 s; the full run (1k, 10k, 100k edges, both
policies) a few minutes.

    python -m benchmarks.bench_memory                 # 1k, 10k, 100k edges
    python -m benchmarks.bench_memory --quick --json memory.json

``--session-turns`` measures something else: peak resident memory of the default ``glong build --gold``
(decoder salience on) over ONE session of N turns, each N in its own process (``os.wait4`` gives
that process's peak RSS). The decoder source reads a long session in windows
(``salience.decoder_only.WINDOW_TOKENS``), so the peak should stay flat as N grows; read whole, a
2,000-turn session took 7.4 GB and then failed (reliability sweep, case A13).

    python -m benchmarks.bench_memory --session-turns 100 500 1000 2000 5000 --triple-every 1000

Measured (2 shared cores, 4 Dec 2026, ``--triple-every 1000``: 1-5 windows read): peak RSS 1,431 /
1,413 / 1,427 / 1,496 / 1,692 MB at 100 / 500 / 1,000 / 2,000 / 5,000 turns; 100 turns with a triple on
every turn: 1,430 MB; 2,000 turns with a triple on every turn (all 16-odd windows read, the sweep's
case A13): 1,692 MB, exit 0 (2,138 s on the loaded machine). Before the windows, 2,000 turns took
7.4 GB and then failed on a 51.8 GB allocation.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from benchmarks._common import bench_parser, fake_encoder, write_results
from glong_lib.memory import SINGLE_VALUED_RELATIONS, GraphMemory
from glong_lib.schema import Triple

RELATIONS = sorted(SINGLE_VALUED_RELATIONS) + ["like_food", "like_activity", "have_pet", "has_ability", "plan",
                                              "own", "like_music", "have_family", "favorite_book", "want_do"]
BATCH = 1000


def synthetic(n_edges: int, seed: int = 0) -> tuple[list[Triple], list[str]]:
    rng = random.Random(seed)
    speakers = [f"speaker {i}" for i in range(max(2, n_edges // 500))]
    objects = [f"entity {i}" for i in range(max(10, n_edges // 2))]
    triples = []
    for i in range(n_edges):
        subj = rng.choice(speakers) if rng.random() < 0.7 else rng.choice(objects)
        triples.append(Triple(subj, rng.choice(RELATIONS), rng.choice(objects), weight=rng.random(),
                              turn_id=f"S{i // BATCH + 1}:{i % BATCH + 1}", speaker=speakers[0],
                              source=f"utterance number {i} about {subj}"))
    return triples, speakers + objects


def heap_bytes(triples: list[Triple], encoder, policy: str) -> int:
    """Python heap held by a memory of ``triples`` (graph, tables; not the faiss vectors), measured
    with tracemalloc on a second build so that tracing does not slow the timed one."""
    tracemalloc.start()
    mem = GraphMemory(encoder=encoder, policy=policy, merge_threshold=0.999)
    for b in range(0, len(triples), BATCH):
        mem.add_triples(triples[b:b + BATCH], time_s=float(b), session=b // BATCH + 1)
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return held


def dir_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.iterdir())


def bench(n_edges: int, policy: str, queries: int = 200) -> dict:
    triples, names = synthetic(n_edges)
    encoder = fake_encoder()
    encoder.prime(names)  # every vector drawn before the clock starts: the timing is the memory's
    mem = GraphMemory(encoder=encoder, policy=policy, merge_threshold=0.999)
    start = time.perf_counter()
    for b in range(0, n_edges, BATCH):
        mem.add_triples(triples[b:b + BATCH], time_s=float(b), session=b // BATCH + 1)
    insert_s = time.perf_counter() - start
    python_bytes = heap_bytes(triples, encoder, policy)
    index_bytes = mem.index.ntotal * mem.index.d * 4  # faiss stores float32 outside Python's heap
    rng = random.Random(1)
    probes = [rng.choice(mem.entities) for _ in range(queries)]
    t0 = time.perf_counter()
    for p in probes:
        mem.nearest_entities(p, k=5)
    nearest_ms = (time.perf_counter() - t0) / queries * 1000
    t0 = time.perf_counter()
    sizes = [len(mem.incident_edges([p], hops=1)) for p in probes]
    incident_ms = (time.perf_counter() - t0) / queries * 1000
    tmp = Path(tempfile.mkdtemp())
    try:
        t0 = time.perf_counter()
        mem.save(tmp / "m")
        save_s = time.perf_counter() - t0
        disk = dir_bytes(tmp / "m")
        t0 = time.perf_counter()
        GraphMemory.load(tmp / "m", encoder=mem.encoder)
        load_s = time.perf_counter() - t0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"edges": n_edges, "nodes": mem.graph.number_of_nodes(), "policy": policy,
            "insert edges/s": round(n_edges / insert_s), "insert s": round(insert_s, 2),
            "RAM MB (python heap + faiss)": round((python_bytes + index_bytes) / 1e6, 1),
"disk MB": round(disk / 1e6, 2),
            "nearest_entities ms": round(nearest_ms, 3), "incident_edges ms": round(incident_ms, 3),
            "mean 1-hop edges": round(float(np.mean(sizes)), 1), "save s": round(save_s, 2),
            "load s": round(load_s, 2)}


def long_session(n_turns: int, every: int = 1) -> dict:
    """One conversation of one ``n_turns``-turn session in this project's format, a gold triple on
    every ``every``-th turn from the first (varied words, so the windows read real text). Windows
    without a triple are not read: a large ``every`` measures the peak of a long session in little
    time (the peak is one window's, whichever)."""
    rng = random.Random(n_turns)
    foods, places = ["pasta", "tacos", "ramen", "curry", "salad"], ["Denver", "Lisbon", "Osaka", "Lima", "Oslo"]
    turns = []
    for k in range(1, n_turns + 1):
        food, place = rng.choice(foods), rng.choice(places)
        triples = [{"subject": "AB"[k % 2], "relation": "like_food", "object": food}] if k % every == 1 % every else []
        turns.append({"id": f"S1:{k}", "speaker": "AB"[k % 2],
                      "text": f"Turn {k}: I had {food} in {place} with my friend number {k}.", "triples": triples})
    return {"format": "glong-conversation", "id": f"long-{n_turns}", "speakers": ["A", "B"],
            "sessions": [{"session": 1, "turns": turns}]}


def build_peak_rss(n_turns: int, folder: Path, every: int = 1) -> dict:
    """Peak RSS (MB) and seconds of ``glong build --gold`` (default salience) on one long session."""
    conv = folder / f"long-{n_turns}.json"
    conv.write_text(json.dumps(long_session(n_turns, every)))
    start = time.perf_counter()
    log = open(folder / f"long-{n_turns}.err", "w+b")  # a file, not a pipe: a full pipe would block the child
    child = subprocess.Popen(
        [sys.executable, "-m", "glong_lib.cli", "build", str(conv), "--gold", "--out", str(folder / f"m{n_turns}")],
        stdout=subprocess.DEVNULL, stderr=log)
    _, status, usage = os.wait4(child.pid, 0)
    log.seek(0)
    err = log.read().decode(errors="replace").strip().splitlines()
    log.close()
    child.returncode = os.waitstatus_to_exitcode(status)
    return {"turns": n_turns, "triples": -(-n_turns // every), "exit": child.returncode,
            "peak RSS MB": round(usage.ru_maxrss / 1024),
            "seconds": round(time.perf_counter() - start, 1),
            "error": err[-1][:120] if child.returncode and err else ""}


def main(argv=None) -> int:
    ap = bench_parser(__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--policies", nargs="+", default=["append", "supersede"])
    ap.add_argument("--session-turns", type=int, nargs="+", default=None,
                    help="instead: peak RSS of `glong build --gold` on one session of each length")
    ap.add_argument("--triple-every", type=int, default=1,
                    help="with --session-turns: a gold triple on every K-th turn only (fewer windows to read)")
    args = ap.parse_args(argv)
    sizes = [1000] if args.quick else args.sizes
    rows = []
    if args.session_turns:
        with tempfile.TemporaryDirectory() as scratch:
            for n in ([100] if args.quick else args.session_turns):
                rows.append(build_peak_rss(n, Path(scratch), args.triple_every))
                print(json.dumps(rows[-1]), file=sys.stderr)
    for n in sizes if not args.session_turns else []:
        for policy in args.policies:
            rows.append(bench(n, policy))
            print(json.dumps(rows[-1]), file=sys.stderr)
    from glong_lib.commands.common import print_table

    print_table(rows)
    write_results(args, {"rows": rows}, "bench_memory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
