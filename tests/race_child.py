"""Child process for the concurrency test: two of these save into one memory folder per round while
a third loads it. Usage: python race_child.py ROOT ROUNDS SECONDS (write EDGES | read) [--no-lock]

Every child prints "ready", waits for ROOT/go (so all start together), then spends SECONDS on each
round folder ROOT/r<k>. A reader prints how many loads succeeded and the failures it saw.
``--no-lock`` turns the folder lock off, to show the test can fail (not used by the suite)."""

import json
import sys
import time
from pathlib import Path

from glong_lib import locks
from glong_lib.errors import DataError
from glong_lib.memory import GraphMemory, HashEncoder
from glong_lib.schema import Triple


def memory(n_edges: int) -> GraphMemory:
    mem = GraphMemory(encoder=HashEncoder(32))
    mem.add_triples([Triple(f"s{i}", "r", f"o{i}") for i in range(n_edges)], 1.0, session=1)
    return mem


def rounds(root: Path, n: int, seconds: float):
    """Yield (round folder, deadline) for each round, all children in step with the clock."""
    start = float((root / "go").read_text())
    for k in range(n):
        yield root / f"r{k}", start + (k + 1) * seconds


def write(root: Path, n: int, seconds: float, edges: int) -> None:
    mem, saves, failures = memory(edges), 0, {}

    def save(folder: Path) -> None:
        nonlocal saves
        try:
            mem.save(folder)
            saves += 1
        except DataError as e:
            key = str(e).split(": ", 1)[-1]
            failures[key] = failures.get(key, 0) + 1

    for folder, deadline in rounds(root, n, seconds):
        save(folder)  # at least once, however late a busy machine lets this round start
        while time.time() < deadline:
            save(folder)
    print(json.dumps({"ok": saves, "failures": failures}), flush=True)


def read(root: Path, n: int, seconds: float) -> None:
    ok, failures = 0, {}
    for folder, deadline in rounds(root, n, seconds):
        while time.time() < deadline:
            if not (folder / "manifest.json").exists():
                continue  # no save has committed in this round yet
            try:
                GraphMemory.load(folder, encoder=HashEncoder(32))
                ok += 1
            except (DataError, OSError) as e:
                key = f"{type(e).__name__}: {str(e).split(': ')[-1]}"
                failures[key] = failures.get(key, 0) + 1
    print(json.dumps({"ok": ok, "failures": failures}), flush=True)


if __name__ == "__main__":
    root, n, seconds, mode = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    if "--no-lock" in sys.argv:
        locks.fcntl = None
    warm = root / f"warm-{mode}-{sys.argv[5] if mode == 'write' else 0}"
    memory(3).save(warm)  # imports (faiss) and first calls done before the clock starts
    GraphMemory.load(warm, encoder=HashEncoder(32))
    print("ready", flush=True)
    while not (root / "go").exists():
        time.sleep(0.005)
    time.sleep(max(0.0, float((root / "go").read_text()) - time.time()))
    write(root, n, seconds, int(sys.argv[5])) if mode == "write" else read(root, n, seconds)
