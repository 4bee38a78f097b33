"""Requests per second through the endpoint layer (``glong_lib.endpoint``) against the project's test
server (``tests/chat_server.py``) answering after a fixed latency with no model, at 1, 4, 16 and 64
requests in flight, for extraction (``RemoteTripleExtractor``) and generation
(``OpenAICompatibleGenerator.generate_many``): with the server's time fixed, requests per second
over ``concurrency / latency`` says how much of the concurrency the client turns into throughput
(aim: at least 0.8 up to 16 in flight).

Run time on 2 shared cores: ``--quick`` (50 ms latency, 1 and 4 in flight, 8 requests) a few
seconds; the full run (200 ms, 1/4/16/64 in flight, 4 x concurrency requests, at least 16) about
half a minute.

    python -m benchmarks.bench_server --json server.json
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from benchmarks._common import bench_parser, write_results
from glong_lib.config import EndpointSettings
from glong_lib.extraction import RemoteTripleExtractor
from glong_lib.generation import OpenAICompatibleGenerator

SERVER = Path(__file__).resolve().parents[1] / "tests" / "chat_server.py"
LEVELS = [1, 4, 16, 64]
QUICK_LEVELS = [1, 4]


def start_server(latency_ms: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(SERVER), "--latency-ms", str(latency_ms)], stdout=subprocess.PIPE,
                            text=True)
    return proc, f"http://127.0.0.1:{int(proc.stdout.readline().split()[1])}/v1"


def measure(kind: str, url: str, concurrency: int, n: int, tag: str) -> float:
    """Seconds for ``n`` distinct requests of ``kind`` with ``concurrency`` in flight (no reply cache)."""
    settings = EndpointSettings(base_url=url, model="bench", concurrency=concurrency, reply_cache=False)
    texts = [f"{tag} utterance {i}: I adopted a cat named Tom." for i in range(n)]
    if kind == "extraction":
        extractor = RemoteTripleExtractor(settings)
        ask = lambda batch: extractor.generate(batch, progress=False)  # noqa: E731
    else:
        gen = OpenAICompatibleGenerator(url, "bench", endpoint=settings)
        ask = lambda batch: gen.generate_many([[{"role": "user", "content": t}] for t in batch])  # noqa: E731
    ask([f"{tag} warm-up {i}" for i in range(concurrency)])  # connections opened, SDK imported: not timed
    start = time.perf_counter()
    ask(texts)
    return time.perf_counter() - start


def main(argv=None) -> int:
    p = bench_parser(__doc__)
    p.add_argument("--latency-ms", type=float, default=None, help="the server's latency (default 200; --quick 50)")
    args = p.parse_args(argv)
    latency = args.latency_ms or (50.0 if args.quick else 200.0)
    levels = QUICK_LEVELS if args.quick else LEVELS
    proc, url = start_server(latency)
    rows = []
    try:
        for kind in ("extraction", "generation"):
            for c in levels:
                n = 8 if args.quick else max(16, 4 * c)
                seconds = measure(kind, url, c, n, f"{kind}-{c}")
                rps = n / seconds
                ideal = c / (latency / 1000)
                rows.append({"kind": kind, "in flight": c, "requests": n, "seconds": round(seconds, 2),
                             "requests/s": round(rps, 1), "ideal requests/s": round(ideal, 1),
                             "share of ideal": round(rps / ideal, 2)})
                print(f"{kind:<10}  {c:>3} in flight  {n:>4} requests  {seconds:6.2f} s  {rps:7.1f} req/s  "
                      f"(ideal {ideal:6.1f}: {rps / ideal:.2f})")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    write_results(args, {"latency_ms": latency, "rows": rows}, "bench_server",
                  settings={"latency_ms": latency, "levels": list(levels)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
