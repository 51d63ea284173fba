"""``ctx.llm``: Hermes Agent's plugin LLM facade, answered by hermes-memory-core's model client.

A Hermes plugin makes its own model calls (extract facts, summarise, classify)
through ``ctx.llm.complete(messages=...)`` or
``ctx.llm.complete_structured(instructions=..., input=[...], json_schema=...)``,
and their ``acomplete*`` siblings. Here each call is one chat completion sent by
:class:`hermes_core.llm.ChatClient` to the model configured in ``config.yaml``
(``model.*``, or ``auxiliary.<task>`` for a task), read at call time.

The per-plugin trust gate is Hermes': ``provider=``, ``model=``, ``agent_id=``,
``profile=`` and a ``task=`` the plugin did not register raise
:class:`PluginLlmTrustError` unless ``plugins.entries.<plugin>.llm`` allows
them. A trusted ``model=`` is sent to the configured endpoint; a trusted
``provider=``, ``agent_id=`` or ``profile=`` names a route of Hermes and is not
used (hermes-memory has one endpoint per section).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from hermes_core.config import cfg_get, is_truthy, load_config
from hermes_core.errors import LLMError, LLMNotConfiguredError

__all__ = [
    "PluginLlm",
    "PluginLlmCompleteResult",
    "PluginLlmImageInput",
    "PluginLlmInput",
    "PluginLlmStructuredResult",
    "PluginLlmTextInput",
    "PluginLlmTrustError",
    "PluginLlmUsage",
]

logger = logging.getLogger("hermes_core.plugins")

_TASK_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_FENCE_RE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_JSON_ONLY = (
    "Answer with one JSON value that matches the requested shape, and nothing else: "
    "no prose, no Markdown fences."
)


@dataclass
class PluginLlmTextInput:
    """A text block of ``complete_structured(input=[...])``."""

    text: str
    type: str = "text"


@dataclass
class PluginLlmImageInput:
    """An image block: raw ``data`` bytes (sent as a ``data:`` URL) or a ``url``."""

    data: bytes | None = None
    url: str | None = None
    mime_type: str = "image/png"
    file_name: str = ""
    type: str = "image"


PluginLlmInput = PluginLlmTextInput | PluginLlmImageInput | Mapping[str, Any]
"""An input block: one of the dataclasses, or a dict of the same shape."""


@dataclass
class PluginLlmUsage:
    """Token counts the endpoint reported (0 when it reported none)."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None


@dataclass
class PluginLlmCompleteResult:
    """The answer of :meth:`PluginLlm.complete`.

    ``tool_calls`` holds the calls the model made when it was offered ``tools``,
    in OpenAI's wire form (``{"id", "type": "function", "function": {"name",
    "arguments"}}``); it is empty otherwise.
    """

    text: str
    provider: str
    model: str
    agent_id: str
    usage: PluginLlmUsage = field(default_factory=PluginLlmUsage)
    audit: dict[str, Any] = field(default_factory=dict)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class PluginLlmStructuredResult:
    """The answer of :meth:`PluginLlm.complete_structured`.

    ``parsed`` holds the JSON value and ``content_type`` is ``"json"`` when JSON
    was asked for and the answer is JSON; otherwise ``parsed`` is ``None``,
    ``content_type`` is ``"text"`` and ``text`` holds the raw answer.
    """

    text: str
    provider: str
    model: str
    agent_id: str
    usage: PluginLlmUsage = field(default_factory=PluginLlmUsage)
    parsed: Any = None
    content_type: str = "text"
    audit: dict[str, Any] = field(default_factory=dict)


class PluginLlmTrustError(PermissionError):
    """A plugin asked for an override that ``plugins.entries.<plugin>.llm`` does not allow."""


def _allowlist(value: Any) -> frozenset[str] | None:
    """``None`` (anything goes) unless *value* is a list without ``"*"``."""
    if not isinstance(value, list):
        return None
    names = {str(item).strip().lower() for item in value if isinstance(item, str)}
    return None if "*" in names else frozenset(names - {""})


