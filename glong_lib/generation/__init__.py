"""Response generation (paper section 3.5): the prompt ``P = [I; M_Long; C_current]`` and the
generator backends that turn it into a reply, counting every prompt and completion token.

The prompt is the paper's (Figure 8, adopted from LD-Agent with its user-traits block removed):
a system line that casts the model as the agent, then a user message with the recent dialogue
(``<CONTEXT>``), the retrieved memories (``<MEMORY>``) and the role-play instruction holding the
user's utterance. Memories are written one per line, either in the paper's arrow format
``s -r-> o`` or in the reference code's ranked format
``[Rank i] (Active X days Y hours Z minutes ago) h r t``; with none, ``No relevant Memories.``

Two backends share one interface, ``.generate(messages) -> Generation``, and one reply cache
(:class:`CachingGenerator`: a prompt already answered is not generated again):

* :class:`LocalChatGenerator`: any chat model through transformers (offline default: the bundled
  SmolLM2-135M-Instruct), greedy decoding (the paper's temperature 0), prompts cut from the left
  to the model's context window so the instruction at the end always survives;
* :class:`OpenAICompatibleGenerator`: ``POST {base_url}/chat/completions`` of any
  OpenAI-compatible server (OpenAI itself, vLLM, llama.cpp, Ollama ...) through the ``openai``
  SDK (the ``api`` extra), with the key read from an environment variable.

>>> msgs = build_prompt("Leo", "Maya", ["Maya: I moved to Denver."], [("Maya", "live_in", "Denver")],
...                     "Guess what, I got a cat!")
>>> print(msgs[1]["content"])
<CONTEXT>
Drawing from your recent conversation with Maya:
Maya: I moved to Denver.
<MEMORY>
The memories linked to the ongoing conversation are:
Maya -live_in-> Denver
Now, please role-play as Leo to continue the dialogue between Leo and Maya. Maya said: Guess what, I got a cat! Please respond to Maya's statement:
"""  # noqa: E501 (a doctest's expected output line; ruff takes a docstring's noqa after its closing quotes)

from __future__ import annotations

from typing import Optional

from ..config import get_profile
from ..errors import DataError
from .local import LocalChatGenerator, MemoryEchoGenerator  # noqa: F401
from .prompt import (  # noqa: F401
    CONTEXT_HEADER,
    COPY_RUN,
    ECHO_KINDS,
    INSTRUCTION_TEMPLATE,
    MEMORY_FORMATS,
    MEMORY_HEADER,
    NO_MEMORIES,
    PLAIN_CONTEXT_HEADER,
    PLAIN_MEMORY_HEADER,
    SYSTEM_TEMPLATE,
    CachingGenerator,
    Generation,
    GenerationError,
    MemoryItem,
    Messages,
    ReplyCache,
    build_prompt,
    chat_token_ids,
    clean_reply,
    echo_kind,
    fit_prompt,
    format_elapsed,
    format_memories,
    format_memory,
    is_prompt_echo,
    messages_key,
)
from .remote import OpenAICompatibleGenerator


def make_generator(
    profile: str = "offline",
    max_new_tokens: Optional[int] = None,
    base_url: Optional[str] = None,
    model: Optional[str] = None,
    api_key_env: str = "OPENAI_API_KEY",
    **kwargs,
):
    """The generator of a profile, or an OpenAI-compatible one when ``base_url`` is given.

    The ``paper`` profile's ``openai:gpt-4o-mini`` needs ``base_url`` (e.g. https://api.openai.com/v1).
    ``max_new_tokens`` caps each reply; None (the default) leaves an API model's replies uncapped, as
    the paper's code does, and gives a local model the profile's limit (a small local model does not
    end its turn by itself).
    """
    ref = get_profile(profile).generator.model
    if base_url or ref.startswith("openai:"):
        if not base_url:
            raise DataError(f"profile '{profile}' generates with {ref}: give base_url (an OpenAI-compatible endpoint)")
        name = model or (ref.split(":", 1)[1] if ref.startswith("openai:") else "gpt-4o-mini")
        return OpenAICompatibleGenerator(
            base_url, name, api_key_env=api_key_env, max_new_tokens=max_new_tokens, **kwargs
        )
    limit = max_new_tokens or get_profile(profile).generator.max_new_tokens
    return LocalChatGenerator(model or ref, max_new_tokens=limit, **kwargs)
