"""LoRA fine-tuning of the extractor: its examples, its settings from the profile, the shipped adapter,
and the training run (the machinery it shares with the responder is ``glong_lib.lora``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence, Union

from ..artifacts import check_artifact_target
from ..cache import keyed_path
from ..config import Profile, get_profile
from ..errors import DataError
from ..io import PathLike, data_dir
from ..lora import (
    TrainSettings,
    answer_only_example,
    check_prompt_prefix,
    load_causal_lm,
    read_training_log,
    run_training,
    save_adapter,
    snapshot_callback,
    wrap_for_training,
)
from ..lora import lora_config as _lora_config
from ..models import seed_everything
from ..schema import TriplePair
from .prompt import (
    PROMPT_VERSION,
    build_messages,
    format_target,
    load_pairs,
    pairs_hash,
    prompt_hash,
    render_prompt,
    split_pairs,
)

#: Dev examples scored for the dev-loss curve during training (a fixed head of the dev split).
DEV_LOSS_EXAMPLES = 32


def tokenize_example(tokenizer, utterance: str, target: str, max_length: int = 256) -> dict[str, list[int]]:
    """Token ids of prompt + answer, with ``labels`` = -100 on the prompt so the loss is on the
    answer (and its end-of-turn token) only."""
    prompt = render_prompt(tokenizer, utterance)
    full = tokenizer.apply_chat_template(build_messages(utterance, target), tokenize=False, enable_thinking=False)
    check_prompt_prefix(prompt, full)
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    return answer_only_example(tokenizer(full, add_special_tokens=False)["input_ids"][:max_length], len(prompt_ids))


# --------------------------------------------------------------------------- model, LoRA, training

def lora_config(profile: Union[str, Profile] = "offline"):
    """peft LoRA settings of a profile, on every linear projection."""
    x = get_profile(profile).extractor
    return _lora_config(x.lora_r, x.lora_alpha, x.lora_dropout)


def load_base(profile: Union[str, Profile] = "offline", device: Optional[str] = None, for_training: bool = False):
    """Tokenizer (left padding) and base causal LM of a profile's extractor. The paper profile
    loads 4-bit (QLoRA) and needs a CUDA GPU with ``bitsandbytes``."""
    p = get_profile(profile)
    return load_causal_lm(p.extractor.base, p.extractor.quantize_4bit, device, for_training, f"profile '{p.name}'")


def train_settings(pairs: Sequence[TriplePair], profile: Union[str, Profile] = "offline",
                   max_steps: Optional[int] = None, seed: int = 42,
                   learning_rate: Optional[float] = None, dev_fraction: float = 0.1,
                   max_train: Optional[int] = None) -> TrainSettings:
    """Settings from the profile's ``extractor`` stage (LoRA r/alpha/dropout, steps or epochs, lr,
    batch size), with overrides. ``max_steps`` <= 0 means "train the profile's epochs".

    >>> s = train_settings([], "offline")
    >>> s.max_steps, s.learning_rate, s.batch_size, train_settings([], "paper").max_steps
    (400, 0.001, 4, -1)
    """
    x = get_profile(profile).extractor
    if max_steps is None:
        max_steps = x.max_steps or -1
    steps = max_steps if max_steps > 0 else -1
    return TrainSettings(base=x.base, data=pairs_hash(pairs), max_steps=steps, epochs=x.epochs,
                         learning_rate=learning_rate or x.learning_rate, batch_size=x.batch_size,
                         lora_r=x.lora_r, lora_alpha=x.lora_alpha, lora_dropout=x.lora_dropout, seed=seed,
                         dev_fraction=dev_fraction, max_train=max_train, prompt_version=PROMPT_VERSION,
                         prompt=prompt_hash(), max_length=x.max_length, quantize_4bit=x.quantize_4bit)


def adapter_dir_for(settings: TrainSettings, profile: Union[str, Profile] = "offline") -> Path:
    """The cache folder of the adapter these settings produce."""
    return keyed_path("extractor", label=get_profile(profile).name, digest=settings.key())


#: Where the offline profile's default adapter ships inside the package (``data/extractor/offline`` in
#: a checkout): its 400 LoRA steps on the shipped pairs took 2,421 s (about 40 minutes, its training.json)
#: on 2 cores, which neither a class nor a Colab CPU runtime can wait for. ``glong train-extractor --out DIR``
#: re-trains it.
SHIPPED_ADAPTER = ("extractor", "offline")


def shipped_adapter(settings: TrainSettings) -> Optional[Path]:
    """The adapter shipped in the package when it was trained with exactly ``settings`` (its
    ``training.json`` records the recipe key), else None: any change of recipe (steps, data, prompt,
    LoRA settings, seed, base model) misses it and trains a new adapter into the cache."""
    folder = data_dir().joinpath(*SHIPPED_ADAPTER)
    if not (folder / "adapter_config.json").is_file():
        return None
    return folder if read_training_log(folder).get("key") == settings.key() else None


def train_extractor(pairs: Optional[Sequence[TriplePair]] = None, profile: Union[str, Profile] = "offline",
                    max_steps: Optional[int] = None, out: Optional[PathLike] = None,
                    seed: int = 42, learning_rate: Optional[float] = None, dev_fraction: float = 0.1,
                    max_train: Optional[int] = None, eval_points: int = 4, force: bool = False,
                    device: Optional[str] = None, snapshot_steps: Sequence[int] = (),
                    snapshot_dir: Optional[PathLike] = None, progress: bool = True) -> Path:
    """Fine-tune the profile's extractor with LoRA and return the adapter folder.

    Uses transformers ``Trainer`` with a padding collator that pads labels with -100 (prompt
    tokens are already -100), so the loss is on the answer tokens only. The dev split (by
    utterance) is evaluated ``eval_points`` times for the dev-loss curve. Without ``out`` the
    adapter goes to the cache under a key of base model, data hash, steps, LoRA settings, lr,
    batch size and seed, and an adapter already there is reused (unless ``force``); the offline
    profile's default recipe is answered by the adapter shipped in the package (:func:`shipped_adapter`).
    ``progress=False`` shows no progress bar and prints no log lines (the log is in training.json).
    """
    from datasets import Dataset

    pairs = list(pairs) if pairs is not None else load_pairs()
    settings = train_settings(pairs, profile, max_steps, seed, learning_rate, dev_fraction, max_train)
    target = Path(out) if out else adapter_dir_for(settings, profile)
    if not out and not force and shipped_adapter(settings) is not None:
        return shipped_adapter(settings)
    if (target / "adapter_config.json").is_file() and not force:
        return target
    if out:  # before minutes of training: a user's folder is never replaced
        check_artifact_target(target)
    seed_everything(seed)
    train, dev = split_pairs(pairs, dev_fraction, seed, max_train=max_train)
    if not train:
        raise DataError("no training pairs left after the dev split")
    tok, model = load_base(profile, device, for_training=True)
    model, trainable, total = wrap_for_training(tok, model, lora_config(profile))

    def to_dataset(rows):
        longest = get_profile(profile).extractor.max_length
        return Dataset.from_list([tokenize_example(tok, p.utterance, format_target(p.triples), longest) for p in rows])

    train_ds, dev_ds = to_dataset(train), (to_dataset(dev[:DEV_LOSS_EXAMPLES]) if dev else None)
    steps_per_epoch = -(-len(train_ds) // settings.batch_size)
    total_steps = settings.max_steps if settings.max_steps > 0 else int(steps_per_epoch * settings.epochs)
    eval_every = max(1, total_steps // max(1, eval_points))
    relations = sorted({t.relation for p in pairs for t in p.triples})
    callbacks = ([snapshot_callback(snapshot_steps, snapshot_dir, tok, {"relations": relations, "key": settings.key()})]
                 if snapshot_steps and snapshot_dir else [])
    history, seconds = run_training(model, tok, settings, train_ds, dev_ds, total_steps, eval_every, device, callbacks,
                                    progress)
    log = {"settings": settings.as_log(), "key": settings.key(),
           "profile": get_profile(profile).name, "train_pairs": len(train), "dev_pairs": len(dev),
           "steps": total_steps, "trainable_parameters": trainable, "total_parameters": total,
           "train_seconds": round(seconds, 1), "log_history": history,
           "relations": relations}
    save_adapter(model, tok, log, target, cache=not out)
    return target
