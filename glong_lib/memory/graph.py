"""The graph memory bank G = (V, E) of G-Long (paper section 3.3).

Two stores that work together:

* **nodes** (V): every subject and object, normalised to one canonical string and embedded with
  the sentence encoder (MiniLM) into a faiss ``IndexFlatIP``. Vectors are unit length, so the
  inner product *is* the cosine similarity. Node ids are positions in the index (nodes are never
  deleted), mapped back to entity strings by ``GraphMemory.entities``.
* **edges** (E): a networkx ``MultiDiGraph`` subject -> object. The edge key is an integer edge id
  (eid), unique in the memory; the edge data are the fields of :class:`~glong_lib.schema.MemoryEdge`
  (relation, weight, created and last-accessed times on the conversation clock, session, turn id,
  speaker, source text, and when a newer fact superseded it).

Insertion is incremental: each session's triples are added to the existing index and graph, with
no rebuild. Entity normalisation goes beyond the paper's reference code (which matched exact
strings): case, whitespace and edge punctuation are folded, first-person words are resolved to the
speaker, and an entity whose embedding is within ``merge_threshold`` cosine of an existing node is
merged into it (recorded in ``aliases`` and ``merges``).

Changed facts: the paper keeps every edge (policy ``append``). Policy ``supersede`` marks the
older edge of a single-valued relation (where someone lives, works, ...) as superseded when a newer
one arrives from the same subject; queries with ``current_only=True`` skip it, history stays.

>>> mem = GraphMemory(encoder=HashEncoder(dim=16), policy="supersede")
>>> first = mem.add_triples([Triple("I", "live_in_citystatecountry", "Portland", speaker="Maya")], 0.0, 1)
>>> later = mem.add_triples([Triple("Maya", "live_in_citystatecountry", "Denver.")], 86400.0, 2)
>>> sorted(mem.graph.nodes)
['denver', 'maya', 'portland']
>>> mem.is_current(first[0]), mem.edge(first[0]).superseded_s, mem.is_current(later[0])
(False, 86400.0, True)
>>> mem.incident_edges("maya", current_only=True) == later
True
"""

from __future__ import annotations

import math
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, Union

import networkx as nx
import numpy as np

from ..config import BUNDLED_MINILM, POLICIES, SINGLE_VALUED_RELATIONS, MemorySettings  # noqa: F401
from ..dates import edge_date
from ..errors import DataError
from ..models import encoder_name
from ..schema import Conversation, MemoryEdge, Session, Triple
from ..text import entity_label, normalise_entity, normalise_relation
from .entities import EntityIndex
from .hash_encoder import HashEncoder  # noqa: F401  (re-exported: memories in tests use it)
from .persistence import FORMAT_VERSION, read_memory, save_memory

_EDGE_FIELDS = tuple(f.name for f in fields(MemoryEdge))

# --------------------------------------------------------------------------- the memory