class _Request(NamedTuple):
    """The keyword arguments every ``ctx.llm`` call takes besides its input."""

    provider: str | None
    model: str | None
    agent_id: str | None
    profile: str | None
    task: str | None
    temperature: float | None
    max_tokens: int | None
    timeout: float | None
    purpose: str | None


@dataclass(frozen=True)
class _Route:
    section: str
    model: str | None
    provider: str | None
    agent_id: str | None
    profile: str | None
    task: str | None


class PluginLlm:
    """Model calls for one plugin, on the model configured for hermes-memory."""

    def __init__(self, *, plugin_id: str, tasks: Collection[str] = ()) -> None:
        self.plugin_id = plugin_id
        self._tasks = tasks  # the names the plugin registered; read at call time

    # -- the trust gate --------------------------------------------------

    def _route(self, config: Mapping[str, Any], request: _Request) -> _Route:
        entry = cfg_get(config, "plugins.entries")
        entry = entry.get(self.plugin_id) if isinstance(entry, Mapping) else None
        policy = entry.get("llm") if isinstance(entry, Mapping) else None
        policy = policy if isinstance(policy, Mapping) else {}
        where = f"plugins.entries.{self.plugin_id}.llm"

        def gate(kind: str, value: str | None, listed: str | None = None) -> str | None:
            if value is None or (isinstance(value, str) and not value.strip()):
                return None
            if not isinstance(value, str):
                raise ValueError(f"{kind}= must be a string, got {type(value).__name__}")
            if not is_truthy(policy.get(f"allow_{kind}_override")):
                raise PluginLlmTrustError(
                    f"Plugin {self.plugin_id!r} may not choose the {kind} (set "
                    f"{where}.allow_{kind}_override: true in config.yaml to allow it)."
                )
            allowed = _allowlist(policy.get(listed)) if listed else None
            if allowed is not None and value.strip().lower() not in allowed:
                raise PluginLlmTrustError(
                    f"Plugin {self.plugin_id!r} asked for the {kind} {value!r}, which is not "
                    f"in {where}.{listed}."
                )
            return value.strip()

        chosen_provider = gate("provider", request.provider, "allowed_providers")
        chosen_model = gate("model", request.model, "allowed_models")
        chosen_agent = gate("agent_id", request.agent_id)
        chosen_profile = gate("profile", request.profile)
        section = "model"
        task = request.task
        if task is not None and task != "auto":
            if not isinstance(task, str) or not _TASK_RE.fullmatch(task):
                raise ValueError(f"task= must be a task name, got {task!r:.80}")
            if task not in self._tasks and not is_truthy(policy.get("allow_task_override")):
                raise PluginLlmTrustError(
                    f"Plugin {self.plugin_id!r} did not register the auxiliary task {task!r}: "
                    f"call ctx.register_auxiliary_task({task!r}) in register(ctx), or set "
                    f"{where}.allow_task_override: true to use a task of the host."
                )
            auxiliary = cfg_get(config, "auxiliary")
            if isinstance(auxiliary, Mapping) and isinstance(auxiliary.get(task), Mapping):
                section = f"auxiliary.{task}"
        else:
            task = None
        return _Route(section, chosen_model, chosen_provider, chosen_agent, chosen_profile, task)

    # -- one call -----------------------------------------------------------

    def _call(
        self,
        route: _Route,
        config: Mapping[str, Any],
        messages: list[dict[str, Any]],
        request: _Request,
        response_format: dict[str, Any] | None,
        tools: _Tools | None,
    ) -> tuple[Any, str, str]:
        """Send *messages*; return ``(ChatResponse, provider, model)``."""
        from hermes_core.llm import ChatClient

        client = ChatClient.from_config(config, section=route.section)
        if client is None:
            raise LLMNotConfiguredError(
                f"Plugin {self.plugin_id!r} called ctx.llm, but no model is configured: set "
                "model.base_url and model.model in config.yaml (or HERMES_MODEL_BASE_URL and "
                "HERMES_MODEL)."
            )
        options: dict[str, Any] = {
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        timeout = request.timeout
        if route.model:
            options["model"] = route.model
        if tools is not None:
            options["tools"], options["tool_choice"] = tools.schemas, tools.choice
        with client:
            try:
                response = client.chat(
                    messages,
                    timeout=timeout,
                    answer_timeout=timeout,  # a plugin's timeout bounds the whole call
                    response_format=response_format,
                    **options,
                )
            except LLMError as exc:
                if response_format is None or not _rejected_request(exc):
                    raise
                # Not every OpenAI-compatible server takes response_format; the
                # prompt already asks for JSON, so ask again without it.
                logger.debug("%s: endpoint refused response_format; retrying without", self)
                response = client.chat(messages, timeout=timeout, answer_timeout=timeout, **options)
            model_name = response.model or route.model or client.model
        provider = cfg_get(config, f"{route.section}.provider") or cfg_get(config, "model.provider")
        return response, str(provider or "custom"), model_name

    def _audit(self, route: _Route, purpose: str | None, **extra: str) -> dict[str, Any]:
        return {
            "plugin_id": self.plugin_id,
            "purpose": purpose or "",
            "profile": route.profile or "",
            "task": route.task or "",
            **extra,
        }

    def _send(
        self,
        call: str,
        chat: list[dict[str, Any]],
        request: _Request,
        response_format: dict[str, Any] | None = None,
        tools: _Tools | None = None,
        **audit: str,
    ) -> tuple[Any, dict[str, Any]]:
        """Gate, route and send *chat*; return the reply and the result's other fields."""
        config = load_config()
        route = self._route(config, request)
        response, provider, model = self._call(route, config, chat, request, response_format, tools)
        usage = _usage(response.usage)
        purpose = request.purpose
        logger.info(
            "plugin %s: ctx.llm.%s model=%s purpose=%s tokens=%d",
            self.plugin_id,
            call,
            model,
            purpose or "-",
            usage.total_tokens,
        )
        return response, {
            "provider": provider,
            "model": model,
            "agent_id": route.agent_id or "default",
            "usage": usage,
            "audit": self._audit(route, purpose, **audit),
        }

    def __repr__(self) -> str:
        return f"PluginLlm(plugin_id={self.plugin_id!r})"

    # -- the public surface -------------------------------------------------

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        provider: str | None = None,
        model: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
        agent_id: str | None = None,
        profile: str | None = None,
        purpose: str | None = None,
        task: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
    ) -> PluginLlmCompleteResult:
        """One chat completion of OpenAI-style *messages* on the configured model.

        *tools* (OpenAI function schemas) and *tool_choice* are sent as given;
        the calls the model makes come back in ``result.tool_calls``. Raises
        :class:`PluginLlmTrustError` for an override the operator did not allow,
        ``ValueError`` for malformed messages or tools,
        :class:`~hermes_core.errors.LLMNotConfiguredError` without a model and
        :class:`~hermes_core.errors.LLMError` when the endpoint fails.
        """
        request = _Request(
            provider, model, agent_id, profile, task, temperature, max_tokens, timeout, purpose
        )
        offered = _tools(tools, tool_choice)
        response, fields = self._send("complete", _chat_messages(messages), request, tools=offered)
        calls = [call.to_message() for call in response.tool_calls]
        return PluginLlmCompleteResult(text=response.content, tool_calls=calls, **fields)

    def complete_structured(
        self,
        *,
        instructions: str,
        input: Sequence[PluginLlmInput],
        json_schema: Any = None,
        json_mode: bool = False,
        schema_name: str | None = None,
        system_prompt: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
        agent_id: str | None = None,
        profile: str | None = None,
        purpose: str | None = None,
        task: str | None = None,
    ) -> PluginLlmStructuredResult:
        """A completion of *instructions* over text and image *input* blocks.

        With *json_schema* or *json_mode* the endpoint is asked for JSON
        (``response_format``, and in the prompt); the answer is parsed (a fenced
        block is unwrapped) and, when ``jsonschema`` is installed, validated
        against *json_schema*. Raises ``ValueError`` for empty instructions or
        input, a malformed block, or an answer that contradicts the schema.
        """
        if not isinstance(instructions, str) or not instructions.strip():
            raise ValueError("complete_structured needs non-empty instructions=")
        if isinstance(input, (str, bytes)) or not input:
            raise ValueError("complete_structured needs input=[...] with at least one block")
        wants_json = json_mode or json_schema is not None
        chat = _structured_messages(
            instructions, list(input), json_schema, schema_name, system_prompt, wants_json
        )
        request = _Request(
            provider, model, agent_id, profile, task, temperature, max_tokens, timeout, purpose
        )
        response_format = _response_format(json_schema, schema_name) if wants_json else None
        response, fields = self._send(
            "complete_structured", chat, request, response_format, schema_name=schema_name or ""
        )
        text = response.content
        parsed = _parse_json(text, json_schema) if wants_json else _NOT_JSON
        if parsed is _NOT_JSON:
            return PluginLlmStructuredResult(text=text, **fields)
        return PluginLlmStructuredResult(text=text, parsed=parsed, content_type="json", **fields)

    async def acomplete(
        self, messages: Sequence[Mapping[str, Any]], **options: Any
    ) -> PluginLlmCompleteResult:
        """:meth:`complete` on a worker thread, for plugins on an event loop."""
        return await asyncio.to_thread(self.complete, messages, **options)

    async def acomplete_structured(self, **options: Any) -> PluginLlmStructuredResult:
        """:meth:`complete_structured` on a worker thread."""
        return await asyncio.to_thread(lambda: self.complete_structured(**options))


