"""The reliability sweep's library-level cases (issue 25): artifacts published without deleting a
user's folder, damaged cached models/adapters/extractions named in one line, dates that overflow,
entity names the encoder cannot tell apart, inputs cut to the models' windows, a failing notebook
cell in one line. The command-line cases are rows of ``test_bad_inputs.py``."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testdata import examples

from glong_lib.artifacts import ARTIFACT_MARKER, publish_folder, verify_artifact, write_artifact_marker
from glong_lib.dates import resolve_date
from glong_lib.errors import DataError, WeightsUnavailable
from glong_lib.models import loading
from glong_lib.schema import Conversation, Session, Triple, Turn
from glong_lib.text import cut_to_tokens


def _artifact(folder: Path, files: dict) -> Path:
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    write_artifact_marker(folder, "test")
    return folder


# --------------------------------------------------------------------------- publishing (G14, G15)

def test_publish_never_replaces_a_folder_of_the_users_files(tmp_path):
    users = tmp_path / "precious"
    users.mkdir()
    (users / "thesis.tex").write_text("years of work")
    new = _artifact(tmp_path / ".new", {"adapter_config.json": "{}"})
    with pytest.raises(DataError, match="did not write"):
        publish_folder(new, users)
    assert (users / "thesis.tex").read_text() == "years of work" and new.is_dir()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(DataError, match="not a folder"):
        publish_folder(new, tmp_path / "afile")


def test_publish_replaces_its_own_earlier_artifact_and_leaves_nothing_beside_it(tmp_path):
    target = _artifact(tmp_path / "adapter", {"weights": "old"})
    publish_folder(_artifact(tmp_path / ".tmp1", {"weights": "new"}), target)
    assert (target / "weights").read_text() == "new" and (target / ARTIFACT_MARKER).is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adapter"]
    assert oct(target.stat().st_mode & 0o777) != oct(0o700)  # not left private by mkdtemp


# --------------------------------------------------------------------------- damaged artifacts (F03-F06, F09, F10)

def test_an_artifact_damaged_in_place_is_named(tmp_path):
    """Sweep F06: same size, bytes overwritten: it loaded and extracted 0 triples with exit 0."""
    folder = _artifact(tmp_path / "adapter", {"adapter_model.safetensors": "weights" * 100})
    verify_artifact(folder, "adapter")
    data = (folder / "adapter_model.safetensors").read_bytes()
    (folder / "adapter_model.safetensors").write_bytes(b"X" * 16 + data[16:])
    with pytest.raises(DataError, match=f"cached adapter is damaged .*: delete {folder}"):
        verify_artifact(folder, "adapter")


def test_a_truncated_safetensors_file_is_a_damaged_cache(tmp_path):
    """Sweep F03/F04: SafetensorError (an Exception, not an OSError) becomes one line."""
    import torch
    from safetensors.torch import load_file, save_file

    path = tmp_path / "model.safetensors"
    save_file({"w": torch.zeros(64)}, str(path))
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(DataError, match=f"cached model is damaged .*delete {tmp_path}$"):
        with loading("model", str(tmp_path)):
            load_file(str(path))


def test_garbage_config_and_the_offline_hub_are_one_line(tmp_path):
    """Sweep F05 (a JSONDecodeError from a local folder) and F09 (a hub id with no network)."""
    with pytest.raises(DataError, match="cached adapter is damaged \\(JSONDecodeError"):
        with loading("adapter", str(tmp_path)):
            json.loads("{garbage")
    with pytest.raises(WeightsUnavailable,
                       match="cannot load model 'org/name' from the Hugging Face hub.*--profile offline"):
        with loading("model", "org/name"):
            raise OSError("We couldn't connect to 'https://huggingface.co'")
    with pytest.raises(DataError, match="needs"):  # a one-line error of ours passes through unchanged
        with loading("model", str(tmp_path)):
            raise DataError("needs a CUDA GPU")


def test_a_damaged_extraction_cache_entry_is_named(tmp_path, monkeypatch):
    """Sweep F10: a cut cache entry crashed every later run with a JSONDecodeError."""
    from glong_lib.extraction.cache import extracted_triples, extraction_cache_path

    monkeypatch.setenv("GLONG_CACHE", str(tmp_path))
    conv = Conversation("c", ["A"], [Session(1, [Turn("S1:1", "A", "I have a cat.")])])
    path = extraction_cache_path(conv, "x")
    path.write_text('[{"subject": "a", "rel')
    with pytest.raises(DataError, match=f"cached extraction is damaged .*delete {path}"):
        extracted_triples(conv, extractor=None, extractor_name="x")


# --------------------------------------------------------------------------- dates (B09)

@settings(max_examples=examples(200), deadline=None)
@given(st.integers(min_value=0, max_value=10 ** 30), st.sampled_from(["day", "week", "month", "year"]),
       st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)))
def test_any_count_ago_resolves_to_a_date_or_none(n, unit, said):
    """'1000000 days ago' raised OverflowError and failed every build of its conversation."""
    out = resolve_date(f"that was {n} {unit}s ago", said)
    assert out is None or isinstance(out, str) and not out.startswith("-")


# --------------------------------------------------------------------------- entity merging (B01)

class _UnknownTokens:
    """An encoder that, like MiniLM on emoji, maps every name without a letter to one vector."""

    def get_sentence_embedding_dimension(self):
        return 4

    def encode(self, texts, normalize_embeddings=True, **_):
        out = np.zeros((len(texts), 4), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, 0 if not any(c.isalnum() for c in t) else 1 + i % 3] = 1.0
        return out


def test_names_the_encoder_cannot_tell_apart_do_not_merge():
    from glong_lib.memory import GraphMemory

    mem = GraphMemory(encoder=_UnknownTokens())
    mem.add_triples([Triple("\U0001F600", "feel", "\U0001F389\U0001F389")], 1.0, session=1)
    assert mem.aliases == {} and {"\U0001F600", "\U0001F389\U0001F389"} <= set(mem.entities)


# --------------------------------------------------------------------------- bounded inputs (A10, A13)

class _CharTokenizer:
    """One token per character (enough for the cutting logic)."""

    def __call__(self, text, **_):
        return {"input_ids": list(range(len(text))), "offset_mapping": [(i, i + 1) for i in range(len(text))]}


@settings(max_examples=examples(100), deadline=None)
@given(st.text(max_size=300), st.integers(min_value=1, max_value=120))
def test_cut_to_tokens_keeps_a_prefix_within_the_limit(text, limit):
    cut = cut_to_tokens(_CharTokenizer(), text, limit)
    assert text.startswith(cut) and len(cut) == min(len(text), limit)


def test_a_megabyte_utterance_is_cut_before_the_tokenizer_reads_it():
    seen = []

    class Spy(_CharTokenizer):
        def __call__(self, text, **kw):
            seen.append(len(text))
            return super().__call__(text, **kw)

    assert len(cut_to_tokens(Spy(), "x" * 1_000_000, 512)) == 512 and max(seen) <= 512 * 16


@pytest.mark.slow
def test_a_long_session_is_read_in_windows_with_eq3_over_the_whole_session():
    """Sweep A13: the decoder source read a 2,000-turn session whole (7.4 GB, then a 51.8 GB
    allocation). In windows each triple is scored where its turn is, and the maximum is 1."""
    from glong_lib.salience import load_decoder_scorer

    scorer = load_decoder_scorer()
    turns = [Turn(f"S1:{k}", "AB"[k % 2], f"I adopted a cat named Tom number {k}.") for k in range(1, 9)]
    triples = [Triple("A", "adopt", f"cat {k}", turn_id=f"S1:{k}", session=1) for k in (1, 7)]
    whole = scorer.score(triples, turns)
    scorer.window = 40  # eight ~12-token turns: four windows, two of them read
    windowed = scorer.score(triples, turns)
    assert whole.attention.size and not windowed.attention.size  # the windowed path was taken
    assert max(windowed.weights) == pytest.approx(1.0) and all(0 <= w <= 1 for w in windowed.weights)


# --------------------------------------------------------------------------- notebooks

def test_a_failing_notebook_cell_is_one_line(tmp_path):
    """Sweep F07: papermill's exception carried the kernel's whole traceback (41 lines)."""
    import nbformat

    from glong_lib.notebook_runner import run_notebooks

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("raise ValueError('boom')")]
    (tmp_path / "books").mkdir()
    nbformat.write(nb, str(tmp_path / "books" / "07_fails.ipynb"))
    with pytest.raises(DataError) as info:
        run_notebooks(folder=tmp_path / "books", out=tmp_path / "out", log=lambda *_: None)
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("07_fails.ipynb: cell 2 failed: ValueError: boom")


def test_a_cache_folder_that_cannot_be_created_is_one_line(tmp_path, monkeypatch):
    """Sweep F02: GLONG_CACHE read-only (PermissionError from mkdir; root ignores modes, so the
    error is raised here rather than by chmod)."""
    from glong_lib.models import cache_dir

    def refuse(self, *_, **__):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setenv("GLONG_CACHE", str(tmp_path / "ro"))
    monkeypatch.setattr(Path, "mkdir", refuse)
    with pytest.raises(DataError, match="Operation not permitted.*set GLONG_CACHE to a writable folder"):
        cache_dir("models")


def test_an_unmarked_adapter_in_the_cache_is_marked_once_loaded(tmp_path, monkeypatch):
    """Adapters trained before markers existed are checked from their first load on; an adapter
    folder of the user's (outside the cache) is never written to."""
    from glong_lib.extraction.inference import _mark_cached_adapter

    monkeypatch.setenv("GLONG_CACHE", str(tmp_path / "cache"))
    cached, users = tmp_path / "cache" / "extractor" / "offline-x", tmp_path / "mine"
    for folder in (cached, users):
        folder.mkdir(parents=True)
        (folder / "adapter_model.safetensors").write_bytes(b"weights")
        _mark_cached_adapter(folder)
    assert (cached / ARTIFACT_MARKER).is_file() and not (users / ARTIFACT_MARKER).exists()
    (cached / "adapter_model.safetensors").write_bytes(b"damaged")
    with pytest.raises(DataError, match="cached adapter is damaged"):
        verify_artifact(cached, "adapter")


