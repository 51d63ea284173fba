"""``agent.auxiliary_client``: served only with a model, and answering through it."""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from plugin_kit import folder_plugin, fresh_discovery

from hermes_core import hermes_compat
from hermes_core.errors import LLMError, LLMNotConfiguredError
from hermes_core.plugins import load_memory_provider
from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply, tool_call

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("agent") is not None, reason="a real 'agent' package is installed"
)


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    hermes_compat.uninstall()
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        yield
    sys.modules.pop("agent.auxiliary_client", None)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(model="aux-model") as fake:
        yield fake


def configure(home: Path, **sections: Any) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump(sections), encoding="utf-8")


def test_without_a_model_the_import_fails_so_fallbacks_run(hermes_home: Path) -> None:
    hermes_compat.install()
    with pytest.raises(ModuleNotFoundError, match="serves only when a model is configured"):
        importlib.import_module("agent.auxiliary_client")


def test_call_llm_answers_through_the_configured_model(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    configure(hermes_home, model={"base_url": server.base_url, "model": "aux-model"})
    server.script("The user prefers tea.", "second", *[FakeReply(status=500)] * 3)
    hermes_compat.install()
    from agent.auxiliary_client import (  # type: ignore[import-not-found]
        call_llm,
        extract_content_or_reasoning,
    )

    answer = call_llm(
        task="memory_extraction",
        messages=[{"role": "user", "content": "What does the user drink?"}],
        temperature=0.1,
        max_tokens=40,
        provider="openrouter",  # Hermes routing: ignored, the configured model answers
        model="some/other-model",
    )
    # both ways plugins read Hermes' answer
    assert (answer or "").strip() == "The user prefers tea."
    assert answer.choices[0].message.content == "The user prefers tea."
    assert extract_content_or_reasoning(answer) == "The user prefers tea."
    request = server.chat_requests[-1].body
    assert request["model"] == "aux-model"
    assert (request["temperature"], request["max_tokens"]) == (0.1, 40)
    assert request["messages"] == [{"role": "user", "content": "What does the user drink?"}]

    assert call_llm(prompt="summarise", system="be brief") == "second"
    assert server.chat_requests[-1].messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "summarise"},
    ]
    with pytest.raises(LLMError):
        call_llm(prompt="fails", timeout=5)
    with pytest.raises(ValueError, match="messages="):
        call_llm()


def test_a_task_section_picks_its_own_model(hermes_home: Path, server: FakeOpenAIServer) -> None:
    configure(
        hermes_home,
        model={"base_url": "http://127.0.0.1:9/v1", "model": "main-model"},
        auxiliary={"compression": {"base_url": server.base_url, "model": "small-model"}},
    )
    server.script(FakeReply(tool_calls=[tool_call("note", {"text": "x"})]))
    hermes_compat.install()
    from agent.auxiliary_client import async_call_llm  # type: ignore[import-not-found]

    answer = asyncio.run(async_call_llm("compression", prompt="shorten this"))
    assert server.chat_requests[-1].body["model"] == "small-model"
    (call,) = answer.choices[0].message.tool_calls
    assert call.function.name == "note" and '"x"' in call.function.arguments


def test_the_model_can_disappear_after_import(hermes_home: Path, server: FakeOpenAIServer) -> None:
    configure(hermes_home, model={"base_url": server.base_url, "model": "aux-model"})
    hermes_compat.install()
    from agent.auxiliary_client import call_llm  # type: ignore[import-not-found]

    configure(hermes_home)  # the profile no longer names a model
    with pytest.raises(LLMNotConfiguredError, match="auxiliary task 'facts'"):
        call_llm("facts", prompt="hi")


def test_extract_content_reads_dicts_and_reasoning(hermes_home: Path) -> None:
    configure(hermes_home, model={"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    hermes_compat.install()
    from agent.auxiliary_client import extract_content_or_reasoning  # type: ignore[import-not-found]

    reply = {"choices": [{"message": {"content": "", "reasoning_content": "thought"}}]}
    assert extract_content_or_reasoning(reply) == "thought"
    assert extract_content_or_reasoning({"choices": []}) == ""
    assert extract_content_or_reasoning(None) == ""


def test_a_hermes_plugin_importing_call_llm_loads_and_uses_it(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    configure(hermes_home, model={"base_url": server.base_url, "model": "aux-model"})
    server.script("fact: likes tea")
    folder_plugin(
        hermes_home / "plugins",
        "extractor",
        """
        from agent.auxiliary_client import call_llm
        from agent.memory_provider import MemoryProvider


        class Extractor(MemoryProvider):
            name = "extractor"

            def is_available(self):
                return True

            def initialize(self, session_id, **kwargs):
                self.facts = []

            def get_tool_schemas(self):
                return []

            def sync_turn(self, user_content, assistant_content, *, session_id=""):
                reply = call_llm(task="extract", prompt=user_content)
                self.facts.append(reply.choices[0].message.content)
        """,
    )
    provider = load_memory_provider("extractor")
    assert provider is not None
    provider.initialize("s1")
    provider.sync_turn("I like tea", "noted")
    assert provider.facts == ["fact: likes tea"]  # type: ignore[attr-defined]
