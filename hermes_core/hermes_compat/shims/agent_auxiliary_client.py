"""``agent.auxiliary_client``: Hermes Agent's side-task model calls, on the core's model client.

Plugins call ``call_llm`` for side tasks such as extracting facts or writing a
summary. This module is served only when a model is configured (see
:func:`hermes_core.hermes_compat.finder.model_configured`); otherwise importing
it fails as before, so a plugin's ``except ImportError`` fallback still runs.

``call_llm`` sends one chat completion to the model of the profile active at
call time: the ``auxiliary.<task>`` section of ``config.yaml`` when the task has
one, else ``model.*`` and the environment, read the way
:meth:`hermes_core.llm.ChatClient.from_config` reads them. Hermes' own
``provider`` and ``model`` arguments name routes of Hermes and are ignored: the
configured model answers. The answer is its text (a :class:`str`) that also
carries ``.choices[0].message.content``, because plugins read Hermes' answer
both ways.
"""

import asyncio
import re
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from hermes_core.config import load_config
from hermes_core.errors import LLMNotConfiguredError
from hermes_core.hermes_compat.finder import missing_attribute
from hermes_core.llm import ChatClient, ChatResponse

__hermes_compat__ = True

__all__ = [
    "AuxiliaryResponse",
    "async_call_llm",
    "call_llm",
    "cleanup_stale_async_clients",
    "extract_content_or_reasoning",
    "shutdown_cached_clients",
]

_TASK_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


class AuxiliaryResponse(str):
    """The answer's text, with the ``choices``/``usage``/``model`` of an OpenAI response."""

    choices: list[SimpleNamespace]
    usage: SimpleNamespace
    model: str

    @classmethod
    def of(cls, response: ChatResponse, model: str) -> "AuxiliaryResponse":
        """Wrap a :class:`~hermes_core.llm.ChatResponse` of *model*."""
        text = cls(response.content)
        calls = [
            SimpleNamespace(
                id=call.id,
                type="function",
                function=SimpleNamespace(name=call.name, arguments=call.arguments),
            )
            for call in response.tool_calls
        ]
        message = SimpleNamespace(
            role="assistant", content=response.content, tool_calls=calls or None
        )
        text.choices = [
            SimpleNamespace(index=0, message=message, finish_reason=response.finish_reason)
        ]
        usage = response.usage
        text.usage = SimpleNamespace(
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            total_tokens=getattr(usage, "total_tokens", None),
        )
        text.model = model
        return text


def _messages(
    messages: Sequence[Mapping[str, Any]] | None, prompt: str | None, system: str | None
) -> list[Mapping[str, Any]]:
    if messages is not None:
        if isinstance(messages, (str, bytes)) or not all(
            isinstance(message, Mapping) for message in messages
        ):
            raise ValueError("call_llm: messages= must be a list of {'role', 'content'} mappings")
        return list(messages)
    if prompt is None:
        raise ValueError("call_llm needs messages=[...] or prompt='...'")
    built: list[Mapping[str, Any]] = []
    if system:
        built.append({"role": "system", "content": str(system)})
    built.append({"role": "user", "content": str(prompt)})
    return built


def call_llm(
    task: str | None = None,
    *,
    messages: Sequence[Mapping[str, Any]] | None = None,
    prompt: str | None = None,
    system: str | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    timeout: float | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    **_hermes_only: Any,
) -> AuxiliaryResponse:
    """One chat completion for *task* on the configured model; raises when that fails.

    Raises :class:`~hermes_core.errors.LLMNotConfiguredError` when no model is
    configured for the task, and :class:`~hermes_core.errors.LLMError` when the
    endpoint fails.
    """
    chat = _messages(messages, prompt, system)
    config = load_config()
    auxiliary = config.get("auxiliary")
    named = isinstance(task, str) and _TASK_RE.fullmatch(task) is not None
    section = "model"
    if named and isinstance(auxiliary, Mapping) and task in auxiliary:
        section = f"auxiliary.{task}"
    client = ChatClient.from_config(config, section=section)
    if client is None:
        raise LLMNotConfiguredError(
            f"No model is configured for the auxiliary task {task or 'call_llm'!r}: set "
            "model.base_url and model.model (or auxiliary.<task>.*) in config.yaml, or "
            "HERMES_MODEL_BASE_URL and HERMES_MODEL."
        )
    with client:
        response = client.chat(
            chat,
            tools=tools,
            timeout=timeout,
            answer_timeout=timeout,  # the caller's timeout bounds the whole call
            max_tokens=max_tokens,
            temperature=temperature,
        )
        return AuxiliaryResponse.of(response, client.model)


async def async_call_llm(task: str | None = None, **kwargs: Any) -> AuxiliaryResponse:
    """:func:`call_llm` on a worker thread, for async callers."""
    return await asyncio.to_thread(call_llm, task, **kwargs)


def extract_content_or_reasoning(response: Any) -> str:
    """The text of an answer: its content, else its reasoning, else ``""``."""
    if isinstance(response, str):
        return str(response)
    try:
        message = response.choices[0].message
    except (AttributeError, IndexError, KeyError, TypeError):
        try:
            message = response["choices"][0]["message"]
        except (IndexError, KeyError, TypeError):
            return ""
    for key in ("content", "reasoning_content", "reasoning"):
        value = message.get(key) if isinstance(message, Mapping) else getattr(message, key, None)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def shutdown_cached_clients() -> None:
    """Nothing to do: every :func:`call_llm` opens and closes its own client."""


def cleanup_stale_async_clients() -> None:
    """Nothing to do: no client outlives its call."""


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name, __all__)