def test_bench_memory_long_session_loads_with_the_asked_triples(tmp_path):
    """The memory benchmark's input (the benchmark itself loads the salience model: not run here)."""
    from benchmarks.bench_memory import long_session
    from glong_lib.loaders import load_conversation

    path = tmp_path / "long.json"
    path.write_text(json.dumps(long_session(7, every=3)))
    conv = load_conversation(path)
    assert len(conv.sessions) == 1 and len(conv.turns()) == 7
    assert [t.id for t in conv.turns() if t.triples] == ["S1:1", "S1:4", "S1:7"]


def test_damaged_weights_without_a_checksum_are_refused(tmp_path):
    """Sweep F06: 4 KB of an unmarked adapter's weights overwritten in place loaded fine and gave 0
    triples. Random bytes over float32 values give NaN or huge values, which the check refuses."""
    import numpy as np
    import torch
    from safetensors.torch import save_file

    from glong_lib.extraction.inference import check_adapter_weights

    path = tmp_path / "adapter_model.safetensors"
    save_file({"lora_A.weight": torch.full((64, 64), 0.01), "lora_B.weight": torch.full((64, 64), -0.02)}, str(path))
    check_adapter_weights(tmp_path)  # intact: passes
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 4096] = np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match=f"adapter weights are damaged .*delete {tmp_path}$"):
        check_adapter_weights(tmp_path)