_NOT_JSON = object()


class _Tools(NamedTuple):
    schemas: list[dict[str, Any]]
    choice: str | dict[str, Any] | None


def _tools(tools: Any, choice: Any) -> _Tools | None:
    """*tools* and *tool_choice* checked; ``None`` when no tools are offered."""
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence | None):
        raise ValueError("ctx.llm.complete: tools must be a list of OpenAI function schemas")
    if not tools:
        return None
    for n, tool in enumerate(tools):
        function = tool.get("function", tool) if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise ValueError(
                f"ctx.llm.complete: tool {n} is not a function schema with a name: {tool!r:.80}"
            )
    if choice is not None and not isinstance(choice, (str, Mapping)):
        raise ValueError(
            "ctx.llm.complete: tool_choice must be 'auto', 'none', 'required' or "
            f"{{'type': 'function', 'function': {{'name': ...}}}}, got {choice!r:.80}"
        )
    return _Tools(
        [dict(tool) for tool in tools], dict(choice) if isinstance(choice, Mapping) else choice
    )


def _rejected_request(exc: LLMError) -> bool:
    import httpx

    cause = exc.__cause__
    return isinstance(cause, httpx.HTTPStatusError) and cause.response.status_code in (400, 422)


def _chat_messages(messages: Any) -> list[dict[str, Any]]:
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise ValueError(
            "ctx.llm.complete: messages must be a list of {'role': ..., 'content': ...} dicts"
        )
    if not messages:
        raise ValueError("ctx.llm.complete: messages is empty")
    chat = []
    for n, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise ValueError(
                f"ctx.llm.complete: message {n} is not a {{'role': ..., 'content': ...}} dict: "
                f"{message!r:.80}"
            )
        chat.append(dict(message))
    try:
        json.dumps(chat)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"ctx.llm.complete: messages must be JSON data: {exc}") from exc
    return chat


