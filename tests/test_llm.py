"""ChatClient against a real OpenAI-compatible HTTP server on loopback."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.errors import LLMError, LLMNotConfiguredError
from hermes_core.llm import MAX_ANSWER_CHARS, MAX_RESPONSE_BYTES, ChatClient
from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply, tool_call

MEMORY_TOOL = {
    "name": "memory",
    "description": "Save a durable fact.",
    "parameters": {"type": "object", "properties": {"content": {"type": "string"}}},
}


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(api_key="sk-test-key") as fake:
        yield fake


def client_for(server: FakeOpenAIServer, **kwargs: object) -> ChatClient:
    options: dict[str, object] = {"api_key": "sk-test-key", "timeout": 5.0}
    options.update(kwargs)
    return ChatClient(server.base_url, "fake-model", **options)  # type: ignore[arg-type]


def test_chat_sends_messages_and_tools_and_returns_content(server: FakeOpenAIServer) -> None:
    server.script(
        FakeReply(content="hello there", usage={"prompt_tokens": 12, "completion_tokens": 3})
    )
    with client_for(server) as client:
        reply = client.chat(
            [{"role": "user", "content": "hi"}], tools=[MEMORY_TOOL], temperature=0.2
        )
    assert reply.content == "hello there"
    assert reply.tool_calls == []
    assert reply.finish_reason == "stop"
    assert reply.usage is not None and reply.usage.prompt_tokens == 12
    assert reply.usage.total_tokens == 15
    (request,) = server.chat_requests
    assert request.headers["authorization"] == "Bearer sk-test-key"
    assert request.body["model"] == "fake-model"
    assert request.body["messages"] == [{"role": "user", "content": "hi"}]
    assert request.body["tools"] == [{"type": "function", "function": MEMORY_TOOL}]
    assert request.body["temperature"] == 0.2
    assert "stream" not in request.body


def test_chat_returns_tool_calls_with_parsed_arguments(server: FakeOpenAIServer) -> None:
    server.script(FakeReply(tool_calls=[tool_call("memory", {"content": "likes tea"}, "c1")]))
    with client_for(server) as client:
        reply = client.chat([{"role": "user", "content": "remember I like tea"}])
    (call,) = reply.tool_calls
    assert (call.id, call.name) == ("c1", "memory")
    assert call.parsed_arguments() == {"content": "likes tea"}
    assert reply.finish_reason == "tool_calls"
    assert reply.to_message()["tool_calls"][0]["function"]["name"] == "memory"


def test_malformed_tool_arguments_raise_a_clear_error(server: FakeOpenAIServer) -> None:
    server.script(FakeReply(tool_calls=[tool_call("memory", '{"content": "unterminated')]))
    with client_for(server) as client:
        (call,) = client.chat([{"role": "user", "content": "x"}]).tool_calls
    with pytest.raises(LLMError, match="malformed arguments for tool 'memory'"):
        call.parsed_arguments()


def test_tool_arguments_that_are_not_an_object_are_rejected(server: FakeOpenAIServer) -> None:
    server.script(FakeReply(tool_calls=[tool_call("memory", "[1, 2]")]))
    with client_for(server) as client:
        (call,) = client.chat([{"role": "user", "content": "x"}]).tool_calls
    with pytest.raises(LLMError, match="not a JSON object"):
        call.parsed_arguments()


def test_stream_yields_deltas_and_assembles_the_response(server: FakeOpenAIServer) -> None:
    server.script(FakeReply(content="streamed answer, in pieces", chunk_size=4))
    with client_for(server) as client:
        stream = client.stream([{"role": "user", "content": "hi"}])
        deltas = list(stream)
    assert len(deltas) > 3
    assert "".join(deltas) == "streamed answer, in pieces"
    assert stream.response is not None
    assert stream.response.content == "streamed answer, in pieces"
    assert stream.response.finish_reason == "stop"
    assert stream.response.usage is not None and stream.response.usage.prompt_tokens > 0
    (request,) = server.chat_requests
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}


def test_stream_merges_tool_call_fragments(server: FakeOpenAIServer) -> None:
    args = {"action": "add", "target": "user", "content": "prefers short answers"}
    server.script(
        FakeReply(
            content="saving",
            tool_calls=[
                tool_call("memory", args, "call_7"),
                tool_call("session_search", {"query": "deploy"}),
            ],
        )
    )
    with client_for(server) as client:
        stream = client.stream([{"role": "user", "content": "x"}], tools=[MEMORY_TOOL])
        assert "".join(stream) == "saving"
    assert stream.response is not None
    calls = stream.response.tool_calls
    assert [c.name for c in calls] == ["memory", "session_search"]
    assert calls[0].id == "call_7"
    assert calls[0].parsed_arguments() == args
    assert calls[1].parsed_arguments() == {"query": "deploy"}
    assert stream.response.finish_reason == "tool_calls"


def test_server_errors_are_retried_then_succeed(server: FakeOpenAIServer) -> None:
    server.script(FakeReply(status=503), FakeReply(content="finally"))
    with client_for(server, max_retries=3) as client:
        assert client.chat([{"role": "user", "content": "x"}]).content == "finally"
    assert len(server.chat_requests) == 2


def test_stream_open_is_retried_on_server_error(server: FakeOpenAIServer) -> None:
    server.script(FakeReply(status=500), FakeReply(content="ok now"))
    with client_for(server, max_retries=2) as client:
        assert "".join(client.stream([{"role": "user", "content": "x"}])) == "ok now"
    assert len(server.chat_requests) == 2


def test_dropped_connection_is_retried(server: FakeOpenAIServer) -> None:
    server.script(FakeReply(drop_connection=True), FakeReply(content="recovered"))
    with client_for(server, max_retries=2) as client:
        assert client.chat([{"role": "user", "content": "x"}]).content == "recovered"


def test_persistent_server_error_names_the_status(server: FakeOpenAIServer) -> None:
    server.script(FakeReply(status=500, body="boom"), FakeReply(status=500, body="boom"))
    with client_for(server, max_retries=2) as client, pytest.raises(LLMError) as info:
        client.chat([{"role": "user", "content": "x"}])
    assert "HTTP 500" in str(info.value) and "boom" in str(info.value)
    assert len(server.chat_requests) == 2


def test_bad_api_key_is_a_clear_error_and_not_retried(server: FakeOpenAIServer) -> None:
    with (
        client_for(server, api_key="sk-wrong", max_retries=3) as client,
        pytest.raises(LLMError, match=r"HTTP 401.*API key"),
    ):
        client.chat([{"role": "user", "content": "x"}])
    assert len(server.chat_requests) == 1


def test_not_found_hints_at_the_base_url(server: FakeOpenAIServer) -> None:
    server.script(FakeReply(status=404))
    with client_for(server) as client, pytest.raises(LLMError, match=r"HTTP 404.*base_url"):
        client.chat([{"role": "user", "content": "x"}])
    assert len(server.chat_requests) == 1


def test_non_json_body_is_a_clear_error(server: FakeOpenAIServer) -> None:
    server.script(FakeReply(raw_body=b"<html>gateway</html>"))
    with client_for(server) as client, pytest.raises(LLMError, match="non-JSON"):
        client.chat([{"role": "user", "content": "x"}])


def test_json_without_choices_is_a_clear_error(server: FakeOpenAIServer) -> None:
    server.script(FakeReply(raw_body=json.dumps({"object": "chat.completion"}).encode()))
    with client_for(server) as client, pytest.raises(LLMError, match="no choices"):
        client.chat([{"role": "user", "content": "x"}])


def test_malformed_tool_call_is_a_clear_error(server: FakeOpenAIServer) -> None:
    body = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": "x", "function": "memory"}],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    server.script(FakeReply(raw_body=json.dumps(body).encode()))
    with client_for(server) as client, pytest.raises(LLMError, match="malformed tool call"):
        client.chat([{"role": "user", "content": "x"}])


def test_refused_connection_is_a_clear_error() -> None:
    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = ChatClient(f"http://127.0.0.1:{port}/v1", "m", max_retries=1, timeout=2.0)
    with client, pytest.raises(LLMError, match=r"Cannot reach model endpoint.*running"):
        client.chat([{"role": "user", "content": "x"}])


def test_slow_endpoint_times_out_with_a_hint(server: FakeOpenAIServer) -> None:
    server.script(FakeReply(content="late", delay=2.0))
    with (
        client_for(server, timeout=0.3, max_retries=1) as client,
        pytest.raises(LLMError, match="timed out"),
    ):
        client.chat([{"role": "user", "content": "x"}])


def test_from_config_reads_the_model_section_and_key_env(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_TEST_KEY", "sk-test-key")
    config = {
        "model": {
            "base_url": server.base_url,
            "model": "fake-model",
            "api_key_env": "MY_TEST_KEY",
            "timeout": 7,
        }
    }
    client = ChatClient.from_config(config)
    assert client is not None
    with client:
        assert client.timeout == 7.0
        assert client.chat([{"role": "user", "content": "ping"}]).content == "echo: ping"


def test_a_hermes_config_naming_the_model_default_is_read(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hermes Agent writes model: {default: ..., provider: ..., base_url: ...}.
    from hermes_core.config import model_endpoint

    monkeypatch.delenv("HERMES_MODEL", raising=False)
    monkeypatch.setenv("HERMES_API_KEY", "sk-test-key")
    config = {"model": {"default": "fake-model", "provider": "custom", "base_url": server.base_url}}
    assert model_endpoint(config) == (server.base_url, "fake-model")
    assert model_endpoint(config, "auxiliary.memory") == (server.base_url, "fake-model")
    both = {"model": {"default": "old", "model": "new", "base_url": server.base_url}}
    assert model_endpoint(both) == (server.base_url, "new")
    task = {**config, "auxiliary": {"memory": {"default": "small"}}}
    assert model_endpoint(task, "auxiliary.memory") == (server.base_url, "small")
    client = ChatClient.from_config(config)
    assert client is not None
    with client:
        assert client.chat([{"role": "user", "content": "hi"}]).content == "echo: hi"


def test_from_config_falls_back_to_environment(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_MODEL_BASE_URL", server.base_url)
    monkeypatch.setenv("HERMES_MODEL", "fake-model")
    monkeypatch.setenv("HERMES_API_KEY", "sk-test-key")
    client = ChatClient.from_config({})
    assert client is not None
    with client:
        assert client.chat([{"role": "user", "content": "env"}]).content == "echo: env"


def test_from_config_without_a_model_is_none_and_bad_values_are_errors() -> None:
    assert ChatClient.from_config({}) is None
    config = {"model": {"base_url": "http://127.0.0.1:1/v1", "model": "m", "timeout": "soon"}}
    with pytest.raises(LLMError, match=r"model\.timeout must be a number"):
        ChatClient.from_config(config)
    with pytest.raises(LLMNotConfiguredError, match="base_url"):
        ChatClient("", "m")


# -- hostile endpoints ------------------------------------------------------------------------


def _completion(content: object) -> bytes:
    message = {"role": "assistant", "content": content}
    return json.dumps({"choices": [{"message": message, "finish_reason": "stop"}]}).encode()


def _pings(first: bytes, *, count: int = 100, pause: float = 0.1) -> Iterator[bytes]:
    """*first*, then keep-alive comments for at most count × pause seconds (never [DONE])."""
    yield first
    for _ in range(count):
        time.sleep(pause)
        yield b": keep-alive\n\n"


def test_keep_alive_pings_cannot_outlast_the_answer_timeout(server: FakeOpenAIServer) -> None:
    first = b'data: {"choices": [{"delta": {"content": "thinking"}}]}\n\n'
    server.script(FakeReply(raw_stream=_pings(first)))
    with (
        client_for(server, answer_timeout=0.5) as client,
        pytest.raises(LLMError, match=r"kept streaming for more than 0\.5s"),
    ):
        list(client.stream([{"role": "user", "content": "x"}]))


def test_a_trickling_answer_is_stopped_at_the_answer_timeout(server: FakeOpenAIServer) -> None:
    trickle = _pings(b"{", count=100, pause=0.1)  # bytes keep coming, the JSON never ends
    server.script(FakeReply(raw_stream=trickle, content_type="application/json"))
    with (
        client_for(server, answer_timeout=0.5, max_retries=3) as client,
        pytest.raises(LLMError, match=r"did not finish answering within 0\.5s.*answer_timeout"),
    ):
        client.chat([{"role": "user", "content": "x"}])
    assert len(server.chat_requests) == 1


@pytest.mark.parametrize(
    "lines",
    [
        [b": comment\n\n", b"event: ping\n", b"data:\n\n", b'data: {"choices": []}\n\n'],
        [b"data: " + json.dumps({"choices": [{"delta": {"content": "x"}}]}).encode() + b"\r\r"],
    ],
)
def test_stream_skips_comments_and_empty_events(
    server: FakeOpenAIServer, lines: list[bytes]
) -> None:
    done = b'data: {"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}\n\n'
    server.script(FakeReply(raw_stream=[*lines, done, b"data: [DONE]\n\n"]))
    with client_for(server) as client:
        stream = client.stream([{"role": "user", "content": "x"}])
        assert "".join(stream).endswith("ok")


@pytest.mark.parametrize(
    ("chunks", "error"),
    [
        ([b"data: hello\n\n"], "malformed JSON: 'hello'"),
        ([b'data: {"choices": [{"delta": {"content": "cut"}}]}\n\n'], "ended before"),
        ([b"data: " + b"y" * (MAX_RESPONSE_BYTES + 1)], "without a line break"),
        ([b'data: {"choices": [{"delta": {"content": 5}}]}\n\n'], "content that is not text"),
    ],
)
def test_malformed_streams_are_clear_errors(
    server: FakeOpenAIServer, chunks: list[bytes], error: str
) -> None:
    server.script(FakeReply(raw_stream=chunks))
    with client_for(server) as client, pytest.raises(LLMError, match=re.escape(error)):
        list(client.stream([{"role": "user", "content": "x"}]))


def test_stream_reads_a_server_that_answers_with_json(server: FakeOpenAIServer) -> None:
    server.script(FakeReply(raw_body=_completion("whole answer")))
    with client_for(server) as client:
        stream = client.stream([{"role": "user", "content": "x"}])
        assert list(stream) == ["whole answer"]
    assert stream.response is not None and stream.response.finish_reason == "stop"


def test_stream_refuses_an_html_page(server: FakeOpenAIServer) -> None:
    server.script(FakeReply(raw_body=b"<html>login</html>", content_type="text/html"))
    with client_for(server) as client, pytest.raises(LLMError, match=r"HTML page.*base_url"):
        client.stream([{"role": "user", "content": "x"}])


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (FakeReply(raw_body=b""), "empty body"),
        (FakeReply(raw_body=b"<html>hi</html>", content_type="text/html"), "HTML page"),
        (FakeReply(raw_body=b'{"choices": null}'), "no choices"),
        (FakeReply(raw_body=_completion(42)), "content that is not text"),
        (FakeReply(raw_body=_completion({"text": "x"})), "content that is not text"),
        (FakeReply(content="x" * (MAX_ANSWER_CHARS + 1)), "runaway"),
        (FakeReply(raw_body=b" " * (MAX_RESPONSE_BYTES + 1)), "more than"),
    ],
)
def test_unusable_answers_are_clear_errors(
    server: FakeOpenAIServer, reply: FakeReply, error: str
) -> None:
    server.script(reply)
    with client_for(server) as client, pytest.raises(LLMError, match=error):
        client.chat([{"role": "user", "content": "x"}])


def test_content_parts_and_null_content_are_text(server: FakeOpenAIServer) -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}]
    server.script(FakeReply(raw_body=_completion(parts)), FakeReply(raw_body=_completion(None)))
    with client_for(server) as client:
        assert client.chat([{"role": "user", "content": "x"}]).content == "ab"
        assert client.chat([{"role": "user", "content": "x"}]).content == ""


@pytest.mark.parametrize(
    "retry_after", [str(10**9), "Wed, 21 Oct 2015 07:28:00 GMT", "soon", "nan"]
)
def test_rate_limits_are_retried_a_bounded_number_of_times(
    server: FakeOpenAIServer, retry_after: str
) -> None:
    limited = FakeReply(status=429, body="slow down", headers={"Retry-After": retry_after})
    server.script(limited, limited, limited, limited)
    with (
        client_for(server, max_retries=3) as client,
        pytest.raises(LLMError, match=r"HTTP 429: slow down.*rate-limiting"),
    ):
        client.chat([{"role": "user", "content": "x"}])
    assert len(server.chat_requests) == 3


def test_error_messages_never_show_the_key_or_control_characters(
    server: FakeOpenAIServer,
) -> None:
    server.script(FakeReply(status=401, body="\x1b[2Jbad key: Bearer sk-test-key"))
    with client_for(server) as client, pytest.raises(LLMError) as info:
        client.chat([{"role": "user", "content": "x"}])
    message = str(info.value)
    assert "sk-test-key" not in message and "\x1b" not in message
    assert "Bearer ***" in message and "Check the API key" in message


def test_redirects_are_not_followed_so_the_key_stays_home(server: FakeOpenAIServer) -> None:
    with FakeOpenAIServer() as elsewhere:
        target = elsewhere.base_url.replace("//", "//user:pw@") + "/chat/completions"
        server.script(FakeReply(status=307, body="", headers={"Location": target}))
        with client_for(server) as client, pytest.raises(LLMError) as info:
            client.chat([{"role": "user", "content": "x"}])
        assert elsewhere.requests == []
    message = str(info.value)
    assert "HTTP 307" in message and "redirected" in message and "model.base_url" in message
    assert ":pw@" not in message


def test_base_url_query_and_credentials_are_used_but_never_shown() -> None:
    with FakeOpenAIServer() as fake:
        base = fake.base_url.replace("//", "//ana:s3cret@") + "/?api-version=2024-06"
        fake.script(FakeReply(content="hi"), FakeReply(status=500, body="s3cret leaked"))
        with ChatClient(base, "m", api_key="sk-x", max_retries=1) as client:
            assert client.chat([{"role": "user", "content": "x"}]).content == "hi"
            assert "s3cret" not in client.base_url and "?" not in client.base_url
            with pytest.raises(LLMError) as info:
                client.chat([{"role": "user", "content": "x"}])
        assert "s3cret" not in str(info.value)
        request = fake.chat_requests[0]
        assert request.path == "/v1/chat/completions"
        assert request.query == {"api-version": "2024-06"}
        assert request.headers["authorization"].startswith("Basic ")


@pytest.mark.parametrize(
    "base_url",
    ["http://", "http:///v1", "http://[::1", "http://127.0.0.1:99999/v1", "http://u:p\x00w@h/v1"],
)
def test_unusable_base_urls_are_clear_errors(base_url: str) -> None:
    with pytest.raises(LLMError, match=r"model\.base_url") as info:
        ChatClient(base_url, "m")
    assert "p\x00w" not in str(info.value)


@pytest.mark.parametrize("key", ["sk-a\nb", "sk-ключ", "sk-a\x00b", "sk-a b", "sk-\u2028x"])
def test_api_keys_that_cannot_be_sent_are_clear_errors(
    key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(LLMError, match="API key contains") as info:
        ChatClient("http://127.0.0.1:1/v1", "m", api_key=key)
    assert key not in str(info.value)
    monkeypatch.setenv("ODD_KEY", key.replace("\x00", "\x01"))
    config = {
        "model": {"base_url": "http://127.0.0.1:1/v1", "model": "m", "api_key_env": "ODD_KEY"}
    }
    with pytest.raises(LLMError, match=r"API key for model contains.*model\.api_key_env"):
        ChatClient.from_config(config)


def test_unpaired_surrogates_in_a_request_are_replaced_not_fatal(server: FakeOpenAIServer) -> None:
    with client_for(server) as client:
        assert client.chat([{"role": "user", "content": "a\ud800b"}]).content == "echo: a\ufffdb"
        assert "".join(client.stream([{"role": "user", "content": "\udfffz"}])) == "echo: \ufffdz"


@pytest.mark.parametrize(
    ("content", "options"),
    [("x", {"temperature": float("nan")}), (object(), {}), ("x", {"stop": {"a"}})],
)
def test_a_request_that_is_not_json_is_a_clear_error(
    server: FakeOpenAIServer, content: object, options: dict[str, object]
) -> None:
    with client_for(server) as client, pytest.raises(LLMError, match="cannot be sent as JSON"):
        client.chat([{"role": "user", "content": content}], **options)
    assert server.chat_requests == []


def test_endless_empty_tool_calls_are_a_runaway(server: FakeOpenAIServer) -> None:
    count = MAX_ANSWER_CHARS // 100 + 1
    calls = [{"index": i, "function": {"name": "", "arguments": ""}} for i in range(count)]
    event = {"choices": [{"delta": {"tool_calls": calls}}]}
    server.script(FakeReply(raw_stream=[f"data: {json.dumps(event)}\n\n".encode()]))
    with client_for(server) as client, pytest.raises(LLMError, match="runaway"):
        list(client.stream([{"role": "user", "content": "x"}]))


def test_a_key_kept_in_the_profiles_dotenv_is_used(
    server: FakeOpenAIServer, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hermes keeps API keys in $HERMES_HOME/.env and loads it at start-up.
    for name in ("MY_TEST_KEY", "HERMES_MODEL_BASE_URL", "HERMES_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    (hermes_home / ".env").write_text(
        f"MY_TEST_KEY=sk-test-key\nHERMES_MODEL_BASE_URL={server.base_url}\n", encoding="utf-8"
    )
    config = {"model": {"model": "fake-model", "api_key_env": "MY_TEST_KEY"}}
    client = ChatClient.from_config(config, hermes_home=hermes_home)
    assert client is not None and client.base_url == server.base_url
    with client:
        assert client.chat([{"role": "user", "content": "hi"}]).content == "echo: hi"
    monkeypatch.setenv("MY_TEST_KEY", "sk-exported")  # the shell's value wins, as in Hermes
    exported = ChatClient.from_config(config, hermes_home=hermes_home)
    assert exported is not None
    with exported, pytest.raises(LLMError, match="HTTP 401"):
        exported.chat([{"role": "user", "content": "hi"}])
