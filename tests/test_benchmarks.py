"""Every benchmark runs at its smallest size (``--quick``) and writes the keys its consumers read, so
a library change that breaks one fails here instead of months later. Quick modes need no real data
(``GLONG_REAL_DATA`` is removed for these tests); the two that train and load the extractor are
``slow``. The shared harness is checked by hand."""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest

from benchmarks import _common as H


@pytest.fixture(autouse=True)
def no_real_data(monkeypatch):
    monkeypatch.delenv(H.REAL_DATA_ENV, raising=False)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """``quick(name)``: the JSON output of ``benchmarks.<name> --quick --json PATH``, run once per
    module in this process (no real data)."""
    outputs: dict[str, dict] = {}

    def run(name: str) -> dict:
        if name not in outputs:
            out = tmp_path_factory.mktemp("bench") / f"{name}.json"
            with pytest.MonkeyPatch.context() as m:
                m.delenv(H.REAL_DATA_ENV, raising=False)
                assert importlib.import_module(f"benchmarks.{name}").main(["--quick", "--json", str(out)]) == 0
            outputs[name] = json.loads(out.read_text())
        return outputs[name]

    return run


# --------------------------------------------------------------------------- the harness

def test_percentiles_by_hand():
    # 1..20 ms: median 10.5; p95 at the nearest rank below 0.95 * 19 = 18.05 -> index 18 -> 19 ms
    assert H.percentiles([i / 1000 for i in range(1, 21)]) == {"p50_ms": 10.5, "p95_ms": 19.0}


def test_time_calls_one_duration_per_input_in_order():
    seen = []
    seconds = H.time_calls(seen.append, ["a", "b", "c"])
    assert seen == ["a", "b", "c"] and len(seconds) == 3 and all(s >= 0 for s in seconds)


def test_fake_encoder_is_the_cached_hash_encoder():
    enc = H.fake_encoder(dim=16)
    v = enc.encode(["x", "y", "x"])
    assert v.shape == (3, 16) and np.allclose(v[0], v[2]) and np.allclose(np.linalg.norm(v, axis=1), 1)
    assert set(enc.vectors) == {"x", "y"}  # each distinct text encoded once


def test_real_data_dir(tmp_path, monkeypatch):
    assert H.real_data_dir() is None  # unset
    (tmp_path / "msc").mkdir()
    monkeypatch.setenv(H.REAL_DATA_ENV, str(tmp_path))
    assert H.real_data_dir("msc") == tmp_path / "msc"
    assert H.real_data_dir("locomo", "locomo_dev.json") is None  # set, but not holding it


def test_every_benchmark_has_a_smoke_test():
    from pathlib import Path

    scripts = {p.stem for p in (Path(H.__file__).parent).glob("bench_*.py")}
    assert scripts == set(QUICK_KEYS) | set(SLOW_KEYS)


# --------------------------------------------------------------------------- each benchmark, --quick

#: The keys each quick run's JSON must hold (what the README, notebooks and the full runs report).
QUICK_KEYS = {
    "bench_memory": {"rows"},
    "bench_parser": {"sizes", "rows", "slowest glong s"},
    "bench_retrieval": {"latency"},
    "bench_msc": {"settings", "summary", "table1", "tokens", "records", "comparison", "run"},
    "bench_salience": {"chosen_on_selection", "report", "layer_curve_select", "summary_length_curve",
                       "chosen_rows", "added_value", "grounded", "planted"},
    "bench_anchor_reach": {"skipped"},
    "bench_tokens": {"runs"},
    "bench_graph": {"probes"},
    "bench_answers": {"table", "minus flat", "seconds"},
    "bench_server": {"latency_ms", "rows"},
}
SLOW_KEYS = {
    "bench_extraction": {"profile", "gold", "utterances/s by batch size"},
    "bench_extractor_steps": {"rows", "sizes", "train_seconds"},
    "bench_notebooks": {"rows", "smoke"},
    "bench_retrained_adapter": {"weights", "identical outputs", "differing outputs", "scores"},
}


@pytest.mark.slow  # each runs a benchmark script: seconds to a minute, some load SmolLM2's tokenizer
@pytest.mark.parametrize("name", sorted(QUICK_KEYS))
def test_quick_run_writes_its_keys(name, quick):
    assert QUICK_KEYS[name] <= set(quick(name))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW_KEYS))
def test_quick_run_with_the_smoke_extractor(name, quick):
    assert SLOW_KEYS[name] <= set(quick(name))


@pytest.mark.slow
def test_an_adapter_compared_with_itself_differs_nowhere(quick):
    out = quick("bench_retrained_adapter")
    assert out["weights"]["identical tensors"] == out["weights"]["tensors"] > 0
    assert out["differing outputs"] == 0 and out["identical outputs"] == out["turns"] == 4
    assert out["scores"]["shipped"] == out["scores"]["re-trained"]


def test_quick_answers_score_every_method_on_the_same_questions(quick):
    table = [r for r in quick("bench_answers")["table"] if r["category"] == "all"]
    assert [r["method"] for r in table] == ["no memory", "G-Long (recommended)", "flat", "dense over turns"]
    assert len({r["questions"] for r in table}) == 1
    # the echo generator answers with the first memory line: nothing without memory, something with it
    assert table[0]["F1"] == 0 and all(0 < r["F1"] <= 1 for r in table[1:])


def test_quick_values_are_sane(quick):
    memory = quick("bench_memory")["rows"]
    assert {r["policy"] for r in memory} == {"append", "supersede"} and all(r["edges"] == 1000 for r in memory)
    latency = quick("bench_retrieval")["latency"][0]
    assert latency["edges"] == 1000 and 0 < latency["glong"]["p50_ms"] <= latency["glong"]["p95_ms"]
    parser = quick("bench_parser")
    assert parser["sizes"] == [1_000, 10_000] and parser["slowest glong s"] < 1
    salience = quick("bench_salience")
    assert salience["chosen_on_selection"]["decoder dialogue"] in {
        k.split(" (chosen: ")[1][:-1] for k in salience["report"] if k.startswith("decoder dialogue (")}


def test_bench_msc_is_eval_msc_with_a_preset(tmp_path, quick):
    from benchmarks.bench_msc import PRESET, eval_msc_args

    args = eval_msc_args(["--json", str(tmp_path / "m.json"), "--methods", "glong"])
    assert args[0] == "eval-msc" and args[1:1 + len(PRESET)] == PRESET
    assert args[-2:] == ["--methods", "glong"]  # the caller's options come last, so they win
    assert ["--out", str(tmp_path / "m.json")] == args[args.index("--out"):args.index("--out") + 2]
    data = quick("bench_msc")
    methods = {r["method"] for r in data["summary"]}
    assert {"G-Long", "Long context", "G-Long, ranked memory lines", "G-Long, context never reset"} <= methods
    assert data["comparison"]["glong_vs_long_context"]["prompt-token reduction"] > 0
