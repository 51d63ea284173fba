"""The ``memory`` tool: schema shape and argument handling."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hermes_memory_builtin.store import MemoryStore
from hermes_memory_builtin.tool import MEMORY_SCHEMA, MemoryTool, memory_schema
from memory_support import as_dict

# -- schema -------------------------------------------------------------------------------------


def test_schema_avoids_constructs_strict_backends_reject() -> None:
    parameters = MEMORY_SCHEMA["parameters"]
    assert MEMORY_SCHEMA["name"] == "memory"
    assert parameters["type"] == "object"
    assert parameters["required"] == ["target"]
    for forbidden in ("allOf", "anyOf", "oneOf", "enum", "not"):
        assert forbidden not in parameters


def test_schema_enums_and_operations() -> None:
    properties = MEMORY_SCHEMA["parameters"]["properties"]
    assert properties["action"]["enum"] == ["add", "replace", "remove"]
    assert properties["target"]["enum"] == ["memory", "user"]
    assert set(properties) == {"action", "target", "content", "old_text", "new_text", "operations"}
    operations = properties["operations"]
    assert operations["type"] == "array"
    assert operations["items"]["properties"]["action"]["enum"] == ["add", "replace", "remove"]
    assert operations["items"]["required"] == ["action"]
    assert json.loads(json.dumps(MEMORY_SCHEMA)) == MEMORY_SCHEMA


def test_schema_narrows_to_the_enabled_targets() -> None:
    assert memory_schema(["user"])["parameters"]["properties"]["target"]["enum"] == ["user"]
    with pytest.raises(ValueError, match="at least one"):
        memory_schema([])


# -- dispatcher ---------------------------------------------------------------------------------


@pytest.fixture
def tool(store: MemoryStore) -> MemoryTool:
    return MemoryTool(store)


def call(tool: MemoryTool, **args: Any) -> dict[str, Any]:
    text = tool(args)
    assert isinstance(text, str)
    return as_dict(text)


def test_without_a_store_memory_is_not_available() -> None:
    result = as_dict(MemoryTool(None)({"action": "add", "content": "x"}))
    assert result["success"] is False and "not available" in result["error"]


def test_results_are_json_keeping_non_ascii_text(tool: MemoryTool) -> None:
    tool({"action": "add", "target": "user", "content": "Prefers café au lait"})
    text = tool({"action": "remove", "target": "user", "old_text": "café"})
    assert '"removed_entry": "Prefers café au lait"' in text
    assert "—" in text  # the usage dash, not an escape
    assert json.loads(text)["success"] is True


@pytest.mark.parametrize(
    "args",
    [
        {"target": "memory"},
        {"target": "memory", "action": None, "operations": None},
        {"target": "memory", "action": "", "content": "x"},
    ],
)
def test_missing_action_and_operations(tool: MemoryTool, args: dict[str, Any]) -> None:
    result = call(tool, **args)
    assert result["success"] is False
    assert "Missing required parameter" in result["error"]
    assert "'action'" in result["error"] and "'operations'" in result["error"]


def test_strict_backend_nulls_are_ignored(tool: MemoryTool, store: MemoryStore) -> None:
    result = call(
        tool,
        action="add",
        target="user",
        content="Name is Ada",
        old_text=None,
        new_text=None,
        operations=None,
    )
    assert result["success"] is True
    assert store.user_entries == ["Name is Ada"]
    empty_ops = call(tool, action="add", target="user", content="Likes tea", operations=[])
    assert empty_ops["success"] is True


def test_unknown_and_read_like_actions(tool: MemoryTool) -> None:
    assert "Unknown action 'frobnicate'" in call(tool, action="frobnicate")["error"]
    read = call(tool, action="read", target="memory")
    assert "no read action" in read["error"]


def test_target_defaults_to_memory_and_is_validated(tool: MemoryTool, store: MemoryStore) -> None:
    assert call(tool, action="add", content="fact", target=None)["target"] == "memory"
    assert store.memory_entries == ["fact"]
    assert "Invalid memory target 'diary'" in call(tool, action="add", target="diary")["error"]
    odd = call(tool, action="add", content="x", target={"unexpected": ["structure"]})
    assert odd["success"] is False and "Invalid memory target" in odd["error"]


def test_add_needs_content(tool: MemoryTool) -> None:
    assert "Content is required" in call(tool, action="add", content="  ")["error"]


def test_replace_without_content_does_not_echo_entries(tool: MemoryTool) -> None:
    call(tool, action="add", content="fact A")
    result = call(tool, action="replace", old_text="fact")
    assert "content is required" in result["error"]
    assert "current_entries" not in result


@pytest.mark.parametrize("action", ["replace", "remove"])
def test_missing_old_text_shows_the_entries(tool: MemoryTool, action: str) -> None:
    call(tool, action="add", content="fact A")
    result = call(tool, action=action, content="new", old_text=None)
    assert result["success"] is False
    assert "needs old_text" in result["error"]
    assert result["current_entries"] == ["fact A"]
    assert result["usage"] == "6/500"


def test_new_text_is_an_alias_and_content_wins(tool: MemoryTool, store: MemoryStore) -> None:
    call(tool, action="add", new_text="added via alias")
    call(tool, action="replace", old_text="alias", new_text="replaced via alias")
    call(tool, action="add", content="content wins", new_text="alias loses")
    assert store.memory_entries == ["replaced via alias", "content wins"]


def test_single_results_carry_the_committed_previous_entry(tool: MemoryTool) -> None:
    call(tool, action="add", content="Project uses Python 3.11")
    replaced = call(tool, action="replace", old_text="3.11", content="Project uses Python 3.12")
    assert replaced["replaced_entry"] == "Project uses Python 3.11"
    removed = call(tool, action="remove", old_text="3.12")
    assert removed["removed_entry"] == "Project uses Python 3.12"


def test_batch_results_are_keyed_by_operation_number(tool: MemoryTool) -> None:
    call(tool, action="add", content="first entry")
    call(tool, action="add", content="second entry")
    result = call(
        tool,
        target="memory",
        operations=[
            {"action": "remove", "old_text": "first"},
            {"action": "replace", "old_text": "second", "content": "second, revised"},
        ],
    )
    assert result["removed_entries"] == {"1": "first entry"}
    assert result["replaced_entries"] == {"2": "second entry"}


def test_a_single_action_beside_operations_runs_only_when_the_batch_holds_it(
    tool: MemoryTool, store: MemoryStore
) -> None:
    # Hermes runs the batch and drops the lone change; here that loss is refused instead.
    batch = [{"action": "add", "content": "batch"}]
    refused = call(tool, action="add", content="kept", operations=batch)
    assert refused["success"] is False and "either 'operations' or one change" in refused["error"]
    assert store.memory_entries == []
    # A model that repeats one of its operations in the bare fields loses nothing.
    assert call(tool, action="add", content=" batch ", operations=batch)["success"] is True
    assert store.memory_entries == ["batch"]


@pytest.mark.parametrize("args", [["add"], "add", 3])
def test_arguments_must_be_an_object(tool: MemoryTool, args: Any) -> None:
    result = as_dict(tool(args))
    assert result["success"] is False and "must be an object" in result["error"]


@pytest.mark.parametrize(
    "content",
    [
        "<memory-context>\n[System note: recalled]\n\nUser likes tea\n</memory-context>",
        "User likes tea </memory-context>",
        "Prefers dark mode. <MEMORY-CONTEXT>",
    ],
)
def test_recalled_memory_echoed_into_a_write_is_refused(
    tool: MemoryTool, store: MemoryStore, content: str
) -> None:
    # A model that echoes its recall into memory would store (and mirror) the fence.
    added = call(tool, action="add", target="user", content=content)
    assert added["success"] is False and "<memory-context>" in added["error"]
    assert store.entries("user") == []
    batch = call(
        tool, action="batch", target="memory", operations=[{"action": "add", "content": content}]
    )
    assert batch["success"] is False and store.entries("memory") == []
