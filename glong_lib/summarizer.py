"""The summarizer whose cross-attention weighs triples: the paper's T5, or one the suite trains.

No encoder-decoder checkpoint can be installed offline, so the ``offline`` profile trains its
own with transformers' ``Seq2SeqTrainer`` and caches it (key: config + data hash + steps):

* ``arch="t5"``: a small T5 (``T5Config``, ``SummarizerConfig``'s sizes: 2 layers, d_model 128) trained from
  scratch, with the bundled MiniLM's fast WordPiece tokenizer (offsets are needed for the triple spans).
* ``arch="minilm-ed"``: an ``EncoderDecoderModel`` warm-started from MiniLM on both sides; its
  cross-attention starts untrained.

Training pairs come from ``data/summaries.jsonl`` (dialogue -> summary, plus *linearised gold
triples* -> summary, the input the scorer really sees) minus a seeded held-out split, and, when
a real-data folder is given, SAMSum test and DialogSum dev (dialogue -> summary).
The ``hub`` and ``paper`` profiles load ``chanifrusydi/t5-dialogue-summarization`` through
:func:`glong_lib.models.resolve_model`.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Optional, Sequence, Union

from .cache import keyed_path
from .config import SMOKE_SUMMARIZER, SUITE_SUMMARIZER, SUMMARIZER_ARCHS, Profile, SummarizerConfig, get_profile
from .errors import DataError
from .io import data_path
from .loaders import load_summary_pairs
from .models import building, choose_device, loading, minilm_path, resolve_model, seed_everything
from .schema import SummaryPair, Triple

ARCHS = SUMMARIZER_ARCHS

#: Part of the cache key: bump it when a change to the training code (not the config or the data)
#: changes the trained model, so no cache keeps serving the old one.
TRAINING_CODE_VERSION = 2

#: The recipes (``config.SummarizerConfig``): the profiles' and a smoke profile's.
DEFAULT_CONFIG = SummarizerConfig()
SMOKE_CONFIG = SMOKE_SUMMARIZER


# --------------------------------------------------------------------------- data

def shipped_summary_pairs(path: Optional[Path] = None) -> list[SummaryPair]:
    """The project's dialogue -> summary pairs with gold triples."""
    return load_summary_pairs(path or data_path("summaries.jsonl"))


def real_summary_pairs(folder: Path) -> list[SummaryPair]:
    """SAMSum test and DialogSum dev from the real-data folder (DialogSum test stays unseen)."""
    folder = Path(folder) / "summaries"
    return load_summary_pairs(folder / "samsum_test_819.json") + load_summary_pairs(folder / "dialogsum_dev.jsonl")


def split_summary_pairs(pairs: Sequence[SummaryPair], n_test: int = 30, seed: int = 42) -> tuple[list, list]:
    """Seeded (train, test) split; the test side keeps only pairs with gold triples.

    >>> tr, te = split_summary_pairs([SummaryPair(str(i), "d", "s") for i in range(5)], n_test=2)
    >>> len(tr), len(te)
    (5, 0)
    """
    with_triples = sorted((p for p in pairs if p.triples), key=lambda p: p.id)
    random.Random(seed).shuffle(with_triples)
    test = with_triples[:n_test]
    test_ids = {p.id for p in test}
    return [p for p in pairs if p.id not in test_ids], test


def training_examples(pairs: Sequence[SummaryPair], inputs: Sequence[str], permutations: int = 1,
                      seed: int = 42) -> list[tuple[str, str]]:
    """(source, summary) pairs: the dialogue and/or the linearised gold triples as source.

    ``permutations > 1`` adds seeded shuffles of each triple list, so the model cannot learn
    "the first triples are the ones the summary talks about" (how the shipped pairs are written).

    >>> from glong_lib.schema import Triple
    >>> training_examples([SummaryPair("1", "A: hi", "A greets.", [Triple("A", "say", "hi")])], ["triples"])
    [('A say hi. ', 'A greets.')]
    """
    rng = random.Random(seed)
    for name in inputs:
        if name not in ("triples", "dialogue"):
            raise DataError(f"unknown summarizer input '{name}' (choose triples or dialogue)")
    out = []
    for p in pairs:
        if "triples" in inputs and p.triples:
            out.append((linearise_triples(p.triples)[0], p.summary))
            for _ in range(permutations - 1):
                out.append((linearise_triples(rng.sample(p.triples, len(p.triples)))[0], p.summary))
        if "dialogue" in inputs:
            out.append((p.dialogue, p.summary))
    return out


