"""Third-party Hermes plugins driven by the real turn loop (:class:`AgentSession`).

The model is a :class:`FakeOpenAIServer` on loopback: it calls the builtin
``memory`` tool (mirrored to the plugin through ``on_memory_write``) and the
plugin's own search tool; recall reaches the API copy of the user message in the
``<memory-context>`` fence.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from thirdparty_kit import (
    FIRST,
    MIRROR_QUERY,
    MIRRORED,
    SECOND,
    fixture,
    install,
    isolated_plugins,
    plugin_threads,
    write_config,
)

from hermes_core.llm import ChatClient
from hermes_core.runtime.session import AgentSession
from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply, tool_call


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with isolated_plugins(tmp_path_factory.getbasetemp()):
        yield


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.mark.parametrize("folder", ["ledger", "flatpack", "courier", "oldtimer"])
def test_plugin_runs_under_the_agent_session(
    folder: str, hermes_home: Path, server: FakeOpenAIServer
) -> None:
    spec = fixture(folder)
    install(hermes_home, spec)
    write_config(hermes_home, spec.provider_name)
    memory_add = {"action": "add", "target": "user", "content": MIRRORED}
    server.script(
        FakeReply(tool_calls=[tool_call("memory", memory_add, "call-mem")]),
        FakeReply(content="Noted!"),
        FakeReply(tool_calls=[tool_call(spec.search_tool, {"query": SECOND}, "call-search")]),
        FakeReply(content="You like teal."),
        FakeReply(content="You live in Lisbon."),
    )
    client = ChatClient(server.base_url, server.model, max_retries=1, timeout=10.0)
    session = AgentSession.open(hermes_home, client=client, stream=False)
    try:
        session.start()
        assert spec.prompt_marker in session.system_prompt
        assert spec.search_tool in {tool["name"] for tool in session.tool_schemas}
        first = session.run_turn(FIRST)
        assert first.content == "Noted!"
        assert session.manager.flush_pending(timeout=10)

        second = session.run_turn(SECOND)
        assert second.content == "You like teal."
        assert "teal" in second.recalled
        assert [run.name for run in second.tool_runs] == [spec.search_tool]
        assert "teal" in json.dumps(json.loads(second.tool_runs[0].result))

        third = session.run_turn(MIRROR_QUERY)
        assert "Lisbon" in third.recalled  # the builtin memory write was mirrored
    finally:
        session.close()

    requests = server.chat_requests
    turn_two = requests[2].messages[-1]["content"]
    assert turn_two.startswith(SECOND + "\n\n<memory-context>")
    assert "teal" in turn_two
    tool_message = requests[3].messages[-1]
    assert tool_message["role"] == "tool" and "teal" in tool_message["content"]
    assert plugin_threads(f"{folder}-") == []
