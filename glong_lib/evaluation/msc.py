"""End-to-end evaluation on multi-session chats (paper section 4): each agent answers the user's turns
of the later sessions; replies are scored against the gold with BLEU-1..4 and ROUGE-L on the paper's
scale (LD-Agent's preprocessing, then nlg-eval; the headline), on nlg-eval over raw whitespace-split text
and on the smoothed sentence-level one, and prompt tokens and cost are
counted (paper Tables 1, 2 and 6). Differences come with paired intervals over conversations.

Why this module is long: one results class, :class:`MSCResults`, holds every aggregation the paper's
Tables 1 and 6 need (per session, per conversation, the token saving counted two ways, the paired
comparison) beside the runner that fills it; split, one dataclass's methods would be scattered.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Optional, Sequence

from ..checkpoints import Checkpoint
from ..datasets.sampling import Query, sample_conversations, session_queries  # noqa: F401 (notebooks 05, A4)
from ..errors import DataError
from ..generation import Generation
from ..schema import Conversation, Session, Turn
from .intervals import interval
from .metrics import replies_needed, score_reply

_TOKEN = re.compile(r"\w+|[^\w\s]")
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

# --------------------------------------------------------------------------- cost

@dataclass(frozen=True)
class PriceTable:
    """US dollars per million tokens; default: gpt-4o-mini's list prices (the paper's Table 6)."""

    input_per_m: float = 0.15
    output_per_m: float = 0.60
    name: str = "gpt-4o-mini"


GPT4O_MINI = PriceTable()


def cost_usd(input_tokens: float, output_tokens: float, price: PriceTable = GPT4O_MINI) -> float:
    """Dollars for ``input_tokens`` in and ``output_tokens`` out.

    The paper's Table 6, MSC, LD-Agent: (15,767 main + 11,352 memory input) tokens in and 5,910
    generated, per dialogue; times 1,000 dialogues gives its "$7.61 per 1K":

    >>> round(1000 * cost_usd(15767 + 11352, 5910), 2)
    7.61
    >>> round(1000 * cost_usd(28058, 0), 2)   # Long context: 4.21
    4.21
    """
    return input_tokens * price.input_per_m / 1e6 + output_tokens * price.output_per_m / 1e6


def reduction(ours: float, baseline: float) -> float:
    """Relative saving of ``ours`` against ``baseline`` (the paper's 63.0% = 1 - 10,380/28,058).

    >>> round(reduction(10380, 28058), 3)
    0.63
    """
    if baseline <= 0:
        raise DataError("the baseline must be positive to compute a reduction")
    return 1.0 - ours / baseline


# --------------------------------------------------------------------------- the paper's numbers (quoted)

#: Table 14, MSC (N = 100, x100): the reranked top 3 against the un-reranked semantic top 5: B-1, B-2, B-3, B-4, R-L.
PAPER_TABLE14_MSC = {"No rerank (top-5)": [20.07, 5.65, 1.46, 0.54, 17.43],
                     "G-Long (top-3)": [20.28, 6.23, 1.73, 0.60, 17.84]}

#: Table 1, MSC (N = 500, gpt-4o-mini, x100): per session (S2..S5) BLEU-2, BLEU-3, ROUGE-L, then the average.
PAPER_TABLE1_MSC = {
    "No history": [4.64, 1.26, 16.38, 4.35, 1.19, 15.73, 4.06, 1.25, 15.90, 4.59, 1.21, 15.85, 4.56, 1.22, 15.96],
    "Long context": [5.73, 1.71, 17.31, 5.62, 1.56, 16.99, 5.53, 1.57, 16.60, 5.64, 1.60, 16.66, 5.63, 1.61, 16.89],
    "MemoryBank": [5.58, 1.76, 17.46, 5.34, 1.52, 16.94, 5.35, 1.51, 16.83, 5.46, 1.49, 16.94, 5.43, 1.57, 17.04],
    "LD-Agent": [5.84, 1.70, 17.66, 5.78, 1.57, 17.27, 5.68, 1.59, 17.04, 6.03, 1.66, 17.34, 5.83, 1.63, 17.33],
    "G-Long": [6.35, 2.00, 18.20, 6.25, 1.79, 17.90, 6.39, 1.80, 17.77, 6.59, 1.77, 18.04, 6.40, 1.84, 17.98],
}
PAPER_TABLE1_COLUMNS = [f"{s} {m}" for s in ("S2", "S3", "S4", "S5", "Avg") for m in ("B-2", "B-3", "R-L")]


def paper_difference(metric: str) -> Optional[float]:
    """The paper's G-Long minus long-context difference (Table 1 averages, x100) on a metric of ours:
    B-2, B-3 or R-L on any scale (the paper's numbers are nlg-eval's); None for other metrics.

    >>> paper_difference("nlg_b2"), paper_difference("rougeL"), paper_difference("b4")
    (0.77, 1.09, None)
    """
    column = {"b2": "Avg B-2", "b3": "Avg B-3", "rougeL": "Avg R-L"}.get(metric.split("_")[-1])
    if column is None:
        return None
    i = PAPER_TABLE1_COLUMNS.index(column)
    return round(PAPER_TABLE1_MSC["G-Long"][i] - PAPER_TABLE1_MSC["Long context"][i], 2)

#: Table 6, MSC (N = 500): main tokens, memory input, memory generated (per dialogue), total $ per 1K.
PAPER_TABLE6_MSC = {
    "Long context": (28058, 0, 0, 4.21),
    "MemoryBank": (13742, 14645, 2295, 5.63),
    "LD-Agent": (15767, 11352, 5910, 7.61),
    "G-Long": (10380, 0, 0, 1.56),
}
PAPER_TABLE6_COLUMNS = ["Main (tokens)", "Memory input", "Memory gen.", "Total cost ($/1K)"]


def paper_table1() -> list[dict[str, Any]]:
    """The paper's Table 1 (MSC) as rows, for display beside ours."""
    return [{"method": m, **dict(zip(PAPER_TABLE1_COLUMNS, v))} for m, v in PAPER_TABLE1_MSC.items()]


def paper_table6() -> list[dict[str, Any]]:
    """The paper's Table 6 (MSC) as rows, with the cost recomputed from the token counts by
    :func:`cost_usd` beside the printed one (within a cent: MemoryBank's 5.635 rounds up)."""
    return [{"method": m, **dict(zip(PAPER_TABLE6_COLUMNS, v)),
             "recomputed ($/1K)": round(1000 * cost_usd(v[0] + v[1], v[2]), 2)} for m, v in PAPER_TABLE6_MSC.items()]



# --------------------------------------------------------------------------- the runner

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
    if isinstance(x, float) and math.isnan(x):
        return None
    return str(x)


def run_msc_evaluation(agents: dict[str, Any], conversations: Sequence[Conversation],
                       turns_per_session: Optional[int] = None, max_sessions: Optional[int] = None,
                       context_scope: str = "session", price: PriceTable = GPT4O_MINI,
                       progress: bool = True, checkpoint: Optional[Checkpoint] = None) -> MSCResults:
    """Play every conversation with every agent and score each reply (see the module docstring).

    ``turns_per_session`` keeps the first few queries of each evaluated session and
    ``max_sessions`` the first few sessions (both to budget CPU runs); ``context_scope`` is
    ``"session"`` (the paper's C_current) or ``"dialogue"`` (the reference code, which never resets
    it: every turn since the first evaluated session). Memory is updated after every session but
    the last (nothing is asked after it). Memory-maintenance tokens are read from
    each agent's ``memory_prompt_tokens``/``memory_completion_tokens`` after each conversation.

    With a ``checkpoint`` (``checkpoints.Checkpoint``), each finished (conversation, method) is appended to
    it, and units already there are taken from it instead of being run again. A generator that keeps
    several requests in flight (``concurrency`` > 1) gets every prompt of a conversation at once
    first (:func:`prefetch_conversation`).
    """
    from tqdm.auto import tqdm

    if context_scope not in ("session", "dialogue"):
        raise DataError(f"unknown context scope '{context_scope}' (choose session or dialogue)")
    if not conversations:
        raise DataError("no conversations to evaluate")
    for conv in conversations:
        if len(conv.sessions) < 2:
            raise DataError(f"conversation {conv.id} has {len(conv.sessions)} session(s); need 2 or more")
    records: list[dict[str, Any]] = []
    memory = {name: {"input": 0, "output": 0} for name in agents}
    wall = {name: 0.0 for name in agents}
    bar = tqdm(total=len(conversations) * len(agents), desc="conversations x methods", disable=not progress)
    for conv in conversations:
        user, agent_speaker = conv.speakers[0], conv.speakers[1]
        sessions = conv.sessions[:max_sessions] if max_sessions else conv.sessions
        pending = {name: agent for name, agent in agents.items()
                   if checkpoint is None or json.dumps([conv.id, name]) not in checkpoint.done}
        prefetch_conversation(pending, conv, sessions, turns_per_session, context_scope, progress)
        for name, agent in agents.items():
            key = json.dumps([conv.id, name])
            if checkpoint is not None and key in checkpoint.done:
                unit = checkpoint.done[key]
            else:
                start = time.perf_counter()
                agent.start(conv)
                before = (getattr(agent, "memory_prompt_tokens", 0), getattr(agent, "memory_completion_tokens", 0))
                rows = _play(agent, name, conv, sessions, user, agent_speaker, turns_per_session, context_scope)
                # agents may keep counting across conversations: add only this conversation's share
                unit = {"records": rows,
                        "memory_input": int(getattr(agent, "memory_prompt_tokens", 0) - before[0]),
                        "memory_output": int(getattr(agent, "memory_completion_tokens", 0) - before[1]),
                        "wall_s": time.perf_counter() - start}
                if checkpoint is not None:  # stored as JSON; fresh and resumed units then look alike
                    unit = json.loads(json.dumps(unit, default=_jsonable))
                    checkpoint.add(key, unit)
            records.extend(unit["records"])
            memory[name]["input"] += unit["memory_input"]
            memory[name]["output"] += unit["memory_output"]
            wall[name] += unit["wall_s"]
            bar.update(1)
    bar.close()
    settings = {"conversations": len(conversations), "turns_per_session": turns_per_session,
                "max_sessions": max_sessions, "context_scope": context_scope}
    return MSCResults(records, list(agents), memory, wall, price, settings)


class _Recorder:
    """A generator's stand-in that notes each request and answers with an empty reply. A request
    with its own token limit writes memory (a session summary): its reply shapes the prompts after
    it, which the empty reply cannot stand for, so recording stops there."""

    def __init__(self, generator):
        self.generator, self.requests, self.stopped = generator, [], False

    def __getattr__(self, name):
        return getattr(self.generator, name)

    def generate(self, messages, max_new_tokens=None):
        if not self.stopped:
            self.requests.append((messages, max_new_tokens))
            self.stopped = max_new_tokens is not None
        return Generation("", 0, 0)


def prefetch_conversation(agents: dict[str, Any], conv: Conversation, sessions: Sequence[Session],
                          limit: Optional[int], context_scope: str, progress: bool = False) -> int:
    """Ask every prompt ``agents`` will send for ``conv`` at once, for each agent whose generator
    keeps several requests in flight (``prefetch``, ``concurrency`` > 1); return how many.

    Each such agent plays the conversation once with a stand-in that records its requests and
    answers nothing; then the requests go out together, ``concurrency`` at a time. A reply prompt
    depends on the gold context and the memory, never on earlier replies, so the real play that
    follows finds every reply waiting. (A memory the generator writes itself, the summary memory,
    makes the prompts after it depend on its reply: recording stops at that request, and the rest
    are asked as the play reaches them; nothing is asked that the play will not use.)
    """
    batches: dict[int, tuple[Any, list]] = {}
    for name, agent in agents.items():
        generator = getattr(agent, "generator", None)
        if getattr(generator, "concurrency", 1) <= 1 or not hasattr(generator, "prefetch"):
            continue
        recorder = _Recorder(generator)
        agent.generator = recorder
        try:
            agent.start(conv)
            _play(agent, name, conv, sessions, conv.speakers[0], conv.speakers[1], limit, context_scope, score=False)
        finally:
            agent.generator = generator
        batches.setdefault(id(generator), (generator, []))[1].extend(recorder.requests)
    for generator, requests in batches.values():
        generator.prefetch(requests, progress)
    return sum(len(r) for _, r in batches.values())


def _play(agent, name: str, conv: Conversation, sessions: Sequence[Session], user: str, agent_speaker: str,
          limit: Optional[int], context_scope: str, score: bool = True) -> list[dict[str, Any]]:
    """One agent through one conversation: observe session 1, then answer and observe the rest
    (``score=False``: only the replies are asked for, nothing is scored or recorded)."""
    rows = []
    carried: list[Turn] = []  # earlier evaluated turns, for context_scope="dialogue"
    for i, session in enumerate(sessions):
        if i > 0:
            for q in session_queries(session, user, agent_speaker, limit,
                                     carried if context_scope == "dialogue" else ()):
                reply = agent.respond(q.query.text, q.context, q.query.time_s)
                if not score:
                    continue
                rows.append({"method": name, "conversation": conv.id, "session": session.index,
                             "turn_id": q.query.id, "context_turns": len(q.context),
                             "query": q.query.text, "reference": q.reference.text,
                             "reply": reply.text, **score_reply(reply.text, q.reference.text),
                             "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                             "memories": reply.memories, "seconds": reply.seconds, "cached": reply.cached,
                             "dropped_context_lines": reply.dropped_context_lines})
            carried.extend(session.turns)
        if i < len(sessions) - 1:  # nothing is asked after the last session: no update needed
            agent.observe_session(session, conv)
    return rows
