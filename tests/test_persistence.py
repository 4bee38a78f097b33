"""Saving and loading a memory (glong_lib.memory.persistence): exact round trips, atomic saves that
keep other files, a manifest that catches every corruption, invariants checked on load."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testdata import DATA, examples

from glong_lib.errors import DataError
from glong_lib.loaders import load_conversation
from glong_lib.memory import FORMAT_VERSION, GraphMemory, HashEncoder, build_memory
from glong_lib.memory import persistence as P
from glong_lib.memory.persistence import LOCK_FILE
from glong_lib.schema import Triple


def chain() -> GraphMemory:
    mem = GraphMemory(encoder=HashEncoder(dim=32))
    mem.add_triples([Triple("a", "r", "b"), Triple("b", "r", "c"), Triple("c", "r", "d"), Triple("e", "r", "b")],
                    10.0, session=1)
    return mem


def load(folder) -> GraphMemory:
    return GraphMemory.load(folder, encoder=HashEncoder(32))


def _snapshot(mem: GraphMemory):
    nodes = sorted(mem.graph.nodes(data=True))
    edges = sorted((k, u, v, sorted(d.items())) for u, v, k, d in mem.graph.edges(keys=True, data=True))
    queries = [mem.nearest_entities(q, k=4) for q in ("maya", "denver", "pasta")]
    return nodes, edges, queries, mem.aliases, mem.merges, mem.superseded_by, mem.entities, mem.stats()


def test_round_trip_is_exact(tmp_path):
    mem = build_memory(load_conversation(DATA / "conversations" / "c01.json"), encoder=HashEncoder(32),
                       policy="supersede")
    mem.aliases["the hospital"] = "hospital"
    mem.touch([0, 1], 1234.5)
    mem.save(tmp_path / "m")
    back = load(tmp_path / "m")
    assert _snapshot(back) == _snapshot(mem)
    assert np.array_equal(back.entity_vectors(), mem.entity_vectors())
    eid, = back.add_triples([Triple("Maya", "live_in_citystatecountry", "Austin")], 2e7, 6)
    assert eid == max(mem.edge_ids()) + 1  # the edge counter travels: no id is reused
    manifest = json.loads((tmp_path / "m" / P.MANIFEST_FILE).read_text())
    assert manifest["format_version"] == FORMAT_VERSION == 2
    assert set(manifest["files"]) == {"meta", "index"}


def test_empty_memory_round_trip(tmp_path):
    GraphMemory(encoder=HashEncoder(32)).save(tmp_path / "m")
    back = load(tmp_path / "m")
    assert back.index is None and back.stats()["nodes"] == 0


def test_save_keeps_foreign_files_and_leaves_only_owned_ones(tmp_path):
    folder = tmp_path / "m"
    mem = chain()
    mem.save(folder)
    (folder / "notes.txt").write_text("mine")
    (folder / "sub").mkdir()
    mem.add_triples([Triple("x", "r", "y")], 20.0)
    mem.save(folder)
    assert load(folder).stats()["edges"] == 5
    assert (folder / "notes.txt").read_text() == "mine" and (folder / "sub").is_dir()
    names = sorted(p.name for p in folder.iterdir())
    assert names[0] == LOCK_FILE  # the saves' lock stays (deleting it would let two writers hold two locks)
    assert names[1].startswith("entities-") and names[2] == "manifest.json" and names[3].startswith("memory-")
    assert names[4:] == ["notes.txt", "sub"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no temporary or old folders beside it


def test_the_public_name_rules_match_what_a_save_writes_and_deletes(tmp_path):
    """OWNED_NAME and LEFTOVER_NAME are public (the A2 notebook re-implements them): a saved data
    file matches the first, a killed save's temporary file the second, and a save deletes only those."""
    folder = tmp_path / "m"
    chain().save(folder)
    manifest = json.loads((folder / P.MANIFEST_FILE).read_text())
    assert all(P.OWNED_NAME.match(e["name"]) for e in manifest["files"].values())
    planted = [".manifest.json.x1y2.tmp", "memory-0000000000000000.json", "memory-0123456789ABCDEF.json"]
    for name in planted:
        (folder / name).write_text("left")
    assert [bool(P.OWNED_NAME.match(n) or P.LEFTOVER_NAME.match(n)) for n in planted] == [True, True, False]
    chain().save(folder)
    assert [(folder / n).exists() for n in planted] == [False, False, True]


