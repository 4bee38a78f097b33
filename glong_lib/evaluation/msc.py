"""End-to-end evaluation on multi-session chats (paper section 4): each agent answers the user's turns
of the later sessions; replies are scored against the gold with BLEU-1..4 and ROUGE-L on the paper's
scale (LD-Agent's preprocessing, then nlg-eval; the headline), on nlg-eval over raw whitespace-split text
and on the smoothed sentence-level one, and prompt tokens and cost are
counted (paper Tables 1, 2 and 6). Differences come with paired intervals over conversations.

This module is the runner; what a run measured and its aggregations are in ``msc_results``
(:class:`MSCResults`), the prices and the paper's quoted numbers in ``msc_cost``. Both are imported
here too, so ``from glong_lib.evaluation.msc import X`` reaches every name of the three.
"""

from __future__ import annotations

import json
import time
from typing import Any, Optional, Sequence

from ..checkpoints import Checkpoint
from ..datasets.sampling import Query, sample_conversations, session_queries  # noqa: F401 (notebooks 05, A4, A6)
from ..errors import DataError
from ..generation import Generation
from ..schema import Conversation, Session, Turn
from .metrics import score_reply
from .msc_cost import (  # noqa: F401 (commands, notebooks 05, A4 and A6, viz import them from here)
    GPT4O_MINI,
    PAPER_TABLE1_COLUMNS,
    PAPER_TABLE1_MSC,
    PAPER_TABLE6_COLUMNS,
    PAPER_TABLE6_MSC,
    PAPER_TABLE14_MSC,
    PriceTable,
    cost_usd,
    paper_difference,
    paper_table1,
    paper_table6,
    reduction,
)
from .msc_results import (  # noqa: F401 (commands, tests import them from here)
    BLEU_KEYS,
    METRIC_KEYS,
    NLG_KEYS,
    TABLE1_SCALES,
    TIE,
    WS_KEYS,
    MSCResults,
    _jsonable,
)


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