def data_hash(examples: Sequence[tuple[str, str]]) -> str:
    h = hashlib.sha256()
    for src, tgt in examples:
        h.update(src.encode() + b"\0" + tgt.encode() + b"\1")
    return h.hexdigest()[:12]



# --------------------------------------------------------------------------- input text and spans

def linearise_triples(triples: Sequence[Triple]) -> tuple[str, list[tuple[int, int]]]:
    """The summarizer's input: each triple as ``"{subject} {relation} {object}. "``, concatenated
    (the reference code's format), and each triple's character range in that text.

    >>> linearise_triples([Triple("Maya", "has_profession", "nurse"), Triple("Leo", "like", "dogs")])
    ('Maya has_profession nurse. Leo like dogs. ', [(0, 26), (27, 41)])
    """
    text, ranges = "", []
    for k, t in enumerate(triples):
        piece = f"{t.subject} {t.relation} {t.object}."
        if not piece[:-1].strip():
            raise DataError(f"triple {k} is empty")
        ranges.append((len(text), len(text) + len(piece)))
        text += piece + " "
    return text, ranges



# --------------------------------------------------------------------------- models

def minilm_tokenizer():
    """The bundled MiniLM's fast WordPiece tokenizer ([PAD]=0, [SEP]=end of summary)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(minilm_path()))


def corpus_tokenizer(texts: Sequence[str]):
    """MiniLM's WordPiece tokenizer cut down to the pieces the training texts use, plus every
    ASCII character (so unseen words still split into pieces). The output layer of a model
    trained from scratch shrinks about tenfold, which is most of its CPU cost; the vocabulary is
    a deterministic function of the texts (kept in the original id order)."""
    import string

    base = minilm_tokenizer()
    seen = {i for text in texts for i in base(text, add_special_tokens=False).input_ids}
    vocab = base.get_vocab()
    chars = [c for c in string.ascii_lowercase + string.digits + string.punctuation]
    keep = set(base.all_special_ids) | seen | {vocab[w] for c in chars for w in (c, "##" + c) if w in vocab}
    by_id = {i: w for w, i in vocab.items()}
    return type(base)(vocab={by_id[i]: n for n, i in enumerate(sorted(keep))}, do_lower_case=True)


def build_model(config: SummarizerConfig, tokenizer):
    """A fresh small T5, or the MiniLM encoder-decoder, with ids set for generation."""
    if config.arch == "t5":
        from transformers import T5Config, T5ForConditionalGeneration

        cfg = T5Config(vocab_size=len(tokenizer), d_model=config.d_model, d_kv=config.d_model // config.num_heads,
                       d_ff=config.d_ff, num_layers=config.num_layers, num_decoder_layers=config.num_layers,
                       num_heads=config.num_heads, pad_token_id=tokenizer.pad_token_id,
                       eos_token_id=tokenizer.sep_token_id, decoder_start_token_id=tokenizer.pad_token_id,
                       attn_implementation="eager")
        model = T5ForConditionalGeneration(cfg)
    elif config.arch == "minilm-ed":
        from transformers import EncoderDecoderModel

        path = str(minilm_path())
        model = EncoderDecoderModel.from_encoder_decoder_pretrained(path, path)
        model.config.decoder_start_token_id = tokenizer.cls_token_id
        model.config.pad_token_id = tokenizer.pad_token_id
        model.config.eos_token_id = tokenizer.sep_token_id
    else:
        raise DataError(f"unknown summarizer arch '{config.arch}' (choose from {', '.join(ARCHS)})")
    gen = model.generation_config
    gen.decoder_start_token_id = model.config.decoder_start_token_id
    gen.pad_token_id, gen.eos_token_id = tokenizer.pad_token_id, tokenizer.sep_token_id
    return model


def encode_examples(examples, tokenizer, config: SummarizerConfig) -> list[dict]:
    """Token ids: sources without special tokens (as the scorer reads them), summaries + [SEP]."""
    rows = []
    for src, tgt in examples:
        ids = tokenizer(src, add_special_tokens=False, truncation=True, max_length=config.max_source_tokens).input_ids
        labels = tokenizer(tgt, add_special_tokens=False).input_ids[: config.max_target_tokens - 1]
        rows.append({"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels + [tokenizer.sep_token_id]})
    return rows


def train_summarizer(config: SummarizerConfig, examples, out_dir: Path, progress: bool = True) -> dict:
    """Train with ``Seq2SeqTrainer`` and save model + tokenizer + meta.json to the cache folder
    ``out_dir`` (published whole, once: ``models.building``; another process training the same
    summarizer is waited for and its result used)."""
    with building(out_dir, "the summarizer", done="meta.json") as tmp:
        return summarizer_meta(out_dir) if tmp is None else _train_into(tmp, config, examples, progress)


def _train_into(tmp: Path, config: SummarizerConfig, examples, progress: bool) -> dict:
    from datasets import Dataset
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments

    if not examples:
        raise DataError("no training pairs for the summarizer")
    seed_everything(config.seed)
    # t5 from scratch: MiniLM's word pieces seen in the data (~3k of 30k), a tenth of the output layer
    tok = corpus_tokenizer([t for pair in examples for t in pair]) if config.arch == "t5" else minilm_tokenizer()
    model = build_model(config, tok)
    args = Seq2SeqTrainingArguments(
        output_dir=str(tmp / "trainer"), max_steps=config.steps, per_device_train_batch_size=config.batch_size,
        learning_rate=config.learning_rate, warmup_steps=config.warmup_steps, weight_decay=0.01,
        logging_steps=max(1, config.steps // 20), save_strategy="no", report_to="none", seed=config.seed,
        use_cpu=choose_device() == "cpu", dataloader_num_workers=0, disable_tqdm=not progress)
    trainer = Seq2SeqTrainer(model=model, args=args,
                             train_dataset=Dataset.from_list(encode_examples(examples, tok, config)),
                             data_collator=DataCollatorForSeq2Seq(tok, model=model, label_pad_token_id=-100))
    start = time.perf_counter()
    result = trainer.train()
    meta = {"config": asdict(config), "examples": len(examples), "train_loss": round(result.training_loss, 4),
            "seconds": round(time.perf_counter() - start, 1),
            "loss_curve": [round(h["loss"], 4) for h in trainer.state.log_history if "loss" in h]}
    shutil.rmtree(tmp / "trainer", ignore_errors=True)
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
    return meta


def offline_summarizer_dir(smoke: bool = False, config: Optional[SummarizerConfig] = None,
                           real_data: Optional[Path] = None, progress: bool = True) -> Path:
    """The cached offline summarizer's folder, training it first when missing."""
    config = config or (SMOKE_CONFIG if smoke else DEFAULT_CONFIG)
    train, _ = split_summary_pairs(shipped_summary_pairs(), config.n_test, config.seed)
    examples = training_examples(train, config.inputs, config.permutations, config.seed)
    if real_data is not None:
        examples += training_examples(real_summary_pairs(real_data), ["dialogue"])
    # key order as written and ASCII-escaped JSON: the scheme the cached summarizers were named under
    out = keyed_path("summarizer", asdict(config), data_hash(examples), TRAINING_CODE_VERSION,
                     label=f"{config.arch}-{config.steps}steps", sort_keys=False, ensure_ascii=True)
    if not (out / "meta.json").is_file():
        train_summarizer(config, examples, out, progress=progress)
    return out


