"""Training a responder: SmolLM2-135M with a LoRA adapter fine-tuned to answer from its memory lines
(issue 28's third candidate). :class:`~glong_lib.generation.LocalChatGenerator` loads the adapter
(``adapter=``).

This module takes ready training examples (a chat prompt and the gold reply) and trains on them with
the LoRA machinery it shares with the extractor (``glong_lib.lora``): the loss is on the reply tokens
only, and the adapter lands in the cache under the hash of its settings. Which MSC conversations
and prompts the examples come from, and which conversations stay held out for the evaluation, is
the evaluation's protocol (``evaluation.responder``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from ..cache import keyed_path
from ..config import BUNDLED_SMOLLM2, get_profile
from ..io import atomic_write_json, json_digest
from ..lora import (
    TrainSettings,
    answer_only_example,
    check_prompt_prefix,
    load_causal_lm,
    lora_config,
    run_training,
    save_adapter,
    wrap_for_training,
)
from .prompt import SYSTEM_TEMPLATE

#: Optimiser steps, batch size and learning rate on 2 CPU cores (about 15 minutes).
RESPONDER_STEPS, RESPONDER_BATCH, RESPONDER_LR = 150, 4, 1e-3
#: Longest training example in tokens (prompt + reply).
RESPONDER_MAX_LENGTH = 256


def tokenize_reply_example(tokenizer, messages, reply: str, max_length: int = RESPONDER_MAX_LENGTH) -> dict:
    """Token ids of prompt + reply with ``labels`` -100 on the prompt (loss on the reply and its
    end-of-turn token). A prompt longer than ``max_length`` loses its oldest tokens, so the reply,
    the instruction and the memory block stay."""
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    full = tokenizer.apply_chat_template([*messages, {"role": "assistant", "content": reply}], tokenize=False)
    check_prompt_prefix(prompt, full)
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    reply_ids = tokenizer(full[len(prompt):], add_special_tokens=False)["input_ids"][:max_length // 2]
    prompt_ids = prompt_ids[-(max_length - len(reply_ids)):]
    return answer_only_example(prompt_ids + reply_ids, len(prompt_ids))


def responder_settings(examples: Sequence[Mapping[str, Any]], steps: int = RESPONDER_STEPS, seed: int = 42,
                       learning_rate: float = RESPONDER_LR) -> TrainSettings:
    """The adapter's settings (LoRA shape from the offline extractor); their hash names the cache folder."""
    x = get_profile("offline").extractor
    data = json_digest([[e["messages"], e["reply"]] for e in examples], length=16, sort_keys=False)
    return TrainSettings(base=BUNDLED_SMOLLM2, data=data,
                         max_steps=steps, epochs=1.0, learning_rate=learning_rate, batch_size=RESPONDER_BATCH,
                         lora_r=x.lora_r, lora_alpha=x.lora_alpha, lora_dropout=x.lora_dropout, seed=seed,
                         dev_fraction=0.0, prompt=hashlib.sha256(SYSTEM_TEMPLATE.encode()).hexdigest()[:12])


def responder_dir(settings: TrainSettings) -> Path:
    """The cache folder of the responder adapter these settings produce."""
    return keyed_path("responder", label="offline", digest=settings.key())


def adapter_in_pointer(pointer: Path) -> Optional[Path]:
    """The cached adapter a recipe pointer (``{"adapter": NAME}`` beside it) names, or None when the
    pointer is missing, damaged, names a path outside its folder, or the adapter is gone."""
    if not pointer.is_file():
        return None
    try:
        name = json.loads(pointer.read_text())["adapter"]
    except (ValueError, KeyError, TypeError):
        return None
    found = pointer.parent / name if isinstance(name, str) and Path(name).name == name else None
    return found if found is not None and (found / "adapter_config.json").is_file() else None


def remember_recipe(pointer: Path, adapter: Path) -> None:
    """Write the recipe pointer that names ``adapter`` (see :func:`adapter_in_pointer`)."""
    atomic_write_json(pointer, {"adapter": adapter.name})


def train_responder_adapter(examples: Sequence[Mapping[str, Any]], settings: TrainSettings,
                            log: Optional[Mapping[str, Any]] = None, device: Optional[str] = None,
                            force: bool = False) -> Path:
    """Fine-tune the responder on ``examples`` (``messages`` and the gold ``reply``) for
    ``settings.max_steps`` steps and return the adapter's cache folder (:func:`responder_dir`; an
    adapter already there is reused unless ``force``). ``training.json`` beside it holds the
    settings, the loss history and ``log``. The caller seeds the run (``models.seed_everything``)."""
    from datasets import Dataset

    target = responder_dir(settings)
    if (target / "adapter_config.json").is_file() and not force:
        return target
    tok, model = load_causal_lm(settings.base, settings.quantize_4bit, device, for_training=True)
    config = lora_config(settings.lora_r, settings.lora_alpha, settings.lora_dropout, settings.targets)
    model, trainable, total = wrap_for_training(tok, model, config)
    data = Dataset.from_list([tokenize_reply_example(tok, e["messages"], e["reply"]) for e in examples])
    steps = settings.max_steps
    history, seconds = run_training(model, tok, settings, data, None, steps, steps, device)
    record = {"settings": settings.as_log(), "key": settings.key(), "kind": "msc-responder",
              "examples": len(examples), "steps": steps, **(log or {}),
              "trainable_parameters": trainable, "total_parameters": total, "train_seconds": round(seconds, 1),
              "log_history": history}
    save_adapter(model, tok, record, target, cache=True)
    return target
