"""ChatClient against a real OpenAI-compatible HTTP server on loopback."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from hermes_core.errors import LLMError, LLMNotConfiguredError
from hermes_core.llm import ChatClient
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
                    "tool_calls": [{"id": "x", "function": {"arguments": "{}"}}],
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
