"""One step from a conversation to weighted triples (``glong_lib.pipeline``), taken by every path
that builds a memory: the agent, ``glong build``, ``glong score``, the LoCoMo and the probe evaluations."""

from __future__ import annotations

import ast
import importlib
import inspect

import numpy as np
import pytest
from testdata import DATA

from glong_lib.errors import DataError
from glong_lib.loaders import load_conversation
from glong_lib.pipeline import TripleSource, conversation_triples, weighted_triples
from glong_lib.salience import score_conversation

STEP = {"weighted_triples", "conversation_triples", "TripleSource"}
#: what each caller used to do by hand (067108f: five implementations of this step)
BY_HAND = {"score_conversation", "extract_conversation", "extracted_triples", "weigh_session"}
CALLERS = ["glong_lib.agent", "glong_lib.commands.memory", "glong_lib.commands.score",
           "glong_lib.evaluation.locomo", "glong_lib.evaluation.retrieval"]


class LengthScorer:
    """A stand-in salience source: a triple's raw score is its object's length."""

    name = "length"

    def score(self, triples, turns=None):
        return type("Reading", (), {"raw": np.array([float(len(t.object)) for t in triples])})()


def _called(module) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.Call):
            f = node.func
            names.add(f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "")
    return names


@pytest.mark.parametrize("name", CALLERS)
def test_every_memory_path_takes_the_one_step(name):
    called = _called(importlib.import_module(name))
    assert called & STEP, f"{name} does not take pipeline's step"
    assert not called & BY_HAND, f"{name} weighs or extracts by hand: {called & BY_HAND}"


def test_the_check_sees_a_step_taken_by_hand():
    """The control: the salience module itself computes Eq. 3 by hand."""
    assert _called(importlib.import_module("glong_lib.salience.sessions")) & BY_HAND


@pytest.fixture
def c01():
    return load_conversation(DATA / "conversations" / "c01.json")


def test_weighted_gold_triples_equal_the_salience_arithmetic(c01):
    gold = [tr for t in c01.turns() for tr in t.triples]
    ours = weighted_triples(c01, scorer=LengthScorer())
    by_hand = score_conversation(gold, LengthScorer(), conversation=c01)
    assert [(t.text(), t.session, t.weight) for t in ours] == [(t.text(), t.session, t.weight) for t in by_hand]
    assert max(t.weight for t in ours if t.session == 1) == 1.0  # Eq. 3: each session's top triple


def test_session_by_session_equals_the_whole_conversation_for_the_paper_scope(c01):
    """The agent weighs each session as it ends; with the paper's scope that is the same arithmetic as
    weighing the conversation at once (the reference code's dialogue scope only looks back)."""
    source = TripleSource("gold", scorer=LengthScorer())
    played = [t for s in c01.sessions for t in source.session_triples(c01, s)]
    assert [t.weight for t in played] == [t.weight for t in source.conversation_triples(c01)]
    back = TripleSource("gold", scorer=LengthScorer(), scope="dialogue")
    looked_back = [t for s in c01.sessions for t in back.session_triples(c01, s)]
    whole = weighted_triples(c01, scorer=LengthScorer(), scope="dialogue")
    assert all(a.weight >= b.weight for a, b in zip(looked_back, whole))  # a running maximum is never larger


def test_sessions_and_modes(c01):
    assert {t.session for t in conversation_triples(c01, sessions=[2])} == {2}
    with pytest.raises(DataError, match="need an extractor"):
        conversation_triples(c01, "model")
    with pytest.raises(DataError, match="unknown triple source"):
        conversation_triples(c01, "silver")