def _block(block: Any) -> dict[str, Any]:
    """An input block as a dict, or ``ValueError`` naming what is wrong."""
    if isinstance(block, str):
        block = {"type": "text", "text": block}
    elif isinstance(block, PluginLlmTextInput):
        block = {"type": "text", "text": block.text}
    elif isinstance(block, PluginLlmImageInput):
        block = {
            "type": "image",
            "data": block.data,
            "url": block.url,
            "mime_type": block.mime_type,
        }
    if not isinstance(block, Mapping):
        raise ValueError(
            f"an input block must be text, a dict or PluginLlm*Input, got {block!r:.80}"
        )
    kind = block.get("type")
    if kind == "text":
        if not isinstance(block.get("text"), str):
            raise ValueError("a text input block needs 'text' (a string)")
        return {"type": "text", "text": block["text"]}
    if kind == "image":
        url, data = block.get("url"), block.get("data")
        if isinstance(url, str) and url:
            return {"type": "image_url", "image_url": {"url": url}}
        if isinstance(data, (bytes, bytearray)) and data:
            mime = block.get("mime_type") or "image/png"
            encoded = base64.b64encode(bytes(data)).decode("ascii")
            return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{encoded}"}}
        raise ValueError("an image input block needs 'data' (bytes) or 'url'")
    raise ValueError(f"unknown input block type {kind!r:.40}; use 'text' or 'image'")


