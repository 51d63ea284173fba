"""``ctx.llm`` and ``agent.plugin_llm``: a plugin's own model calls, on the configured model."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from plugin_kit import folder_plugin, fresh_discovery

from hermes_core import hermes_compat
from hermes_core.errors import LLMError, LLMNotConfiguredError
from hermes_core.hermes_compat.context import PluginContext
from hermes_core.hermes_compat.plugin_llm import (
    PluginLlm,
    PluginLlmImageInput,
    PluginLlmTextInput,
    PluginLlmTrustError,
)
from hermes_core.plugins import load_memory_provider
from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("agent") is not None, reason="a real 'agent' package is installed"
)

SCHEMA = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
    "required": ["facts"],
}


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    hermes_compat.uninstall()
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        yield
    sys.modules.pop("agent.plugin_llm", None)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(model="main-model") as fake:
        yield fake


def configure(home: Path, **sections: Any) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump(sections), encoding="utf-8")


def llm_for(home: Path, server: FakeOpenAIServer, **sections: Any) -> Any:
    """``ctx.llm`` of plugin 'notes' with the fake server as the configured model."""
    configure(home, model={"base_url": server.base_url, "model": "main-model"}, **sections)
    return PluginContext("notes", "plugin 'notes'").llm


def trust(**llm: Any) -> dict[str, Any]:
    return {"entries": {"notes": {"llm": llm}}}


def test_ctx_llm_is_absent_without_a_model_so_plugins_fall_back(hermes_home: Path) -> None:
    ctx = PluginContext("notes", "plugin 'notes'")
    assert getattr(ctx, "llm", None) is None
    with pytest.raises(AttributeError, match=r"model\.base_url"):
        ctx.llm  # noqa: B018


def test_the_module_is_served_even_without_a_model(hermes_home: Path) -> None:
    hermes_compat.install()
    from agent.plugin_llm import (  # type: ignore[import-not-found]
        PluginLlm as Served,
    )
    from agent.plugin_llm import (
        PluginLlmTrustError as ServedTrustError,
    )

    assert Served is PluginLlm and ServedTrustError is PluginLlmTrustError
    assert issubclass(PluginLlmTrustError, PermissionError)
    with pytest.raises(ImportError, match="plugin_llm"):
        from agent.plugin_llm import PluginLlmRouter  # type: ignore[import-not-found]  # noqa: F401
    with pytest.raises(LLMNotConfiguredError, match=r"'notes' called ctx\.llm"):
        PluginLlm(plugin_id="notes").complete([{"role": "user", "content": "hi"}])


def test_complete_answers_through_the_configured_model(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    server.script(
        FakeReply("Tea.", usage={"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14})
    )
    llm = llm_for(hermes_home, server)
    result = llm.complete(
        messages=[
            {"role": "system", "content": "Answer in one word."},
            {"role": "user", "content": "What does the user drink?"},
        ],
        max_tokens=8,
        temperature=0.2,
        purpose="facts.drink",
    )
    assert result.text == "Tea."
    assert (result.provider, result.model, result.agent_id) == ("custom", "main-model", "default")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (12, 2)
    assert result.usage.total_tokens == 14
    assert result.audit == {
        "plugin_id": "notes",
        "purpose": "facts.drink",
        "profile": "",
        "task": "",
    }
    body = server.chat_requests[-1].body
    assert body["model"] == "main-model"
    assert (body["max_tokens"], body["temperature"]) == (8, 0.2)
    assert "response_format" not in body
    assert body["messages"][1] == {"role": "user", "content": "What does the user drink?"}


def test_complete_offers_tools_and_returns_the_calls_the_model_made(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    server.script(
        FakeReply(tool_calls=[{"id": "c1", "name": "recall", "arguments": '{"query": "tea"}'}]),
        "Plain answer.",
    )
    llm = llm_for(hermes_home, server)
    recall = {
        "type": "function",
        "function": {"name": "recall", "parameters": {"type": "object", "properties": {}}},
    }
    choice = {"type": "function", "function": {"name": "recall"}}
    messages = [{"role": "user", "content": "What does the user drink?"}]
    result = llm.complete(messages, tools=[recall], tool_choice=choice, purpose="bridge")
    assert result.tool_calls == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "recall", "arguments": '{"query": "tea"}'},
        }
    ]
    body = server.chat_requests[-1].body
    assert (body["tools"], body["tool_choice"]) == ([recall], choice)
    # no tools offered: no tools and no tool_choice sent, and no calls come back
    plain = llm.complete(messages, tools=None, tool_choice="auto")
    assert (plain.text, plain.tool_calls) == ("Plain answer.", [])
    assert "tools" not in server.chat_requests[-1].body
    assert "tool_choice" not in server.chat_requests[-1].body


@pytest.mark.parametrize(
    ("tools", "choice", "problem"),
    [
        ({"name": "recall"}, None, "must be a list"),
        (["recall"], None, "tool 0 is not a function schema"),
        ([{"parameters": {}}], None, "tool 0 is not a function schema"),
        ([{"name": "recall"}], 3, "tool_choice must be"),
    ],
)
def test_malformed_tools_are_refused_before_any_call(
    hermes_home: Path, server: FakeOpenAIServer, tools: Any, choice: Any, problem: str
) -> None:
    llm = llm_for(hermes_home, server)
    with pytest.raises(ValueError, match=problem):
        llm.complete([{"role": "user", "content": "hi"}], tools=tools, tool_choice=choice)
    assert server.chat_requests == []


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ("hello", "must be a list"),
        ([], "is empty"),
        ([{"content": "no role"}], "message 0"),
        ([{"role": "user", "content": "ok"}, "loose text"], "message 1"),
        ([{"role": "user", "content": b"raw bytes"}], "must be JSON data"),
    ],
)
def test_malformed_messages_are_refused_before_any_request(
    hermes_home: Path, server: FakeOpenAIServer, messages: Any, problem: str
) -> None:
    llm = llm_for(hermes_home, server)
    with pytest.raises(ValueError, match=problem):
        llm.complete(messages)
    assert server.chat_requests == []


def test_overrides_need_the_operators_trust(hermes_home: Path, server: FakeOpenAIServer) -> None:
    llm = llm_for(hermes_home, server)
    chat = [{"role": "user", "content": "hi"}]
    for option in ("provider", "model", "agent_id", "profile"):
        with pytest.raises(PluginLlmTrustError, match=f"llm.allow_{option}_override"):
            llm.complete(chat, **{option: "other"})
    assert server.chat_requests == []

    llm = llm_for(
        hermes_home,
        server,
        plugins=trust(
            allow_model_override=True,
            allowed_models=["small-model"],
            allow_provider_override="yes",
        ),
    )
    with pytest.raises(PluginLlmTrustError, match="'big-model', which is not in"):
        llm.complete(chat, model="big-model")
    result = llm.complete(chat, model="Small-Model ", provider="openrouter")
    assert server.chat_requests[-1].body["model"] == "Small-Model"
    assert result.model == "Small-Model"
    # one endpoint: the trusted provider name is not a route here
    assert result.provider == "custom"


def test_tasks_are_the_plugins_own_unless_the_operator_opens_host_tasks(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    with FakeOpenAIServer(model="small-model") as small:
        configure(
            hermes_home,
            model={"base_url": server.base_url, "model": "main-model"},
            auxiliary={"classifier": {"base_url": small.base_url, "model": "small-model"}},
        )
        ctx = PluginContext("notes", "plugin 'notes'")
        chat = [{"role": "user", "content": "urgent?"}]
        with pytest.raises(PluginLlmTrustError, match=r"register_auxiliary_task\('classifier'\)"):
            ctx.llm.complete(chat, task="classifier")
        ctx.register_auxiliary_task("classifier", display_name="Classifier")
        small.script("yes")
        result = ctx.llm.complete(chat, task="classifier")
        assert (result.text, result.model, result.audit["task"]) == (
            "yes",
            "small-model",
            "classifier",
        )
        # a registered task without its own section answers on model.*
        ctx.register_auxiliary_task(name="tagger", display_name="Tagger")
        ctx.llm.complete(chat, task="tagger")
        ctx.llm.complete(chat, task="auto")
        assert len(server.chat_requests) == 2 and len(small.chat_requests) == 1
        with pytest.raises(ValueError, match="task name"):
            ctx.llm.complete(chat, task="a.b")


def test_structured_output_is_asked_for_parsed_and_checked(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    llm = llm_for(hermes_home, server)
    server.script(
        'Here you go:\n```json\n{"facts": ["likes tea", "lives in Lisbon"]}\n```',
        "I cannot answer that.",
        '{"facts": "not a list"}',
    )
    result = llm.complete_structured(
        instructions="List the facts about the user.",
        input=[{"type": "text", "text": "I like tea."}, PluginLlmTextInput("I live in Lisbon.")],
        json_schema=SCHEMA,
        schema_name="user facts",
        system_prompt="You extract facts.",
        purpose="facts",
    )
    assert result.content_type == "json"
    assert result.parsed == {"facts": ["likes tea", "lives in Lisbon"]}
    assert result.audit["schema_name"] == "user facts"
    body = server.chat_requests[-1].body
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "user_facts", "schema": SCHEMA},
    }
    system, user = body["messages"]
    assert system["content"].startswith("You extract facts.") and "JSON" in system["content"]
    # text-only input is one string, which every OpenAI-compatible server takes
    assert isinstance(user["content"], str)
    assert user["content"].startswith("List the facts about the user.")
    assert json.dumps(SCHEMA) in user["content"] and user["content"].endswith("I live in Lisbon.")

    refused = llm.complete_structured(instructions="List.", input=["x"], json_mode=True)
    assert (refused.content_type, refused.parsed, refused.text) == (
        "text",
        None,
        "I cannot answer that.",
    )
    assert server.chat_requests[-1].body["response_format"] == {"type": "json_object"}

    with pytest.raises(ValueError, match="does not match the schema"):
        llm.complete_structured(instructions="List.", input=["x"], json_schema=SCHEMA)


def test_a_hostile_structured_answer_is_text_or_a_clear_error(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    llm = llm_for(hermes_home, server)
    server.script("[" * 100_000 + "]" * 100_000, '{"facts": ' + "[" * 900 + "]" * 900 + "}")
    too_deep = llm.complete_structured(instructions="List.", input=["x"], json_schema=SCHEMA)
    assert (too_deep.content_type, too_deep.parsed) == ("text", None)
    with pytest.raises(ValueError, match="schema"):
        llm.complete_structured(instructions="List.", input=["x"], json_schema=SCHEMA)


def test_without_jsonschema_the_answer_is_parsed_but_not_checked(
    hermes_home: Path, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # as if it were not installed
    llm = llm_for(hermes_home, server)
    server.script('{"facts": "not a list"}')
    result = llm.complete_structured(instructions="List.", input=["x"], json_schema=SCHEMA)
    assert result.parsed == {"facts": "not a list"}


def test_plain_text_structured_calls_send_no_response_format(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    llm = llm_for(hermes_home, server)
    server.script("A short summary.")
    result = llm.complete_structured(
        instructions="Summarise.", input=[{"type": "text", "text": "x"}]
    )
    assert (result.text, result.content_type, result.parsed) == ("A short summary.", "text", None)
    body = server.chat_requests[-1].body
    assert "response_format" not in body
    assert [m["role"] for m in body["messages"]] == ["user"]


def test_images_become_image_url_parts(hermes_home: Path, server: FakeOpenAIServer) -> None:
    llm = llm_for(hermes_home, server)
    llm.complete_structured(
        instructions="Describe.",
        input=[
            {"type": "text", "text": "the receipt"},
            PluginLlmImageInput(data=b"\x89PNG", mime_type="image/png"),
            {"type": "image", "url": "https://example.invalid/cat.jpg"},
        ],
    )
    parts = server.chat_requests[-1].body["messages"][-1]["content"]
    assert parts[0] == {"type": "text", "text": "Describe."}
    assert parts[1] == {"type": "text", "text": "the receipt"}
    assert parts[2] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}}
    assert parts[3]["image_url"]["url"] == "https://example.invalid/cat.jpg"


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"instructions": " ", "input": ["x"]}, "instructions"),
        ({"instructions": "Do.", "input": []}, "at least one block"),
        ({"instructions": "Do.", "input": "x"}, "at least one block"),
        ({"instructions": "Do.", "input": [{"type": "audio"}]}, "unknown input block type"),
        ({"instructions": "Do.", "input": [{"type": "image"}]}, "'data' \\(bytes\\) or 'url'"),
        ({"instructions": "Do.", "input": [{"type": "text", "text": 3}]}, "'text'"),
        ({"instructions": "Do.", "input": [42]}, "must be text, a dict"),
    ],
)
def test_malformed_structured_calls_are_refused_before_any_request(
    hermes_home: Path, server: FakeOpenAIServer, options: dict[str, Any], problem: str
) -> None:
    llm = llm_for(hermes_home, server)
    with pytest.raises(ValueError, match=problem):
        llm.complete_structured(**options)
    assert server.chat_requests == []


def test_a_server_refusing_response_format_is_asked_again_without_it(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    llm = llm_for(hermes_home, server)
    server.script(FakeReply(status=400, body="response_format is not supported"), '{"facts": []}')
    result = llm.complete_structured(instructions="List.", input=["x"], json_schema=SCHEMA)
    assert result.parsed == {"facts": []}
    first, second = server.chat_requests
    assert "response_format" in first.body and "response_format" not in second.body
    assert second.body["messages"] == first.body["messages"]  # the prompt still asks for JSON


def test_endpoint_failures_and_a_vanished_model_raise_clear_errors(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    llm = llm_for(hermes_home, server)
    server.script(*[FakeReply(status=503)] * 5)
    with pytest.raises(LLMError, match="HTTP 503"):
        llm.complete([{"role": "user", "content": "hi"}], timeout=5)
    configure(hermes_home)
    with pytest.raises(LLMNotConfiguredError, match=r"model\.base_url"):
        llm.complete([{"role": "user", "content": "hi"}])


def _trickle() -> Iterator[bytes]:
    """A JSON body that keeps arriving, a byte every 0.1 s, and never ends."""
    yield b"{"
    for _ in range(100):
        time.sleep(0.1)
        yield b" "


def test_a_plugins_timeout_bounds_the_whole_call(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    llm = llm_for(hermes_home, server)
    server.script(FakeReply(raw_stream=_trickle(), content_type="application/json"))
    with pytest.raises(LLMError, match=r"within 0\.5s"):
        llm.complete([{"role": "user", "content": "hi"}], timeout=0.5)


def test_async_calls_run_concurrently(hermes_home: Path, server: FakeOpenAIServer) -> None:
    llm = llm_for(hermes_home, server)
    server.script(FakeReply("one", delay=0.3), FakeReply('{"facts": ["two"]}', delay=0.3))

    async def both() -> tuple[Any, Any]:
        return await asyncio.gather(
            llm.acomplete([{"role": "user", "content": "first"}], purpose="a"),
            llm.acomplete_structured(instructions="List.", input=["x"], json_schema=SCHEMA),
        )

    plain, structured = asyncio.run(both())
    assert {plain.text, structured.text} == {"one", '{"facts": ["two"]}'}
    assert server.peak_concurrency == 2


def test_a_hermes_plugin_using_ctx_llm_loads_and_calls_it(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    configure(hermes_home, model={"base_url": server.base_url, "model": "main-model"})
    server.script('{"facts": ["likes tea"]}')
    folder_plugin(
        hermes_home / "plugins",
        "extractor",
        """
        from agent.memory_provider import MemoryProvider
        from agent.plugin_llm import PluginLlm

        SCHEMA = {"type": "object", "properties": {"facts": {"type": "array"}}}


        class Extractor(MemoryProvider):
            name = "extractor"

            def __init__(self, llm):
                self.llm = llm
                self.facts = []

            def is_available(self):
                return isinstance(self.llm, PluginLlm)

            def initialize(self, session_id, **kwargs):
                pass

            def get_tool_schemas(self):
                return []

            def sync_turn(self, user_content, assistant_content, *, session_id=""):
                result = self.llm.complete_structured(
                    instructions="Extract facts about the user.",
                    input=[{"type": "text", "text": user_content}],
                    json_schema=SCHEMA,
                    purpose="extract",
                )
                self.facts += result.parsed["facts"]


        def register(ctx):
            ctx.register_memory_provider(Extractor(getattr(ctx, "llm", None)))
        """,
    )
    provider = load_memory_provider("extractor")
    assert provider is not None and provider.is_available()
    provider.sync_turn("I like tea", "noted")
    assert provider.facts == ["likes tea"]  # type: ignore[attr-defined]
    assert "I like tea" in server.chat_requests[-1].body["messages"][-1]["content"]
