"""Child process for the crash tests: saves two different memories into one folder, alternately,
forever (until the parent kills it). Usage: python crash_child.py MEMDIR"""

import sys

from glong_lib.memory import GraphMemory, HashEncoder
from glong_lib.schema import Triple


def memory(n_edges: int) -> GraphMemory:
    mem = GraphMemory(encoder=HashEncoder(32))
    mem.add_triples([Triple(f"s{i}", "r", f"o{i}") for i in range(n_edges)], 1.0, session=1)
    return mem


if __name__ == "__main__":
    a, b = memory(40), memory(90)
    a.save(sys.argv[1])  # the folder always holds a memory before the parent starts killing
    print("ready", flush=True)
    while True:
        b.save(sys.argv[1])
        a.save(sys.argv[1])
