"""One memory, several processes: two writers save into one folder at once while a reader loads
it, round after round. The folder lock (persistence: exclusive for a save, shared for a load) must
leave every folder loadable and give the reader no failure. Without the lock this broke 12 of 25
folders (reliability sweep, case E11); ``race_child.py --no-lock`` shows it still can."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from glong_lib.errors import DataError
from glong_lib.memory import GraphMemory, HashEncoder

HERE = Path(__file__).parent
ROUNDS, SECONDS = 25, 0.08


def race(root: Path, rounds: int = ROUNDS, seconds: float = SECONDS, extra: tuple = ()) -> tuple[list, list]:
    """Run two writers (40 and 90 edges) and a reader over ``rounds`` folders; return the folders
    that do not load afterwards and each child's report (saves or loads done, failures seen)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")])}
    base = [sys.executable, str(HERE / "race_child.py"), str(root), str(rounds), str(seconds)]
    children = [subprocess.Popen(base + mode + list(extra), stdout=subprocess.PIPE, env=env, text=True)
                for mode in (["write", "40"], ["write", "90"], ["read"])]
    for child in children:
        assert child.stdout.readline().strip() == "ready"
    (root / "go").write_text(str(time.time() + 0.2))
    outputs = [child.communicate(timeout=120)[0] for child in children]
    assert [child.returncode for child in children] == [0, 0, 0], outputs
    broken = []
    for k in range(rounds):
        try:
            edges = GraphMemory.load(root / f"r{k}", encoder=HashEncoder(32)).stats()["edges"]
            assert edges in (40, 90), edges
        except DataError as e:
            broken.append(str(e))
    return broken, [json.loads(out) for out in outputs]


def test_two_writers_and_a_reader_leave_every_memory_whole(tmp_path):
    broken, reports = race(tmp_path)
    assert broken == []
    assert all(r["failures"] == {} for r in reports), reports
    assert all(r["ok"] >= ROUNDS for r in reports[:2]), reports  # every round saved by both writers
    assert reports[2]["ok"] > 0, reports


def test_lock_opens_where_the_platform_lacks_the_posix_flags(tmp_path, monkeypatch):
    """Windows' os module has neither O_NONBLOCK nor O_NOFOLLOW: the lock must still open (it failed
    with AttributeError before), and its holder still be read back."""
    from glong_lib import locks
    monkeypatch.delattr(os, "O_NONBLOCK", raising=False)
    monkeypatch.delattr(os, "O_NOFOLLOW", raising=False)
    path = tmp_path / ".glong.lock"
    fd = locks.open_lock_file(path, exclusive=True)
    try:
        os.write(fd, str(os.getpid()).encode())
    finally:
        os.close(fd)
    assert locks.holder_pid(path) == os.getpid()
