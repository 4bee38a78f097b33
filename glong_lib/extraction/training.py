"""LoRA fine-tuning of the extractor with transformers ``Trainer`` and peft."""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from ..artifacts import check_artifact_target, publish_folder, write_artifact_marker
from ..config import BUNDLED_SMOLLM2, Profile, get_profile
from ..errors import DataError
from ..io import PathLike, data_dir
from ..models import cache_dir, causal_lm_path, choose_device, loading, seed_everything
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

#: LoRA on every linear projection of a Llama/Qwen-style block ("all linear layers", Appendix B).
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


#: Dev examples scored for the dev-loss curve during training (a fixed head of the dev split).
DEV_LOSS_EXAMPLES = 32

def tokenize_example(tokenizer, utterance: str, target: str, max_length: int = 256) -> dict[str, list[int]]:
    """Token ids of prompt + answer, with ``labels`` = -100 on the prompt so the loss is on the
    answer (and its end-of-turn token) only."""
    prompt = render_prompt(tokenizer, utterance)
    full = tokenizer.apply_chat_template(build_messages(utterance, target), tokenize=False, enable_thinking=False)
    if not full.startswith(prompt):
        raise DataError("the chat template does not render the prompt as a prefix of the full example")
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    ids = tokenizer(full, add_special_tokens=False)["input_ids"][:max_length]
    labels = [-100] * min(len(prompt_ids), len(ids)) + ids[len(prompt_ids):]
    return {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels}


# --------------------------------------------------------------------------- model, LoRA, training

def lora_config(profile: Union[str, Profile] = "offline"):
    """peft LoRA settings of a profile, on every linear projection."""
    from peft import LoraConfig

    x = get_profile(profile).extractor
    return LoraConfig(r=x.lora_r, lora_alpha=x.lora_alpha, lora_dropout=x.lora_dropout, bias="none",
                      target_modules=list(LORA_TARGETS), task_type="CAUSAL_LM")


def count_parameters(model) -> tuple[int, int]:
    """(trainable, total) parameter counts."""
    total = sum(p.numel() for p in model.parameters())
    return sum(p.numel() for p in model.parameters() if p.requires_grad), total


def load_base(profile: Union[str, Profile] = "offline", device: Optional[str] = None, for_training: bool = False):
    """Tokenizer (left padding) and base causal LM of a profile's extractor. The paper profile
    loads 4-bit (QLoRA) and needs a CUDA GPU with ``bitsandbytes``."""
    p = get_profile(profile)
    path = causal_lm_path(p.extractor.base)
    with loading("model", path):
        return _load_base(p, path, device, for_training)


def _load_base(p: Profile, path: str, device: Optional[str], for_training: bool):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    device = choose_device(device)
    if p.extractor.quantize_4bit:
        if device != "cuda":
            raise DataError(f"profile '{p.name}' loads {p.extractor.base} in 4 bits: it needs a CUDA GPU")
        from transformers import BitsAndBytesConfig

        quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.float16)
        model = AutoModelForCausalLM.from_pretrained(path, quantization_config=quant, device_map="auto")
        if for_training:
            from peft import prepare_model_for_kbit_training

            model = prepare_model_for_kbit_training(model)
        return tok, model
    dtype = torch.bfloat16 if device == "cuda" and p.extractor.base != BUNDLED_SMOLLM2 else torch.float32
    config = AutoConfig.from_pretrained(path)
    quant = getattr(config, "quantization_config", None)
    method = quant.get("quant_method") if isinstance(quant, dict) else getattr(quant, "quant_method", None)
    if str(getattr(method, "value", method)) == "gguf":
        # the converted bundled copy is plain float32 but its config still names the GGUF file;
        # left in, transformers treats the model as quantized and Trainer refuses to train it
        del config.quantization_config
    model = AutoModelForCausalLM.from_pretrained(path, config=config, dtype=dtype).to(device)
    return tok, model


@dataclass
class TrainSettings:
    """Everything that changes an adapter; its hash names the cache folder."""

    base: str
    data: str
    max_steps: int  # -1: train for ``epochs``
    epochs: float
    learning_rate: float
    batch_size: int
    lora_r: int
    lora_alpha: int
    lora_dropout: float
    targets: tuple = LORA_TARGETS
    seed: int = 42
    dev_fraction: float = 0.1
    max_train: Optional[int] = None
    prompt_version: int = PROMPT_VERSION
    prompt: str = ""  # hash of the instruction and user template: a new prompt is a new adapter
    max_length: int = 256  # examples are cut here (tokenize_example): a longer cut is another adapter
    quantize_4bit: bool = False  # QLoRA trains other weights than full precision

    def key(self) -> str:
        blob = json.dumps(self.__dict__, sort_keys=True, default=list)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


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
                         dev_fraction=dev_fraction, max_train=max_train, prompt=prompt_hash(),
                         max_length=x.max_length, quantize_4bit=x.quantize_4bit)


