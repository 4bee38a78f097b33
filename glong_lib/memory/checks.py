"""Whether a state is a valid memory: the checks a memory passes when it is loaded, and before it is
saved (:mod:`.persistence` runs them both ways, so a memory that would not load is never written).

:func:`check_state` holds the invariants of the state itself (names, ids, edges between nodes,
weights and times); :func:`check_loaded` adds the faiss index (one vector per entity, of the
memory's dimension). Each refuses with a one-line :class:`DataError` naming the first problem.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional

from ..errors import DataError
from ..schema import MAX_ABS_TIME_S

#: The fields every saved edge holds, with the types each may take.
EDGE_FIELDS = {"subject": str, "relation": str, "object": str, "weight": (int, float),
               "created_s": (int, float), "last_access_s": (int, float), "session": (int, type(None)),
               "turn_id": (str, type(None)), "speaker": (str, type(None)), "source_text": str,
               "superseded_s": (int, float, type(None))}

#: Edge fields a saved memory may leave out (written only when set).
OPTIONAL_EDGE_FIELDS = {"date": str}


def _fail(problem: str, path: Path) -> None:
    raise DataError(f"invalid memory: {problem}", path=path)


def _finite(x: Any) -> bool:
    """``math.isfinite`` that says False (not OverflowError) for an int beyond float, like 10**400."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def _time_ok(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and _finite(x) and abs(x) <= MAX_ABS_TIME_S


def check_state(state: dict, path: Path) -> None:
    """Refuse a memory state that breaks an invariant, naming the first problem: node names unique,
    edge ids unique, every edge between existing nodes, the edge counter above every edge id,
    weights finite in [0, 1], times finite, supersede links between existing edges.

    >>> check_state({"nodes": [], "edges": [], "next_eid": 0, "superseded_by": {}}, Path("m"))
    >>> check_state({"nodes": [], "edges": [], "next_eid": -1, "superseded_by": {}}, Path("m"))
    Traceback (most recent call last):
    glong_lib.errors.DataError: m: invalid memory: next_eid is -1, expected a count >= 0
    """
    for key, kind in (("nodes", list), ("edges", list), ("superseded_by", dict)):
        if not isinstance(state.get(key), kind):
            _fail(f"'{key}' should be a {kind.__name__}", path)
    next_eid = state.get("next_eid")
    if not isinstance(next_eid, int) or isinstance(next_eid, bool) or next_eid < 0:
        _fail(f"next_eid is {next_eid!r}, expected a count >= 0", path)
    names: set[str] = set()
    for i, n in enumerate(state["nodes"]):
        if not isinstance(n, dict) or not isinstance(n.get("name"), str):
            _fail(f"node {i} has no name", path)
        if n["name"] in names:
            _fail(f"node name '{n['name']}' appears twice", path)
        if not _time_ok(n.get("created_s")):
            _fail(f"node '{n['name']}' has a bad created_s {n.get('created_s')!r}", path)
        names.add(n["name"])
    eids: set[int] = set()
    for i, e in enumerate(state["edges"]):
        if not isinstance(e, dict):
            _fail(f"edge {i} is not an object", path)
        eid = e.get("eid")
        if not isinstance(eid, int) or isinstance(eid, bool) or eid < 0:
            _fail(f"edge {i} has a bad id {eid!r}", path)
        if eid in eids:
            _fail(f"edge id {eid} appears twice", path)
        if eid >= next_eid:
            _fail(f"edge id {eid} is not below the edge counter next_eid={next_eid} "
                  f"(the next insert would overwrite it)", path)
        for key, kind in EDGE_FIELDS.items():
            if key not in e or not isinstance(e[key], kind) or isinstance(e[key], bool):
                _fail(f"edge {eid}: '{key}' is {e.get(key)!r}", path)
        for key, kind in OPTIONAL_EDGE_FIELDS.items():
            if key in e and not isinstance(e[key], kind):
                _fail(f"edge {eid}: '{key}' is {e[key]!r}", path)
        if e["subject"] not in names or e["object"] not in names:
            _fail(f"edge {eid} names an entity that is not a node", path)
        if not (_finite(e["weight"]) and 0.0 <= e["weight"] <= 1.0):
            _fail(f"edge {eid}: weight {e['weight']!r} is not in [0, 1]", path)
        for key in ("created_s", "last_access_s", "superseded_s"):
            if e[key] is not None and not _time_ok(e[key]):
                _fail(f"edge {eid}: {key} {e[key]!r} is not a time", path)
        eids.add(eid)
    for old, new in state["superseded_by"].items():
        try:
            old_id = int(old)
        except (TypeError, ValueError):
            _fail(f"superseded_by key {old!r} is not an edge id", path)
        if old_id not in eids or not isinstance(new, int) or new not in eids:
            _fail(f"superseded_by links edge {old} to {new!r}, which is not an edge", path)


def check_loaded(state: Any, index, path: Path) -> None:
    """The checks a loaded memory passes (also run by :func:`.persistence.save_memory` on a new state
    before it is written): a JSON object, the invariants of :func:`check_state`, and :func:`check_index`."""
    _check_object(state, path)
    check_state(state, path)
    check_index(state, index, path)


def _check_object(state: Any, path: Path) -> None:
    if not isinstance(state, dict):
        raise DataError("memory file is not a JSON object", path=path)


def check_index(state: dict, index, path: Path) -> None:
    """One vector per entity (no index without entities), of the memory's dimension."""
    n_nodes = len(state["nodes"])
    if (index is None) != (n_nodes == 0):
        raise DataError(f"memory has {n_nodes} entities but {'no' if index is None else 'an'} index", path=path)
    if index is not None:
        if index.ntotal != n_nodes:
            raise DataError(f"index holds {index.ntotal} vectors for {n_nodes} entities", path=path)
        if state.get("dimension") is not None and index.d != state["dimension"]:
            raise DataError(f"index is {index.d}-d but the memory says {state['dimension']}", path=path)


def declared_dimension(state: dict) -> Optional[int]:
    """The vector dimension the state declares, if any: the index read next must match it."""
    return state["dimension"] if type(state.get("dimension")) is int else None


def checked_state(state: Any, path: Path) -> dict:
    """``state`` after the invariant checks: done before the index is read, whose header is then
    checked against the entity count (never trusted for an allocation)."""
    _check_object(state, path)
    check_state(state, path)
    return state