def test_an_adapter_that_finds_nothing_in_the_canary_is_refused(tmp_path):
    """The second guard for unmarked adapters: a plain statement must give a triple."""
    from glong_lib.extraction.inference import CANARY, check_canary

    class Silent:
        adapter_dir = tmp_path

        def __init__(self, found):
            self.found, self.asked = found, []

        def extract(self, utterances, speakers=None, progress=True):
            self.asked.append(list(utterances))
            return [self.found for _ in utterances]

    working = Silent([Triple("Maya", "adopted", "cat")])
    check_canary(working)
    assert working.asked == [[CANARY]]
    with pytest.raises(DataError, match=f"finds no triple .*delete {tmp_path}$"):
        check_canary(Silent([]))


# --------------------------------------------------------------------------- the memory's lock (sweep round 3)

def _memory(folder: Path, n_edges: int) -> Path:
    from glong_lib.memory import GraphMemory, HashEncoder

    mem = GraphMemory(encoder=HashEncoder(32))
    mem.add_triples([Triple(f"s{i}", "likes", f"o{i}") for i in range(n_edges)], 10.0, session=1)
    mem.save(folder)
    return folder


def _edges(folder: Path) -> int:
    from glong_lib.memory import GraphMemory, HashEncoder

    return GraphMemory.load(folder, encoder=HashEncoder(32)).stats()["edges"]


