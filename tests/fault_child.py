"""Child process for the crash tests: a save (or a whole ``glong build``) that dies at the N-th step
that touches the disk's metadata (open of a new file, fsync, rename/replace, unlink), the way a power
cut or SIGKILL would: ``os._exit`` runs no cleanup. The steps are counted, not timed, so each run
dies at the same point on any machine.

Usage: python fault_child.py N save MEMDIR            save a 90-edge memory into MEMDIR
       python fault_child.py N build MEMDIR CONV      glong build CONV --gold --no-salience --out MEMDIR
       python fault_child.py N naive MEMDIR           the control: the same save, written in place
Exit 0 and print the step count when the run ends before step N; exit 3 when it died at step N.
"""

import os
import sys

N = 0  # the step to die at (set from the command line; importing this file for doctests arms nothing)
steps = 0


def _counted(fn):
    def step(*args, **kwargs):
        global steps
        steps += 1
        if steps == N:
            os._exit(3)
        return fn(*args, **kwargs)
    return step


def arm() -> None:
    """Count (and die at) every metadata step from now on."""
    for name in ("replace", "rename", "unlink", "fsync"):
        setattr(os, name, _counted(getattr(os, name)))
    real_open = os.open

    def open_(path, flags, *args, **kwargs):  # a new file (tempfile.mkstemp, open(..., "w")) is a step
        opener = _counted(real_open) if flags & os.O_CREAT else real_open
        return opener(path, flags, *args, **kwargs)
    os.open = open_


def in_place(path, data: bytes):
    """The control's writer: straight into the file, half, a step, the rest (no temporary file, no rename)."""
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])
        f.flush()
        os.fsync(f.fileno())
        f.write(data[len(data) // 2:])
    return path


if __name__ == "__main__":
    N = int(sys.argv[1])
    from glong_lib.memory import GraphMemory, HashEncoder
    from glong_lib.schema import Triple

    mode, folder = sys.argv[2], sys.argv[3]
    if mode == "build":
        from glong_lib.cli import main

        arm()
        code = main(["build", sys.argv[4], "--gold", "--no-salience", "--out", folder])
        print(steps, flush=True)
        os._exit(code)
    mem = GraphMemory(encoder=HashEncoder(32))
    mem.add_triples([Triple(f"s{i}", "r", f"o{i}") for i in range(90)], 1.0, session=1)
    if mode == "naive":
        import json

        import glong_lib.memory.persistence as persistence

        persistence.atomic_write_bytes = in_place
        persistence.atomic_write_json = lambda path, obj, indent=1: in_place(path, json.dumps(obj).encode())
    arm()
    mem.save(folder)
    print(steps, flush=True)
    os._exit(0)
