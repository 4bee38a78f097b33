"""Crash tests: a process saving a memory is killed with SIGKILL at random moments; the folder
must then hold exactly the old memory or exactly the new one, loadable, never a mix, never gone."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from testdata import DATA

from glong_lib.memory import GraphMemory, HashEncoder

HERE = Path(__file__).parent


def _edges(folder: Path) -> int:
    return GraphMemory.load(folder, encoder=HashEncoder(32)).stats()["edges"]


def kill_saves(folder: Path, kills: int, seed: int = 0) -> list[int]:
    """Start the saving child ``kills`` times, SIGKILL it after a random delay, and return the edge
    count found in the folder after each kill (the test checks each is 40 or 90)."""
    rng = random.Random(seed)
    found = []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")])}
    for _ in range(kills):
        child = subprocess.Popen([sys.executable, str(HERE / "crash_child.py"), str(folder)],
                                 stdout=subprocess.PIPE, env=env)
        assert child.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.0, 0.2))  # a save takes milliseconds (more on a loaded machine)
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        found.append(_edges(folder) if folder.exists() else -1)
    return found


def test_sigkill_during_saves_leaves_the_old_or_the_new_memory(tmp_path):
    folder = tmp_path / "mem"
    (tmp_path / "keep.txt").write_text("not part of the memory")
    found = kill_saves(folder, kills=50)
    assert set(found) <= {40, 90}, found  # -1 would be a vanished folder; an exception a mix
    # a killed save may leave a temporary file or the previous data files; the next save removes them
    GraphMemory.load(folder, encoder=HashEncoder(32)).save(folder)
    names = sorted(p.name for p in folder.iterdir() if p.name != ".glong.lock")
    assert len(names) == 3 and names[1] == "manifest.json", names
    assert (tmp_path / "keep.txt").read_text() == "not part of the memory"


@pytest.mark.slow
def test_sigkill_of_glong_build_keeps_the_previous_memory_or_the_new_one(tmp_path):
    """The real command: a memory of c01 (gold) replaced by one of c02, killed at random moments."""
    conv1, conv2 = DATA / "conversations" / "c01.json", DATA / "conversations" / "c02.json"
    folder = tmp_path / "mem"
    glong = [sys.executable, "-m", "glong_lib.cli"]
    subprocess.run(glong + ["build", str(conv1), "--gold", "--no-salience", "--out", str(folder)], check=True,
                   capture_output=True)
    old = _edges(folder)
    start = time.perf_counter()
    subprocess.run(glong + ["build", str(conv2), "--gold", "--no-salience", "--out", str(tmp_path / "probe")],
                   check=True, capture_output=True)
    full = time.perf_counter() - start
    new = _edges(tmp_path / "probe")
    rng = random.Random(1)
    seen = []
    for _ in range(4):
        subprocess.run(glong + ["build", str(conv1), "--gold", "--no-salience", "--out", str(folder)], check=True,
                       capture_output=True)
        child = subprocess.Popen(glong + ["build", str(conv2), "--gold", "--no-salience", "--out", str(folder)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.6, 1.05) * full)
        child.send_signal(signal.SIGKILL)
        child.wait()
        seen.append(_edges(folder))
    assert set(seen) <= {old, new}, seen