def test_query_save_access_never_reverts_a_concurrent_save(tmp_path, monkeypatch, capsys):
    """Sweep R01 (lost update): `query --save-access` loaded the memory, a `build` saved a new one,
    then the query saved the old one back (both exit 0). The ordering is forced, not timed: the
    writer runs exactly between the query's load and its save, from another thread (its own open
    of the lock file, as another process would have), and waits 0 s for the lock (config.LOCK_WAIT_S).
    It must either land in the folder or fail naming the lock; it never silently disappears."""
    import threading

    from glong_lib import config
    from glong_lib.cli import main
    from glong_lib.memory import GraphMemory, HashEncoder, entities
    from glong_lib.retrieval import AssociativeRetriever

    folder = _memory(tmp_path / "m", 4)
    newer = GraphMemory(encoder=HashEncoder(32))
    newer.add_triples([Triple(f"n{i}", "likes", f"o{i}") for i in range(7)], 20.0, session=1)
    monkeypatch.setattr(entities, "load_encoder", lambda *a, **k: HashEncoder(32))
    monkeypatch.setattr(config, "LOCK_WAIT_S", 0, raising=False)
    real_retrieve, outcome = AssociativeRetriever.retrieve, {}

    def writer():
        try:
            newer.save(folder)
            outcome["saved"] = True
        except Exception as e:  # noqa: BLE001 - recorded, judged below
            outcome["error"] = str(e)

    def retrieve(self, *args, **kwargs):
        thread = threading.Thread(target=writer)
        thread.start()
        thread.join()
        return real_retrieve(self, *args, **kwargs)

    monkeypatch.setattr(AssociativeRetriever, "retrieve", retrieve)
    assert main(["query", str(folder), "s1", "--save-access", "--json"]) == 0
    capsys.readouterr()
    if outcome.get("saved"):
        assert _edges(folder) == 7, "the query saved the memory it had loaded over the newer one"
    else:
        assert ".glong.lock" in outcome["error"] and "still locked by" in outcome["error"], outcome
        assert _edges(folder) == 4
        newer.save(folder)  # once the query is done, the writer gets the folder
        assert _edges(folder) == 7


def _stopped_lock_holder(lock: Path):
    """A child process that takes ``lock`` exclusively (writing its pid, as glong does), then is
    stopped with SIGSTOP: it never lets go on its own."""
    import signal
    import subprocess
    import sys

    code = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); fcntl.flock(fd, fcntl.LOCK_EX); "
            "os.write(fd, b'%d' % os.getpid()); print('held', flush=True); sys.stdin.read()")
    child = subprocess.Popen([sys.executable, "-c", code, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout.readline().strip() == "held"
    child.send_signal(signal.SIGSTOP)
    return child


@pytest.mark.parametrize("command", ["build", "query", "query-save", "memory"])
def test_a_memory_locked_by_a_stopped_process_is_one_line_within_wait(tmp_path, monkeypatch, capsys, command):
    """Sweep R02/round 3 (hang): a stopped process holding the memory's lock made `glong build`,
    `query` and `memory` wait with no word and no end. With --wait 0.5 each ends in well under the
    harness's 30 s, with one line naming the lock file and the holder's pid, exit 2, nothing changed."""
    import time

    from glong_lib import models
    from glong_lib.cli import main
    from glong_lib.memory import HashEncoder, entities

    conv = str(Path(__file__).parent.parent / "data" / "conversations" / "c01.json")
    folder = _memory(tmp_path / "m", 4)
    monkeypatch.setattr(entities, "load_encoder", lambda *a, **k: HashEncoder(32))
    monkeypatch.setattr(models, "load_encoder", lambda *a, **k: HashEncoder(32))  # glong build's LazyEncoder
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.name != ".glong.lock"}
    child = _stopped_lock_holder(folder / ".glong.lock")
    try:
        argv = {"build": ["build", conv, "--gold", "--no-salience", "--out", str(folder)],
                "query": ["query", str(folder), "s1"], "query-save": ["query", str(folder), "s1", "--save-access"],
                "memory": ["memory", str(folder)]}[command]
        start = time.monotonic()
        code = main(argv + ["--wait", "0.5"])
        took = time.monotonic() - start
    finally:
        child.kill()
        child.wait()
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(err) == 1, err
    assert f"{folder / '.glong.lock'}: still locked by pid {child.pid}" in err[0] and "--wait" in err[0], err
    assert took < 10, took
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.name != ".glong.lock"} == before


