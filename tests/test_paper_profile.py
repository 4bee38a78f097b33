"""The paper profile checked offline where it differs from the others: the Qwen3 chat template
(thinking switched off) and the extraction decode budget on a tiny randomly initialised Qwen3 built
here (no download), the T5 scorer's limits from the reference code, and a clear word about the
weights that are not on this machine (notebook 00 with ``PROFILE = "paper"``)."""

from __future__ import annotations

import json

import pytest

import glong_lib.extraction as ex
from glong_lib.config import get_profile, with_overrides
from glong_lib.errors import WeightsUnavailable

# A Qwen3-style chat template written for this test: it renders system, user and assistant turns as
# Qwen3's does (ChatML; the last assistant turn after an empty think block) and, with
# enable_thinking=False, ends the generation prompt with the empty think block that switches thinking off.
QWEN3_STYLE_TEMPLATE = (
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' %}"
    "{{- '<|im_start|>assistant\\n' }}{%- if loop.last %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
    "{{- m.content + '<|im_end|>\\n' }}"
    "{%- else %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
    "{%- endif %}"
)


@pytest.fixture
def tiny_qwen3(tmp_path, monkeypatch):
    """A 2-layer Qwen3 with random weights and a ChatML tokenizer with Qwen3's think tokens, saved where
    the paper profile looks for ``Qwen/Qwen3-8B`` ($GLONG_MODELS_DIR); returns the paper profile with
    4-bit loading off (this machine has no CUDA)."""
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    from glong_lib.models import smollm2_dir

    target = tmp_path / "models" / "Qwen" / "Qwen3-8B"
    tok = AutoTokenizer.from_pretrained(str(smollm2_dir()))  # a BPE vocabulary with <|im_start|>/<|im_end|>
    tok.add_tokens(["<think>", "</think>"])
    tok.chat_template = QWEN3_STYLE_TEMPLATE
    torch.manual_seed(0)
    config = Qwen3Config(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=1024,
                         eos_token_id=tok.convert_tokens_to_ids("<|im_end|>"), tie_word_embeddings=True)
    Qwen3ForCausalLM(config).save_pretrained(target)
    tok.save_pretrained(target)
    monkeypatch.setenv("GLONG_MODELS_DIR", str(tmp_path / "models"))
    return with_overrides("paper", extractor__quantize_4bit=False)


@pytest.mark.slow
def test_qwen3_prompt_template_and_decode_budget(tiny_qwen3):
    profile = tiny_qwen3
    extractor = ex.load_extractor(profile, zero_shot=True, device="cpu")
    assert type(extractor.model).__name__ == "Qwen3ForCausalLM"
    tok = extractor.tokenizer
    # the extraction prompt through the chat template, thinking off: it ends in the empty think block
    prompt = ex.render_prompt(tok, "I love playing tennis on weekends.")
    assert prompt.startswith("<|im_start|>system\n" + ex.SYSTEM_PROMPT)
    assert "Extract triplets:\nI love playing tennis on weekends." in prompt
    assert prompt.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    # a training example renders the prompt as its prefix; the loss sees the answer only
    target = '[{"subject": "i", "relation": "like_activity", "object": "tennis"}]'
    example = ex.tokenize_example(tok, "I love playing tennis on weekends.", target)
    n_prompt = len(tok(prompt, add_special_tokens=False)["input_ids"])
    assert example["labels"][:n_prompt] == [-100] * n_prompt
    # (this stand-in's GPT-2 pre-tokenizer splits the seam "\n\n[" as "\n" + "\n" + "[": one newline of the
    # prompt falls on the answer's side; Qwen's own pre-tokenizer keeps "\n\n" whole)
    assert tok.decode(example["input_ids"][n_prompt:]).lstrip("\n").startswith(target)
    # the decoding budget is the profile's (the reference code's 512), not a constant
    assert get_profile("paper").extractor.max_new_tokens == 512 == extractor.max_new_tokens
    short = ex.load_extractor(with_overrides(profile, extractor__max_new_tokens=5), zero_shot=True, device="cpu")
    calls, generate = [], short.model.generate
    short.model.generate = lambda **kw: calls.append(kw["max_new_tokens"]) or generate(**kw)
    outputs = short.generate(["I have two dogs.", "My sister is a nurse."], progress=False)
    assert calls == [5] and all(len(tok(o, add_special_tokens=False)["input_ids"]) <= 5 for o in outputs)


def test_paper_t5_limits_follow_the_reference_code():
    """1024 input tokens, 4 beams, a summary of 10-150 tokens counted with the decoder's start token
    (149 and 9 new tokens); the other profiles keep their CPU caps."""
    s = get_profile("paper").summarizer
    assert (s.max_input_tokens, s.num_beams, s.max_new_tokens, s.min_new_tokens) == (1024, 4, 149, 9)
    hub = get_profile("hub").summarizer
    assert (hub.max_input_tokens, hub.max_new_tokens, hub.min_new_tokens) == (512, 48, 5)


def test_the_scorer_reads_its_limits_from_the_profile(monkeypatch):
    from glong_lib.salience import encoder_decoder

    monkeypatch.setattr(encoder_decoder, "load_summarizer", lambda profile: (_FastTokenizer(), _Model(), "t5"))
    scorer = encoder_decoder.load_seq2seq_scorer("paper")
    limits = (scorer.max_input_tokens, scorer.num_beams, scorer.max_new_tokens, scorer.min_new_tokens)
    assert limits == (1024, 4, 149, 9)
    assert encoder_decoder.load_seq2seq_scorer("paper", max_new_tokens=20).max_new_tokens == 20


class _FastTokenizer:
    is_fast = True


class _Model:
    def eval(self):
        return self


def test_missing_weights_are_named_not_crashed_on(tmp_path, monkeypatch):
    from glong_lib.models import load_causal_lm, load_encoder

    monkeypatch.setenv("GLONG_MODELS_DIR", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(WeightsUnavailable, match="no local weights.*base_url"):
        load_causal_lm(get_profile("paper").generator.model)
    where = f"GLONG_MODELS_DIR/sentence-transformers/all-MiniLM-L6-v2.*{tmp_path}"
    with pytest.raises(WeightsUnavailable, match=where):
        load_encoder("paper")


@pytest.mark.slow
def test_notebook_00_runs_under_the_paper_profile_without_weights(tmp_path, monkeypatch):
    from glong_lib.notebook_runner import run_notebooks

    monkeypatch.setenv("GLONG_MODELS_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # no weights anywhere: an empty hub cache too (another test of the session may have filled the shared one)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-empty"))
    # a profile left in the environment (Colab's setup cell sets one) must not override the runner's
    monkeypatch.setenv("GLONG_PROFILE", "offline")
    (run,) = run_notebooks(smoke=True, profile="paper", out=tmp_path / "out", only=["00"], log=lambda *_: None)
    nb = json.loads(run.output.read_text())
    outputs = [o for c in nb["cells"] for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join("".join(o.get("text", "")) for o in outputs)
    assert "sentence-transformers/all-MiniLM-L6-v2 needs its weights" in text
    assert "openai:gpt-4o-mini is served by an OpenAI-compatible API" in text
