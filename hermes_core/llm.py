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

from hermes_core.config import cfg_get
from hermes_core.errors import LLMError, LLMNotConfiguredError

__all__ = [
    "ChatClient",
    "ChatResponse",
    "ChatStream",
    "ToolCall",
    "Usage",
]

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 3


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
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LLMError(
                f"Model sent malformed arguments for tool {self.name!r}: {exc.msg} "
                f"in {self.arguments[:200]!r}"
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
    """Iterate to receive text deltas; ``response`` holds the full reply afterwards."""

    def __init__(self, events: Iterator[dict[str, Any]], model: str) -> None:
        self._events = events
        self._model = model
        self._text: list[str] = []
        self._calls: dict[int, dict[str, str]] = {}
        self._usage: Usage | None = None
        self._finish: str | None = None
        self.response: ChatResponse | None = None

    def __iter__(self) -> Iterator[str]:
        for chunk in self._events:
            usage = _usage_from(chunk.get("usage"))
            if usage is not None:
                self._usage = usage
            for choice in chunk.get("choices") or []:
                if not isinstance(choice, Mapping):
                    continue
                if choice.get("finish_reason"):
                    self._finish = str(choice["finish_reason"])
                delta = choice.get("delta") or {}
                if not isinstance(delta, Mapping):
                    continue
                for call in delta.get("tool_calls") or []:
                    self._merge_tool_call(call)
                text = delta.get("content")
                if isinstance(text, str) and text:
                    self._text.append(text)
                    yield text
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

    def _merge_tool_call(self, call: Any) -> None:
        if not isinstance(call, Mapping):
            raise LLMError(f"Model streamed a malformed tool call: {call!r}")
        index = call.get("index", len(self._calls))
        slot = self._calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        if call.get("id"):
            slot["id"] = str(call["id"])
        function = call.get("function") or {}
        if isinstance(function, Mapping):
            slot["name"] += str(function.get("name") or "")
            slot["arguments"] += str(function.get("arguments") or "")


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
    ) -> None:
        if not base_url:
            raise LLMNotConfiguredError("No model base_url given; set model.base_url.")
        if not model:
            raise LLMNotConfiguredError("No model name given; set model.model.")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
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

        def pick(key: str) -> Any:
            value = cfg_get(config, f"{section}.{key}")
            if value in (None, "") and section != "model":
                value = cfg_get(config, f"model.{key}")
            return value

        env = os.environ
        base_url = (
            pick("base_url") or env.get("HERMES_MODEL_BASE_URL") or env.get("OPENAI_BASE_URL")
        )
        model = pick("model") or env.get("HERMES_MODEL")
        if not base_url or not model:
            return None
        key_env = pick("api_key_env")
        api_key = (
            pick("api_key")
            or (env.get(str(key_env)) if key_env else None)
            or env.get("HERMES_API_KEY")
            or env.get("OPENAI_API_KEY")
        )
        options: dict[str, Any] = {"api_key": api_key}
        timeout = pick("timeout")
        if timeout not in (None, ""):
            try:
                options["timeout"] = float(timeout)
            except (TypeError, ValueError) as exc:
                raise LLMError(f"{section}.timeout must be a number, got {timeout!r}") from exc
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
        except ValueError as exc:
            raise LLMError(
                f"Model endpoint {self.base_url} returned non-JSON: {response.text[:200]!r}"
            ) from exc
        return self._parse_completion(data)

    def _parse_completion(self, data: Any) -> ChatResponse:
        choices = data.get("choices") if isinstance(data, Mapping) else None
        if not choices or not isinstance(choices[0], Mapping):
            raise LLMError(f"Model endpoint {self.base_url} returned no choices: {data!r:.300}")
        message = choices[0].get("message") or {}
        if not isinstance(message, Mapping):
            raise LLMError(f"Model endpoint returned a malformed message: {message!r:.300}")
        calls: list[ToolCall] = []
        for i, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping) or not function.get("name"):
                raise LLMError(f"Model returned a malformed tool call: {call!r:.300}")
            arguments = function.get("arguments")
            if isinstance(arguments, Mapping):
                arguments = json.dumps(arguments)
            calls.append(
                ToolCall(
                    id=str(call.get("id") or f"call_{i}"),
                    name=str(function["name"]),
                    arguments=str(arguments or ""),
                )
            )
        content = message.get("content")
        return ChatResponse(
            content=content if isinstance(content, str) else "",
            tool_calls=calls,
            usage=_usage_from(data.get("usage")),
            finish_reason=choices[0].get("finish_reason"),
            model=str(data.get("model") or self.model),
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
        return ChatStream(self._sse_events(response), self.model)

    def _sse_events(self, response: httpx.Response) -> Iterator[dict[str, Any]]:
        try:
            for line in response.iter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                try:
                    event = json.loads(data)
                except json.JSONDecodeError as exc:
                    raise LLMError(f"Model streamed malformed JSON: {data[:200]!r}") from exc
                if isinstance(event, Mapping) and "error" in event:
                    raise LLMError(f"Model endpoint reported an error: {event['error']!r:.300}")
                if isinstance(event, dict):
                    yield event
        except httpx.HTTPError as exc:
            raise LLMError(_describe_http_error(exc, self.base_url)) from exc
        finally:
            response.close()
