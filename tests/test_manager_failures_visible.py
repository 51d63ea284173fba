"""Every provider failure is visible, and a hung provider costs only its own part."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import pytest

from hermes_core import MemoryManager, MemoryProvider


class Provider(MemoryProvider):
    """A provider whose hooks block on *gate* or raise, as told."""

    def __init__(self, name: str, block: str = "", hang: tuple[str, ...] = ()) -> None:
        self._name = name
        self._block = block
        self.hang = hang
        self.gate = threading.Event()
        self.writes: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [{"name": f"{self._name}_tool", "description": "t", "parameters": {}}]

    def _maybe_hang(self, hook: str) -> None:
        if hook in self.hang:
            self.gate.wait(30)

    def system_prompt_block(self) -> str:
        self._maybe_hang("system_prompt_block")
        return self._block

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        self._maybe_hang("on_memory_write")
        self.writes.append(content)

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> Any:
        return {"ids": {1, 2, 3}} if args.get("kind") == "set" else {"ok": [1, 2]}


class Raising(Provider):
    def prefetch(self, query: str, *, session_id: str = "") -> str:
        raise ConnectionError("recall service down")

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        raise ConnectionError("warm-up service down")


def manager_with(*providers: MemoryProvider, timeout: float = 0.2) -> MemoryManager:
    manager = MemoryManager(external_prefetch_timeout=timeout)
    for provider in providers:
        manager.add_provider(provider)
    return manager


def test_a_hung_external_block_costs_only_its_own_block(caplog: pytest.LogCaptureFixture) -> None:
    hung = Provider("slowpoke", block="EXTERNAL", hang=("system_prompt_block",))
    manager = manager_with(Provider("builtin", block="MEMORY.md facts"), hung)
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        prompt = manager.build_system_prompt()
    hung.gate.set()
    assert prompt == "MEMORY.md facts"
    assert any(
        "'slowpoke'" in r.getMessage() and "system_prompt_block" in r.getMessage()
        for r in caplog.records
    )


def test_an_external_block_in_time_is_kept() -> None:
    manager = manager_with(Provider("builtin", block="A"), Provider("ext", block="B"), timeout=5)
    assert manager.build_system_prompt() == "A\n\nB"


def test_a_hung_memory_write_is_counted_and_named(caplog: pytest.LogCaptureFixture) -> None:
    hung = Provider("stuckdb", hang=("on_memory_write",))
    manager = manager_with(Provider("builtin"), hung)
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        manager.on_memory_write("add", "memory", "likes tea")
    hung.gate.set()
    assert manager.write_mirror_failures == {"stuckdb": 1}
    assert any("'stuckdb'" in r.getMessage() for r in caplog.records)


def test_a_raising_prefetch_and_queue_prefetch_are_warnings_naming_the_provider(
    caplog: pytest.LogCaptureFixture,
) -> None:
    manager = manager_with(Provider("builtin"), Raising("flaky"), timeout=5)
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        assert manager.prefetch_all("what do I like?") == ""
        manager.queue_prefetch_all("next")
        assert manager.flush_pending(5)
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("'flaky' prefetch:" in m and "recall service down" in m for m in messages)
    assert any("'flaky' queue_prefetch:" in m for m in messages)
    manager.shutdown_all()


def test_a_tool_result_of_a_non_json_type_is_a_clear_error() -> None:
    manager = manager_with(Provider("builtin"), Provider("ext"))
    result = json.loads(manager.handle_tool_call("ext_tool", {"kind": "set"}))
    assert "type 'set' is not a JSON type" in result["error"]
    assert json.loads(manager.handle_tool_call("ext_tool", {})) == {"ok": [1, 2]}


def test_a_drain_warning_names_the_provider_that_is_stuck(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class StuckSync(Provider):
        def sync_turn(self, user: str, assistant: str, *, session_id: str = "") -> None:
            self.gate.wait(30)

    stuck = StuckSync("glacier")
    manager = MemoryManager(external_prefetch_timeout=0.2, drain_timeout=0.2)
    manager.add_provider(Provider("builtin"))
    manager.add_provider(stuck)
    manager.sync_all("hi", "hello")
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        manager.shutdown_all()
    stuck.gate.set()
    assert any("'glacier' sync_turn" in r.getMessage() for r in caplog.records)
