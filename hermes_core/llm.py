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

The answer types (:class:`ToolCall`, :class:`Usage`, :class:`ChatResponse`) live in
:mod:`hermes_core.llm_answer` and the streamed-answer reader (:class:`ChatStream`)
in :mod:`hermes_core.llm_stream`; both are importable from here.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx
from tenacity import (
    RetryCallState,
    retry,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
    wait_random_exponential,
)

from hermes_core.config import cfg_get, config_section, model_endpoint
from hermes_core.errors import LLMError, LLMNotConfiguredError
from hermes_core.fencing import clean_text
from hermes_core.llm_answer import (
    MAX_ANSWER_CHARS,
    TOOL_CALL_CHARS,
    ChatResponse,
    ToolCall,
    Usage,
    arguments_text,
    clean_value,
    content_text,
    printable,
    too_long,
    usage_from,
)
from hermes_core.llm_stream import DONE, ChatStream, Done, as_events
from hermes_core.secrets import profile_environ

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_RESPONSE_BYTES",
    "ChatClient",
    "ChatResponse",
    "ChatStream",
    "ToolCall",
    "Usage",
]

_T = TypeVar("_T")

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_ANSWER_TIMEOUT = 1800.0
"""Seconds one streamed answer may take from first to last byte (``model.answer_timeout``)."""
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
"""Bytes of one JSON answer or one streamed event line read before the answer is refused."""
MAX_ERROR_BYTES = 16 * 1024
"""Bytes of an error answer's body read to quote in the error message."""
MAX_RETRY_WAIT = 8.0
"""Longest wait between two attempts; a ``Retry-After`` asking for more is not honoured."""

_USERINFO_RE = re.compile(r"(?<=//)[^/?#@]*@")
_LINE_BREAK_RE = re.compile(rb"\r\n|\r|\n")
_HEADER_NAME_RE = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _redact_url(url: str) -> str:
    """*url* with any ``user:password@`` replaced, for messages."""
    return _USERINFO_RE.sub("***@", url)


