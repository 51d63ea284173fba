"""End to end: turns of one session are synced; a new session's prefetch recalls them.

Driven by hermes-memory-core's own runtime (``AgentSession`` over a ``MemoryManager``)
with a loopback fake model, through the platform fake and through mem0's real
local engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import local_config, platform_config
from fake_mem0 import FakeMem0Platform
from hermes_memory_mem0 import Mem0MemoryProvider

from hermes_core.config import save_config
from hermes_core.llm import ChatClient
from hermes_core.manager import MemoryManager
from hermes_core.runtime.session import AgentSession, RuntimeSettings
from hermes_core.sessions import SessionStore
from hermes_core.testing.openai_fake import FakeOpenAIServer


def open_session(
    home: Path, llm: FakeOpenAIServer, config: dict[str, Any], env: dict[str, str]
) -> tuple[AgentSession, Mem0MemoryProvider]:
    manager = MemoryManager()
    provider = Mem0MemoryProvider(config, env=env)
    manager.add_provider(provider)
    session = AgentSession(
        manager,
        SessionStore(home / "state.db"),
        ChatClient(llm.base_url, "fake-model"),
        hermes_home=home,
        settings=RuntimeSettings(user_id="alice", stream=False),
    )
    session.start()
    return session, provider


def recall_across_sessions(home: Path, config: dict[str, Any], env: dict[str, str]) -> None:
    with FakeOpenAIServer() as llm:
        first, provider = open_session(home, llm, config, env)
        assert provider.flush(120)  # connected / engine started
        first.run_turn("Hi! My sister Ana moved to Porto last spring.")
        first.run_turn("She works there as a marine biologist.")
        first.close()  # on_session_end flushes the provider's pending writes

        second, _ = open_session(home, llm, config, env)
        assert second.session_id != first.session_id
        result = second.run_turn("Where does my sister live these days?")
        second.close()

    assert "Porto" in result.recalled
    assert result.recalled.startswith("<memory-context>")
    sent = llm.chat_requests[-1].messages
    last_user = [m for m in sent if m["role"] == "user"][-1]["content"]
    assert "My sister Ana moved to Porto last spring." in last_user
    # The stored transcript keeps the user's words only; recall lives in the API copy.
    with SessionStore(home / "state.db") as store:
        stored = store.get_messages(second.session_id)
    assert "Porto" not in " ".join(str(m.get("content")) for m in stored if m["role"] == "user")


def test_recall_across_sessions_through_the_platform_fake(
    fake_platform: FakeMem0Platform, hermes_home: Path
) -> None:
    config = platform_config(fake_platform, prefetch_wait=5)
    recall_across_sessions(hermes_home, config, {"MEM0_API_KEY": fake_platform.api_key})
    assert fake_platform.memories_of("alice")[:2] == [
        "Hi! My sister Ana moved to Porto last spring.",
        "She works there as a marine biologist.",
    ]


def test_recall_across_sessions_through_the_local_engine(hermes_home: Path) -> None:
    recall_across_sessions(hermes_home, local_config(prefetch_wait=5), {})
    assert (hermes_home / "mem0" / "qdrant").is_dir()


def test_selected_by_memory_provider_in_config_yaml(
    fake_platform: FakeMem0Platform, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_core.errors import PluginError
    from hermes_core.plugins import load_builtin_provider

    try:
        load_builtin_provider()
    except PluginError as exc:
        pytest.skip(f"activation needs the builtin provider: {exc}")
    monkeypatch.setenv("MEM0_API_KEY", fake_platform.api_key)
    config = {"memory": {"provider": "mem0"}, **platform_config(fake_platform, prefetch_wait=5)}
    save_config(config, hermes_home)  # the provider reads $HERMES_HOME/config.yaml itself
    with FakeOpenAIServer() as llm:
        session = AgentSession.open(hermes_home, client=ChatClient(llm.base_url, "m"))
        with session:
            assert session.manager.provider_names == ["builtin", "mem0"]
            assert "# Mem0 Memory" in session.system_prompt
            assert any(tool["name"] == "mem0_search" for tool in session.tool_schemas)
