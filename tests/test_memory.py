"""Tests of the graph memory bank: normalisation, insertion, hops, policies, persistence."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from glong_lib.errors import DataError
from glong_lib.loaders import load_conversation
from glong_lib.memory import GraphMemory, HashEncoder, build_memory
from glong_lib.schema import MemoryEdge, Triple
from glong_lib.text import normalise_entity, normalise_relation, same_numbers


class TableEncoder:
    """Vectors chosen by hand (unknown strings: hashed) so merges can be forced in a fast test."""

    def __init__(self, table: dict[str, list[float]], dim: int = 4):
        self.table = table
        self.fallback = HashEncoder(dim)

    def encode(self, texts, normalize_embeddings=True):
        rows = [np.asarray(self.table[t], np.float32) if t in self.table
                else self.fallback.encode([t])[0] for t in texts]
        out = np.stack(rows)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def fresh(policy="append", **kw) -> GraphMemory:
    return GraphMemory(encoder=HashEncoder(dim=32), policy=policy, **kw)


def chain() -> tuple[GraphMemory, list[int]]:
    """a -> b -> c -> d, plus e -> b (an in-edge of b)."""
    mem = fresh()
    eids = mem.add_triples([Triple("a", "r", "b"), Triple("b", "r", "c"), Triple("c", "r", "d"),
                            Triple("e", "r", "b")], 10.0, session=1)
    return mem, eids


# --------------------------------------------------------------------------- normalisation

@pytest.mark.parametrize("raw, speaker, expected", [
    ("Golden Retriever", None, "golden retriever"),
    ("  golden\tretriever  ", None, "golden retriever"),
    ("'Biscuit!'", None, "biscuit"),
    ("I", "Maya", "maya"), ("me", "Maya", "maya"), ("My", "Maya", "maya"), ("myself", "Maya", "maya"),
    ("mine", "Maya", "maya"), ("I", None, "i"), ("Leo's dog", "Maya", "leo's dog"),
    ("my dog", "Maya", "my dog"),  # only a whole first-person word is resolved
    ("...", None, ""),
])
def test_normalise_entity(raw, speaker, expected):
    assert normalise_entity(raw, speaker) == expected


def test_normalise_relation_and_numbers():
    assert normalise_relation("Live In-General") == "live_in_general"
    assert not same_numbers("march 2", "march 3") and same_numbers("dogs", "the dogs")


def test_first_person_subject_becomes_speaker_node():
    mem = fresh()
    eid, = mem.add_triples([Triple("I", "have_pet", "Cat", speaker="Maya")], 5.0)
    assert mem.edge(eid).subject == "maya" and mem.graph.nodes["maya"]["label"] == "Maya"


def test_merge_above_threshold_is_recorded_and_queryable():
    enc = TableEncoder({"hospital": [1, 0, 0, 0], "the hospital": [0.96, 0.28, 0, 0],
                        "clinic": [0.8, 0.6, 0, 0], "march 2": [0, 0, 1, 0], "march 3": [0, 0, 0.99, 0.14]})
    mem = GraphMemory(encoder=enc, merge_threshold=0.92)
    mem.add_triples([Triple("Maya", "employed_by_general", "hospital")], 0.0, 1)
    eid, = mem.add_triples([Triple("Maya", "employed_by_general", "The hospital")], 9.0, 2)
    mem.add_triples([Triple("Maya", "employed_by_general", "clinic"), Triple("x", "on", "march 2"),
                     Triple("y", "on", "march 3")], 9.0, 2)
    assert mem.edge(eid).object == "hospital"
    assert mem.aliases == {"the hospital": "hospital"}
    assert mem.merges[0]["alias"] == "the hospital" and mem.merges[0]["score"] == pytest.approx(0.96, abs=1e-5)
    assert mem.resolve("THE hospital.") == "hospital"
    # cosine 0.8 < 0.92 stays apart; 0.99 with different numbers stays apart
    assert {"clinic", "march 2", "march 3"} <= set(mem.graph.nodes)
    assert mem.index.ntotal == mem.graph.number_of_nodes() == len(mem.entities)


def test_two_spellings_in_one_batch_merge():
    enc = TableEncoder({"make pasta": [1, 0, 0, 0], "making pasta": [0.97, 0.243, 0, 0]})
    mem = GraphMemory(encoder=enc)
    mem.add_triples([Triple("Leo", "like", "make pasta"), Triple("Leo", "like", "making pasta")], 0.0)
    assert mem.aliases == {"making pasta": "make pasta"}


@pytest.mark.slow
def test_minilm_merges_only_near_identical_entities():
    from glong_lib.models import load_encoder

    mem = GraphMemory(encoder=load_encoder())
    mem.add_triples([Triple("Maya", "live_in_citystatecountry", "Portland"),
                     Triple("Maya", "live_in_citystatecountry", "Denver"),
                     Triple("Maya", "employed_by_general", "hospital"),
                     Triple("Maya", "employed_by_general", "the hospital"),
                     Triple("Leo", "like", "hiking"), Triple("x", "on", "march 2"), Triple("y", "on", "march 3")],
                    0.0)
    assert {"portland", "denver", "hiking", "march 2", "march 3", "maya", "leo"} <= set(mem.graph.nodes)
    assert mem.aliases == {"the hospital": "hospital"}
    assert mem.nearest_entities("Where does she live? Colorado", k=1)[0][0] == "denver"


# --------------------------------------------------------------------------- insertion and queries

def test_edges_keep_attributes_and_ids_are_unique():
    mem = fresh()
    t = Triple("Leo", "have_pet", "golden retriever", speaker="Leo", turn_id="S2:4", session=2,
               source="I adopted a dog!")
    eids = mem.add_triples([t, Triple("Leo", "like_food", "pasta", weight=0.25)], 100.0)
    assert eids == [0, 1]
    e = mem.edge(0)
    assert isinstance(e, MemoryEdge)
    assert (e.subject, e.relation, e.object, e.weight) == ("leo", "have_pet", "golden retriever", 1.0)
    assert (e.created_s, e.last_access_s, e.session, e.turn_id, e.speaker) == (100.0, 100.0, 2, "S2:4", "Leo")
    assert e.source_text == "I adopted a dog!" and e.superseded_s is None
    assert mem.edge(1).weight == 0.25
    assert set(mem.graph.edges["leo", "golden retriever", 0]) == {f for f in MemoryEdge.__dataclass_fields__}
    with pytest.raises(KeyError):
        mem.edge(99)


def test_parallel_edges_and_per_triple_times():
    mem = fresh()
    eids = mem.add_triples([Triple("a", "r", "b"), Triple("a", "r", "b")], [1.0, 2.0])
    assert mem.graph.number_of_edges("a", "b") == 2 and [mem.edge(e).created_s for e in eids] == [1.0, 2.0]
    with pytest.raises(DataError):
        mem.add_triples([Triple("a", "r", "b")], [1.0, 2.0])


def test_bad_triples_are_skipped_and_counted_or_rejected():
    mem = fresh()
    assert mem.add_triples([Triple("!!", "r", "b"), Triple("a", "r", "b")], 0.0) == [0]
    assert mem.skipped == 1 and mem.stats()["skipped triples"] == 1
    with pytest.raises(DataError, match="weight"):
        mem.add_triples([Triple("a", "r", "b", weight=float("nan"))], 0.0)


def test_incremental_insertion_reuses_the_index():
    mem = fresh()
    mem.add_triples([Triple("a", "r", "b")], 0.0, 1)
    index = mem.index
    mem.add_triples([Triple("b", "r", "c"), Triple("a", "r", "c")], 50.0, 2)
    assert mem.index is index and index.ntotal == 3 and mem.entities == ["a", "b", "c"]
    assert [r["nodes"] for r in mem.growth()] == [2, 3] and [r["edges"] for r in mem.growth()] == [1, 3]


def test_nearest_entities_text_and_vector():
    mem = fresh()
    assert mem.nearest_entities("anything") == []
    mem.add_triples([Triple("maya", "live", "denver"), Triple("leo", "like", "pasta")], 0.0)
    best, score = mem.nearest_entities("Denver", k=1)[0]
    assert best == "denver" and score == pytest.approx(1.0, abs=1e-5)
    hits = mem.nearest_entities(mem.encoder.encode(["pasta"])[0], k=10)
    assert len(hits) == 4 and hits[0][0] == "pasta"
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    with pytest.raises(DataError, match="-d"):
        mem.nearest_entities(np.ones(3))


def test_hops_follow_both_directions():
    mem, (ab, bc, cd, eb) = chain()
    assert mem.incident_edges("b", hops=1) == [ab, bc, eb]
    assert mem.incident_edges("b", hops=2) == [ab, bc, eb, cd]
    assert mem.incident_edges("d", hops=1) == [cd]
    assert mem.incident_edges("d", hops=3) == [cd, bc, ab, eb]
    assert mem.incident_edges(["d", "a", "nowhere"], hops=1) == [cd, ab]
    assert mem.incident_edges("B!", hops=1) == [ab, bc, eb]  # normalised like an entity
    with pytest.raises(DataError):
        mem.incident_edges("b", hops=0)


def test_touch_sets_last_access():
    mem, eids = chain()
    mem.touch(eids[:2], 999.0)
    assert [mem.edge(e).last_access_s for e in eids] == [999.0, 999.0, 10.0, 10.0]
    assert [mem.edge(e).created_s for e in eids] == [10.0] * 4


# --------------------------------------------------------------------------- changed facts

@pytest.fixture
def c01(sample_dir):
    return load_conversation(sample_dir / "conversations" / "c01.json")


def _lives(mem: GraphMemory) -> list[int]:
    return mem.history("Maya", "live_in_citystatecountry")


def test_append_keeps_every_fact_current(c01):
    mem = build_memory(c01, encoder=HashEncoder(32), policy="append")
    lives = _lives(mem)
    assert [mem.edge(e).object for e in lives] == ["portland", "denver"]
    assert all(mem.is_current(e) for e in mem.edge_ids())
    assert mem.edge_ids(current_only=True) == mem.edge_ids()


def test_supersede_marks_the_older_single_valued_fact(c01):
    mem = build_memory(c01, encoder=HashEncoder(32), policy="supersede")
    old, new = _lives(mem)
    move_time = c01.turn_by_id()["S3:1"].time_s
    assert mem.edge(old).object == "portland" and mem.edge(old).superseded_s == move_time
    assert mem.is_current(new) and not mem.is_current(old) and mem.superseded_by[old] == new
    current = mem.incident_edges("maya", current_only=True)
    assert new in current and old not in current and old in mem.incident_edges("maya")
    # not single valued: likes accumulate under either policy
    likes = [e for e in mem.incident_edges("maya") if mem.edge(e).relation == "like_food"]
    assert likes and all(mem.is_current(e) for e in likes)
    # growth shows the superseded edge leaving the current count from session 3 on
    rows = {r["session"]: r for r in mem.growth()}
    assert rows[2]["edges"] - rows[2]["current edges"] < rows[3]["edges"] - rows[3]["current edges"]
    assert mem.stats()["superseded edges"] == len(mem.edge_ids()) - len(mem.edge_ids(current_only=True)) > 0


def test_build_memory_uses_turn_times_and_given_triples(c01):
    turns = c01.turn_by_id()
    mem = build_memory(c01, encoder=HashEncoder(16))
    gold = sum(len(t.triples) for t in c01.turns())
    assert len(mem.edge_ids()) == gold
    assert all(mem.edge(e).created_s == turns[mem.edge(e).turn_id].time_s for e in mem.edge_ids())
    one = build_memory(c01, [Triple("Maya", "like", "tea", turn_id="S2:3")], encoder=HashEncoder(16))
    assert one.edge(0).session == 2 and one.edge(0).created_s == turns["S2:3"].time_s
    with pytest.raises(DataError, match="neither a session"):
        build_memory(c01, [Triple("Maya", "like", "tea")], encoder=HashEncoder(16))


def test_bad_settings_are_rejected():
    with pytest.raises(DataError, match="policy"):
        GraphMemory(encoder=HashEncoder(), policy="overwrite")
    with pytest.raises(DataError, match="merge_threshold"):
        GraphMemory(encoder=HashEncoder(), merge_threshold=0)


# --------------------------------------------------------------------------- command line

def test_read_turn_triples_from_extract_output(c01, tmp_path):
    from glong_lib.commands.memory import read_turn_triples

    path = tmp_path / "c01.triples.jsonl"
    rows = [{"conversation": "c01", "session": 3, "turn_id": "S3:1", "speaker": "Maya", "text": "hi",
             "triples": [{"subject": "I", "relation": "live_in_citystatecountry", "object": "Denver"}],
             "weights": [0.5]},
            {"conversation": "other", "turn_id": "S1:1", "triples": []}]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    (t,), skipped = read_turn_triples(path, c01)
    assert (t.subject, t.speaker, t.session, t.turn_id, t.weight, t.source) == ("I", "Maya", 3, "S3:1", 0.5, "hi")
    assert skipped == 1
    path.write_text(json.dumps({"conversation": "c01", "turn_id": "S9:9", "triples": []}))
    with pytest.raises(DataError, match="S9:9"):
        read_turn_triples(path, c01)
    path.write_text(json.dumps({"turn_id": "S1:1", "triples": [{"subject": "a"}]}))
    with pytest.raises(DataError, match="line 1"):
        read_turn_triples(path, c01)


def test_memory_command_prints_stats_and_fails_cleanly(tmp_path, capsys):
    from glong_lib.cli import main

    mem, _ = chain()
    mem.save(tmp_path / "m")
    assert main(["memory", str(tmp_path / "m"), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["edges"] == 4 and stats["nodes"] == 5 and stats["growth"][0]["edges"] == 4
    assert main(["memory", str(tmp_path / "m")]) == 0 and "growth" in capsys.readouterr().out
    (tmp_path / "m" / "manifest.json").write_text("{")
    assert main(["memory", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("glong memory: error:") and "\n" not in err


@pytest.mark.slow
def test_build_command_from_gold_and_triples(sample_dir, tmp_path, capsys):
    from glong_lib.cli import main

    conv = sample_dir / "conversations" / "c01.json"
    assert main(["build", str(conv), "--out", str(tmp_path / "gold"), "--gold", "--policy", "supersede",
                 "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    gold = GraphMemory.load(tmp_path / "gold")
    assert stats["edges"] == len(gold.edge_ids()) > 30 and stats["superseded edges"] >= 1
    # gold facts are weighed by the offline salience source by default: the memory holds exactly the
    # weights of the pipeline's step (Eq. 1-3 with the profile's scorer), not all 1.0
    from glong_lib.loaders import load_conversation
    from glong_lib.pipeline import weighted_triples
    from glong_lib.salience import load_scorer

    expected = sorted(round(t.weight, 6) for t in weighted_triples(load_conversation(conv), "gold",
                                                                   scorer=load_scorer("offline")))
    weights = [gold.edge(e).weight for e in gold.edge_ids()]
    assert sorted(round(w, 6) for w in weights) == expected and min(expected) < max(expected) == pytest.approx(1.0)
    rows = tmp_path / "t.jsonl"
    rows.write_text(json.dumps({"conversation": "c01", "turn_id": "S1:7", "triples": [
        {"subject": "I", "relation": "live_in_citystatecountry", "object": "Portland", "weight": 0.7}]}))
    assert main(["build", str(conv), "--out", str(tmp_path / "t"), "--triples", str(rows)]) == 0
    one = GraphMemory.load(tmp_path / "t")
    assert one.edge(0).weight == 0.7 and one.edge(0).subject == "maya" and one.edge(0).session == 1
    assert main(["build", str(conv), "--out", str(tmp_path / "x"), "--gold", "--conversation", "nope"]) == 2
    assert "no conversation 'nope'" in capsys.readouterr().err


# --------------------------------------------------------------------------- pictures

@pytest.mark.slow  # draws with matplotlib (20-30 s on 2 busy cores)
def test_drawings_render_and_mark_superseded_edges(c01, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from glong_lib.viz import save_figure
    from glong_lib.viz.graph import draw_memory, draw_stages, layout, plot_growth, select_edges, superseded_at

    mem = build_memory(c01, encoder=HashEncoder(16), policy="supersede")
    old = _lives(mem)[0]
    assert superseded_at(mem, old) and not superseded_at(mem, old, upto_session=2)
    ego = select_edges(mem, "maya", hops=1)
    assert ego == mem.incident_edges("maya") and len(select_edges(mem, max_nodes=5)) < len(mem.edge_ids())
    pos = layout(mem, mem.edge_ids())
    assert set(pos) == set(mem.graph.nodes)
    fig = draw_memory(mem, entities="maya", speakers=c01.speakers)
    styles = {tuple(p.get_linestyle() for p in [c]) for c in fig.axes[0].patches}
    assert len(styles) >= 2  # solid and dashed arrows
    for name, f in {"full": fig, "stages": draw_stages(mem, speakers=c01.speakers),
                    "growth": plot_growth({"append": build_memory(c01, encoder=HashEncoder(16)).growth(),
                                           "supersede": mem.growth()})}.items():
        assert save_figure(f, name, tmp_path).is_file()
        plt.close(f)


# --------------------------------------------------------------------------- dates on edges (issue 14)

def test_relative_dates_resolved_by_hand():
    from datetime import datetime

    from glong_lib.dates import resolve_date

    said = datetime(2023, 5, 8, 13, 56)  # a Monday
    cases = {
        "I went to a support group yesterday.": "7 May 2023",
        "the day before yesterday we hiked": "6 May 2023",
        "Tonight I'm painting.": "8 May 2023",
        "My recital is tomorrow!": "9 May 2023",
        "I started 3 days ago": "5 May 2023",
        "Last week I ran a charity race": "the week before 8 May 2023",
        "we're moving next month": "June 2023",
        "Last year I painted a sunrise": "2022",
        "last Friday was fun": "5 May 2023",
        "last Monday was fun": "1 May 2023",        # today is Monday: the one a week ago
        "See you next Saturday": "13 May 2023",
        "two months ago, and yesterday too": "March 2023",  # the earliest expression wins
        "I love tea": None,
    }
    assert {text: resolve_date(text, said) for text in cases} == cases
    assert resolve_date("a year ago", datetime(2024, 1, 31)) == "2023"
    assert resolve_date("last month", datetime(2024, 1, 31)) == "December 2023"


def test_dated_sessions_put_dates_on_edges_and_round_trip(tmp_path):
    from glong_lib.memory import GraphMemory, HashEncoder
    from glong_lib.schema import Session, Triple, Turn

    turn = Turn("D1:1", "Ana", "I adopted a cat yesterday.")
    dated = Session(1, [turn], date="2023-05-08T13:56:00")
    m = GraphMemory(encoder=HashEncoder(dim=8))
    eid = m.add_session(dated, [Triple("I", "adopted", "a cat", speaker="Ana", turn_id="D1:1", source=turn.text)])[0]
    plain = m.add_session(Session(2, [Turn("D2:1", "Ana", "I like tea")]),
                          [Triple("I", "like", "tea", speaker="Ana", turn_id="D2:1", source="I like tea")])[0]
    assert m.edge(eid).date == "7 May 2023" and m.edge(plain).date is None
    assert "date" not in m.edge(plain).to_dict()  # undated memories save as before
    m.save(tmp_path / "mem")
    back = GraphMemory.load(tmp_path / "mem", encoder=HashEncoder(dim=8))
    assert back.edge(eid).date == "7 May 2023" and back.edge(plain).date is None


def test_saved_figures_are_opaque_for_dark_themes(tmp_path):
    """Jupyter's inline backend makes figures transparent; black labels then vanish on a dark theme.
    ``save_figure`` (which every notebook figure passes through) gives them a white background."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from glong_lib.viz import save_figure

    fig, ax = plt.subplots(figsize=(2, 2))
    fig.patch.set_alpha(0.0)  # what the inline backend does
    ax.plot([0, 1], [0, 1])
    path = save_figure(fig, "opaque", tmp_path)
    corner = plt.imread(path)[0, 0]
    plt.close(fig)
    assert fig.patch.get_alpha() == 1.0 and tuple(corner[:3]) == (1.0, 1.0, 1.0)
    assert len(corner) == 3 or corner[3] == 1.0