def adapter_dir_for(settings: TrainSettings, profile: Union[str, Profile] = "offline") -> Path:
    """The cache folder of the adapter these settings produce."""
    return cache_dir("extractor") / f"{get_profile(profile).name}-{settings.key()}"


#: Where the offline profile's default adapter ships inside the package (``data/extractor/offline`` in
#: a checkout): 400 LoRA steps on the shipped pairs take about 20 minutes on 2 cores, which neither a
#: class nor a Colab CPU runtime can wait for. ``glong train-extractor --out DIR`` re-trains it.
SHIPPED_ADAPTER = ("extractor", "offline")


def shipped_adapter(settings: TrainSettings) -> Optional[Path]:
    """The adapter shipped in the package when it was trained with exactly ``settings`` (its
    ``training.json`` records the recipe key), else None: any change of recipe (steps, data, prompt,
    LoRA settings, seed, base model) misses it and trains a new adapter into the cache."""
    folder = data_dir().joinpath(*SHIPPED_ADAPTER)
    if not (folder / "adapter_config.json").is_file():
        return None
    return folder if read_training_log(folder).get("key") == settings.key() else None


def package_adapter(adapter: PathLike, folder: PathLike) -> Path:
    """Copy what the package ships of a trained adapter (its config, weights and ``training.json``; the
    tokenizer is the base model's) into ``folder`` with a fresh checksum marker (``make ship-adapter``)."""
    import shutil

    adapter, folder = Path(adapter), Path(folder)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent if folder.parent.is_dir() else None))
    for name in ("adapter_config.json", "adapter_model.safetensors", "training.json"):
        shutil.copyfile(adapter / name, tmp / name)
    write_artifact_marker(tmp, "lora-adapter")
    for path in (tmp, *tmp.iterdir()):  # mkdtemp and atomic writes leave them private; a package is read by all
        path.chmod(0o755 if path.is_dir() else 0o644)
    if folder.exists():
        shutil.rmtree(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(tmp), folder)
    return folder


def read_training_log(adapter_dir: PathLike) -> dict[str, Any]:
    """The ``training.json`` written beside an adapter (settings, loss history, timings)."""
    path = Path(adapter_dir) / "training.json"
    if not path.is_file():
        return {}
    try:
        log = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise DataError(f"cached adapter is damaged (training.json: {type(e).__name__}): "
                        f"delete {adapter_dir}") from None
    if not isinstance(log, dict):
        raise DataError(f"cached adapter is damaged (training.json is not an object): delete {adapter_dir}")
    return log


