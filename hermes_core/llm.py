"""An OpenAI-compatible chat-completions client over httpx, retried with tenacity.

One client serves the agent loop (streaming, tool calls), the session-search
summariser and the compressor. Configure it in ``config.yaml``::

    model:
      base_url: http://localhost:8000/v1
      model: my-model
      api_key_env: MY_API_KEY      # or api_key: ... (prefer the env var)
      timeout: 60

or with ``HERMES_MODEL_BASE_URL`` / ``HERMES_MODEL`` / ``HERMES_API_KEY``
(``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` are honoured as fallbacks).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from tenacity import (
    retry,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from hermes_core.config import cfg_get, config_section, model_endpoint
from hermes_core.errors import LLMError, LLMNotConfiguredError
from hermes_core.fencing import clean_text

__all__ = [
    "ChatClient",
    "ChatResponse",
    "ChatStream",
    "ToolCall",
    "Usage",
]

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_ANSWER_TIMEOUT = 1800.0
"""Seconds one streamed answer may take from first to last byte (``model.answer_timeout``)."""
MAX_ANSWER_CHARS = 1_000_000
"""Characters of text and tool arguments one answer may carry; no real answer comes close."""


def _clean_value(value: Any) -> Any:
    """*value* (decoded JSON) with every string passed through :func:`clean_text`."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [_clean_value(item) for item in value]
    if isinstance(value, dict):
        return {clean_text(str(k)): _clean_value(v) for k, v in value.items()}
    return value


def _content_text(content: Any) -> str:
    """A message's ``content``: a string, or the text of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return ""


class _Done:
    """The ``data: [DONE]`` marker of a stream."""


_DONE = _Done()


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a dict; raises :class:`LLMError` when they are not a JSON object."""
        text = self.arguments.strip() or "{}"
        try:
            value = _clean_value(json.loads(text))
        except json.JSONDecodeError as exc:
            raise LLMError(
                f"Model sent malformed arguments for tool {self.name!r}: {exc.msg} "
                f"in {self.arguments[:200]!r}"
            ) from exc
        except RecursionError as exc:
            raise LLMError(
                f"Model sent arguments for tool {self.name!r} nested too deeply to read."
            ) from exc
        if not isinstance(value, dict):
            raise LLMError(
                f"Model sent arguments for tool {self.name!r} that are not a JSON object: "
                f"{self.arguments[:200]!r}"
            )
        return value

    def to_message(self) -> dict[str, Any]:
        """The OpenAI wire form used inside an assistant message."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class Usage:
    """Token counts reported by the endpoint."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0