def test_saving_the_same_memory_twice_is_byte_identical(tmp_path):
    mem = chain()
    mem.save(tmp_path / "a")
    mem.save(tmp_path / "b")
    for name in sorted(os.listdir(tmp_path / "a")):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.parametrize("fail_at", [1, 2, 3])
def test_a_failed_write_leaves_the_previous_memory(tmp_path, monkeypatch, fail_at):
    """A write failing at the index, the memory file or the manifest: the old memory stays whole."""
    folder = tmp_path / "m"
    mem = chain()
    mem.save(folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    mem.add_triples([Triple("x", "r", "y")], 20.0)
    real, calls = P.atomic_write_bytes, []

    def failing(path, data):
        calls.append(path)
        if len(calls) == fail_at:
            raise DataError("disk full (simulated)", path=path)
        return real(path, data)

    monkeypatch.setattr(P, "atomic_write_bytes", failing)
    if fail_at == 3:  # the manifest goes through atomic_write_json
        monkeypatch.setattr(P, "atomic_write_json", lambda path, obj: failing(path, b""))
    with pytest.raises(DataError, match="simulated"):
        mem.save(folder)
    monkeypatch.undo()
    assert load(folder).stats()["edges"] == 4
    assert before["manifest.json"] == (folder / "manifest.json").read_bytes()


def test_refuses_a_folder_that_holds_other_things(tmp_path):
    (tmp_path / "notes.txt").write_text("precious")
    with pytest.raises(DataError, match="no glong memory"):
        chain().save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(DataError, match="not a folder"):
        chain().save(tmp_path / "file")


def test_unwritable_folder_is_a_one_line_error(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root ignores folder permissions")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(DataError, match="cannot write"):
            chain().save(folder / "m")
    finally:
        folder.chmod(0o700)


def _format_one(folder: Path, mem) -> Path:
    """``mem`` written in the first layout (memory.json + entities.faiss, checksum inside, no manifest)."""
    import faiss

    folder.mkdir()
    faiss.write_index(mem.index, str(folder / "entities.faiss"))
    meta = {"format": "glong-memory", "format_version": 1, **mem.to_json(),
            "index_sha256": P.sha256_file(folder / "entities.faiss")}
    (folder / "memory.json").write_text(json.dumps(meta))
    return folder


def test_format_one_memories_are_refused_in_one_line(tmp_path, capsys):
    """The first format is no longer read, nor saved over: loading, saving into it and ``glong build``/
    ``glong memory`` stop with one line naming its memory.json and saying to re-build; nothing is changed."""
    from glong_lib.cli import main

    folder = _format_one(tmp_path / "v1", chain())
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    want = f"{folder / 'memory.json'}: a memory of format 1, which this glong no longer reads: re-build it"
    for attempt in (lambda: load(folder), lambda: chain().save(folder), lambda: P.editing(folder).__enter__()):
        with pytest.raises(DataError) as e:
            attempt()
        assert str(e.value).startswith(want) and "\n" not in str(e.value)
    for argv in (["memory", str(folder)],
                 ["build", str(DATA / "conversations" / "c01.json"), "--gold", "--no-salience", "--out", str(folder)]):
        assert main(argv) != 0
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and want in err[0], err
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.name != ".glong.lock"} == before


# --------------------------------------------------------------------------- corruption and invariants

def _saved(tmp_path) -> Path:
    return chain().save(tmp_path / "m")


def _files(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())["files"]


def _edit_state(folder: Path, change) -> None:
    """Change the saved state and re-sign it, so only the invariant checks can catch it."""
    entry = _files(folder)["meta"]
    path = folder / entry["name"]
    state = json.loads(path.read_text())
    change(state)
    data = json.dumps(state).encode()
    path.write_bytes(data)
    manifest = json.loads((folder / "manifest.json").read_text())
    import hashlib

    manifest["files"]["meta"].update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    (folder / "manifest.json").write_text(json.dumps(manifest))


def _resign(folder: Path, key: str, data: bytes) -> None:
    """Replace a data file's bytes and sign them in the manifest: a crafted, correctly signed file."""
    import hashlib

    entry = _files(folder)[key]
    (folder / entry["name"]).write_bytes(data)
    _manifest(folder, lambda m: m["files"][key].update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest()))