class GraphMemory(EntityIndex):
    """Entity index (faiss) + attributed MultiDiGraph of facts. See the module docstring.

    ``encoder`` is anything with ``.encode(list[str], normalize_embeddings=True) -> ndarray``
    (a SentenceTransformer); None loads the offline MiniLM on first use.
    """

    def __init__(self, encoder=None, policy: Optional[str] = None, merge_threshold: Optional[float] = None,
                 single_valued: Optional[Iterable[str]] = None, settings: MemorySettings = MemorySettings()):
        given = {k: v for k, v in (("policy", policy), ("merge_threshold", merge_threshold)) if v is not None}
        if single_valued is not None:
            given["single_valued"] = frozenset(normalise_relation(r) for r in single_valued)
        #: ``config.MemorySettings`` (a profile's ``memory``), with the values the keywords name
        self.settings = replace(settings, **given)
        self._encoder = encoder
        # the encoder's reference (a profile's ``encoder``): saved with the memory, whose vectors
        # only that encoder can search; None loads the offline MiniLM on first use
        self.encoder_ref = encoder_name(encoder) if encoder is not None else BUNDLED_MINILM
        self.policy = self.settings.policy
        self.merge_threshold = float(self.settings.merge_threshold)
        self.single_valued = frozenset(normalise_relation(r) for r in self.settings.single_valued)
        self.graph = nx.MultiDiGraph()
        self.entities: list[str] = []          # node id (index position) -> canonical entity
        self.aliases: dict[str, str] = {}      # merged spelling -> canonical entity
        self.merges: list[dict[str, Any]] = []  # one record per merge, in order
        self.superseded_by: dict[int, int] = {}  # old eid -> the eid that replaced it
        self.skipped = 0                       # triples with an empty part, not stored
        self.index = None                      # faiss.IndexFlatIP, created on the first node
        self._ends: dict[int, tuple[str, str]] = {}  # eid -> (subject, object)
        self._current: dict[tuple[str, str], list[int]] = {}  # (subject, relation) -> current eids
        self._next_eid = 0

    # ---------------------------------------------------------------- edges

    def add_triples(self, triples: Sequence[Triple], time_s: Union[float, Sequence[float]],
                    session: Optional[int] = None, dates: Optional[Sequence[Optional[str]]] = None) -> list[int]:
        """Store ``triples`` as edges created (and last accessed) at ``time_s`` on the conversation
        clock: one time for all, or one per triple. ``session`` overrides ``triple.session``;
        ``dates`` (one per triple) are the absolute dates the facts happened (``dates.edge_date``).
        Returns the new edge ids in order. A triple with an empty subject, relation or object
        after normalisation is not stored and is counted in ``skipped`` (so the list can be shorter)."""
        times = [float(time_s)] * len(triples) if np.isscalar(time_s) else [float(t) for t in time_s]
        dates = [None] * len(triples) if dates is None else list(dates)
        if len(times) != len(triples) or len(dates) != len(triples):
            raise DataError(f"{len(times)} times and {len(dates)} dates given for {len(triples)} triples")
        rows = []
        for t, when, day in zip(triples, times, dates):
            subj, rel, obj = normalise_entity(t.subject, t.speaker), normalise_relation(t.relation), \
                normalise_entity(t.object, t.speaker)
            if not (subj and rel and obj):
                self.skipped += 1
                continue
            weight = 1.0 if t.weight is None else float(t.weight)
            if not (math.isfinite(weight) and 0.0 <= weight <= 1.0):
                raise DataError(f"triple '{t.text()}' has weight {t.weight}; weights (Eq. 3) are in [0, 1]")
            if not math.isfinite(when):
                raise DataError(f"triple '{t.text()}' has time {when}")
            rows.append((t, subj, rel, obj, weight, when, session if session is not None else t.session, day))
        names = [n for r in rows for n in (r[1], r[3])]
        labels = [entity_label(x, r[0].speaker) for r in rows for x in (r[0].subject, r[0].object)]
        self._intern(names, labels, [r[5] for r in rows for _ in (0, 1)], [r[6] for r in rows for _ in (0, 1)])
        return [self._add_edge(*r) for r in rows]

    def add_session(self, session: Session, triples: Optional[Sequence[Triple]] = None) -> list[int]:
        """Insert one session's triples (default: its gold triples), each at the time of the turn
        it came from on the conversation clock (the session start when the turn is unknown)."""
        if triples is None:
            triples = [tr for turn in session.turns for tr in turn.triples]
        when = {t.id: t.time_s for t in session.turns}
        times = [when.get(t.turn_id, session.start_s) for t in triples]
        dates = [edge_date(t.source, session.date) for t in triples]
        return self.add_triples(list(triples), times, session=session.index, dates=dates)

    def _add_edge(self, t: Triple, subj: str, rel: str, obj: str, weight: float, when: float,
                  session: Optional[int], day: Optional[str] = None) -> int:
        subj, obj = self.aliases.get(subj, subj), self.aliases.get(obj, obj)
        eid = self._next_eid
        self._next_eid += 1
        if self.policy == "supersede" and rel in self.single_valued:
            for old in self._current.pop((subj, rel), []):
                self.graph.edges[self._ends[old] + (old,)]["superseded_s"] = when
                self.superseded_by[old] = eid
        edge = MemoryEdge(subj, rel, obj, weight, when, when, session=session, turn_id=t.turn_id,
                          speaker=t.speaker, source_text=t.source or "", date=day)
        self._link(eid, edge)
        return eid

    def _link(self, eid: int, edge: MemoryEdge) -> None:
        """Put an edge in the graph and the lookup tables (shared by insertion and loading)."""
        # a plain field copy: dataclasses.asdict deep-copies and was half the insertion time
        self.graph.add_edge(edge.subject, edge.object, key=eid, **{f: getattr(edge, f) for f in _EDGE_FIELDS})
        self._ends[eid] = (edge.subject, edge.object)
        if edge.relation in self.single_valued and edge.superseded_s is None:
            # kept under either policy, so a loaded memory behaves like the one that was saved
            self._current.setdefault((edge.subject, edge.relation), []).append(eid)

    def edge(self, eid: int) -> MemoryEdge:
        """The stored fact with edge id ``eid`` (a copy: edit the memory through its methods)."""
        try:
            u, v = self._ends[int(eid)]
        except KeyError:
            raise KeyError(f"no edge {eid} in this memory") from None
        return MemoryEdge(**self.graph.edges[u, v, int(eid)])

    def edge_count(self) -> int:
        """How many edges the memory holds, superseded ones included (a cheap change marker)."""
        return len(self._ends)

    def edge_ids(self, current_only: bool = False) -> list[int]:
        """Every edge id in insertion order (only the current ones with ``current_only``)."""
        return [e for e in self._ends if not current_only or self.is_current(e)]

    def is_current(self, eid: int) -> bool:
        """False once a newer fact superseded this edge (policy ``supersede``)."""
        u, v = self._ends[int(eid)]
        return self.graph.edges[u, v, int(eid)]["superseded_s"] is None

    def history(self, subject: str, relation: str) -> list[int]:
        """Every edge ``subject -relation-> *`` in time order, superseded ones included."""
        subj, rel = self.resolve(subject), normalise_relation(relation)
        if subj not in self.graph:
            return []
        eids = [k for _, _, k, d in self.graph.out_edges(subj, keys=True, data=True) if d["relation"] == rel]
        return sorted(eids, key=lambda e: (self.edge(e).created_s, e))

    def incident_edges(self, entities: Union[str, Iterable[str]], hops: int = 1,
                       current_only: bool = False) -> list[int]:
        """Edge ids within ``hops`` of ``entities``, following edges in both directions.

        Order is stable: hop by hop, within a hop by the order of the entities reached, and each
        entity's edges by edge id; every edge appears once. With ``current_only`` superseded
        edges are neither returned nor walked through. Unknown entities are ignored."""
        if int(hops) < 1:
            raise DataError(f"hops must be >= 1, got {hops}")
        if isinstance(entities, str):
            entities = [entities]
        frontier, visited = [], set()
        for e in entities:
            name = e if e in self.graph else self.resolve(e)
            if name in self.graph and name not in visited:
                visited.add(name)
                frontier.append(name)
        out: dict[int, None] = {}
        for _ in range(int(hops)):
            nxt = []
            for node in frontier:
                for eid, other in self._edges_at(node, current_only):
                    out.setdefault(eid, None)
                    if other not in visited:
                        visited.add(other)
                        nxt.append(other)
            frontier = nxt
            if not frontier:
                break
        return list(out)

    def _edges_at(self, node: str, current_only: bool) -> list[tuple[int, str]]:
        """(eid, the other end) of every edge at ``node``, in and out, sorted by eid."""
        pairs = [(k, v) for _, v, k, d in self.graph.out_edges(node, keys=True, data=True)
                 if not current_only or d["superseded_s"] is None]
        pairs += [(k, u) for u, _, k, d in self.graph.in_edges(node, keys=True, data=True)
                  if not current_only or d["superseded_s"] is None]
        return sorted(set(pairs))

    def touch(self, eids: Iterable[int], time_s: float) -> None:
        """Mark edges as accessed at ``time_s`` (the paper refreshes this after each retrieval)."""
        for eid in eids:
            u, v = self._ends[int(eid)]
            self.graph.edges[u, v, int(eid)]["last_access_s"] = float(time_s)

    # ---------------------------------------------------------------- statistics

    def stats(self) -> dict[str, Any]:
        """Counts and settings, as a flat dict (what ``glong memory`` prints)."""
        degrees = dict(self.graph.degree())
        top = max(degrees.items(), key=lambda kv: (kv[1], kv[0]), default=("-", 0))
        current = sum(1 for _ in self.edge_ids(current_only=True))
        weights = [d["weight"] for _, _, d in self.graph.edges(data=True)]
        sessions = sorted({d["session"] for _, _, d in self.graph.edges(data=True) if d["session"] is not None})
        return {
            "nodes": self.graph.number_of_nodes(),
            "edges": self.graph.number_of_edges(),
            "current edges": current,
            "superseded edges": self.graph.number_of_edges() - current,
            "relations": len({d["relation"] for _, _, d in self.graph.edges(data=True)}),
            "merged aliases": len(self.aliases),
            "skipped triples": self.skipped,
            "sessions": len(sessions),
            "mean degree": round(2 * self.graph.number_of_edges() / max(1, self.graph.number_of_nodes()), 2),
            "top entity": f"{top[0]} ({top[1]} edges)",
            "mean weight": round(float(np.mean(weights)), 3) if weights else 0.0,
            "index vectors": 0 if self.index is None else int(self.index.ntotal),
            "dimension": self.dim or 0,
            "policy": self.policy,
            "merge threshold": self.merge_threshold,
            "format version": FORMAT_VERSION,
        }

    def growth(self) -> list[dict[str, Any]]:
        """Nodes and edges present after each session (from the stored session numbers), for
        plots. An edge counts as superseded from the session of the edge that replaced it."""
        edges = {e: self.edge(e) for e in self._ends}
        replaced_in = {old: edges[new].session for old, new in self.superseded_by.items()}
        sessions = sorted({m.session for m in edges.values() if m.session is not None})
        rows = []
        for s in sessions:
            upto = [(e, m) for e, m in edges.items() if m.session is not None and m.session <= s]
            gone = sum(1 for e, _ in upto if replaced_in.get(e) is not None and replaced_in[e] <= s)
            rows.append({"session": s, "nodes": len({m.subject for _, m in upto} | {m.object for _, m in upto}),
                         "edges": len(upto), "current edges": len(upto) - gone,
                         "new edges": sum(1 for _, m in upto if m.session == s)})
        return rows

    # ---------------------------------------------------------------- persistence (files: persistence.py)

    def to_json(self) -> dict[str, Any]:
        """Everything but the vectors, as plain JSON data (the vectors go to the faiss file)."""
        nodes = [{"name": n, **{k: self.graph.nodes[n][k] for k in ("label", "created_s", "first_session")}}
                 for n in self.entities]
        edges = [{"eid": e, **self.edge(e).to_dict()} for e in self._ends]
        return {"policy": self.policy, "merge_threshold": self.merge_threshold, "encoder": self.encoder_ref,
                "single_valued": sorted(self.single_valued), "dimension": self.dim, "next_eid": self._next_eid,
                "skipped": self.skipped, "nodes": nodes, "aliases": self.aliases, "merges": self.merges,
                "superseded_by": {str(k): v for k, v in self.superseded_by.items()}, "edges": edges}

    def save(self, directory: Union[str, Path], wait: Optional[float] = None) -> Path:
        """Write the memory into ``directory`` atomically (``persistence.save_memory``): a crash at
        any point leaves the previous memory or this one, and other files in the folder stay.
        ``wait``: the longest wait for the folder's lock (default ``config.LOCK_WAIT_S``)."""
        return save_memory(self.to_json(), self.index, directory, wait=wait)

    @classmethod
    def load(cls, directory: Union[str, Path], encoder=None, wait: Optional[float] = None) -> "GraphMemory":
        """Read a memory written by :meth:`save`, checked (``persistence.read_memory``): missing,
        truncated, corrupt or inconsistent files raise :class:`DataError` with a one-line reason."""
        folder = Path(directory)
        state, index = read_memory(folder, wait=wait)
        built_with, given = state.get("encoder"), encoder_name(encoder)
        if built_with is not None and not isinstance(built_with, str):
            raise DataError(f"memory metadata is malformed (encoder is {built_with!r})", path=folder)
        if built_with and given and built_with != given:
            raise DataError(f"this memory was built with the encoder {built_with}, whose vectors {given} "
                            f"cannot search; use the profile that built it", path=folder)
        try:
            mem = cls(encoder=encoder, policy=state["policy"], merge_threshold=state["merge_threshold"],
                      single_valued=state["single_valued"])
            if encoder is None:  # the encoder that built it (older memories record none: all were MiniLM)
                mem.encoder_ref = built_with or BUNDLED_MINILM
            mem._restore(state, index)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            if isinstance(e, DataError):
                raise
            raise DataError(f"memory metadata is malformed ({type(e).__name__}: {e})", path=folder) from None
        return mem

    def _restore(self, state: dict, index) -> None:
        for n in state["nodes"]:
            self.entities.append(n["name"])
            self.graph.add_node(n["name"], node_id=len(self.entities) - 1, label=n["label"],
                                created_s=n["created_s"], first_session=n["first_session"])
        for e in state["edges"]:
            self._link(int(e["eid"]), MemoryEdge(**{k: e[k] for k in _EDGE_FIELDS if k in e}))  # "date" may be absent
        self.aliases = {str(k): str(v) for k, v in state["aliases"].items()}
        self.merges = list(state["merges"])
        self.superseded_by = {int(k): int(v) for k, v in state["superseded_by"].items()}
        self._next_eid = int(state["next_eid"])
        self.skipped = int(state.get("skipped", 0))
        self.index = index

    def __repr__(self) -> str:
        return (f"GraphMemory({self.graph.number_of_nodes()} nodes, {self.graph.number_of_edges()} edges, "
                f"policy={self.policy!r})")


