"""The node half of :class:`~glong_lib.memory.graph.GraphMemory`: entities in a faiss inner-product
index (node id = index position), the encoder that embeds them, and the merging of near-identical
spellings into one node (cosine at or above the memory's ``merge_threshold``, ``text.may_merge``).
``GraphMemory`` adds the edges, the update policy and persistence on top.
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

import numpy as np

from ..config import BUNDLED_MINILM
from ..errors import DataError
from ..models import encoder_name, load_encoder
from ..text import may_merge, normalise_entity
from ..vectors import unit_vectors


class EntityIndex:
    """Entity nodes and their vectors; the attributes (``entities``, ``aliases``, ``merges``,
    ``index``, ``graph``, ``merge_threshold``, ``encoder_ref``) are set by ``GraphMemory.__init__``."""

    # ---------------------------------------------------------------- encoder and index

    @property
    def encoder(self):
        """The encoder in use (the offline MiniLM is loaded here on first use when none was given)."""
        if self._encoder is None:
            self._encoder = load_encoder(name=self.encoder_ref or BUNDLED_MINILM)
        return self._encoder

    @encoder.setter
    def encoder(self, value) -> None:
        self._encoder = value
        self.encoder_ref = encoder_name(value)

    @property
    def dim(self) -> Optional[int]:
        return None if self.index is None else int(self.index.d)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for ``texts`` (``vectors.unit_vectors``), checked against the index size."""
        vecs = unit_vectors(self.encoder, texts)
        if self.index is not None and vecs.shape[1] != self.index.d:
            raise DataError(f"encoder gives {vecs.shape[1]}-d vectors but the memory index is {self.index.d}-d")
        return vecs

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
            if target is not None and score >= self.merge_threshold and may_merge(names[i], target):
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