def _faiss_field(d: Path, offset: int, value: int, width: int = 8) -> None:
    """Re-sign the index with one header field changed (offset 4: d, 4 bytes; 8: ntotal, 8 bytes)."""
    data = bytearray(_index(d).read_bytes())
    data[offset:offset + width] = value.to_bytes(width, "little")
    _resign(d, "index", bytes(data))


def _l2_index(d: Path) -> None:
    import faiss

    index = faiss.deserialize_index(np.frombuffer(_index(d).read_bytes(), dtype=np.uint8))
    l2 = faiss.IndexFlatL2(index.d)
    l2.add(index.reconstruct_n(0, index.ntotal))
    _resign(d, "index", faiss.serialize_index(l2).tobytes())


def _symlink_to_copy(path: Path) -> None:
    """``path`` replaced by a symlink to an identical copy outside the folder (the checksum matches)."""
    outside = path.parent.parent / f"outside-{path.name}"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(outside)


def _meta(d: Path) -> Path:
    return d / _files(d)["meta"]["name"]


def _index(d: Path) -> Path:
    return d / _files(d)["index"]["name"]


def _swap_nodes(data: bytes) -> bytes:
    state = json.loads(data)
    state["nodes"][0], state["nodes"][1] = state["nodes"][1], state["nodes"][0]
    return json.dumps(state, ensure_ascii=False, indent=1).encode()


def _manifest(d: Path, change) -> None:
    m = json.loads((d / "manifest.json").read_text())
    change(m)
    (d / "manifest.json").write_text(json.dumps(m))


