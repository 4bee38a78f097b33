"""Triple extraction through an OpenAI-compatible server (the paper ran Qwen3-8B + LoRA on vLLM):
the same prompt (``prompt.build_messages``) sent as chat completions, greedy, through the one
endpoint layer (``glong_lib.endpoint``: retries, deadline, requests in flight, reply cache), and the
answers read by the same parser as the local extractor's (``TripleExtractor.extract_detailed``).

Qwen3's thinking is switched off through the request (``chat_template_kwargs``), as the local
prompt does with ``enable_thinking=False``. A vLLM server serves the LoRA adapter under the name
given to ``--lora-modules NAME=PATH``: that NAME is the model to ask for (docs/gpu-server.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence, Union

from ..artifacts import check_artifact_target, publish_folder, write_artifact_marker
from ..config import EndpointSettings, Profile, get_profile
from ..endpoint import Endpoint
from ..io import PathLike
from ..lora import read_training_log
from ..models import causal_lm_path, loading
from .inference import MAX_NEW_TOKENS, MAX_UTTERANCE_TOKENS, TripleExtractor
from .inference import load_extractor as load_local_extractor
from .prompt import build_messages

#: The request's chat template arguments: no thinking block before the JSON (Qwen3).
NO_THINKING = {"chat_template_kwargs": {"enable_thinking": False}}

#: The longest utterance sent, in characters (about 4 per token: the local extractor's token cut).
MAX_UTTERANCE_CHARS = 4 * MAX_UTTERANCE_TOKENS


class RemoteTripleExtractor(TripleExtractor):
    """A :class:`TripleExtractor` whose model is behind ``settings.base_url``. ``relations``: the
    adapter's training relations (``read_training_log(adapter)["relations"]``) for snapping."""

    def __init__(self, settings: EndpointSettings, max_new_tokens: int = MAX_NEW_TOKENS,
                 relations: Optional[Sequence[str]] = None, cache=None):
        self.endpoint = Endpoint(settings, cache=cache)
        self.tokenizer = self.model = self.adapter_dir = None
        self.name = f"remote {settings.model}"
        self.max_new_tokens = int(max_new_tokens)
        self.relations = sorted(relations or [])
        self._prefix = None

    def request(self, utterance: str) -> dict:
        """The chat request for one utterance: the extractor's prompt, greedy, no thinking."""
        return self.endpoint.request(build_messages(utterance[:MAX_UTTERANCE_CHARS]), self.max_new_tokens, 0.0,
                                     NO_THINKING)

    def generate(self, utterances: Sequence[str], batch_size: int = 8, progress: bool = True) -> list[str]:
        """The server's answers, in order (``settings.concurrency`` requests in flight; ``batch_size``
        is the local extractor's and means nothing here)."""
        replies = self.endpoint.complete_many([self.request(u) for u in utterances], progress,
                                              desc=f"extract ({self.name})")
        return [r.text.strip() for r in replies]


def load_extractor(profile: Union[str, Profile] = "offline", adapter: Optional[PathLike] = None,
                   zero_shot: bool = False, device: Optional[str] = None, data: Optional[PathLike] = None,
                   bfloat16: bool = False, endpoint: Optional[EndpointSettings] = None) -> TripleExtractor:
    """The extractor of a profile (``inference.load_extractor``), or, when ``endpoint`` (else the
    profile's ``extractor.endpoint``) names a server, a :class:`RemoteTripleExtractor` asking it with
    the profile's decoding budget; ``adapter`` then only lends its training relations for snapping."""
    p = get_profile(profile)
    endpoint = endpoint or p.extractor.endpoint
    if not endpoint.base_url:
        return load_local_extractor(profile, adapter=adapter, zero_shot=zero_shot, device=device, data=data,
                                    bfloat16=bfloat16)
    relations = read_training_log(Path(adapter)).get("relations") if adapter else None
    return RemoteTripleExtractor(endpoint, max_new_tokens=p.extractor.max_new_tokens, relations=relations)


def merge_adapter(profile: Union[str, Profile], adapter: PathLike, out: PathLike) -> Path:
    """Write the profile's base model with the LoRA ``adapter`` merged in (peft ``merge_and_unload``)
    and its tokenizer to ``out``: a plain model a server loads without LoRA support. The base is
    loaded unquantized (bfloat16 where the profile trains in 4 bits: a merge into 4-bit weights
    would round the adapter away), on the CPU. Written to a sibling folder, then published whole."""
    import tempfile

    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    p = get_profile(profile)
    out = check_artifact_target(out)
    path = causal_lm_path(p.extractor.base)
    dtype = torch.bfloat16 if p.extractor.quantize_4bit else torch.float32
    with loading("model", path):
        tok = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    with loading("adapter", str(adapter)):
        merged = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    merged.save_pretrained(str(tmp))
    tok.save_pretrained(str(tmp))
    write_artifact_marker(tmp, "merged-model")
    return publish_folder(tmp, out)