def training_arguments(settings: TrainSettings, output_dir: PathLike, total_steps: int, eval_every: int,
                       has_dev: bool = True, profile: Union[str, Profile] = "offline",
                       device: Optional[str] = None):
    """The ``transformers.TrainingArguments`` of :func:`train_extractor`: the settings' batch size,
    steps (or epochs) and learning rate, a cosine schedule with 5% warm-up, no weight decay, about 20
    loss logs, a dev-loss evaluation every ``eval_every`` steps, nothing saved mid-run, the seed for
    both model and data order, and fp16 only where the profile trains a 4-bit model on a GPU."""
    from transformers import TrainingArguments

    return TrainingArguments(
        output_dir=str(output_dir), per_device_train_batch_size=settings.batch_size,
        per_device_eval_batch_size=max(8, settings.batch_size), max_steps=settings.max_steps,
        num_train_epochs=settings.epochs, learning_rate=settings.learning_rate, lr_scheduler_type="cosine",
        warmup_steps=0.05, weight_decay=0.0, logging_steps=max(1, min(10, total_steps // 20)),
        eval_strategy="steps" if has_dev else "no", eval_steps=eval_every,
        save_strategy="no", report_to="none", seed=settings.seed, data_seed=settings.seed, dataloader_num_workers=0,
        use_cpu=choose_device(device) == "cpu", fp16=get_profile(profile).extractor.quantize_4bit,
        disable_tqdm=False, remove_unused_columns=False)


def train_extractor(pairs: Optional[Sequence[TriplePair]] = None, profile: Union[str, Profile] = "offline",
                    max_steps: Optional[int] = None, out: Optional[PathLike] = None,
                    seed: int = 42, learning_rate: Optional[float] = None, dev_fraction: float = 0.1,
                    max_train: Optional[int] = None, eval_points: int = 4, force: bool = False,
                    device: Optional[str] = None, snapshot_steps: Sequence[int] = (),
                    snapshot_dir: Optional[PathLike] = None) -> Path:
    """Fine-tune the profile's extractor with LoRA and return the adapter folder.

    Uses transformers ``Trainer`` with a padding collator that pads labels with -100 (prompt
    tokens are already -100), so the loss is on the answer tokens only. The dev split (by
    utterance) is evaluated ``eval_points`` times for the dev-loss curve. Without ``out`` the
    adapter goes to the cache under a key of base model, data hash, steps, LoRA settings, lr,
    batch size and seed, and an adapter already there is reused (unless ``force``); the offline
    profile's default recipe is answered by the adapter shipped in the package (:func:`shipped_adapter`).
    """
    from datasets import Dataset
    from peft import get_peft_model
    from transformers import DataCollatorForSeq2Seq, Trainer

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
    model = get_peft_model(model, lora_config(profile))
    trainable, total = count_parameters(model)
    tok.padding_side = "right"  # training pads on the right; positions then start at 0

    def to_dataset(rows):
        longest = get_profile(profile).extractor.max_length
        return Dataset.from_list([tokenize_example(tok, p.utterance, format_target(p.triples), longest) for p in rows])

    train_ds, dev_ds = to_dataset(train), (to_dataset(dev[:DEV_LOSS_EXAMPLES]) if dev else None)
    steps_per_epoch = -(-len(train_ds) // settings.batch_size)
    total_steps = settings.max_steps if settings.max_steps > 0 else int(steps_per_epoch * settings.epochs)
    eval_every = max(1, total_steps // max(1, eval_points))
    with tempfile.TemporaryDirectory() as scratch:
        args = training_arguments(settings, scratch, total_steps, eval_every, dev_ds is not None, profile, device)
        collator = DataCollatorForSeq2Seq(tok, padding=True, label_pad_token_id=-100)
        relations = sorted({t.relation for p in pairs for t in p.triples})
        callbacks = ([snapshot_callback(snapshot_steps, snapshot_dir, tok,
                                        {"relations": relations, "key": settings.key()})]
                     if snapshot_steps and snapshot_dir else [])
        trainer = Trainer(model=model, args=args, train_dataset=train_ds, eval_dataset=dev_ds,
                          data_collator=collator, processing_class=tok, callbacks=callbacks)
        start = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - start
    tok.padding_side = "left"
    log = {"settings": settings.__dict__ | {"targets": list(settings.targets)}, "key": settings.key(),
           "profile": get_profile(profile).name, "train_pairs": len(train), "dev_pairs": len(dev),
           "steps": total_steps, "trainable_parameters": trainable, "total_parameters": total,
           "train_seconds": round(seconds, 1), "log_history": trainer.state.log_history,
           "relations": relations}
    save_adapter(model, tok, log, target, cache=not out)
    return target


def snapshot_callback(steps: Sequence[int], folder: PathLike, tok, log: dict):
    """A ``transformers.TrainerCallback`` that saves the adapter to ``folder/step-N`` at each of
    ``steps``, with ``log`` (and the step and loss history so far) as its ``training.json``."""
    from transformers import TrainerCallback

    wanted = set(steps)

    class Snapshots(TrainerCallback):
        def on_step_end(self, args, state, control, model=None, **kwargs):
            if state.global_step in wanted and model is not None:
                save_adapter(model, tok, log | {"steps": state.global_step, "log_history": state.log_history},
                              Path(folder) / f"step-{state.global_step}")
            return control

    return Snapshots()


def save_adapter(model, tok, log: dict, target: Path, cache: bool = False) -> None:
    """Write adapter + tokenizer + training.json (+ the artifact marker with every file's checksum)
    to a temporary sibling, then rename it in (``cache``: ``target`` is the adapter cache's own key
    folder; otherwise only an empty folder or an earlier adapter of ours is replaced)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    (tmp / "training.json").write_text(json.dumps(log, indent=1, default=str))
    write_artifact_marker(tmp, "lora-adapter")
    try:
        publish_folder(tmp, target, cache=cache)
    except BaseException:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)  # our own temporary folder, never the target
        raise