CORRUPTIONS = {
    "missing folder": (lambda d: __import__("shutil").rmtree(d), "not a folder"),
    "missing manifest": (lambda d: (d / "manifest.json").unlink(), "no manifest.json"),
    "truncated manifest": (lambda d: (d / "manifest.json").write_bytes((d / "manifest.json").read_bytes()[:40]),
                           "corrupt or truncated"),
    "manifest garbage": (lambda d: (d / "manifest.json").write_bytes(b"\xff\xfe\x00garbage"), "corrupt or truncated"),
    "manifest not a memory": (lambda d: (d / "manifest.json").write_text("[1, 2]"), "not a glong memory file"),
    "deeply nested manifest": (lambda d: (d / "manifest.json").write_text("[" * 100000 + "]" * 100000),
                               "corrupt|not a glong memory"),
    "newer version": (lambda d: _manifest(d, lambda m: m.update(format_version=FORMAT_VERSION + 1)),
                      "written by memory format .*; this glong reads up to format"),
    "no version": (lambda d: _manifest(d, lambda m: m.pop("format_version")), "format_version"),
    "manifest names a foreign file": (lambda d: _manifest(d, lambda m: m["files"]["meta"].update(name="../x.json")),
                                      "unexpected memory file"),
    "missing memory file": (lambda d: _meta(d).unlink(), "missing memory file"),
    "truncated memory file": (lambda d: _meta(d).write_bytes(_meta(d).read_bytes()[:200]), "truncated or changed"),
    "memory file changed, same size": (lambda d: _meta(d).write_bytes(_meta(d).read_bytes().replace(b'"a"', b'"z"', 1)),
                                       "checksum"),
    "missing index": (lambda d: _index(d).unlink(), "missing index file"),
    "truncated index": (lambda d: _index(d).write_bytes(_index(d).read_bytes()[:50]), "truncated or changed"),
    "swapped node order, not re-signed": (lambda d: _meta(d).write_bytes(_swap_nodes(_meta(d).read_bytes())),
                                          "checksum|truncated or changed"),
    "missing key": (lambda d: _edit_state(d, lambda m: m.pop("edges")), "'edges'"),
    "weight is a string": (lambda d: _edit_state(d, lambda m: m["edges"][0].update(weight="0.5")), "'weight'"),
    "weight is null": (lambda d: _edit_state(d, lambda m: m["edges"][0].update(weight=None)), "'weight'"),
    "weight above one": (lambda d: _edit_state(d, lambda m: m["edges"][0].update(weight=3.0)), r"not in \[0, 1\]"),
    "dangling edge": (lambda d: _edit_state(d, lambda m: m["edges"][0].update(subject="ghost")), "not a node"),
    "duplicate node": (lambda d: _edit_state(d, lambda m: m["nodes"].append(dict(m["nodes"][0]))), "appears twice"),
    "duplicate edge id": (lambda d: _edit_state(d, lambda m: m["edges"][1].update(eid=m["edges"][0]["eid"])),
                          "appears twice"),
    "reset edge counter": (lambda d: _edit_state(d, lambda m: m.update(next_eid=0)), "next_eid"),
    "clock overflow": (lambda d: _edit_state(d, lambda m: m["edges"][0].update(last_access_s=1e308)), "not a time"),
    "dangling supersede link": (lambda d: _edit_state(d, lambda m: m.update(superseded_by={"0": 99})),
                                "not an edge"),
    # the reliability sweep (issue 25): crafted but correctly signed files, symlinks, huge numbers
    "weight 10**400 (sweep D07)": (lambda d: _edit_state(d, lambda m: m["edges"][0].update(weight=10 ** 400)),
                                   r"not in \[0, 1\]"),
    "next_eid of 5000 digits (D08)": (lambda d: _resign(d, "meta", _meta(d).read_bytes().replace(
        b'"next_eid": ', b'"next_eid": ' + b"9" * 5000 + b"0 * ", 1).replace(b"0 * ", b"", 1)), "corrupt|too large"),
    "format_version -3 (D10)": (lambda d: _manifest(d, lambda m: m.update(format_version=-3)), "format_version"),
    "memory file is a symlink (D03)": (lambda d: _symlink_to_copy(_meta(d)), "symlink"),
    "manifest is a symlink": (lambda d: _symlink_to_copy(d / "manifest.json"), "symlink"),
    "index claims 3e8 vectors (D05)": (lambda d: _faiss_field(d, 8, 300_000_000), "vectors for"),
    "index claims 2**30 dimensions (D06)": (lambda d: _faiss_field(d, 4, 2 ** 30, 4), "-d but the memory says"),
    "index of another metric (D13)": (_l2_index, "IndexFlatIP"),
    "index too small": (lambda d: _edit_state(d, lambda m: m["nodes"].append(
        {"name": "extra", "label": "extra", "created_s": 0.0, "first_session": None})), "vectors for"),
}


@pytest.mark.parametrize("case", sorted(CORRUPTIONS))
def test_corrupt_memory_raises_one_line_data_error(tmp_path, case):
    folder = _saved(tmp_path)
    damage, message = CORRUPTIONS[case]
    damage(folder)
    with pytest.raises(DataError, match=message) as info:
        load(folder)
    assert "\n" not in str(info.value)


def test_insert_refuses_weights_outside_zero_one():
    with pytest.raises(DataError, match=r"\[0, 1\]"):
        chain().add_triples([Triple("x", "r", "y", weight=1.5)], 0.0)
    with pytest.raises(DataError, match=r"\[0, 1\]"):
        chain().add_triples([Triple("x", "r", "y", weight=float("nan"))], 0.0)


