"""LoRA fine-tuning shared by the extractor (``extraction.training``) and the MSC responder
(``generation.responder``): the settings whose hash names an adapter, the base model and its LoRA
wrapping, examples whose loss is on the answer only, the transformers ``Trainer`` run, and saving,
packaging and reading adapters.

It sits below the pipeline stages (``pyproject.toml``'s layer contract), so both stages use it
without importing each other.
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from .artifacts import publish_folder, write_artifact_marker
from .config import BUNDLED_SMOLLM2
from .errors import DataError
from .io import PathLike, json_digest
from .models import causal_lm_path, choose_device, loading

#: LoRA on every linear projection of a Llama/Qwen-style block ("all linear layers", Appendix B).
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


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
    prompt_version: int = 1  # the extractor passes its PROMPT_VERSION; the responder's keys hold 1
    prompt: str = ""  # hash of the instruction and user template: a new prompt is a new adapter
    max_length: int = 256  # examples are cut here: a longer cut is another adapter
    quantize_4bit: bool = False  # QLoRA trains other weights than full precision

    def key(self) -> str:
        """12 hex digits of the fields' JSON (ASCII-escaped: the scheme the cached and shipped adapters
        were named under; ``cache.keyed_path`` puts it in the folder name)."""
        return json_digest(self.__dict__, ensure_ascii=True)

    def as_log(self) -> dict[str, Any]:
        """The settings as ``training.json`` records them (``targets`` as a list)."""
        return self.__dict__ | {"targets": list(self.targets)}


# --------------------------------------------------------------------------- model and LoRA

def lora_config(r: int, alpha: int, dropout: float, targets: Sequence[str] = LORA_TARGETS):
    """peft LoRA settings: rank ``r``, scale ``alpha``, ``dropout``, on the ``targets`` projections."""
    from peft import LoraConfig

    return LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, bias="none",
                      target_modules=list(targets), task_type="CAUSAL_LM")


def count_parameters(model) -> tuple[int, int]:
    """(trainable, total) parameter counts."""
    total = sum(p.numel() for p in model.parameters())
    return sum(p.numel() for p in model.parameters() if p.requires_grad), total


def load_causal_lm(base: str, quantize_4bit: bool = False, device: Optional[str] = None,
                   for_training: bool = False, owner: str = ""):
    """Tokenizer (left padding) and causal LM ``base``. ``quantize_4bit`` loads it in 4 bits
    (QLoRA), which needs a CUDA GPU with ``bitsandbytes``; ``owner`` names who asked, in that error."""
    path = causal_lm_path(base)
    with loading("model", path):
        return _load_causal_lm(base, path, quantize_4bit, device, for_training, owner)


def _load_causal_lm(base: str, path: str, quantize_4bit: bool, device: Optional[str], for_training: bool,
                    owner: str):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    device = choose_device(device)
    if quantize_4bit:
        if device != "cuda":
            raise DataError(f"{owner or 'this model'} loads {base} in 4 bits: it needs a CUDA GPU")
        from transformers import BitsAndBytesConfig

        quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.float16)
        model = AutoModelForCausalLM.from_pretrained(path, quantization_config=quant, device_map="auto")
        if for_training:
            from peft import prepare_model_for_kbit_training

            model = prepare_model_for_kbit_training(model)
        return tok, model
    dtype = torch.bfloat16 if device == "cuda" and base != BUNDLED_SMOLLM2 else torch.float32
    config = AutoConfig.from_pretrained(path)
    quant = getattr(config, "quantization_config", None)
    method = quant.get("quant_method") if isinstance(quant, dict) else getattr(quant, "quant_method", None)
    if str(getattr(method, "value", method)) == "gguf":
        # the converted bundled copy is plain float32 but its config still names the GGUF file;
        # left in, transformers treats the model as quantized and Trainer refuses to train it
        del config.quantization_config
    model = AutoModelForCausalLM.from_pretrained(path, config=config, dtype=dtype).to(device)
    return tok, model


def wrap_for_training(tok, model, config) -> tuple[Any, int, int]:
    """(LoRA model, trainable, total parameters): ``model`` wrapped with the peft ``config``; the
    tokenizer pads on the right from here on (positions then start at 0)."""
    from peft import get_peft_model

    model = get_peft_model(model, config)
    trainable, total = count_parameters(model)
    tok.padding_side = "right"
    return model, trainable, total


# --------------------------------------------------------------------------- examples and training

def answer_only_example(ids: Sequence[int], prompt_length: int) -> dict[str, list[int]]:
    """A training example whose ``labels`` are -100 on the first ``prompt_length`` tokens, so the
    loss is on the answer only.

    >>> answer_only_example([5, 6, 7], 2)["labels"]
    [-100, -100, 7]
    """
    ids = list(ids)
    labels = [-100] * min(prompt_length, len(ids)) + ids[prompt_length:]
    return {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels}


def check_prompt_prefix(prompt: str, full: str) -> None:
    """Refuse a chat template that does not render the prompt as the start of the full example."""
    if not full.startswith(prompt):
        raise DataError("the chat template does not render the prompt as a prefix of the full example")


def answer_only_collator(tok):
    """Pads a batch, labels with -100 (prompt tokens are -100 already): the loss stays on the answers."""
    from transformers import DataCollatorForSeq2Seq

    return DataCollatorForSeq2Seq(tok, padding=True, label_pad_token_id=-100)


def training_arguments(settings: TrainSettings, output_dir: PathLike, total_steps: int, eval_every: int,
                       has_dev: bool = True, device: Optional[str] = None, progress: bool = True):
    """The ``transformers.TrainingArguments`` of a LoRA run: the settings' batch size, steps (or
    epochs) and learning rate, a cosine schedule with 5% warm-up, no weight decay, about 20 loss
    logs, a dev-loss evaluation every ``eval_every`` steps, nothing saved mid-run, the seed for both
    model and data order, and fp16 only where a 4-bit model trains on a GPU (``progress=False``: no
    progress bar)."""
    from transformers import TrainingArguments

    return TrainingArguments(
        output_dir=str(output_dir), per_device_train_batch_size=settings.batch_size,
        per_device_eval_batch_size=max(8, settings.batch_size), max_steps=settings.max_steps,
        num_train_epochs=settings.epochs, learning_rate=settings.learning_rate, lr_scheduler_type="cosine",
        warmup_steps=0.05, weight_decay=0.0, logging_steps=max(1, min(10, total_steps // 20)),
        eval_strategy="steps" if has_dev else "no", eval_steps=eval_every,
        save_strategy="no", report_to="none", seed=settings.seed, data_seed=settings.seed, dataloader_num_workers=0,
        use_cpu=choose_device(device) == "cpu", fp16=settings.quantize_4bit,
        disable_tqdm=not progress, remove_unused_columns=False)


def make_trainer(model, tok, args, train, dev=None, callbacks: Sequence = ()):
    """A transformers ``Trainer`` with the answer-only collator. With ``args.disable_tqdm`` (see
    :func:`training_arguments`) ``Trainer`` prints each log dict instead of a progress bar; that printer
    is dropped too, so a notebook shows only what it prints itself."""
    from transformers import Trainer
    from transformers.trainer_callback import PrinterCallback

    trainer = Trainer(model=model, args=args, train_dataset=train, eval_dataset=dev,
                      data_collator=answer_only_collator(tok), processing_class=tok, callbacks=list(callbacks))
    if args.disable_tqdm:
        trainer.remove_callback(PrinterCallback)
    return trainer


def run_training(model, tok, settings: TrainSettings, train, dev=None, total_steps: Optional[int] = None,
                 eval_every: Optional[int] = None, device: Optional[str] = None,
                 callbacks: Sequence = (), progress: bool = True) -> tuple[list[dict], float]:
    """Train ``model`` with transformers ``Trainer`` on the examples ``train`` (a ``datasets.Dataset``;
    ``dev`` scored every ``eval_every`` steps when given) and return (log history, seconds). Checkpoints
    go to a scratch folder that is removed; the tokenizer pads on the left again afterwards."""
    total_steps = settings.max_steps if total_steps is None else total_steps
    with tempfile.TemporaryDirectory() as scratch:
        args = training_arguments(settings, scratch, total_steps, eval_every or total_steps, dev is not None, device,
                                  progress)
        trainer = make_trainer(model, tok, args, train, dev, callbacks)
        start = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - start
    tok.padding_side = "left"
    return trainer.state.log_history, seconds


# --------------------------------------------------------------------------- adapters on disk

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