def test_a_save_never_deletes_the_users_files_named_like_version_one_memories(tmp_path):
    """Sweep P06 (data loss): files called memory.json / entities.faiss in a memory folder were
    deleted by the next save. A save deletes only the memory's own content-addressed files (a folder
    holding a format-1 memory is refused: test_persistence.test_format_one_memories_are_refused_in_one_line)."""
    folder = _memory(tmp_path / "m", 4)
    (folder / "memory.json").write_text("{}")
    (folder / "entities.faiss").write_bytes(b"the user's own index")
    _memory(folder, 5)
    assert (folder / "memory.json").read_text() == "{}"
    assert (folder / "entities.faiss").read_bytes() == b"the user's own index"
    assert _edges(folder) == 5


# --------------------------------------------------------------------------- outputs checked before the work

def _one_line(capsys) -> str:
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def _never(what: str):
    def fail(*_, **__):
        raise AssertionError(f"{what} started before the output was checked")
    return fail


def test_an_out_that_is_the_input_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    """Sweep P05 (data loss): `glong extract X --out X` replaced the conversation with its triples;
    `score` the same. Refused by any name for the same file, before a model loads."""
    import glong_lib.extraction
    import glong_lib.salience
    from glong_lib.cli import main

    conv = tmp_path / "conv.json"
    conv.write_bytes((Path(__file__).parent.parent / "data" / "conversations" / "c01.json").read_bytes())
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"conversation": "c01", "session": 1, "turn_id": "S1:1", "speaker": "Maya",
                                "text": "I adopted a cat.", "triples": [{"subject": "maya", "relation": "adopt",
                                                                         "object": "cat"}]}) + "\n")
    monkeypatch.setattr(glong_lib.extraction, "load_extractor", _never("extraction"))
    monkeypatch.setattr(glong_lib.salience, "load_scorer", _never("scoring"))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for argv in (["extract", str(conv), "--out", str(tmp_path / "." / "conv.json")],
                 ["score", str(rows), "--out", str(rows)]):
        assert main(argv) == 2
        assert "is also the command's input" in _one_line(capsys)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder no file can be created in, even by root (``chattr +i``); skipped where neither
    permissions (root ignores them) nor the immutable flag can make one."""
    import subprocess

    folder = tmp_path / "ro"
    folder.mkdir()
    immutable = False
    if os.geteuid() == 0:
        immutable = subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0
        if not immutable:
            pytest.skip("root, and chattr +i is not available here")
    else:
        folder.chmod(0o555)
    yield folder
    if immutable:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    folder.chmod(0o755)


def test_an_output_folder_that_cannot_be_written_is_found_before_the_work(read_only_folder, monkeypatch, capsys):
    """Sweep P10/P11: train-extractor trained, then a PermissionError traceback; eval-msc ran, then
    'cannot write here' and the results were discarded. Both now stop before the work."""
    import glong_lib.extraction
    import glong_lib.models
    from glong_lib.cli import main

    monkeypatch.setattr(glong_lib.extraction, "train_extractor", _never("training"))
    monkeypatch.setattr(glong_lib.models, "seed_everything", _never("the evaluation"))
    for argv in (["train-extractor", "--max-steps", "1", "--out", str(read_only_folder / "adapter")],
                 ["eval-msc", "--generator", "echo", "--conversations", "1", "--no-salience",
                  "--out", str(read_only_folder / "out.json")]):
        assert main(argv) == 2
        assert f"{read_only_folder}" in (line := _one_line(capsys)) and "cannot write here" in line, line
    assert list(read_only_folder.iterdir()) == []


# --------------------------------------------------------------------------- adapter markers (sweep P08)

def _with_alarm(seconds: int, call):
    """``call()``, failing instead of hanging (a FIFO opened for reading blocks until a writer comes)."""
    import signal

    def timeout(*_):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(seconds)
    try:
        return call()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("plant", ["absolute path", "parent path", "fifo", "symlink", "folder"])
def test_a_crafted_adapter_marker_never_opens_what_it_names(tmp_path, plant):
    """Sweep P08 (security): verify_artifact joined any name from .glong-artifact.json, so a
    downloaded adapter could make glong open /dev/zero (spins) or a FIFO (blocks forever). Only
    regular files beside the marker, by plain name, are read."""
    folder = _artifact(tmp_path / "adapter", {"adapter_model.safetensors": "weights"})
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the adapter")
    marker = json.loads((folder / ARTIFACT_MARKER).read_text())
    name = {"absolute path": str(secret), "parent path": "../secret.txt", "fifo": "pipe", "symlink": "link",
            "folder": "sub"}[plant]
    if plant == "fifo":
        os.mkfifo(folder / "pipe")
    elif plant == "symlink":
        (folder / "link").symlink_to(secret)
    elif plant == "folder":
        (folder / "sub").mkdir()
    marker["sha256"][name] = "0" * 64
    (folder / ARTIFACT_MARKER).write_text(json.dumps(marker))
    with pytest.raises(DataError) as info:
        _with_alarm(10, lambda: verify_artifact(folder, "adapter"))
    assert "not a regular file beside it" in str(info.value), str(info.value)
    assert str(folder) in str(info.value)


def test_a_huge_adapter_marker_is_not_read(tmp_path):
    folder = _artifact(tmp_path / "adapter", {"adapter_model.safetensors": "weights"})
    (folder / ARTIFACT_MARKER).write_text(json.dumps({"kind": "x", "sha256": {}, "pad": "x" * (2 << 20)}))
    with pytest.raises(DataError, match="is damaged"):
        verify_artifact(folder, "adapter")


@pytest.mark.parametrize("where", ["last line", "middle line", "first line"])
def test_a_checkpoint_with_a_5000_digit_number_is_one_line(tmp_path, where):
    """Sweep N03: `--resume` from a checkpoint holding a 5,000-digit number crashed with Python's
    'Exceeds the limit (4300 digits)' ValueError traceback."""
    from glong_lib.checkpoints import Checkpoint

    path = tmp_path / "ck.jsonl"
    Checkpoint(path, {"k": 5}).add("q1", [1])
    big = "7" * 5000
    lines = path.read_text().splitlines()
    if where == "first line":
        lines[0] = '{"checkpoint": {"k": ' + big + "}}"
    else:
        lines.insert(1, '{"key": "q0", "value": [' + big + "]}")
        lines = lines if where == "middle line" else lines[:2]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match="corrupt checkpoint|not a glong checkpoint"):
        Checkpoint(path, {"k": 5}, resume=True)


# --------------------------------------------------------------------------- cold-cache conversion (P02-P04)

class _FakeModel:
    """Stands in for transformers' classes in the SmolLM2 conversion: what it saves is one small
    config.json (or, with ``fail``, an OSError such as a full disk)."""

    fail = None
    config = type("C", (), {"to_dict": staticmethod(lambda: {"model_type": "llama"})})()
    generation_config = None

    @classmethod
    def from_pretrained(cls, *_, **__):
        return cls()

    from_config = from_pretrained

    @staticmethod
    def for_model(**_):
        return None

    def state_dict(self):
        return {}

    def load_state_dict(self, _):
        pass

    def save_pretrained(self, folder):
        if _FakeModel.fail:
            raise _FakeModel.fail
        Path(folder, "config.json").write_text('{"converted": true}')


@pytest.fixture
def fake_conversion(tmp_path, monkeypatch):
    import transformers

    from glong_lib import models

    for name in ("AutoConfig", "AutoModelForCausalLM", "AutoTokenizer"):
        monkeypatch.setattr(transformers, name, _FakeModel)
    monkeypatch.setattr(models, "smollm2_gguf_path", lambda: tmp_path / "bundled" / "smollm2.gguf")
    monkeypatch.setenv("GLONG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(_FakeModel, "fail", None)
    (tmp_path / "cache" / "models").mkdir(parents=True)
    return tmp_path / "cache" / "models"


def test_cache_conversion_never_writes_through_a_planted_symlink(tmp_path, fake_conversion):
    """Sweep P03 (security): a link at the fixed temporary name SmolLM2-135M-Instruct.tmp made the
    conversion write the model into the folder it pointed to (overwriting its config.json)."""
    from glong_lib.models import smollm2_dir

    mine = tmp_path / "mydir"
    mine.mkdir()
    (mine / "config.json").write_text("the user's")
    (fake_conversion / "SmolLM2-135M-Instruct.tmp").symlink_to(mine)
    target = smollm2_dir()
    assert (mine / "config.json").read_text() == "the user's" and sorted(p.name for p in mine.iterdir()) == [
        "config.json"]
    assert json.loads((target / "config.json").read_text()) == {"converted": True} and not target.is_symlink()


def test_cache_conversion_on_a_full_disk_is_one_line_and_leaves_nothing(fake_conversion):
    """Sweep P02: ENOSPC gave a traceback and left a half-written .tmp folder."""
    from glong_lib.models import smollm2_dir

    _FakeModel.fail = OSError(28, "No space left on device")
    with pytest.raises(DataError, match="cannot build the converted SmolLM2 in the cache .*No space left"):
        smollm2_dir()
    assert [p.name for p in fake_conversion.iterdir() if not p.name.endswith(".lock")] == []


def test_a_conversion_another_process_is_doing_is_waited_for_not_repeated(fake_conversion, monkeypatch):
    """Sweep P04: two cold-cache commands at once converted into one temporary folder (a
    SafetensorError traceback, a 538 MB stray file in the published model). Now the second waits
    for the first's lock (here: gives up at once, naming its pid) and never converts beside it;
    once the first has published, the second uses its model."""
    import subprocess
    import sys

    from glong_lib import config
    from glong_lib.models import smollm2_dir

    lock = fake_conversion / ".SmolLM2-135M-Instruct.lock"
    code = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); fcntl.flock(fd, fcntl.LOCK_EX); "
            "os.write(fd, b'%d' % os.getpid()); print('held', flush=True); sys.stdin.read()")
    first = subprocess.Popen([sys.executable, "-c", code, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert first.stdout.readline().strip() == "held"
        monkeypatch.setattr(config, "CACHE_LOCK_WAIT_S", 0, raising=False)
        with pytest.raises(DataError, match=f"still locked by pid {first.pid}"):
            smollm2_dir()
        assert [p.name for p in fake_conversion.iterdir()] == [lock.name]  # nothing converted beside it
        (fake_conversion / "SmolLM2-135M-Instruct").mkdir()
        (fake_conversion / "SmolLM2-135M-Instruct" / "config.json").write_text('{"first": true}')
    finally:
        first.communicate("")
    _FakeModel.fail = AssertionError("converted a second time")
    assert json.loads((smollm2_dir() / "config.json").read_text()) == {"first": True}


# --------------------------------------------------------------------------- the cached responder adapter (Q04, Q05)

@pytest.mark.parametrize("damage", ["same size", "truncated"])
def test_a_damaged_responder_adapter_is_one_line(tmp_path, monkeypatch, damage):
    """Sweep Q05/Q04: generation.local loaded the responder adapter with no check: same-size damage
    was used silently, a truncated file was a SafetensorError traceback. Now it is verified like the
    extractor's adapter (before the base model loads) and loaded inside models.loading()."""
    import peft

    from glong_lib.generation import local

    folder = _artifact(tmp_path / "responder", {"adapter_config.json": "{}", "adapter_model.safetensors": "w" * 64})
    loads = []
    monkeypatch.setattr(local, "load_causal_lm", lambda *a, **k: loads.append(a) or (None, object()))
    if damage == "same size":
        (folder / "adapter_model.safetensors").write_text("X" * 64)
    else:
        (folder / ARTIFACT_MARKER).unlink()  # an unmarked adapter: only the loader can find the damage

        def unreadable(*_, **__):
            raise ValueError("Error while deserializing header: MetadataIncompleteBuffer")
        monkeypatch.setattr(peft.PeftModel, "from_pretrained", unreadable)
    generator = local.LocalChatGenerator(adapter=str(folder))
    with pytest.raises(DataError, match=f"cached responder adapter is damaged .*delete {folder}"):
        generator.tokenizer
    assert loads == [] or damage == "truncated"  # a marked adapter is checked before the base model loads