def _structured_messages(
    instructions: str,
    blocks: list[Any],
    json_schema: Any,
    schema_name: str | None,
    system_prompt: str | None,
    wants_json: bool,
) -> list[dict[str, Any]]:
    system = [part for part in (system_prompt, _JSON_ONLY if wants_json else None) if part]
    header = instructions.strip()
    if schema_name:
        header += f"\n\nSchema name: {schema_name}"
    if json_schema is not None:
        header += "\n\nJSON schema:\n" + json.dumps(json_schema, ensure_ascii=False, default=str)
    parts = [{"type": "text", "text": header}, *(_block(block) for block in blocks)]
    content: str | list[dict[str, Any]]
    if all(part["type"] == "text" for part in parts):
        content = "\n\n".join(part["text"] for part in parts)  # text-only servers take this too
    else:
        content = parts
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": "\n\n".join(s.strip() for s in system)})
    messages.append({"role": "user", "content": content})
    return messages


def _response_format(json_schema: Any, schema_name: str | None) -> dict[str, Any]:
    if not isinstance(json_schema, Mapping):
        return {"type": "json_object"}
    name = re.sub(r"[^A-Za-z0-9_-]", "_", schema_name or "")[:64] or "response"
    return {"type": "json_schema", "json_schema": {"name": name, "schema": dict(json_schema)}}


def _json_value(text: str) -> Any:
    """The JSON value *text* holds (a fenced block unwrapped, prose around it skipped)."""
    fenced = _FENCE_RE.search(text)
    candidate = (fenced.group(1) if fenced else text).strip()
    try:
        return json.loads(candidate)
    except (ValueError, RecursionError):
        pass
    starts = [i for i in (candidate.find("{"), candidate.find("[")) if i >= 0]
    if not starts:
        return _NOT_JSON
    try:
        return json.JSONDecoder().raw_decode(candidate, min(starts))[0]
    except (ValueError, RecursionError):
        return _NOT_JSON


def _parse_json(text: str, json_schema: Any) -> Any:
    """The JSON value of *text*, or ``_NOT_JSON``; ``ValueError`` when it breaks the schema."""
    value = _json_value(text)
    if value is _NOT_JSON or not isinstance(json_schema, Mapping):
        return value
    try:
        import jsonschema
    except ImportError:
        logger.debug("jsonschema is not installed; the answer is not checked against the schema")
        return value
    try:
        jsonschema.validate(value, dict(json_schema))
    except jsonschema.SchemaError as exc:
        raise ValueError(f"json_schema is not a valid JSON Schema: {exc.message}") from exc
    except jsonschema.ValidationError as exc:
        raise ValueError(f"the model's JSON does not match the schema: {exc.message}") from exc
    except RecursionError as exc:
        raise ValueError(
            "the model's JSON is nested too deeply to check against the schema"
        ) from exc
    return value


def _usage(usage: Any) -> PluginLlmUsage:
    if usage is None:
        return PluginLlmUsage()
    return PluginLlmUsage(
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        total_tokens=usage.total_tokens or usage.prompt_tokens + usage.completion_tokens,
        cache_read_tokens=usage.cached_tokens,
    )
