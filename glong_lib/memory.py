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

import hashlib
import json
import math
import os
import re
import shutil
import string
import uuid
from collections import Counter
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, Union

import networkx as nx
import numpy as np

from .errors import DataError
from .schema import Conversation, MemoryEdge, Session, Triple

#: Version of the on-disk layout written by :meth:`GraphMemory.save`; loading a newer one fails.
FORMAT_VERSION = 1
FORMAT_NAME = "glong-memory"
META_FILE = "memory.json"
INDEX_FILE = "entities.faiss"

#: Words that stand for the speaker of the utterance.
FIRST_PERSON = frozenset({"i", "me", "my", "myself", "mine"})

#: Relations that hold one value at a time (PersonaExt names): where one lives, works, one's job,
#: marital and school status. Under policy ``supersede`` a newer value replaces the older one.
SINGLE_VALUED_RELATIONS = frozenset({
    "live_in_citystatecountry", "live_in_general", "employed_by_company", "employed_by_general",
    "has_profession", "job_status", "marital_status", "school_status",
})

POLICIES = ("append", "supersede")

#: Cosine similarity (MiniLM, unit vectors) above which two entity strings become one node.
#: Measured on MiniLM: "hiking"/"hikes" 0.90 and "portland"/"denver" 0.55 stay apart;
#: "the hospital"/"hospital" 0.95 and "make pasta"/"making pasta" 0.96 merge.
DEFAULT_MERGE_THRESHOLD = 0.92

_EDGE_FIELDS = tuple(f.name for f in fields(MemoryEdge))
_PUNCT = string.punctuation + "“”‘’«»…–—"
_DIGITS = re.compile(r"\d+")


# --------------------------------------------------------------------------- normalisation

def normalise_entity(text: str, speaker: Optional[str] = None) -> str:
    """The canonical spelling of an entity: lower case, single spaces, no punctuation at the
    ends; a first-person word ("I", "me", "my", "myself", "mine") becomes the speaker's name.

    >>> normalise_entity("  Golden   Retriever! ")
    'golden retriever'
    >>> normalise_entity("I", speaker="Maya")
    'maya'
    >>> normalise_entity("\\"Leo's dog\\"")
    "leo's dog"
    >>> normalise_entity("my", speaker=None)
    'my'
    """
    value = " ".join(str(text).split()).strip(_PUNCT + " ").lower()
    if value in FIRST_PERSON and speaker:
        return normalise_entity(speaker)
    return value


def normalise_relation(text: str) -> str:
    """Relation names in one spelling: lower case, spaces and dashes as underscores.

    >>> normalise_relation(" Live in-General ")
    'live_in_general'
    """
    return re.sub(r"[\s\-]+", "_", str(text).strip().lower())


def same_numbers(a: str, b: str) -> bool:
    """Whether two strings carry the same numbers (so "march 2" never merges into "march 3",
    although MiniLM puts them at cosine 0.94).

    >>> same_numbers("march 2", "march 3"), same_numbers("2 dogs", "two dogs"), same_numbers("a", "b")
    (False, False, True)
    """
    return Counter(_DIGITS.findall(a)) == Counter(_DIGITS.findall(b))


def _label(text: str, speaker: Optional[str]) -> str:
    """How a node is shown: its first surface spelling (the speaker's name for "I")."""
    if speaker and normalise_entity(text) in FIRST_PERSON:
        text = speaker
    return " ".join(str(text).split()).strip(_PUNCT + " ")


# --------------------------------------------------------------------------- a fake encoder

class HashEncoder:
    """A stand-in for the sentence encoder with no semantics: each distinct string gets a fixed
    random unit vector seeded by its SHA-256. For tests and scale benchmarks only (two different
    strings are almost orthogonal, so nothing merges and nearest_entities finds exact matches).

    >>> enc = HashEncoder(dim=8)
    >>> v = enc.encode(["a", "b", "a"], normalize_embeddings=True)
    >>> v.shape, bool(np.allclose(v[0], v[2])), round(float(np.linalg.norm(v[1])), 6)
    ((3, 8), True, 1.0)
    """

    def __init__(self, dim: int = 64):
        self.dim = int(dim)

    def get_sentence_embedding_dimension(self) -> int:
        return self.dim

    def encode(self, texts: Sequence[str], normalize_embeddings: bool = True, **_: Any) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(str(t).encode("utf-8")).digest()[:8], "little")
            out[i] = np.random.default_rng(seed).standard_normal(self.dim)
        if normalize_embeddings:
            out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