# --------------------------------------------------------------------------- interrupting (Ctrl-C)

def test_ctrl_c_on_glong_notebooks_is_one_line_and_keeps_the_earlier_output(tmp_path):
    """Sweep S05: Ctrl-C on `glong notebooks` printed the kernel's 20-line traceback under the one
    line; papermill had also half-rewritten the executed notebook (with --inplace: a committed one).
    The kernel's stderr now goes to kernels.log, and a notebook is renamed into place only when its
    run ends. The signal is sent once the cell is running (it says so in a file)."""
    import signal
    import subprocess
    import sys
    import time

    import nbformat

    books, out, started = tmp_path / "books", tmp_path / "out", tmp_path / "started"
    books.mkdir()
    out.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"open({str(started)!r}, 'w').close()\nimport time\ntime.sleep(300)")]
    nbformat.write(nb, str(books / "00_sleep.ipynb"))
    (out / "00_sleep.ipynb").write_text("the previous run's notebook")
    code = ("import sys; from glong_lib.cli import main; "
            "sys.exit(main(['notebooks', '--folder', sys.argv[1], '--out', sys.argv[2]]))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent.parent),
                                                        os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen([sys.executable, "-c", code, str(books), str(out)], stderr=subprocess.PIPE, text=True,
                             env=env, start_new_session=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 180
        while not started.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)  # waiting for the kernel to run the cell, not timing the test
        assert started.exists(), "the notebook never started"
        os.killpg(child.pid, signal.SIGINT)  # what the terminal sends to the foreground process group
        _, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    lines = [line for line in err.splitlines() if line.strip()]
    assert child.returncode == 130 and len(lines) == 1, err[-2000:]
    assert lines[0].startswith("glong notebooks: interrupted"), lines
    assert (out / "00_sleep.ipynb").read_text() == "the previous run's notebook"
    assert sorted(p.name for p in out.iterdir()) == ["00_sleep.ipynb", "kernels.log"]


@pytest.mark.parametrize("argv, hint", [
    (["eval-retrieval", "--probes", "--methods", "bm25", "--checkpoint", "CK"], "kept in CK: run the same command "
                                                                                 "with --resume"),
    (["build", "X", "--gold", "--out", "M"], "M is as it was before"),
])
def test_an_interrupted_command_says_what_is_kept_and_how_to_go_on(monkeypatch, capsys, argv, hint):
    from glong_lib import cli

    def interrupted(args):
        raise KeyboardInterrupt

    parser = cli.build_parser()
    args = parser.parse_args(argv)
    monkeypatch.setattr(args, "func", interrupted)
    monkeypatch.setattr(cli, "build_parser", lambda: type("P", (), {"parse_args": lambda self, _: args})())
    assert cli.main(argv) == 130
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"glong {argv[0]}: interrupted") and hint in err and "\n" not in err, err


