"""Advisory file locks with a deadline (``fcntl.flock`` on a lock file), for the memory folder's
``.glong.lock`` and the model cache's conversion lock.

* A lock is never waited for forever: :func:`hold` tries without blocking, notes on a terminal's
  stderr when the wait gets long, and gives up at its deadline with one line naming the lock file and the pid of
  the process that holds it (a writer writes its pid into the lock file).
* A thread that already holds a lock file exclusively may take it again (a ``query --save-access``
  holds its memory from load to save, and the load and the save inside take the same lock): flock
  locks belong to open files, so a second open in the same process would wait for itself.
* A lock file is opened without following a symlink and without blocking on a FIFO put in its
  place, and must be a regular file (:func:`open_lock_file`).

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), ".lock")
>>> with hold(open_lock_file(path, exclusive=True), path, exclusive=True, wait=1):
...     with hold(open_lock_file(path, exclusive=True), path, exclusive=True, wait=0):  # the same thread again
...         holder_pid(path) == os.getpid()
True
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Iterator, Optional, Union

from .errors import DataError

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no locking (one writer at a time is then the user's job)
    fcntl = None

#: After this long waiting for a lock, say on a terminal's stderr who holds it (a shorter wait, or
#: stderr that is a file or pipe, says nothing: the failure is then exactly one line).
NOTE_AFTER_S = 2.0
#: How often a waiting process tries the lock again.
POLL_S = 0.05

_held = threading.local()  # this thread's exclusive locks: (device, inode) -> depth


def _guard_flags() -> int:
    """``O_NONBLOCK | O_NOFOLLOW`` where the platform has them (POSIX); 0 on Windows, which has neither."""
    return getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)


def open_lock_file(path: Union[str, Path], exclusive: bool) -> Optional[int]:
    """The lock file's descriptor: created by a writer, read-only for a reader (None where there is
    none). Never through a symlink, never blocking on a FIFO put in its place, only a regular file."""
    flags = ((os.O_RDWR | os.O_CREAT) if exclusive else os.O_RDONLY) | _guard_flags()
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        if not exclusive:
            return None
        raise DataError(f"cannot take the lock for writing ({e.strerror or type(e).__name__})", path=path) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise DataError("is not a regular file; remove it (it is only a lock)", path=path)
    return fd


def holder_pid(path: Union[str, Path]) -> Optional[int]:
    """The pid the last exclusive holder wrote into the lock file, if that process still exists
    (None: none, unreadable, or ended)."""
    try:
        fd = os.open(path, os.O_RDONLY | _guard_flags())
    except OSError:
        return None
    try:
        text = os.read(fd, 32).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    pid = int(text) if text.isdigit() and len(text) < 12 else None
    return pid if pid is not None and _alive(pid) else None


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (a stopped one does): a pid left by a holder that has ended
    names nobody."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # OverflowError: beyond any pid
        return False
    except PermissionError:  # another user's process
        return True
    return True


@contextlib.contextmanager
def hold(fd: Optional[int], path: Union[str, Path], exclusive: bool, wait: float) -> Iterator[bool]:
    """Hold the lock on ``fd`` (an open lock file, which this closes) and say whether one is held
    (False: no fd, or no locking on this system). Waits at most ``wait`` seconds, then raises a
    :class:`DataError` naming the lock file and its holder's pid."""
    if fd is None or fcntl is None:
        if fd is not None:
            os.close(fd)
        yield False
        return
    st = os.fstat(fd)
    key = (st.st_dev, st.st_ino)
    depth = getattr(_held, "locks", {})
    if key in depth:  # this thread holds it exclusively already: the outer holder releases it
        os.close(fd)
        yield True
        return
    try:
        _acquire(fd, path, exclusive, wait)
        if exclusive:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
            _held.locks = {**depth, key: 1}
        yield True
    finally:
        if exclusive and key in getattr(_held, "locks", {}):
            _held.locks = {k: v for k, v in _held.locks.items() if k != key}
        os.close(fd)  # closing releases the lock


def _acquire(fd: int, path: Union[str, Path], exclusive: bool, wait: float) -> None:
    mode = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
    start = time.monotonic()
    noted = False
    while True:
        try:
            fcntl.flock(fd, mode)
            return
        except BlockingIOError:
            pass
        waited = time.monotonic() - start
        pid = holder_pid(path)
        holder = f"pid {pid}" if pid is not None and pid != os.getpid() else "another process"
        if waited >= wait:
            raise DataError(f"still locked by {holder} after {wait:g} s; try again when it has finished "
                            f"(or wait longer with --wait SECONDS)", path=path)
        if not noted and waited >= NOTE_AFTER_S and sys.stderr.isatty():  # a person is watching; a log gets one line
            print(f"glong: waiting up to {wait:g} s for {holder}, which holds {path}", file=sys.stderr, flush=True)
            noted = True
        time.sleep(min(POLL_S, max(wait - waited, 0.0)))
