"""The files of a memory folder, read and locked safely (used by :mod:`.persistence`): the folder's
lock, reading one of the memory's own files (no symlinks, size checked before reading), and the
faiss index (its header checked against the memory before faiss allocates anything)."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Iterator, Optional

import numpy as np

from .. import config
from ..errors import DataError
from ..locks import hold, open_lock_file

#: The lock file of a memory folder (see :mod:`.persistence`); never deleted.
LOCK_FILE = ".glong.lock"


@contextlib.contextmanager
def locked(folder: Path, exclusive: bool, wait: Optional[float] = None) -> Iterator[bool]:
    """Hold the folder's lock (exclusive to save, shared to load) and say whether one is held: a
    reader finds no lock file in a memory saved before locks existed, and reads unlocked. Waits at
    most ``wait`` seconds (default ``config.LOCK_WAIT_S``), then fails naming the holder's pid."""
    path = folder / LOCK_FILE
    with hold(open_lock_file(path, exclusive), path, exclusive, config.LOCK_WAIT_S if wait is None else wait) as held:
        yield held


def read_own_file(path: Path, expected: Optional[int] = None, limit: Optional[int] = None) -> bytes:
    """The bytes of one of the memory's own files: a symlink is refused (it would read outside the
    folder), and the size is checked before anything is read or allocated."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        missing = "missing file named by the manifest" if expected is not None else "missing"
        raise DataError(missing, path=path) from None
    except OSError as e:
        raise DataError(f"cannot read ({e.strerror or type(e).__name__})", path=path) from None
    if stat.S_ISLNK(st.st_mode):
        raise DataError("is a symlink; a memory reads only its own files", path=path)
    if not stat.S_ISREG(st.st_mode):
        raise DataError("is not a regular file", path=path)
    if expected is not None and st.st_size != expected:
        raise DataError(f"truncated or changed ({st.st_size} bytes, manifest says {expected})", path=path)
    if limit is not None and st.st_size > limit:
        raise DataError(f"too large to be a memory manifest ({st.st_size} bytes)", path=path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            return f.read(st.st_size + 1)
    except OSError as e:
        raise DataError(f"cannot read ({e.strerror or type(e).__name__})", path=path) from None


#: Offsets in faiss's serialisation of an ``IndexFlatIP``: the type tag, then ``d`` (int32) and
#: ``ntotal`` (int64); the vectors come last, preceded by their count (uint64).
_FAISS_TAG, _FAISS_D, _FAISS_NTOTAL = b"IxFI", slice(4, 8), slice(8, 16)


def _faiss_header_bytes() -> int:
    """Bytes before the vectors in a serialised flat index (the empty index's length)."""
    import faiss

    return len(faiss.serialize_index(faiss.IndexFlatIP(1)).tobytes())


def index_from(data: bytes, path: Path, n_nodes: int, dim: Optional[int]):
    """The faiss index in ``data``, after checking its header against the memory (an inner-product
    flat index of ``n_nodes`` vectors of ``dim``, and exactly the bytes those need): faiss trusts
    the sizes it reads and would allocate whatever a crafted header claims."""
    import faiss

    head = _faiss_header_bytes()
    if len(data) < head or data[:4] != _FAISS_TAG:
        raise DataError("not an inner-product flat faiss index (IndexFlatIP), which a memory holds", path=path)
    d = int.from_bytes(data[_FAISS_D], "little", signed=True)
    ntotal = int.from_bytes(data[_FAISS_NTOTAL], "little", signed=True)
    count = int.from_bytes(data[head - 8:head], "little")
    if ntotal != n_nodes:
        raise DataError(f"index holds {ntotal} vectors for {n_nodes} entities", path=path)
    if d <= 0 or (dim is not None and d != dim):
        raise DataError(f"index is {d}-d but the memory says {dim}", path=path)
    if count != ntotal * d or len(data) != head + 4 * ntotal * d:
        raise DataError(f"index size does not match its header ({len(data)} bytes for {ntotal} x {d})", path=path)
    try:
        return faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8))
    except RuntimeError as e:
        raise DataError(f"faiss cannot read it ({type(e).__name__})", path=path) from None