@dataclass
class ChatResponse:
    """A complete assistant reply."""

    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None
    model: str = ""

    def to_message(self) -> dict[str, Any]:
        """The reply as an OpenAI-style assistant message for the transcript."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.to_message() for call in self.tool_calls]
        return message


def _usage_from(data: Any) -> Usage | None:
    if not isinstance(data, Mapping):
        return None
    details = data.get("prompt_tokens_details")
    cached = details.get("cached_tokens", 0) if isinstance(details, Mapping) else 0

    def as_int(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return Usage(
        prompt_tokens=as_int(data.get("prompt_tokens")),
        completion_tokens=as_int(data.get("completion_tokens")),
        total_tokens=as_int(data.get("total_tokens")),
        cached_tokens=as_int(cached),
    )


def _seconds(key: str, value: Any) -> float | None:
    """A ``*timeout`` setting in seconds (``None`` when unset); :class:`LLMError` if unusable."""
    if value in (None, ""):
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError) as exc:
        raise LLMError(
            f"{key} must be a number of seconds, got {value!r}. Fix it in config.yaml."
        ) from exc
    if isinstance(value, bool) or not 0 < seconds < 86_400:
        raise LLMError(
            f"{key} must be a positive number of seconds (below a day), got {value!r}. "
            "Fix it in config.yaml."
        )
    return seconds


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, httpx.TransportError):
        return True
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code in (408, 409, 429) or exc.response.status_code >= 500
    return False


def _describe_http_error(exc: Exception, url: str) -> str:
    if isinstance(exc, httpx.HTTPStatusError):
        body = exc.response.text[:300]
        hint = ""
        if exc.response.status_code in (401, 403):
            hint = " Check the API key (model.api_key_env or HERMES_API_KEY)."
        elif exc.response.status_code == 404:
            hint = " Check model.base_url (it usually ends in /v1) and model.model."
        return f"Model endpoint {url} answered HTTP {exc.response.status_code}: {body}{hint}"
    if isinstance(exc, httpx.TimeoutException):
        return f"Model endpoint {url} timed out; raise model.timeout or check the server."
    if isinstance(exc, httpx.TransportError):
        return f"Cannot reach model endpoint {url}: {exc}. Is the server running?"
    return f"Model endpoint {url} failed: {exc}"


class ChatStream:
    """Iterate to receive text deltas; ``response`` holds the full reply afterwards.

    Iteration raises :class:`LLMError` when the stream is malformed, ends
    before the model finished (no ``[DONE]`` and no ``finish_reason``), runs
    past *deadline* (a ``time.monotonic()`` value) or grows past
    :data:`MAX_ANSWER_CHARS`.
    """

    def __init__(
        self,
        events: Iterator[dict[str, Any] | _Done],
        model: str,
        *,
        deadline: float | None = None,
        answer_timeout: float | None = None,
    ) -> None:
        self._events = events
        self._model = model
        self._deadline = deadline
        self._answer_timeout = answer_timeout
        self._text: list[str] = []
        self._size = 0
        self._calls: dict[int, dict[str, str]] = {}
        self._usage: Usage | None = None
        self._finish: str | None = None
        self.response: ChatResponse | None = None

    def __iter__(self) -> Iterator[str]:
        done = False
        for chunk in self._events:
            if isinstance(chunk, _Done):
                done = True
                break
            self._check_bounds()
            usage = _usage_from(chunk.get("usage"))
            if usage is not None:
                self._usage = usage
            for delta in self._deltas(chunk):
                calls = delta.get("tool_calls") or []
                if not isinstance(calls, list):
                    raise LLMError(f"Model streamed malformed tool_calls: {calls!r:.200}")
                for call in calls:
                    self._merge_tool_call(call)
                text = delta.get("content")
                if isinstance(text, str) and text:
                    text = clean_text(text)
                    self._grow(len(text))
                    self._text.append(text)
                    yield text
        if not done and self._finish is None:
            raise LLMError(
                "The model stream ended before it was complete (no finish_reason and no "
                "[DONE]): the connection was cut or the server stopped. Retry the turn."
            )
        calls = [
            ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"])
            for i, c in sorted(self._calls.items())
        ]
        self.response = ChatResponse(
            content="".join(self._text),
            tool_calls=calls,
            usage=self._usage,
            finish_reason=self._finish,
            model=self._model,
        )

    def _deltas(self, chunk: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
        """The ``delta`` of each choice of *chunk*, noting any ``finish_reason``."""
        choices = chunk.get("choices") or []
        if not isinstance(choices, list):
            raise LLMError(f"Model streamed malformed choices: {choices!r:.200}")
        for choice in choices:
            if not isinstance(choice, Mapping):
                continue
            if choice.get("finish_reason"):
                self._finish = clean_text(str(choice["finish_reason"]))
            delta = choice.get("delta") or {}
            if not isinstance(delta, Mapping):
                raise LLMError(f"Model streamed a malformed delta: {delta!r:.200}")
            yield delta

    def _check_bounds(self) -> None:
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise LLMError(
                f"The model kept streaming for more than {self._answer_timeout:g}s without "
                "finishing its answer, so it was stopped. Retry, or raise model.answer_timeout "
                "for a slow model."
            )

    def _grow(self, chars: int) -> None:
        self._size += chars
        if self._size > MAX_ANSWER_CHARS:
            raise LLMError(
                f"The model's answer passed {MAX_ANSWER_CHARS:,} characters without ending, so "
                "it was stopped (a runaway generation). Retry, or ask for a shorter answer."
            )

    def _merge_tool_call(self, call: Any) -> None:
        if not isinstance(call, Mapping):
            raise LLMError(f"Model streamed a malformed tool call: {call!r:.200}")
        index = call.get("index", len(self._calls))
        if isinstance(index, str) and index.isdigit():
            index = int(index)
        if isinstance(index, bool) or not isinstance(index, int):
            raise LLMError(f"Model streamed a tool call with a malformed index: {call!r:.200}")
        slot = self._calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        if call.get("id"):
            slot["id"] = clean_text(str(call["id"]))
        function = call.get("function") or {}
        if isinstance(function, Mapping):
            name = clean_text(str(function.get("name") or ""))
            arguments = clean_text(str(function.get("arguments") or ""))
            self._grow(len(name) + len(arguments))
            slot["name"] += name
            slot["arguments"] += arguments


class ChatClient:
    """Chat completions against any OpenAI-compatible endpoint."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        extra_headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        answer_timeout: float = DEFAULT_ANSWER_TIMEOUT,
    ) -> None:
        if not base_url:
            raise LLMNotConfiguredError("No model base_url given; set model.base_url.")
        if not model:
            raise LLMNotConfiguredError("No model name given; set model.model.")
        if not base_url.lower().startswith(("http://", "https://")):
            raise LLMError(
                f"The model base URL must start with http:// or https://, got {base_url!r:.80} "
                "(e.g. http://localhost:8000/v1). Fix model.base_url or --base-url."
            )
        if not timeout > 0 or not answer_timeout > 0:
            raise ValueError("timeout and answer_timeout must be positive")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.answer_timeout = answer_timeout
        self.max_retries = max(1, int(max_retries))
        headers = {"Content-Type": "application/json", **dict(extra_headers or {})}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx.Client(
            base_url=self.base_url, headers=headers, timeout=timeout, transport=transport
        )

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, Any] | None,
        section: str = "model",
        **overrides: Any,
    ) -> ChatClient | None:
        """Build a client from ``config.yaml`` and the environment, or ``None`` if unset.

        Keys of *section* fall back to the ``model`` section, then to
        ``HERMES_MODEL_BASE_URL`` / ``HERMES_MODEL`` / ``HERMES_API_KEY`` and
        ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``.
        """

        config_section(config, section)
        config_section(config, "model")

        def pick(key: str) -> Any:
            value = cfg_get(config, f"{section}.{key}")
            if value in (None, "") and section != "model":
                value = cfg_get(config, f"model.{key}")
            return value

        options: dict[str, Any] = {}
        for key in ("timeout", "answer_timeout"):
            seconds = _seconds(f"{section}.{key}", pick(key))
            if seconds is not None:
                options[key] = seconds
        env = os.environ
        base_url, model = model_endpoint(config, section)
        key_env = pick("api_key_env")
        for key, value in (("base_url", base_url), ("model", model), ("api_key_env", key_env)):
            if value not in (None, "") and not isinstance(value, str):
                raise LLMError(
                    f"{section}.{key} must be text, got {value!r:.80}. Fix it in config.yaml."
                )
        if not base_url or not model:
            return None
        api_key = (
            pick("api_key")
            or (env.get(key_env) if key_env else None)
            or env.get("HERMES_API_KEY")
            or env.get("OPENAI_API_KEY")
        )
        if api_key is not None and (
            not isinstance(api_key, str) or any(ch.isspace() for ch in api_key.strip())
        ):
            raise LLMError(
                f"The API key for {section} is not a single word of text (check "
                f"{section}.api_key or the variable named by {section}.api_key_env)."
            )
        options["api_key"] = api_key.strip() if api_key else None
        options.update(overrides)
        return cls(str(base_url), str(model), **options)

    def close(self) -> None:
        """Close the underlying HTTP connection pool."""
        self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _payload(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None,
        options: Mapping[str, Any],
        stream: bool,
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        if tools:
            payload["tools"] = [
                tool if tool.get("type") == "function" else {"type": "function", "function": tool}
                for tool in tools
            ]
        if stream:
            payload["stream"] = True
            payload["stream_options"] = {"include_usage": True}
        payload.update({k: v for k, v in options.items() if v is not None})
        return payload

    def _with_retries(self, fn: Any) -> Any:
        return retry(
            retry=retry_if_exception(_retryable),
            stop=stop_after_attempt(self.max_retries),
            wait=wait_random_exponential(multiplier=0.5, max=8.0),
            reraise=True,
        )(fn)

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        timeout: float | None = None,
        **options: Any,
    ) -> ChatResponse:
        """One non-streaming completion; raises :class:`LLMError` with a clear cause."""
        payload = self._payload(messages, tools, options, stream=False)

        def send() -> httpx.Response:
            response = self._http.post(
                "/chat/completions", json=payload, timeout=timeout or self.timeout
            )
            response.raise_for_status()
            return response

        try:
            response = self._with_retries(send)()
        except httpx.HTTPError as exc:
            raise LLMError(_describe_http_error(exc, self.base_url)) from exc
        try:
            data = response.json()
        except (ValueError, RecursionError) as exc:
            raise LLMError(
                f"Model endpoint {self.base_url} returned non-JSON: {response.text[:200]!r}"
            ) from exc
        return self._parse_completion(data)

    def _parse_completion(self, data: Any) -> ChatResponse:
        choices = data.get("choices") if isinstance(data, Mapping) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            raise LLMError(f"Model endpoint {self.base_url} returned no choices: {data!r:.300}")
        message = choices[0].get("message") or {}
        if not isinstance(message, Mapping):
            raise LLMError(f"Model endpoint returned a malformed message: {message!r:.300}")
        raw_calls = message.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise LLMError(f"Model returned malformed tool_calls: {raw_calls!r:.300}")
        calls: list[ToolCall] = []
        for i, call in enumerate(raw_calls):
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping) or not function.get("name"):
                raise LLMError(f"Model returned a malformed tool call: {call!r:.300}")
            arguments = function.get("arguments")
            if isinstance(arguments, Mapping):
                arguments = json.dumps(arguments)
            calls.append(
                ToolCall(
                    id=clean_text(str(call.get("id") or f"call_{i}")),
                    name=clean_text(str(function["name"])),
                    arguments=clean_text(str(arguments or "")),
                )
            )
        finish = choices[0].get("finish_reason")
        return ChatResponse(
            content=clean_text(_content_text(message.get("content"))),
            tool_calls=calls,
            usage=_usage_from(data.get("usage")),
            finish_reason=clean_text(finish) if isinstance(finish, str) else None,
            model=clean_text(str(data.get("model") or self.model)),
        )

    def stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        timeout: float | None = None,
        **options: Any,
    ) -> ChatStream:
        """A streaming completion; connection errors before the first byte are retried."""
        payload = self._payload(messages, tools, options, stream=True)

        def open_stream() -> httpx.Response:
            request = self._http.build_request(
                "POST", "/chat/completions", json=payload, timeout=timeout or self.timeout
            )
            response = self._http.send(request, stream=True)
            if response.status_code >= 400:
                response.read()
                response.close()
                response.raise_for_status()
            return response

        try:
            response = self._with_retries(open_stream)()
        except httpx.HTTPError as exc:
            raise LLMError(_describe_http_error(exc, self.base_url)) from exc
        return ChatStream(
            self._sse_events(response),
            self.model,
            deadline=time.monotonic() + self.answer_timeout,
            answer_timeout=self.answer_timeout,
        )

    def _sse_events(self, response: httpx.Response) -> Iterator[dict[str, Any] | _Done]:
        try:
            for line in response.iter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    yield _DONE
                    break
                try:
                    event = json.loads(data)
                except (json.JSONDecodeError, RecursionError) as exc:
                    raise LLMError(f"Model streamed malformed JSON: {data[:200]!r}") from exc
                if not isinstance(event, dict):
                    raise LLMError(f"Model streamed an event that is not an object: {data:.200}")
                if "error" in event:
                    raise LLMError(f"Model endpoint reported an error: {event['error']!r:.300}")
                yield event
        except httpx.HTTPError as exc:
            raise LLMError(_describe_http_error(exc, self.base_url)) from exc
        finally:
            response.close()