def test_memory_size_reports_edges_or_none(tmp_path):
    assert P.memory_size(tmp_path / "none") is None
    assert P.memory_size(_saved(tmp_path)) == 4


def test_a_permission_error_while_saving_is_a_one_line_data_error(tmp_path, monkeypatch):
    """What an unwritable folder does (simulated: the tests run as root, which ignores permissions)."""
    import glong_lib.io as io_module

    def denied(src, dst):
        raise PermissionError(13, "Permission denied")

    chain().save(tmp_path / "m")
    monkeypatch.setattr(io_module.os, "replace", denied)
    with pytest.raises(DataError, match="cannot write \\(Permission denied\\)") as info:
        chain().save(tmp_path / "m")
    monkeypatch.undo()
    assert "\n" not in str(info.value) and load(tmp_path / "m").stats()["edges"] == 4


_NAME = st.text(alphabet="abcdefgh ", min_size=1, max_size=6).map(str.strip).filter(bool)
_TRIPLES = st.lists(st.tuples(_NAME, st.sampled_from(["like", "live_in_general", "has_pet"]), _NAME,
                              st.floats(min_value=0.0, max_value=1.0), st.integers(min_value=1, max_value=4)),
                    max_size=25)


@settings(max_examples=examples(60), deadline=None)
@given(_TRIPLES, st.sampled_from(["append", "supersede"]), st.integers(min_value=0, max_value=3))
def test_save_load_round_trip_property(tmp_path_factory, rows, policy, touches):
    """Any memory (random triples, weights, sessions, policy, accesses) loads back exactly, and
    saving what was loaded gives the same bytes."""
    mem = GraphMemory(encoder=HashEncoder(16), policy=policy)
    for i, (s, r, o, w, session) in enumerate(rows):
        mem.add_triples([Triple(s, r, o, weight=w)], float(100 * session + i), session=session)
    if mem.edge_ids():
        mem.touch(mem.edge_ids()[:touches], 5000.0)
    folder = tmp_path_factory.mktemp("rt") / "m"
    mem.save(folder)
    back = GraphMemory.load(folder, encoder=HashEncoder(16))
    assert back.to_json() == mem.to_json()
    if mem.index is not None:
        assert np.array_equal(back.entity_vectors(), mem.entity_vectors())
    again = folder.parent / "again"
    back.save(again)
    assert sorted(p.name for p in again.iterdir()) == sorted(p.name for p in folder.iterdir())
    for p in folder.iterdir():
        assert (again / p.name).read_bytes() == p.read_bytes()


def test_a_memory_that_would_not_load_is_never_written(tmp_path):
    """Sweep C01: a save checks the new state the loader's way first; the old memory stays whole."""
    folder = _saved(tmp_path)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    mem = load(folder)
    state = mem.to_json()
    state["edges"][0]["speaker"] = 5
    with pytest.raises(DataError, match="would not load.*'speaker' is 5.*nothing written"):
        P.save_memory(state, mem.index, folder)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_a_fifo_in_place_of_the_lock_is_an_error_not_a_hang(tmp_path):
    import os

    folder = _saved(tmp_path)
    (folder / LOCK_FILE).unlink()
    os.mkfifo(folder / LOCK_FILE)
    with pytest.raises(DataError, match="not a regular file"):
        load(folder)
    with pytest.raises(DataError, match="not a regular file"):
        chain().save(folder)


def test_a_save_replaces_links_at_its_own_names_never_their_targets(tmp_path):
    """A damaged memory whose files are links (sweep D03/D04) is replaced by the next save; the
    files the links point to, outside the folder, are untouched."""
    folder = _saved(tmp_path)
    for path in (folder / "manifest.json", _meta(folder)):
        _symlink_to_copy(path)
    outside = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    chain().save(folder)
    assert not any(p.is_symlink() for p in folder.iterdir()) and load(folder).stats()["edges"] == 4
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == outside
