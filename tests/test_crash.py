"""Crash tests: a process saving a memory dies at each of its disk steps in turn (deterministic fault
injection, ``fault_child.py``); the folder must then hold exactly the old memory or exactly the new one,
loadable, never a mix, never gone. A control shows the test fails on a save written in place."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from testdata import DATA

from glong_lib.errors import DataError
from glong_lib.memory import GraphMemory, HashEncoder
from glong_lib.schema import Triple

HERE = Path(__file__).parent


def _edges(folder: Path) -> int:
    return GraphMemory.load(folder, encoder=HashEncoder(32)).stats()["edges"]


def crash_at_every_step(folder: Path, mode: str, reset, *extra: str) -> tuple[list[int], int]:
    """Run ``fault_child.py N mode folder`` for N = 1, 2, ... (``reset()`` first each time) until a run
    ends before its N-th step; return the edge count found after each crash (-1: the folder does not
    load) and the number of steps a whole run takes."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")])}
    found = []
    for n in range(1, 200):
        reset()
        run = subprocess.run([sys.executable, str(HERE / "fault_child.py"), str(n), mode, str(folder), *extra],
                             capture_output=True, text=True, env=env, timeout=300)
        if run.returncode == 0:
            return found, int(run.stdout.split()[-1])
        assert run.returncode == 3, run.stderr[-2000:]
        try:
            found.append(_edges(folder))
        except DataError:
            found.append(-1)
    raise AssertionError("the run never finished")


def _old_memory(folder: Path, edges: int = 40):
    def reset():
        mem = GraphMemory(encoder=HashEncoder(32))
        mem.add_triples([Triple(f"s{i}", "r", f"o{i}") for i in range(edges)], 1.0, session=1)
        mem.save(folder)
    return reset


def test_a_save_killed_at_any_step_leaves_the_old_or_the_new_memory(tmp_path):
    """Every step of a save (each new file, fsync, rename, unlink) in turn is the last one: the folder
    then holds the 40-edge memory or the 90-edge one, never a mix, never nothing."""
    folder = tmp_path / "mem"
    (tmp_path / "keep.txt").write_text("not part of the memory")
    found, steps = crash_at_every_step(folder, "save", _old_memory(folder))
    assert steps >= 6 and len(found) == steps  # a save is several steps, and each was a crash point
    assert set(found) <= {40, 90}, found
    assert 40 in found and 90 in found  # the commit point is inside the save
    # a killed save may leave a temporary file or the previous data files; the next save removes them
    GraphMemory.load(folder, encoder=HashEncoder(32)).save(folder)
    names = sorted(p.name for p in folder.iterdir() if p.name != ".glong.lock")
    assert len(names) == 3 and names[1] == "manifest.json", names
    assert (tmp_path / "keep.txt").read_text() == "not part of the memory"


def test_the_crash_test_fails_on_a_save_written_in_place(tmp_path):
    """The control: the same 90-edge save written straight into the files (no temporary file, no
    rename) leaves a memory that does not load when it dies between its writes."""
    folder = tmp_path / "mem"
    found, _ = crash_at_every_step(folder, "naive", _old_memory(folder))
    assert -1 in found, found


@pytest.mark.slow
def test_glong_build_killed_at_any_step_keeps_the_previous_memory_or_the_new_one(tmp_path):
    """The real command: a memory of c01 (gold) replaced by one of c02, dying at each step in turn."""
    conv1, conv2 = DATA / "conversations" / "c01.json", DATA / "conversations" / "c02.json"
    folder = tmp_path / "mem"
    glong = [sys.executable, "-m", "glong_lib.cli"]

    def build(conv: Path, out: Path) -> None:
        run = subprocess.run(glong + ["build", str(conv), "--gold", "--no-salience", "--out", str(out)],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-3000:]

    build(conv2, tmp_path / "new")
    build(conv1, tmp_path / "old")
    old, new = _edges(tmp_path / "old"), _edges(tmp_path / "new")
    found, steps = crash_at_every_step(folder, "build", lambda: build(conv1, folder), str(conv2))
    assert len(found) == steps and set(found) <= {old, new}, found
    assert new in found  # crashes after the commit point keep the new memory