def build_memory(conv: Conversation, triples: Optional[Sequence[Triple]] = None, encoder=None,
                 policy: Optional[str] = None, merge_threshold: Optional[float] = None,
                 sessions: Optional[Iterable[int]] = None, settings: MemorySettings = MemorySettings()) -> GraphMemory:
    """A memory of ``conv`` built session by session (the incremental insertion the paper uses),
    from ``triples`` (extracted, each with its ``session`` and ``turn_id``) or, when None, the
    conversation's gold triples. ``sessions`` limits which sessions go in. ``settings`` (a profile's
    ``memory``) gives what ``policy`` and ``merge_threshold`` leave out."""
    mem = GraphMemory(encoder=encoder, policy=policy, merge_threshold=merge_threshold, settings=settings)
    wanted = None if sessions is None else set(sessions)
    by_session: dict[int, list[Triple]] = {}
    if triples is not None:
        turn_session = {t.id: s.index for s in conv.sessions for t in s.turns}
        for t in triples:
            s = t.session if t.session is not None else turn_session.get(t.turn_id)
            if s is None:
                raise DataError(f"triple '{t.text()}' has neither a session nor a known turn id",
                                where=f"conversation {conv.id}")
            by_session.setdefault(int(s), []).append(t)
    for session in conv.sessions:
        if wanted is None or session.index in wanted:
            mem.add_session(session, None if triples is None else by_session.get(session.index, []))
    return mem