def _credential_problem(value: str, *, spaces: bool = False) -> str | None:
    """Why *value* cannot be sent in an HTTP header (``None`` when it can); never quotes it.

    Spaces are refused too unless *spaces* (a key or password has none).
    """
    for position, ch in enumerate(value, 1):
        if ch in "\r\n":
            kind = "a line break"
        elif ch in " \t":
            if ch == " " and spaces:
                continue
            kind = "a space or tab"
        elif ch < " " or ch == "\x7f":
            kind = "a control character"
        elif ch > "\x7f":
            kind = "a non-ASCII character"
        else:
            continue
        return f"{kind} (character {position})"
    return None


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (0 for a past date), or ``None``."""
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


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


def _endpoint_url(base_url: str) -> httpx.URL:
    """*base_url* parsed and checked, without its fragment; :class:`LLMError` if unusable."""
    shown = printable(_redact_url(base_url))[:120]
    fix = "(e.g. http://localhost:8000/v1). Fix model.base_url or --base-url."
    if not base_url.strip().lower().startswith(("http://", "https://")):
        raise LLMError(
            f"The model base URL must start with http:// or https://, got {shown!r} {fix}"
        )
    try:
        url = httpx.URL(base_url.strip())
        port = url.port
    except (httpx.InvalidURL, ValueError) as exc:
        # httpx may quote the part it stumbled on: not when that could be a password.
        reason = "" if _USERINFO_RE.search(base_url) else f" ({printable(str(exc))})"
        raise LLMError(f"The model base URL {shown!r} is not a valid URL{reason} {fix}") from None
    if not url.host:
        raise LLMError(f"The model base URL {shown!r} names no host {fix}")
    if port is not None and not 0 < port < 65536:
        raise LLMError(f"The model base URL {shown!r} has port {port}, out of range {fix}")
    if any(_credential_problem(part) for part in (url.username, url.password)):
        raise LLMError(f"The user or password in the model base URL {shown!r} is not usable {fix}")
    return url.copy_with(fragment=None)


class _StatusError(httpx.HTTPStatusError):
    """The endpoint answered a status other than 2xx; ``body`` is the start of its body.

    ``response`` holds that start too, so it can be read after the connection closed.
    """

    def __init__(self, response: httpx.Response, body: bytes) -> None:
        read = httpx.Response(
            response.status_code, headers=response.headers, content=body, request=response.request
        )
        super().__init__(f"HTTP {response.status_code}", request=response.request, response=read)
        self.status = response.status_code
        self.body = body.decode("utf-8", "replace")
        self.content_type = response.headers.get("content-type", "")
        self.retry_after = _retry_after(response.headers)
        self.location = response.headers.get("location", "")


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, httpx.TransportError):
        return True
    if isinstance(exc, _StatusError):
        return exc.status in (408, 409, 429) or exc.status >= 500
    return False


def _status_hint(exc: _StatusError) -> str:
    """What to do about an HTTP status, as a sentence (``""`` when there is nothing to say)."""
    if exc.status in (401, 403):
        return " Check the API key (model.api_key_env or HERMES_API_KEY)."
    if exc.status == 404:
        return " Check model.base_url (it usually ends in /v1) and model.model."
    if exc.status == 429:
        asked = f" (it asked to wait {exc.retry_after:.0f}s)" if exc.retry_after else ""
        return f" The endpoint is rate-limiting requests{asked}; wait, then retry."
    if 300 <= exc.status < 400:
        where = f" to {_redact_url(exc.location)[:200]}" if exc.location else ""
        return (
            f" It redirected{where}, which is not followed (the API key would go with it): "
            "set model.base_url to the final address."
        )
    return ""


class ChatClient:
    """Chat completions against any OpenAI-compatible endpoint.

    *base_url* may carry a query string (sent with every request, e.g.
    ``?api-version=…``) and ``user:password@`` (sent as HTTP Basic auth, which
    takes the place of the API key); ``self.base_url`` is the address without
    either, fit to show. Each call, retries included, ends within
    *answer_timeout* seconds; *timeout* bounds connecting and each wait for data.
    """

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
        if not timeout > 0 or not answer_timeout > 0:
            raise ValueError("timeout and answer_timeout must be positive")
        url = _endpoint_url(base_url)
        self.base_url = str(url.copy_with(userinfo=b"", query=None)).rstrip("/")
        self.model = model
        self.timeout = timeout
        self.answer_timeout = answer_timeout
        self.max_retries = max(1, int(max_retries))
        headers = {"Content-Type": "application/json", **dict(extra_headers or {})}
        for name, value in headers.items():
            if not _HEADER_NAME_RE.fullmatch(name) or _credential_problem(value, spaces=True):
                raise LLMError(f"Extra header {name!r:.60} is not a valid HTTP header; fix it.")
        if api_key:
            problem = _credential_problem(api_key)
            if problem:
                raise LLMError(
                    f"The API key contains {problem}, so it cannot be sent: copy it again "
                    "without it (check model.api_key, the variable named by model.api_key_env, "
                    "HERMES_API_KEY or OPENAI_API_KEY)."
                )
            headers["Authorization"] = f"Bearer {api_key}"
        self._secrets = [secret for secret in (api_key, url.password) if secret]
        self._http = httpx.Client(
            base_url=self.base_url,
            params=url.params,
            headers=headers,
            auth=httpx.BasicAuth(url.username, url.password) if url.username else None,
            timeout=timeout,
            transport=transport,
        )

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, Any] | None,
        section: str = "model",
        *,
        hermes_home: str | os.PathLike[str] | None = None,
        **overrides: Any,
    ) -> ChatClient | None:
        """Build a client from ``config.yaml`` and the environment, or ``None`` if unset.

        Keys of *section* fall back to the ``model`` section, then to
        ``HERMES_MODEL_BASE_URL`` / ``HERMES_MODEL`` / ``HERMES_API_KEY`` and
        ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``. Variables (``api_key_env``'s
        included) are read from the environment, then from *hermes_home*'s
        ``.env`` (default: the active ``HERMES_HOME``), where Hermes keeps keys.
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
        env = profile_environ(hermes_home)
        base_url, model = model_endpoint(config, section, env)
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
        if api_key is not None and not isinstance(api_key, str):
            raise LLMError(
                f"The API key for {section} must be text (check {section}.api_key or the "
                f"variable named by {section}.api_key_env)."
            )
        api_key = api_key.strip() if api_key else None
        problem = _credential_problem(api_key) if api_key else None
        if problem:
            raise LLMError(
                f"The API key for {section} contains {problem}, so it cannot be sent: copy it "
                f"again without it (check {section}.api_key or the variable named by "
                f"{section}.api_key_env)."
            )
        options["api_key"] = api_key
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
    ) -> bytes:
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
        # Unpaired surrogates (text that was never valid) become U+FFFD instead
        # of failing the request on encoding, every time the turn is retried.
        try:
            return json.dumps(clean_value(payload), ensure_ascii=False, allow_nan=False).encode()
        except (TypeError, ValueError, RecursionError) as exc:
            raise LLMError(
                f"The request to the model cannot be sent as JSON ({exc}): messages, tools and "
                "options must be JSON data (text, numbers, lists, objects; no NaN)."
            ) from exc

    def _with_retries(self, fn: Callable[[], _T], deadline: float) -> _T:
        """``fn()`` retried on connection errors, 408/409/429 and 5xx, within *deadline*.

        Waits are jittered exponential back-off, or what ``Retry-After`` asks
        when that is at most :data:`MAX_RETRY_WAIT`; no wait or attempt runs
        past *deadline*.
        """
        jitter = wait_random_exponential(multiplier=0.5, max=MAX_RETRY_WAIT)

        def wait(state: RetryCallState) -> float:
            failure = state.outcome.exception() if state.outcome else None
            asked = failure.retry_after if isinstance(failure, _StatusError) else None
            delay = jitter(state)
            if asked is not None and asked <= MAX_RETRY_WAIT:
                delay = max(delay, asked)
            return max(0.0, min(delay, deadline - time.monotonic()))

        try:
            return retry(
                retry=retry_if_exception(_retryable),
                stop=stop_after_attempt(self.max_retries)
                | stop_before_delay(max(0.0, deadline - time.monotonic())),
                wait=wait,
                reraise=True,
            )(fn)()
        except _StatusError as exc:
            body = self._snippet(exc.body.strip(), 300)
            raise LLMError(
                f"Model endpoint {self.base_url} answered HTTP {exc.status}"
                f"{f': {body}' if body else '.'}{_status_hint(exc)}"
            ) from exc
        except httpx.HTTPError as exc:
            raise LLMError(self._describe(exc)) from exc

    def _describe(self, exc: httpx.HTTPError) -> str:
        if isinstance(exc, httpx.TimeoutException):
            return (
                f"Model endpoint {self.base_url} timed out; raise model.timeout or check the "
                "server."
            )
        if isinstance(exc, httpx.TransportError):
            return (
                f"Cannot reach model endpoint {self.base_url}: {self._snippet(str(exc), 300)}. "
                "Is the server running?"
            )
        return f"Model endpoint {self.base_url} failed: {self._snippet(str(exc), 300)}"

    def _snippet(self, text: str, limit: int) -> str:
        """*text* cut to *limit* characters, secrets masked and control characters escaped."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return printable(text[:limit])

    def _overdue(self, budget: float) -> LLMError:
        return LLMError(
            f"Model endpoint {self.base_url} did not finish answering within {budget:g}s, so the "
            "call was stopped. Retry, or raise model.answer_timeout for a slow model."
        )

    def _open(
        self, payload: bytes, timeout: float | None, deadline: float, budget: float
    ) -> httpx.Response:
        """Send the request; the response (body unread) when its status is 2xx."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise self._overdue(budget)
        request = self._http.build_request(
            "POST",
            "/chat/completions",
            content=payload,
            timeout=min(timeout or self.timeout, remaining),
        )
        response = self._http.send(request, stream=True)
        if not response.is_success:
            try:
                body, _ = self._read(response, deadline, budget, MAX_ERROR_BYTES)
            finally:
                response.close()
            raise _StatusError(response, body)
        return response

    def _read(
        self, response: httpx.Response, deadline: float, budget: float, limit: int
    ) -> tuple[bytes, bool]:
        """(body, complete): read until the end or *limit* bytes; past *deadline* it raises."""
        data = bytearray()
        for chunk in response.iter_bytes():
            data += chunk
            if len(data) > limit:
                return bytes(data[:limit]), False
            if time.monotonic() > deadline:
                raise self._overdue(budget)
        return bytes(data), True

    def _whole_answer(
        self, response: httpx.Response, deadline: float, budget: float
    ) -> ChatResponse:
        """Read and parse a JSON answer (closing *response*)."""
        try:
            body, complete = self._read(response, deadline, budget, MAX_RESPONSE_BYTES)
        finally:
            response.close()
        if not complete:
            raise LLMError(
                f"Model endpoint {self.base_url} sent more than {MAX_RESPONSE_BYTES:,} bytes "
                "for one answer, so it was refused (a runaway generation or the wrong server)."
            )
        if not body.strip():
            raise LLMError(
                f"Model endpoint {self.base_url} answered with an empty body: the server at "
                "that URL is not OpenAI-compatible, or is misbehaving."
            )
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:
            page = "html" in response.headers.get("content-type", "").lower()
            raise LLMError(
                f"Model endpoint {self.base_url} returned non-JSON"
                f"{' (an HTML page)' if page else ''}: "
                f"{self._snippet(body.decode('utf-8', 'replace'), 200)!r}. Check model.base_url "
                "(it usually ends in /v1): the server there is not an OpenAI-compatible API."
            ) from exc
        return self._parse_completion(data)

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        timeout: float | None = None,
        answer_timeout: float | None = None,
        **options: Any,
    ) -> ChatResponse:
        """One non-streaming completion; raises :class:`LLMError` with a clear cause.

        *timeout* overrides ``self.timeout`` (connecting, each wait for data) and
        *answer_timeout* ``self.answer_timeout`` (the whole call, retries included).
        """
        payload = self._payload(messages, tools, options, stream=False)
        budget = answer_timeout or self.answer_timeout
        deadline = time.monotonic() + budget

        def send() -> ChatResponse:
            return self._whole_answer(
                self._open(payload, timeout, deadline, budget), deadline, budget
            )

        return self._with_retries(send, deadline)

    def _parse_completion(self, data: Any) -> ChatResponse:
        choices = data.get("choices") if isinstance(data, Mapping) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            # Some servers and proxies answer 200 with an error body; it may quote the
            # key it refused, so every quote goes through _snippet (key masked).
            if isinstance(data, Mapping) and (data.get("error") or data.get("object") == "error"):
                detail = data.get("error") or data.get("message") or data
                raise LLMError(
                    f"Model endpoint {self.base_url} reported an error: "
                    f"{self._snippet(repr(detail), 300)}. Check the message, then "
                    "model.base_url, model.model and the API key."
                )
            raise LLMError(
                f"Model endpoint {self.base_url} returned no choices: "
                f"{self._snippet(repr(data), 300)}"
            )
        message = choices[0].get("message")
        if not isinstance(message, Mapping):
            raise LLMError(
                f"Model endpoint returned a malformed message: {self._snippet(repr(message), 300)}"
            )
        raw_calls = message.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise LLMError(
                f"Model returned malformed tool_calls: {self._snippet(repr(raw_calls), 300)}"
            )
        calls: list[ToolCall] = []
        for i, call in enumerate(raw_calls):
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping):
                raise LLMError(
                    f"Model returned a malformed tool call: {self._snippet(repr(call), 300)}"
                )
            # A call without a name is answered as an unknown tool, as when streamed.
            calls.append(
                ToolCall(
                    id=clean_text(str(call.get("id") or f"call_{i}")),
                    name=clean_text(str(function.get("name") or "")),
                    arguments=arguments_text(function.get("arguments")),
                )
            )
        content = content_text(message.get("content"))
        size = sum(TOOL_CALL_CHARS + len(c.name) + len(c.arguments) for c in calls)
        if len(content) + size > MAX_ANSWER_CHARS:
            raise too_long()
        finish = choices[0].get("finish_reason")
        return ChatResponse(
            content=clean_text(content),
            tool_calls=calls,
            usage=usage_from(data.get("usage")),
            finish_reason=clean_text(finish) if isinstance(finish, str) else None,
            model=clean_text(str(data.get("model") or self.model)),
        )

    def stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        timeout: float | None = None,
        answer_timeout: float | None = None,
        **options: Any,
    ) -> ChatStream:
        """A streaming completion; connection errors before the first byte are retried.

        *timeout* and *answer_timeout* override the client's as for :meth:`chat`.
        A server that ignores ``stream`` and sends one JSON answer is read as a
        stream of that one answer.
        """
        payload = self._payload(messages, tools, options, stream=True)
        budget = answer_timeout or self.answer_timeout
        deadline = time.monotonic() + budget
        response = self._with_retries(
            lambda: self._open(payload, timeout, deadline, budget), deadline
        )
        kind = response.headers.get("content-type", "").lower()
        if "json" in kind:
            try:
                answer = self._whole_answer(response, deadline, budget)
            except httpx.HTTPError as exc:
                raise LLMError(self._describe(exc)) from exc
            events: Iterator[dict[str, Any] | Done | None] = as_events(answer)
        elif "html" in kind:
            response.close()
            raise LLMError(
                f"Model endpoint {self.base_url} answered with an HTML page instead of a stream. "
                "Check model.base_url (it usually ends in /v1): the server there is not an "
                "OpenAI-compatible API."
            )
        else:
            events = self._sse_events(response)
        return ChatStream(events, self.model, deadline=deadline, answer_timeout=budget)

    def _sse_events(self, response: httpx.Response) -> Iterator[dict[str, Any] | Done | None]:
        """The events of a server-sent-event stream; ``None`` for bytes that carried none.

        A body without a single ``data:`` line is not a stream: when it is one JSON
        answer (a server that ignores ``stream`` and labels its JSON ``text/plain``,
        or not at all) that answer is the stream; otherwise :class:`LLMError` says
        the server is not streaming, unless it claimed ``text/event-stream``
        (then the stream was cut, and :class:`ChatStream` says so).
        """
        before_data: list[str] = []  # the lines before any event, up to MAX_RESPONSE_BYTES
        size = 0
        seen_data = False
        try:
            for line in _lines(response):
                if line is None or not line.startswith("data:"):
                    if line is not None and not seen_data and size <= MAX_RESPONSE_BYTES:
                        before_data.append(line)
                        size += len(line) + 1
                    yield None
                    continue
                seen_data = True
                data = line[5:].strip()
                if not data:  # an empty event: a keep-alive
                    yield None
                    continue
                if data == "[DONE]":
                    yield DONE
                    break
                try:
                    event = json.loads(data)
                except (ValueError, RecursionError) as exc:  # ValueError: a 5000-digit number
                    raise LLMError(
                        f"Model streamed malformed JSON: {self._snippet(data, 200)!r}"
                    ) from exc
                if not isinstance(event, dict):
                    raise LLMError(
                        f"Model streamed an event that is not an object: {self._snippet(data, 200)}"
                    )
                if "error" in event:
                    raise LLMError(
                        "Model endpoint reported an error: "
                        f"{self._snippet(repr(event['error']), 300)}"
                    )
                yield event
            if not seen_data:
                kind = response.headers.get("content-type", "")
                yield from self._not_a_stream("\n".join(before_data), size, kind)
        except httpx.HTTPError as exc:
            raise LLMError(self._describe(exc)) from exc
        finally:
            response.close()

    def _not_a_stream(
        self, body: str, size: int, kind: str
    ) -> Iterator[dict[str, Any] | Done | None]:
        """The events of a streamed body that held no event (see :meth:`_sse_events`)."""
        text = body.strip()
        if text.startswith("{") and size <= MAX_RESPONSE_BYTES:
            try:
                data = json.loads(text)
            except (ValueError, RecursionError):
                data = None
            if data is not None:
                yield from as_events(self._parse_completion(data))
                return
        if "event-stream" in kind.lower():
            return
        sent = f"{self._snippet(text, 200)!r}" if text else "an empty body"
        raise LLMError(
            f"Model endpoint {self.base_url} was asked to stream but sent no server-sent "
            f"events (content type {self._snippet(kind, 60) or 'none'!r}; it sent {sent}). "
            "Check model.base_url (it usually ends in /v1), or turn streaming off "
            "(runtime.stream: false in config.yaml, or chat --no-stream)."
        )


def _lines(response: httpx.Response) -> Iterator[str | None]:
    """The lines of *response* as they arrive, and ``None`` after each read.

    A line longer than :data:`MAX_RESPONSE_BYTES` is refused: no event is that
    long, so the server is not sending server-sent events.
    """
    pending = bytearray()
    for chunk in response.iter_bytes():
        pending += chunk
        if b"\n" in chunk or b"\r" in chunk:
            *lines, rest = _LINE_BREAK_RE.split(bytes(pending))
            pending = bytearray(rest)
            for line in lines:
                yield line.decode("utf-8", "replace")
        if len(pending) > MAX_RESPONSE_BYTES:
            raise LLMError(
                f"The model stream sent more than {MAX_RESPONSE_BYTES:,} bytes without a line "
                "break, so it was stopped: the server is not sending server-sent events."
            )
        yield None
    if pending:
        yield pending.decode("utf-8", "replace")