# --------------------------------------------------------------------------- the memory

class GraphMemory:
    """Entity index (faiss) + attributed MultiDiGraph of facts. See the module docstring.

    ``encoder`` is anything with ``.encode(list[str], normalize_embeddings=True) -> ndarray``
    (a SentenceTransformer); None loads the offline MiniLM on first use.
    """

    def __init__(self, encoder=None, policy: str = "append", merge_threshold: float = DEFAULT_MERGE_THRESHOLD,
                 single_valued: Iterable[str] = SINGLE_VALUED_RELATIONS):
        if policy not in POLICIES:
            raise DataError(f"unknown policy '{policy}' (choose from {', '.join(POLICIES)})")
        if not 0.0 < float(merge_threshold) <= 1.0 + 1e-9:
            raise DataError(f"merge_threshold must be in (0, 1], got {merge_threshold}")
        self._encoder = encoder
        self.policy = policy
        self.merge_threshold = float(merge_threshold)
        self.single_valued = frozenset(normalise_relation(r) for r in single_valued)
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

    # ---------------------------------------------------------------- encoder and index

    @property
    def encoder(self):
        """The encoder in use (the offline MiniLM is loaded here on first use when none was given)."""
        if self._encoder is None:
            from .models import load_encoder

            self._encoder = load_encoder()
        return self._encoder

    @encoder.setter
    def encoder(self, value) -> None:
        self._encoder = value

    @property
    def dim(self) -> Optional[int]:
        return None if self.index is None else int(self.index.d)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors (float32, C-contiguous) for ``texts``, checked against the index size."""
        vecs = np.asarray(self.encoder.encode(list(texts), normalize_embeddings=True), dtype=np.float32)
        vecs = np.ascontiguousarray(vecs.reshape(len(texts), -1))
        if self.index is not None and vecs.shape[1] != self.index.d:
            raise DataError(f"encoder gives {vecs.shape[1]}-d vectors but the memory index is {self.index.d}-d")
        # normalise again: a custom encoder may ignore normalize_embeddings
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.where(norms == 0, 1.0, norms)

    def _search(self, vecs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        k = min(int(k), len(self.entities))
        if self.index is None or k <= 0:
            return np.zeros((len(vecs), 0), np.float32), np.zeros((len(vecs), 0), np.int64)
        return self.index.search(vecs, k)

    def _add_node(self, name: str, vec: np.ndarray, label: str, time_s: float, session: Optional[int]) -> None:
        import faiss

        if self.index is None:
            self.index = faiss.IndexFlatIP(int(vec.shape[0]))
        self.index.add(vec.reshape(1, -1))
        self.entities.append(name)
        self.graph.add_node(name, node_id=len(self.entities) - 1, label=label,
                            created_s=float(time_s), first_session=session)

    # ---------------------------------------------------------------- entities

    def resolve(self, text: str, speaker: Optional[str] = None) -> str:
        """The canonical name of ``text`` in this memory: normalised, then followed through the
        alias table. (An unseen entity comes back normalised; it is not added.)"""
        name = normalise_entity(text, speaker)
        return self.aliases.get(name, name)

    def _intern(self, names: list[str], labels: list[str], time_s: list[float],
                session: list[Optional[int]]) -> None:
        """Add the unseen names as nodes, or merge each into a near-identical existing node.
        New names are embedded in one batch, then placed one by one so that two new spellings
        of one entity in the same batch also merge."""
        todo, seen = [], set()
        for i, n in enumerate(names):
            if n not in self.graph and n not in self.aliases and n not in seen:
                seen.add(n)
                todo.append(i)
        if not todo:
            return
        vecs = self._embed([names[i] for i in todo])
        # one batched search against the existing nodes, plus new-vs-new similarities, gives the
        # same answer as searching one by one after each insertion, without n separate searches
        old_scores, old_ids = self._search(vecs, 1)
        among_new = vecs @ vecs.T
        added = np.zeros(len(todo), dtype=bool)  # rows of ``vecs`` that became nodes in this call
        for row, i in enumerate(todo):
            score, target = -np.inf, None
            if old_ids.shape[1] and old_ids[row, 0] >= 0:
                score, target = float(old_scores[row, 0]), self.entities[int(old_ids[row, 0])]
            if row and added[:row].any():
                sims = np.where(added[:row], among_new[row, :row], -np.inf)
                j = int(np.argmax(sims))
                if float(sims[j]) > score:
                    score, target = float(sims[j]), names[todo[j]]
            if target is not None and score >= self.merge_threshold and same_numbers(names[i], target):
                self.aliases[names[i]] = target
                self.merges.append({"alias": names[i], "canonical": target, "score": round(score, 6),
                                    "time_s": float(time_s[i]), "session": session[i]})
                continue
            self._add_node(names[i], vecs[row], labels[i], time_s[i], session[i])
            added[row] = True

    def nearest_entities(self, query: Union[str, np.ndarray], k: int = 5) -> list[tuple[str, float]]:
        """The ``k`` entities most similar to ``query`` (text, or a vector), best first, with
        their cosine similarity. Text is folded like an entity (case, spaces, end punctuation)
        before encoding, so an entity's own name finds it at similarity 1."""
        if self.index is None or k <= 0:
            return []
        if isinstance(query, str):
            vec = self._embed([normalise_entity(query) or query])
        else:
            vec = np.ascontiguousarray(np.asarray(query, dtype=np.float32).reshape(1, -1))
            if vec.shape[1] != self.index.d:
                raise DataError(f"query vector is {vec.shape[1]}-d but the memory index is {self.index.d}-d")
        scores, ids = self._search(vec, k)
        return [(self.entities[int(i)], float(s)) for s, i in zip(scores[0], ids[0]) if i >= 0]

    def entity_vectors(self) -> np.ndarray:
        """All node vectors, in node-id order (an ``n x d`` float32 array)."""
        if self.index is None:
            return np.zeros((0, 0), np.float32)
        return self.index.reconstruct_n(0, self.index.ntotal)

    # ---------------------------------------------------------------- edges

    def add_triples(self, triples: Sequence[Triple], time_s: Union[float, Sequence[float]],
                    session: Optional[int] = None) -> list[int]:
        """Store ``triples`` as edges created (and last accessed) at ``time_s`` on the conversation
        clock: one time for all, or one per triple. ``session`` overrides ``triple.session``.
        Returns the new edge ids in order. A triple with an empty subject, relation or object
        after normalisation is not stored and is counted in ``skipped`` (so the list can be shorter)."""
        times = [float(time_s)] * len(triples) if np.isscalar(time_s) else [float(t) for t in time_s]
        if len(times) != len(triples):
            raise DataError(f"{len(times)} times given for {len(triples)} triples")
        rows = []
        for t, when in zip(triples, times):
            subj, rel, obj = normalise_entity(t.subject, t.speaker), normalise_relation(t.relation), \
                normalise_entity(t.object, t.speaker)
            if not (subj and rel and obj):
                self.skipped += 1
                continue
            weight = 1.0 if t.weight is None else float(t.weight)
            if not math.isfinite(weight) or weight < 0:
                raise DataError(f"triple '{t.text()}' has weight {t.weight}; weights must be finite and >= 0")
            if not math.isfinite(when):
                raise DataError(f"triple '{t.text()}' has time {when}")
            rows.append((t, subj, rel, obj, weight, when, session if session is not None else t.session))
        names = [n for r in rows for n in (r[1], r[3])]
        labels = [_label(x, r[0].speaker) for r in rows for x in (r[0].subject, r[0].object)]
        self._intern(names, labels, [r[5] for r in rows for _ in (0, 1)], [r[6] for r in rows for _ in (0, 1)])
        return [self._add_edge(*r) for r in rows]

    def add_session(self, session: Session, triples: Optional[Sequence[Triple]] = None) -> list[int]:
        """Insert one session's triples (default: its gold triples), each at the time of the turn
        it came from on the conversation clock (the session start when the turn is unknown)."""
        if triples is None:
            triples = [tr for turn in session.turns for tr in turn.triples]
        when = {t.id: t.time_s for t in session.turns}
        times = [when.get(t.turn_id, session.start_s) for t in triples]
        return self.add_triples(list(triples), times, session=session.index)

    def _add_edge(self, t: Triple, subj: str, rel: str, obj: str, weight: float, when: float,
                  session: Optional[int]) -> int:
        subj, obj = self.aliases.get(subj, subj), self.aliases.get(obj, obj)
        eid = self._next_eid
        self._next_eid += 1
        if self.policy == "supersede" and rel in self.single_valued:
            for old in self._current.pop((subj, rel), []):
                self.graph.edges[self._ends[old] + (old,)]["superseded_s"] = when
                self.superseded_by[old] = eid
        edge = MemoryEdge(subj, rel, obj, weight, when, when, session=session, turn_id=t.turn_id,
                          speaker=t.speaker, source_text=t.source or "")
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

    # ---------------------------------------------------------------- persistence

    def to_json(self) -> dict[str, Any]:
        """Everything but the vectors, as plain JSON data (the vectors go to the faiss file)."""
        nodes = [{"name": n, **{k: self.graph.nodes[n][k] for k in ("label", "created_s", "first_session")}}
                 for n in self.entities]
        edges = [{"eid": e, **self.edge(e).to_dict()} for e in self._ends]
        return {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "policy": self.policy,
                "merge_threshold": self.merge_threshold, "single_valued": sorted(self.single_valued),
                "dimension": self.dim, "next_eid": self._next_eid, "skipped": self.skipped,
                "nodes": nodes, "aliases": self.aliases, "merges": self.merges,
                "superseded_by": {str(k): v for k, v in self.superseded_by.items()}, "edges": edges}

    def save(self, directory: Union[str, Path]) -> Path:
        """Write the memory to ``directory`` atomically: files go to a temporary sibling folder,
        which then replaces the old one by rename, so an interrupted save leaves the previous
        memory in place and loadable. Returns the directory."""
        target = Path(directory)
        if target.exists() and (not target.is_dir() or (any(target.iterdir())
                                                        and not (target / META_FILE).is_file())):
            raise DataError("exists and is not a glong memory; refusing to replace it", path=target)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp-{uuid.uuid4().hex[:8]}")
        tmp.mkdir()
        try:
            meta = self.to_json()
            if self.index is not None:
                _write_index(self.index, tmp / INDEX_FILE)
                meta["index_sha256"] = _sha256(tmp / INDEX_FILE)
            _write_json(meta, tmp / META_FILE)
            _swap(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return target

    @classmethod
    def load(cls, directory: Union[str, Path], encoder=None) -> "GraphMemory":
        """Read a memory written by :meth:`save`. Missing, truncated or corrupt files and newer
        format versions raise :class:`DataError` with a one-line reason."""
        folder = Path(directory)
        meta = _read_meta(folder)
        try:
            mem = cls(encoder=encoder, policy=meta["policy"], merge_threshold=meta["merge_threshold"],
                      single_valued=meta["single_valued"])
            mem._restore(meta, folder)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            if isinstance(e, DataError):
                raise
            raise DataError(f"memory metadata is malformed ({type(e).__name__}: {e})",
                            path=folder / META_FILE) from None
        return mem

    def _restore(self, meta: dict, folder: Path) -> None:
        for n in meta["nodes"]:
            self.entities.append(n["name"])
            self.graph.add_node(n["name"], node_id=len(self.entities) - 1, label=n["label"],
                                created_s=n["created_s"], first_session=n["first_session"])
        for e in meta["edges"]:
            edge = MemoryEdge(**{k: e[k] for k in _EDGE_FIELDS})
            eid = int(e["eid"])
            if edge.subject not in self.graph or edge.object not in self.graph:
                raise DataError(f"edge {eid} names an entity that is not a node", path=folder / META_FILE)
            self._link(eid, edge)
        self.aliases = {str(k): str(v) for k, v in meta["aliases"].items()}
        self.merges = list(meta["merges"])
        self.superseded_by = {int(k): int(v) for k, v in meta["superseded_by"].items()}
        self._next_eid = int(meta["next_eid"])
        self.skipped = int(meta.get("skipped", 0))
        self.index = _read_index(folder, meta) if self.entities else None
        if self.index is not None and self.index.ntotal != len(self.entities):
            raise DataError(f"index holds {self.index.ntotal} vectors for {len(self.entities)} entities",
                            path=folder / INDEX_FILE)

    def __repr__(self) -> str:
        return (f"GraphMemory({self.graph.number_of_nodes()} nodes, {self.graph.number_of_edges()} edges, "
                f"policy={self.policy!r})")


def build_memory(conv: Conversation, triples: Optional[Sequence[Triple]] = None, encoder=None,
                 policy: str = "append", merge_threshold: float = DEFAULT_MERGE_THRESHOLD,
                 sessions: Optional[Iterable[int]] = None) -> GraphMemory:
    """A memory of ``conv`` built session by session (the incremental insertion the paper uses),
    from ``triples`` (extracted, each with its ``session`` and ``turn_id``) or, when None, the
    conversation's gold triples. ``sessions`` limits which sessions go in."""
    mem = GraphMemory(encoder=encoder, policy=policy, merge_threshold=merge_threshold)
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


# --------------------------------------------------------------------------- file helpers

def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_json(obj: Any, path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=1, allow_nan=False)
        f.flush()
        os.fsync(f.fileno())


def _write_index(index, path: Path) -> None:
    import faiss

    faiss.write_index(index, str(path))


def _swap(tmp: Path, target: Path) -> None:
    """Put the finished ``tmp`` folder at ``target``; the old one is renamed away first and
    deleted only once the new one is in place."""
    if not target.exists():
        os.replace(tmp, target)
        return
    old = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
    os.replace(target, old)
    try:
        os.replace(tmp, target)
    except BaseException:
        os.replace(old, target)  # put the previous memory back
        raise
    shutil.rmtree(old, ignore_errors=True)


def _read_meta(folder: Path) -> dict:
    if not folder.is_dir():
        raise DataError("no memory here (not a folder)", path=folder)
    path = folder / META_FILE
    if not path.is_file():
        raise DataError(f"not a glong memory (no {META_FILE})", path=folder)
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataError(f"corrupt or truncated ({type(e).__name__}: {str(e).splitlines()[0]})", path=path) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise DataError(f"not a glong memory file (format is not '{FORMAT_NAME}')", path=path)
    version = meta.get("format_version")
    if not isinstance(version, int):
        raise DataError("missing or bad 'format_version'", path=path)
    if version > FORMAT_VERSION:
        raise DataError(f"format version {version} is newer than this glong reads ({FORMAT_VERSION}); "
                        f"upgrade glong_lib", path=path)
    return meta


def _read_index(folder: Path, meta: dict):
    import faiss

    path = folder / INDEX_FILE
    if not path.is_file():
        raise DataError(f"missing {INDEX_FILE}", path=folder)
    if meta.get("index_sha256") != _sha256(path):
        raise DataError("corrupt or truncated (checksum does not match memory.json)", path=path)
    try:
        index = faiss.read_index(str(path))
    except RuntimeError as e:
        raise DataError(f"faiss cannot read it ({str(e).splitlines()[0][:120]})", path=path) from None
    if meta.get("dimension") is not None and index.d != meta["dimension"]:
        raise DataError(f"index is {index.d}-d but memory.json says {meta['dimension']}", path=path)
    return index


__all__ = [
    "GraphMemory", "HashEncoder", "build_memory", "normalise_entity", "normalise_relation", "same_numbers",
    "FIRST_PERSON", "SINGLE_VALUED_RELATIONS", "POLICIES", "DEFAULT_MERGE_THRESHOLD", "FORMAT_VERSION",
]
