"""Profiles, model resolution (hub ids served from a local folder), device choice and seeding."""

from __future__ import annotations

import os
import shutil

import pytest

from glong_lib import config, models


def test_profiles_roles_and_paper_settings():
    assert set(config.PROFILES) == {"offline", "hub", "paper"}
    x = config.get_profile("paper").extractor
    assert (x.base, x.lora_r, x.lora_alpha, x.epochs, x.learning_rate, x.quantize_4bit) == (
        "Qwen/Qwen3-8B", 32, 32, 10, 2e-4, True)
    paper_summarizer = config.get_profile("paper").summarizer.model
    assert paper_summarizer == config.get_profile("hub").summarizer.model == "chanifrusydi/t5-dialogue-summarization"
    assert config.get_profile("offline").encoder == config.BUNDLED_MINILM
    with pytest.raises(ValueError, match="unknown profile"):
        config.get_profile("nope")


def test_resolve_model_prefers_local_folder(tmp_path, monkeypatch):
    (tmp_path / "org" / "model").mkdir(parents=True)
    monkeypatch.setenv("GLONG_MODELS_DIR", str(tmp_path))
    assert models.resolve_model("org/model") == str(tmp_path / "org" / "model")
    assert models.resolve_model("org/other") == "org/other"
    with pytest.raises(ValueError):
        models.resolve_model(config.BUNDLED_MINILM)


def test_cache_dir_follows_env(tmp_path, monkeypatch):
    monkeypatch.setenv("GLONG_CACHE", str(tmp_path / "c"))
    assert models.cache_dir("x") == tmp_path / "c" / "x" and (tmp_path / "c" / "x").is_dir()


def test_device_and_seed():
    import numpy as np
    import torch

    assert models.choose_device("cpu") == "cpu"
    assert models.choose_device() in {"cpu", "cuda", "mps"}
    models.seed_everything(7)
    a = (torch.rand(3), np.random.rand(3))
    models.seed_everything(7)
    b = (torch.rand(3), np.random.rand(3))
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_bundled_files_found():
    assert models.smollm2_gguf_path().suffix == ".gguf"
    assert (models.minilm_path() / "config.json").is_file() or any(models.minilm_path().iterdir())


@pytest.mark.slow
def test_offline_encoder_embeds():
    enc = models.load_encoder("offline")
    v = enc.encode(["I moved to Denver", "I relocated to Denver", "my cat is grey"], normalize_embeddings=True)
    assert v.shape == (3, 384)
    assert v[0] @ v[1] > v[0] @ v[2]


@pytest.mark.slow
def test_offline_lm_converted_once_and_generates():
    import torch

    path = models.smollm2_dir()
    assert (path / "model.safetensors").is_file() and (path / "tokenizer.json").is_file()
    tok, model = models.load_causal_lm()
    ids = tok.apply_chat_template([{"role": "user", "content": "Say hello."}], add_generation_prompt=True,
                                  return_tensors="pt", return_dict=True)
    with torch.no_grad():
        out = model.generate(**ids, max_new_tokens=5, do_sample=False)
    assert out.shape[1] > ids["input_ids"].shape[1]


@pytest.mark.slow
def test_converting_smollm2_leaves_the_seeded_random_stream_alone(tmp_path):
    """A cold cache converts SmolLM2 (building a randomly initialised model); the numbers drawn
    after it must be those a warm cache gives, or training after a first use starts elsewhere."""
    import torch

    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    models._convert_smollm2(tmp_path)
    assert (tmp_path / "model.safetensors").is_file()
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.slow
def test_hub_profile_loads_from_local_model_dirs(tmp_path, monkeypatch):
    """The hub code path, exercised offline: hub ids resolve to locally saved model folders."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    hub = config.get_profile("hub")
    # encoder: a local copy of MiniLM saved under the hub id
    enc_dir = tmp_path / hub.encoder
    shutil.copytree(models.minilm_path(), enc_dir)
    # generator: a tiny randomly initialised Llama with SmolLM2's tokenizer, saved under the hub id
    gen_dir = tmp_path / hub.generator.model
    tok = AutoTokenizer.from_pretrained(models.smollm2_dir())
    cfg = AutoConfig.for_model("llama", vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                                  num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
    AutoModelForCausalLM.from_config(cfg).save_pretrained(gen_dir)
    tok.save_pretrained(gen_dir)
    monkeypatch.setenv("GLONG_MODELS_DIR", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    enc = models.load_encoder("hub")
    assert enc.encode(["hello"]).shape == (1, 384)
    tok2, model = models.load_causal_lm(hub.generator.model)
    assert model.config.num_hidden_layers == 1 and tok2.padding_side == "left"
    assert os.path.samefile(models.causal_lm_path(hub.generator.model), gen_dir)
