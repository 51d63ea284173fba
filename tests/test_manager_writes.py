"""Mirroring builtin memory writes to external providers (on_memory_write and its bridge)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from hermes_core import MemoryManager, MemoryProvider


class Base(MemoryProvider):
    def __init__(self, name: str) -> None:
        self._name = name
        self.writes: list[tuple[Any, ...]] = []

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []


class WithMetadata(Base):
    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        self.writes.append((action, target, content, metadata))


class ThreeArgs(Base):
    def on_memory_write(self, action: str, target: str, content: str) -> None:  # type: ignore[override]
        self.writes.append((action, target, content))


class FourPositional(Base):
    def on_memory_write(self, action: str, target: str, content: str, meta: Any) -> None:  # type: ignore[override]
        self.writes.append((action, target, content, meta))


class Exploding(Base):
    def on_memory_write(self, *args: Any, **kwargs: Any) -> None:
        raise ConnectionError("provider offline")


def manager_with(*providers: MemoryProvider) -> MemoryManager:
    manager = MemoryManager()
    for provider in providers:
        manager.add_provider(provider)
    return manager


# ---------------------------------------------------------------- on_memory_write


def test_each_provider_gets_the_call_shape_it_was_written_for() -> None:
    legacy = ThreeArgs("ext")
    manager = manager_with(WithMetadata("builtin"), legacy)
    for action in ("add", "replace", "remove"):
        manager.on_memory_write(action, "memory", "User likes tea", {"session_id": "s1"})
    assert legacy.writes == [
        ("add", "memory", "User likes tea"),
        ("replace", "memory", "User likes tea"),
        ("remove", "memory", "User likes tea"),
    ]

    keyword = WithMetadata("ext")
    manager_with(keyword).on_memory_write("add", "user", "Ada", {"write_origin": "tool"})
    assert keyword.writes == [("add", "user", "Ada", {"write_origin": "tool"})]

    positional = FourPositional("ext")
    manager_with(positional).on_memory_write("add", "user", "Ada", None)
    assert positional.writes == [("add", "user", "Ada", {})]


def test_the_builtin_never_receives_its_own_writes() -> None:
    builtin = WithMetadata("builtin")
    external = WithMetadata("ext")
    manager_with(builtin, external).on_memory_write("add", "memory", "fact")
    assert builtin.writes == []
    assert external.writes == [("add", "memory", "fact", {})]


def test_failed_mirrors_are_warned_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    manager = manager_with(WithMetadata("builtin"), Exploding("flaky"))
    assert manager.write_mirror_failures == {}
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        manager.on_memory_write("add", "memory", "one")
        manager.on_memory_write("remove", "user", "two")
    assert manager.write_mirror_failures == {"flaky": 2}
    messages = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(messages) == 2
    assert "'flaky'" in messages[0] and "add on memory" in messages[0]
    assert "provider offline" in messages[0]


def test_mirrored_writes_are_redacted_and_metadata_is_copied() -> None:
    class Mutating(WithMetadata):
        def on_memory_write(
            self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
        ) -> None:
            super().on_memory_write(action, target, content, metadata)
            assert metadata is not None
            metadata["mutated"] = True

    external = Mutating("ext")
    manager = manager_with(external)
    key = "xoxb-123456789012-abcdefABCDEF"
    metadata = {"old_text": f"token {key}"}
    manager.on_memory_write("replace", "memory", f"slack token {key}", metadata)
    assert external.writes == [
        (
            "replace",
            "memory",
            "slack token [redacted]",
            {"old_text": "token [redacted]", "mutated": True},
        )
    ]
    assert metadata == {"old_text": f"token {key}"}


# ---------------------------------------------------------------- notify_memory_tool_write


def ok(**extra: Any) -> str:
    return json.dumps({"success": True, **extra})


def bridge() -> tuple[MemoryManager, WithMetadata, WithMetadata]:
    builtin = WithMetadata("builtin")
    external = WithMetadata("ext")
    return manager_with(builtin, external), builtin, external


def test_a_committed_remove_is_mirrored_with_its_old_text() -> None:
    manager, builtin, external = bridge()
    mirrored = manager.notify_memory_tool_write(
        ok(), {"action": "remove", "target": "memory", "old_text": "dark mode"}
    )
    assert mirrored == 1
    assert external.writes == [("remove", "memory", "", {"old_text": "dark mode"})]
    assert builtin.writes == []


@pytest.mark.parametrize(
    "result",
    [
        json.dumps({"success": False, "error": "No entry matched"}),
        json.dumps({"success": True, "staged": True, "pending_id": "p1"}),
        json.dumps({"success": "true"}),
        None,
        [],
        object(),
        "not-json",
        json.dumps(["success", True]),
    ],
)
def test_uncommitted_or_unreadable_results_mirror_nothing(result: Any) -> None:
    manager, _, external = bridge()
    assert manager.notify_memory_tool_write(result, {"action": "add", "content": "x"}) == 0
    assert external.writes == []


def test_dict_results_are_accepted_like_json_strings() -> None:
    manager, _, external = bridge()
    manager.notify_memory_tool_write({"success": True}, {"action": "add", "content": "fact"})
    assert external.writes == [("add", "memory", "fact", {})]


def test_batch_operations_are_mirrored_one_by_one() -> None:
    manager, _, external = bridge()
    args = {
        "target": "user",
        "operations": [
            {"action": "replace", "old_text": "Prefers tea", "content": "Prefers coffee"},
            {"action": "remove", "old_text": "Lives in Oslo"},
            {"action": "add", "content": "Has a cat"},
            {"action": "add"},
            {"action": "read"},
            "not an op",
        ],
    }
    assert manager.notify_memory_tool_write(ok(), args) == 4
    assert external.writes == [
        ("replace", "user", "Prefers coffee", {"old_text": "Prefers tea"}),
        ("remove", "user", "", {"old_text": "Lives in Oslo"}),
        ("add", "user", "Has a cat", {}),
        ("add", "user", "", {}),
    ]


def test_non_mutating_actions_are_not_mirrored() -> None:
    manager, _, external = bridge()
    for action in ("read", "recall", "list", None):
        manager.notify_memory_tool_write(ok(), {"action": action, "content": "x"})
    assert external.writes == []


def test_new_text_alias_and_default_target() -> None:
    manager, _, external = bridge()
    manager.notify_memory_tool_write(ok(), {"action": "add", "new_text": "alias text"})
    assert external.writes == [("add", "memory", "alias text", {})]


def test_build_metadata_is_merged_into_every_op() -> None:
    manager, _, external = bridge()
    calls = []

    def build() -> dict[str, Any]:
        calls.append(1)
        return {"session_id": "s1", "tool_name": "memory"}

    args = {"operations": [{"action": "add", "content": "a"}, {"action": "add", "content": "b"}]}
    manager.notify_memory_tool_write(ok(), args, build_metadata=build)
    assert [w[3] for w in external.writes] == [{"session_id": "s1", "tool_name": "memory"}] * 2
    assert len(calls) == 2


def test_previous_content_comes_only_from_the_committed_result() -> None:
    manager, _, external = bridge()
    manager.notify_memory_tool_write(
        ok(replaced_entry="Prefers tea with milk"),
        {
            "action": "replace",
            "old_text": "tea",
            "content": "Prefers coffee",
            "previous_content": "forged by the model",
        },
        build_metadata=lambda: {"previous_content": "forged by the host", "session_id": "s1"},
    )
    assert external.writes == [
        (
            "replace",
            "memory",
            "Prefers coffee",
            {"session_id": "s1", "old_text": "tea", "previous_content": "Prefers tea with milk"},
        )
    ]


def test_forged_previous_content_is_dropped_when_the_store_reports_none() -> None:
    manager, _, external = bridge()
    manager.notify_memory_tool_write(
        ok(),
        {"action": "remove", "old_text": "partial", "previous_content": "forged"},
        build_metadata=lambda: {"previous_content": "forged too"},
    )
    assert external.writes == [("remove", "memory", "", {"old_text": "partial"})]


def test_batch_previous_content_is_keyed_by_one_based_op_index() -> None:
    manager, _, external = bridge()
    result = ok(
        replaced_entries={"1": "Prefers tea with milk"},
        removed_entries={3: "Lives in Oslo"},
    )
    args = {
        "operations": [
            {"action": "replace", "old_text": "tea", "content": "Prefers coffee"},
            {"action": "add", "content": "Has a cat"},
            {"action": "remove", "old_text": "Oslo"},
        ]
    }
    manager.notify_memory_tool_write(result, args)
    previous = [w[3].get("previous_content") for w in external.writes]
    assert previous == ["Prefers tea with milk", None, "Lives in Oslo"]  # string keys (JSON)
    result_dict = {
        "success": True,
        "replaced_entries": {1: "Prefers tea with milk"},
        "removed_entries": {3: "Lives in Oslo"},
    }
    external.writes.clear()
    manager.notify_memory_tool_write(result_dict, args)
    previous = [w[3].get("previous_content") for w in external.writes]
    assert previous == ["Prefers tea with milk", None, "Lives in Oslo"]  # integer keys


def test_a_failing_build_metadata_still_mirrors_the_write(
    caplog: pytest.LogCaptureFixture,
) -> None:
    manager, _, external = bridge()

    def broken() -> dict[str, Any]:
        raise KeyError("session")

    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        manager.notify_memory_tool_write(
            ok(), {"action": "add", "content": "x"}, build_metadata=broken
        )
    assert external.writes == [("add", "memory", "x", {})]
    assert "build_metadata failed" in caplog.records[-1].getMessage()