def test_an_empty_glong_cache_means_unset_everywhere(tmp_path, monkeypatch):
    """Sweep P01: GLONG_CACHE='' silently meant the current folder for the library, while the
    notebook runner treated it as unset. Both now use ~/.cache/glong."""
    from glong_lib.models import cache_dir

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GLONG_CACHE", "")
    assert cache_dir("models") == tmp_path / "home" / ".cache" / "glong" / "models"
    assert not (tmp_path / "models").exists()


def test_an_entity_typed_with_a_combining_accent_is_the_same_entity():
    """Sweep U01: names were not NFC-normalised, so 'café' with a combining accent (e + U+0301)
    and with the precomposed é were two entities that print identically."""
    from glong_lib.memory import GraphMemory, HashEncoder
    from glong_lib.text import normalise_entity

    assert normalise_entity("Cafe\u0301 Luna") == normalise_entity("Caf\u00e9 Luna") == "caf\u00e9 luna"
    mem = GraphMemory(encoder=HashEncoder(32))
    mem.add_triples([Triple("maya", "like", "cafe\u0301"), Triple("leo", "like", "caf\u00e9")], 1.0, session=1)
    assert [e for e in mem.entities if e.startswith("caf")] == ["caf\u00e9"]


def test_sigterm_runs_the_same_cleanup_and_line_as_ctrl_c(tmp_path, monkeypatch, capsys):
    """SIGTERM (a scheduler's or `kill`'s) ended the process at once: no cleanup of temporary
    files, no word. It now raises like Ctrl-C: one line saying what is kept, exit 143, and the
    command's own cleanup runs (here: a checkpoint's finished part stays, named in the line)."""
    import signal

    from glong_lib import cli

    cleaned = []

    def long_command(args):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler raises at the next bytecode
                pass
        finally:
            cleaned.append(True)

    real = cli.build_parser

    def parser():
        p = real()
        parse = p.parse_args

        def parse_args(argv):
            args = parse(argv)
            args.func = long_command
            return args
        p.parse_args = parse_args
        return p

    monkeypatch.setattr(cli, "build_parser", parser)
    before = signal.getsignal(signal.SIGTERM)
    ck = tmp_path / "ck.jsonl"
    assert cli.main(["eval-retrieval", "--probes", "--methods", "bm25", "--checkpoint", str(ck)]) == 143
    err = capsys.readouterr().err.strip()
    assert err == (f"glong eval-retrieval: terminated; the finished part is kept in {ck}: run the same command "
                   f"with --resume to go on") and cleaned == [True]
    assert signal.getsignal(signal.SIGTERM) == before
