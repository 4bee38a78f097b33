"""``glong eval-msc --reply-probe N``: how the local model's replies end without the first-line stop
(the evidence for ``clean_reply``'s default)."""

from __future__ import annotations


def reply_probe(convs, source, n: int, profile) -> None:
    """Generate ``n`` G-Long replies (the first queries of session 2 of the first conversations) with
    160 new tokens and no first-line stop, and count how they end: the evidence behind the default."""
    from ..agent import GLongAgent
    from ..evaluation.msc import session_queries
    from ..generation import LocalChatGenerator

    class Keeping(LocalChatGenerator):  # keeps the raw text the agent's clean_reply would shorten
        def generate(self, messages, max_new_tokens=None):
            self.last = super().generate(messages, max_new_tokens)
            return self.last

    probe = Keeping(profile.generator.model, max_new_tokens=160, stop_at_line_end=False, cache=False)
    agent = GLongAgent(probe, source, name="probe", memory_format=profile.generator.memory_format)
    rows = []
    for conv in convs:
        if len(rows) >= n:
            break
        agent.start(conv)
        agent.observe_session(conv.sessions[0], conv)
        for q in session_queries(conv.sessions[1], conv.speakers[0], conv.speakers[1], limit=n - len(rows)):
            r = agent.respond(q.query.text, q.context, q.query.time_s)
            raw = probe.last.text
            rows.append({"tokens": r.completion_tokens, "hit limit": r.completion_tokens >= 160,
                         "writes the other speaker": f"{conv.speakers[0]}:" in raw,
                         "re-prints <MEMORY>": "<MEMORY>" in raw})
    print(f"Reply probe: {len(rows)} G-Long replies, 160 new tokens, no first-line stop")
    for key in ("hit limit", "writes the other speaker", "re-prints <MEMORY>"):
        print(f"  {key}: {sum(r[key] for r in rows)}/{len(rows)}")
    print(f"  mean tokens {sum(r['tokens'] for r in rows) / max(1, len(rows)):.0f}\n")