def load_seq2seq(path: str | Path, device: Optional[str] = None):
    """Fast tokenizer and encoder-decoder from a folder, with eager attention (weights returned)."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    with loading("summarizer", str(path)):
        tok = AutoTokenizer.from_pretrained(str(path))
        model = AutoModelForSeq2SeqLM.from_pretrained(str(path), attn_implementation="eager")
    return tok, model.to(choose_device(device)).eval()


def load_summarizer(profile: Union[str, Profile] = "offline", config: Optional[SummarizerConfig] = None,
                    real_data: Optional[Path] = None, device: Optional[str] = None):
    """``(tokenizer, model, name)`` of a profile's summarizer (offline: trained and cached here with
    the recipe ``profile.summarizer.training``; a smoke profile with the tiny ``SMOKE_SUMMARIZER``)."""
    p = get_profile(profile)
    if p.summarizer.model == SUITE_SUMMARIZER:
        path = offline_summarizer_dir(config=config or (SMOKE_SUMMARIZER if p.is_smoke else p.summarizer.training),
                                      real_data=real_data)
        return (*load_seq2seq(path, device), f"suite {path.name}")
    return (*load_seq2seq(resolve_model(p.summarizer.model), device), p.summarizer.model)


def summarizer_meta(path: Path) -> dict:
    return json.loads((Path(path) / "meta.json").read_text())