@pytest.mark.slow  # draws with matplotlib (20-30 s on 2 busy cores)
def test_layout_is_the_same_under_any_string_hashing():
    """A seeded layout must not depend on set order (PYTHONHASHSEED changes it per process):
    the same memory is drawn on the same positions in every kernel."""
    import subprocess
    import sys

    script = ("from glong_lib.io import data_path\n"
              "from glong_lib.loaders import load_conversation\n"
              "from glong_lib.memory import build_memory\n"
              "from glong_lib.viz.graph import layout, select_edges\n"
              "from glong_lib.memory import HashEncoder\n"
              "m = build_memory(load_conversation(data_path('conversations') / 'c01.json'), encoder=HashEncoder(16))\n"
              "p = layout(m, select_edges(m, max_nodes=40))\n"
              "print(sorted((k, round(x, 6), round(y, 6)) for k, (x, y) in p.items()))\n")
    runs = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           cwd=Path(__file__).resolve().parents[1],
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(runs) == 1 and runs.pop().startswith("[(")


@pytest.mark.slow  # draws with matplotlib (20-30 s on 2 busy cores)
def test_stage_names_are_tied_to_their_nodes(c01):
    """After repel_labels no name overlaps another or covers another node's disc on the sample
    conversation (what notebook 03's notice prints), and each moved name has a leader line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from glong_lib.viz.graph import draw_stages, label_collisions

    mem = build_memory(c01, encoder=HashEncoder(16))
    raw = label_collisions(draw_stages(mem, speakers=c01.speakers, repel=False))
    fig = draw_stages(mem, speakers=c01.speakers)
    placed = label_collisions(fig)
    assert placed["names"] == raw["names"] > 0
    assert placed["names overlapping a name"] == 0
    assert placed["names on a node"] == 0                                    # none on another node
    assert placed["names across an edge"] <= raw["names across an edge"]     # and fewer (or as few) across edges
    assert raw["names on a node"] + raw["names across an edge"] > 0           # so the placement had work to do
    leaders = sum(a.get_gid() == "leader" for ax in fig.axes for a in ax.patches + ax.texts)
    assert leaders == placed["names"] - 2 * len(fig.axes[:5])   # every name but the speakers' (on their node)
    plt.close("all")


def test_stages_name_the_named_entities_in_every_panel(c01):
    """``named`` keeps an old entity's name on every later panel (notebook 03 follows the two cities)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from glong_lib.viz.graph import draw_stages

    mem = build_memory(c01, encoder=HashEncoder(16))
    first = mem.graph.nodes["portland"]["first_session"]

    def panels(fig):
        return [{t.get_text() for t in ax.texts} for ax in fig.axes[:len(mem.growth())]]

    plain = panels(draw_stages(mem, speakers=c01.speakers, repel=False))
    kept = panels(draw_stages(mem, speakers=c01.speakers, repel=False, named=["Portland"]))
    assert ["portland" in p for p in plain] == [i + 1 == first for i in range(len(plain))]
    assert all("portland" in p for p in kept[first - 1:])
    plt.close("all")


def test_stages_can_write_speaker_names_beside_their_nodes(c01):
    """``speaker_names_beside`` moves the speakers' names off their nodes (notebook 03: a small speaker
    node in the first panel is not hidden under its name), and repel_labels still clears every node."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from glong_lib.viz.graph import draw_stages, label_collisions
    from glong_lib.viz.labels import _node_of

    mem = build_memory(c01, encoder=HashEncoder(16))
    speakers = {mem.resolve(s) for s in c01.speakers}

    def on_node(fig):
        return sum(t.get_text() in speakers and _node_of(t) == tuple(t.get_position())
                   for ax in fig.axes for t in ax.texts)

    assert on_node(draw_stages(mem, speakers=c01.speakers, repel=False)) == 2 * len(mem.growth())
    fig = draw_stages(mem, speakers=c01.speakers, speaker_names_beside=True)
    assert on_node(fig) == 0
    assert label_collisions(fig)["names on a node"] == 0
    assert label_collisions(fig)["names overlapping a name"] == 0
    plt.close("all")
