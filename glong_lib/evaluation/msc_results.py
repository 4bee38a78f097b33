"""What one MSC evaluation run measured (:class:`MSCResults`) and every aggregation the paper's
Tables 1 and 6 need: per session, per conversation, the token saving counted two ways, the paired
comparison with its interval."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from ..errors import DataError
from .intervals import interval
from .metrics import replies_needed
from .msc_cost import GPT4O_MINI, PriceTable, cost_usd, paper_difference, reduction

BLEU_KEYS = ("b1", "b2", "b3", "b4")
#: The paper's scale (LD-Agent's lower-casing and NLTK tokens, then nlg-eval per reply: unsmoothed BLEU,
#: COCO ROUGE-L); ``metrics.score_reply_nlgeval``.
NLG_KEYS = ("nlg_b1", "nlg_b2", "nlg_b3", "nlg_b4", "nlg_rougeL")
#: nlg-eval on the raw text split on whitespace (the named variant); ``metrics.score_reply_whitespace``.
WS_KEYS = ("ws_b1", "ws_b2", "ws_b3", "ws_b4", "ws_rougeL")
METRIC_KEYS = BLEU_KEYS + ("rougeL",) + NLG_KEYS + WS_KEYS

#: Differences of scores (x100) at or below this are ties (see ``MSCResults.compare``).
TIE = 1e-4

#: Which record keys each scale of ``MSCResults.table1`` reports as B-2, B-3 and R-L.
TABLE1_SCALES = {"nlgeval": ("nlg_b2", "nlg_b3", "nlg_rougeL"), "whitespace": ("ws_b2", "ws_b3", "ws_rougeL"),
                 "smoothed": ("b2", "b3", "rougeL")}


@dataclass
class MSCResults:
    """Everything one evaluation run measured. ``records`` has one row per (method, reply)."""

    records: list[dict[str, Any]]
    methods: list[str]
    memory_tokens: dict[str, dict[str, int]]
    wall_s: dict[str, float]
    price: PriceTable = GPT4O_MINI
    settings: dict[str, Any] = field(default_factory=dict)

    # ---- aggregation: mean over turns, then sessions, then conversations (the paper's code)
    def _session_means(self) -> dict[tuple[str, str, int], dict[str, float]]:
        groups: dict[tuple[str, str, int], list[dict]] = {}
        for r in self.records:
            groups.setdefault((r["method"], r["conversation"], r["session"]), []).append(r)
        return {k: {m: statistics.fmean(r[m] for r in rows) for m in METRIC_KEYS} for k, rows in groups.items()}

    def per_conversation(self) -> list[dict[str, Any]]:
        """Per method and conversation: the mean over its sessions of each metric (x100)."""
        by: dict[tuple[str, str], list[dict[str, float]]] = {}
        for (method, conv, _), means in self._session_means().items():
            by.setdefault((method, conv), []).append(means)
        rows = []
        for (method, conv), sessions in by.items():
            row = {"method": method, "conversation": conv}
            row.update({m: 100 * statistics.fmean(s[m] for s in sessions) for m in METRIC_KEYS})
            rows.append(row)
        return rows

    def per_session(self) -> list[dict[str, Any]]:
        """Per method and evaluated session: each metric (x100) averaged over conversations."""
        by: dict[tuple[str, int], list[dict[str, float]]] = {}
        for (method, _, session), means in self._session_means().items():
            by.setdefault((method, session), []).append(means)
        rows = []
        for method in self.methods:
            for session in sorted({s for (m, s) in by if m == method}):
                row = {"method": method, "session": session, "conversations": len(by[(method, session)])}
                row.update({m: 100 * statistics.fmean(x[m] for x in by[(method, session)]) for m in METRIC_KEYS})
                rows.append(row)
        return rows

    def summary(self) -> list[dict[str, Any]]:
        """One row per method: metrics (x100) averaged over sessions then conversations."""
        convs = self.per_conversation()
        rows = []
        for method in self.methods:
            mine = [r for r in convs if r["method"] == method]
            row = {"method": method, "replies": sum(1 for r in self.records if r["method"] == method)}
            row.update({m: statistics.fmean(r[m] for r in mine) if mine else float("nan") for m in METRIC_KEYS})
            rows.append(row)
        return rows

    def table1(self, scale: str = "nlgeval") -> list[dict[str, Any]]:
        """The paper's Table 1 layout: B-2 / B-3 / R-L per session, then the average (x100, 2 dp), on
        the paper's scale (default), nlg-eval on whitespace-split raw text, or the smoothed sentence-level
        one (``TABLE1_SCALES``)."""
        if scale not in TABLE1_SCALES:
            raise DataError(f"unknown scale '{scale}' (choose from {', '.join(TABLE1_SCALES)})")
        keys = TABLE1_SCALES[scale]
        sessions = sorted({r["session"] for r in self.records})
        per = {(r["method"], r["session"]): r for r in self.per_session()}
        summary = {r["method"]: r for r in self.summary()}
        rows = []
        for method in self.methods:
            row: dict[str, Any] = {"method": method}
            for s in sessions:
                cell = per.get((method, s))
                for key, label in zip(keys, ("B-2", "B-3", "R-L")):
                    row[f"S{s} {label}"] = round(cell[key], 2) if cell else ""
            for key, label in zip(keys, ("B-2", "B-3", "R-L")):
                row[f"Avg {label}"] = round(summary[method][key], 2)
            rows.append(row)
        return rows

    def tokens(self) -> list[dict[str, Any]]:
        """The paper's Table 6 layout plus per-reply figures. "Main" = prompt tokens of reply
        generation per conversation; "Memory input/gen." = tokens of LLM calls that maintain
        memory; cost per 1K conversations counts Main and memory input at the input price and
        memory generation at the output price (as the paper's numbers do; reply tokens are
        shown separately and priced in the last column)."""
        n_conv = max(1, len({r["conversation"] for r in self.records}))
        rows = []
        for method in self.methods:
            mine = [r for r in self.records if r["method"] == method]
            if not mine:
                continue
            prompt = sum(r["prompt_tokens"] for r in mine)
            completion = sum(r["completion_tokens"] for r in mine)
            mem = self.memory_tokens.get(method, {"input": 0, "output": 0})
            main = prompt / n_conv
            paper_cost = cost_usd(main + mem["input"] / n_conv, mem["output"] / n_conv, self.price)
            all_cost = cost_usd((prompt + mem["input"]) / n_conv, (completion + mem["output"]) / n_conv, self.price)
            rows.append({
                "method": method,
                "prompt tokens / reply": round(prompt / len(mine), 1),
                "completion tokens / reply": round(completion / len(mine), 1),
                "Main (tokens / conv.)": round(main, 1),
                "Memory input": round(mem["input"] / n_conv, 1),
                "Memory gen.": round(mem["output"] / n_conv, 1),
                "Total cost ($/1K conv.)": round(1000 * paper_cost, 3),
                "with replies ($/1K conv.)": round(1000 * all_cost, 3),
                "wall s": round(self.wall_s.get(method, 0.0), 1),
                "cached replies": sum(1 for r in mine if r.get("cached")),
            })
        return rows

    def first_queries(self, n: int) -> "MSCResults":
        """The same run restricted to the first ``n`` queries of every scored session (records keep
        their query order within a session), memory tokens and settings unchanged: what a run with
        ``turns_per_session=n`` would have counted, since a prompt never depends on generated replies.

        >>> rows = [{"method": "m", "conversation": "c", "session": s, "turn_id": t} for s, t in
        ...         [(2, "a"), (2, "b"), (2, "c"), (3, "d"), (3, "e")]]
        >>> [r["turn_id"] for r in MSCResults(rows, ["m"], {}, {}).first_queries(2).records]
        ['a', 'b', 'd', 'e']
        """
        if n < 1:
            raise DataError(f"the number of first queries must be at least 1, got {n}")
        seen: dict[tuple, int] = {}
        kept = []
        for r in self.records:
            key = (r["method"], r["conversation"], r["session"])
            seen[key] = seen.get(key, 0) + 1
            if seen[key] <= n:
                kept.append(r)
        return MSCResults(kept, self.methods, self.memory_tokens, self.wall_s, self.price,
                          {**self.settings, "turns_per_session": n})

    def token_saving(self, method: str, baseline: str, first: int = 2) -> list[dict[str, Any]]:
        """The paper's Table 6 saving (``1 - prompt tokens of method / of baseline``) counted two ways
        from the same run, each labelled: over every scored turn (what Table 6 counts) and over the
        first ``first`` user turns of each session (where the current-session context is shortest, so
        the saving is largest). Each row also has the prompt tokens per reply and per conversation and
        both methods' cost per 1K conversations (:meth:`tokens`) from the same counts."""
        rows = []
        for label, res in (("every turn of every scored session", self),
                           (f"first {first} user turns of each session", self.first_queries(first))):
            table = {r["method"]: r for r in res.tokens()}
            if method not in table or baseline not in table:
                raise DataError(f"the run has no prompt tokens for both '{method}' and '{baseline}'")
            prompt = {m: sum(r["prompt_tokens"] for r in res.records if r["method"] == m) for m in (method, baseline)}
            rows.append({"counted over": label, "replies": sum(r["method"] == method for r in res.records),
                         f"{method} tokens / reply": table[method]["prompt tokens / reply"],
                         f"{baseline} tokens / reply": table[baseline]["prompt tokens / reply"],
                         f"{method} main / conv.": table[method]["Main (tokens / conv.)"],
                         f"{baseline} main / conv.": table[baseline]["Main (tokens / conv.)"],
                         "saving": round(reduction(prompt[method], prompt[baseline]), 4),
                         f"{method} $ / 1K conv.": table[method]["Total cost ($/1K conv.)"],
                         f"{baseline} $ / 1K conv.": table[baseline]["Total cost ($/1K conv.)"]})
        return rows

    def compare(self, method: str, baseline: str,
                metrics: Sequence[str] = ("nlg_b2", "nlg_rougeL", "b2", "rougeL")) -> dict[str, Any]:
        """``method`` against ``baseline``: prompt-token reduction, and for each metric the mean
        difference over conversations (x100) with its standard deviation and range, a paired
        bootstrap 95% interval over conversations (the unit that is sampled: replies of one
        conversation are not independent) with ``enough`` and ``verdict`` (``intervals``: fewer than
        8 conversations, "too few to tell"), and how many paired replies would detect the paper's
        G-Long minus long-context difference on that metric (``paper_difference``) at 80% power (None
        when the per-reply differences have no spread to base it on, e.g. every reply scores ~0)."""
        convs = {(r["method"], r["conversation"]): r for r in self.per_conversation()}
        ids = sorted({c for (m, c) in convs if m == method} & {c for (m, c) in convs if m == baseline})
        if not ids:
            raise DataError(f"no conversation has results for both '{method}' and '{baseline}'")
        prompt = {m: sum(r["prompt_tokens"] for r in self.records if r["method"] == m) for m in (method, baseline)}
        replies = {m: {(r["conversation"], r["turn_id"]): r for r in self.records if r["method"] == m}
                   for m in (method, baseline)}
        paired = sorted(replies[method].keys() & replies[baseline].keys())
        out: dict[str, Any] = {"method": method, "baseline": baseline, "conversations": len(ids),
                               "replies": len(paired),
                               "prompt-token reduction": reduction(prompt[method], prompt[baseline])}
        for m in metrics:
            a = [convs[(method, c)][m] for c in ids]
            b = [convs[(baseline, c)][m] for c in ids]
            diffs = [x - y for x, y in zip(a, b)]
            boot = interval(a, b, unit="conversation")  # each item is one conversation's mean
            per_reply = [100 * (replies[method][k][m] - replies[baseline][k][m]) for k in paired]
            sd = statistics.stdev(per_reply) if len(per_reply) > 1 else 0.0
            effect = paper_difference(m)
            # below TIE (x100) two scores are the same number: nlg-eval's BLEU of a reply with no matching
            # bigram is ~1e-9, not 0, and the power rule needs a spread that is not such rounding noise
            estimable = sd > TIE and bool(effect)
            out[m] = {"method": statistics.fmean(a), "baseline": statistics.fmean(b),
                      "diff mean": statistics.fmean(diffs),
                      "diff sd": statistics.stdev(diffs) if len(diffs) > 1 else 0.0,
                      "diff min": min(diffs), "diff max": max(diffs),
                      "method wins": sum(d > TIE for d in diffs), "ties": sum(abs(d) <= TIE for d in diffs),
                      "ci low": boot.low, "ci high": boot.high, "enough": boot.enough, "verdict": boot.verdict(),
                      "paper difference": effect,
                      "replies needed": replies_needed(sd, effect) if estimable else None}
        return out

    def same_memories(self, method: str, other: str) -> float:
        """Share of queries for which two methods put the same memory lines in the prompt (how
        often an ablation changes what G-Long retrieves at all)."""
        a = {(r["conversation"], r["turn_id"]): r["memories"] for r in self.records if r["method"] == method}
        b = {(r["conversation"], r["turn_id"]): r["memories"] for r in self.records if r["method"] == other}
        keys = a.keys() & b.keys()
        if not keys:
            raise DataError(f"no query has results for both '{method}' and '{other}'")
        return sum(a[k] == b[k] for k in keys) / len(keys)

    def to_dict(self) -> dict[str, Any]:
        return {"settings": self.settings, "price": asdict(self.price), "summary": self.summary(),
                "per_session": self.per_session(), "table1": self.table1(), "tokens": self.tokens(),
                "records": self.records}

    def to_json(self, indent: int = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, default=_jsonable)


def _jsonable(x: Any) -> Any:
    """NaN as null and anything else as its text: a run's records and checkpoints always serialise."""
    if isinstance(x, float) and math.isnan(x):
        return None
    return str(x)

