"""``glong train-extractor --merge-out``: the adapter merged into the base model (peft
merge_and_unload + save_pretrained + the tokenizer) is a plain model that answers as base + adapter."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


def test_the_merged_copy_answers_as_base_plus_adapter(tmp_path):
    import dataclasses

    import torch
    from peft import PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from glong_lib.artifacts import ARTIFACT_MARKER
    from glong_lib.extraction import lora_config, merge_adapter
    from glong_lib.models import BUNDLED_SMOLLM2, causal_lm_path

    path = causal_lm_path(BUNDLED_SMOLLM2)
    base = AutoModelForCausalLM.from_pretrained(path)
    config = dataclasses.replace(lora_config("offline"), init_lora_weights=False)  # random B: not the identity
    get_peft_model(base, config).save_pretrained(str(tmp_path / "adapter"))
    out = merge_adapter("offline", tmp_path / "adapter", tmp_path / "merged")
    assert (out / ARTIFACT_MARKER).is_file() and (out / "tokenizer_config.json").is_file()
    ids = AutoTokenizer.from_pretrained(str(out))("I adopted a cat named Tom.", return_tensors="pt")["input_ids"]
    merged = AutoModelForCausalLM.from_pretrained(str(out)).eval()
    wrapped = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(path), str(tmp_path / "adapter")).eval()
    plain = AutoModelForCausalLM.from_pretrained(path).eval()
    with torch.no_grad():
        a, b, c = (m(input_ids=ids).logits for m in (merged, wrapped, plain))
    assert torch.allclose(a, b, atol=1e-3) and not torch.allclose(a, c, atol=1e-3)
