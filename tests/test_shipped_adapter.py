"""The offline extractor adapter ships inside the package (data/extractor/offline): a class or a Colab
CPU runtime cannot wait the ~40 minutes (2,421 s recorded) its 400 LoRA steps take on 2 cores. Its ``training.json``
records the recipe key; a change of recipe (steps, pairs, prompt, LoRA settings, seed, base model) fails
here until the adapter is re-trained (docs/development.md: ``glong train-extractor --out DIR``, keep the
adapter files, training.json and the marker)."""
import json

import pytest

from glong_lib.artifacts import ARTIFACT_MARKER, verify_artifact
from glong_lib.extraction import load_pairs, read_training_log, shipped_adapter, train_extractor, train_settings
from glong_lib.extraction.training import SHIPPED_ADAPTER
from glong_lib.io import data_dir

FOLDER = data_dir().joinpath(*SHIPPED_ADAPTER)
SHIPPED_FILES = {"adapter_config.json", "adapter_model.safetensors", "training.json", ARTIFACT_MARKER}


def test_the_shipped_adapter_matches_the_training_recipe():
    log = read_training_log(FOLDER)
    recipe = train_settings(load_pairs(), "offline")
    assert log.get("key") == recipe.key(), (
        "the offline training recipe changed since the shipped adapter was trained: re-train it with "
        "`glong train-extractor --out <new folder>` and replace data/extractor/offline (see docs/development.md)")
    assert log["settings"]["max_steps"] == 400 and log["profile"] == "offline"


def test_the_shipped_adapter_is_small_complete_and_unchanged():
    assert {p.name for p in FOLDER.iterdir()} == SHIPPED_FILES  # no tokenizer copy: it is the base model's
    size = sum(p.stat().st_size for p in FOLDER.iterdir())
    assert size < 25 * 2**20, f"shipped adapter is {size / 2**20:.1f} MB"
    recorded = json.loads((FOLDER / ARTIFACT_MARKER).read_text())["sha256"]
    assert set(recorded) == SHIPPED_FILES - {ARTIFACT_MARKER}
    verify_artifact(FOLDER, "adapter")  # every file's checksum


def test_train_extractor_answers_the_default_recipe_without_training(monkeypatch):
    import transformers

    def no_training(*a, **k):
        raise AssertionError("train_extractor trained although the adapter ships in the package")

    monkeypatch.setattr(transformers, "Trainer", no_training)
    assert train_extractor(load_pairs(), "offline") == FOLDER


def test_any_other_recipe_misses_the_shipped_adapter():
    pairs = load_pairs()
    assert shipped_adapter(train_settings(pairs, "offline")) == FOLDER
    for other in (train_settings(pairs, "offline", max_steps=399), train_settings(pairs, "offline", seed=7),
                  train_settings(pairs[:-1], "offline"), train_settings(pairs, "offline", learning_rate=2e-3)):
        assert shipped_adapter(other) is None
    assert shipped_adapter(train_settings(pairs, "hub")) is None


@pytest.mark.slow
def test_the_shipped_adapter_extracts():
    from glong_lib.extraction import load_extractor

    extractor = load_extractor("offline")
    assert extractor.adapter_dir == FOLDER
    triples = extractor.extract(["I have two dogs and I work as a nurse."])[0]
    assert triples, "the shipped adapter extracted nothing from a plain statement"
