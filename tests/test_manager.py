"""MemoryManager: registration, routing, fan-out isolation and lifecycle hooks."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_core import MemoryManager, MemoryProvider, RecallStatus
from hermes_core.errors import PreCompressCheckpointError
from hermes_core.manager import RESERVED_TOOL_NAMES, normalize_tool_schema

SECRET = "sk-proj-Abc123Def456Ghi789Jkl012"


def tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"{name} tool", "parameters": {"type": "object"}}


class Recorder(MemoryProvider):
    """A third-party provider double that records every hook call.

    ``fail`` names hooks that raise; ``prompt``/``recall`` are what
    ``system_prompt_block``/``prefetch`` return.
    """

    def __init__(
        self,
        name: str = "external",
        *,
        tools: list[dict[str, Any]] | None = None,
        prompt: str = "",
        recall: str = "",
        fail: tuple[str, ...] = (),
    ) -> None:
        self._name = name
        self.tools = list(tools or [])
        self.prompt = prompt
        self.recall = recall
        self.fail = set(fail)
        self.calls: list[tuple[Any, ...]] = []

    def _record(self, hook: str, *args: Any) -> None:
        self.calls.append((hook, *args))
        if hook in self.fail:
            raise RuntimeError(f"{self._name} {hook} exploded")

    def hook_calls(self, hook: str) -> list[tuple[Any, ...]]:
        return [call[1:] for call in self.calls if call[0] == hook]

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._record("initialize", session_id, kwargs)

    def initialize_for_inspection(self, session_id: str, **kwargs: Any) -> None:
        self._record("initialize_for_inspection", session_id, kwargs)

    def system_prompt_block(self) -> str:
        self._record("system_prompt_block")
        return self.prompt

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self._record("prefetch", query, session_id)
        return self.recall

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self._record("queue_prefetch", query, session_id)

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        self._record("sync_turn", user_content, assistant_content, session_id, messages)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        self._record("get_tool_schemas")
        return self.tools

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        self._record("handle_tool_call", tool_name, args, kwargs)
        return json.dumps({"handled": tool_name, "by": self._name, "args": args})

    def shutdown(self) -> None:
        self._record("shutdown")

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self._record("on_turn_start", turn_number, message, kwargs)

    def on_turn_end(self, turn_number: int, **kwargs: Any) -> None:
        self._record("on_turn_end", turn_number, kwargs)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self._record("on_session_end", messages)

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        self._record("on_session_switch", new_session_id, parent_session_id, reset, rewound, kwargs)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        self._record("on_pre_compress", messages)
        return f"{self._name} notes"

    def on_delegation(
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        self._record("on_delegation", task, result, child_session_id, kwargs)


def manager_with(*providers: MemoryProvider, **options: Any) -> MemoryManager:
    manager = MemoryManager(**options)
    for provider in providers:
        assert manager.add_provider(provider)
    return manager


# ---------------------------------------------------------------- registration


def test_empty_manager_has_nothing_to_say() -> None:
    manager = MemoryManager()
    assert manager.providers == []
    assert manager.provider_names == []
    assert manager.get_all_tool_schemas() == []
    assert manager.build_system_prompt() == ""
    assert manager.prefetch_all("test") == ""
    assert manager.describe_recall() == ""


def test_one_provider_is_found_by_name() -> None:
    provider = Recorder("test1")
    manager = manager_with(provider)
    assert manager.provider_names == ["test1"]
    assert manager.get_provider("test1") is provider
    assert manager.get_provider("unknown") is None


def test_builtin_comes_first_even_when_added_after_the_external() -> None:
    manager = manager_with(Recorder("external"), Recorder("builtin"))
    assert manager.provider_names == ["builtin", "external"]


def test_second_external_is_refused_with_a_warning_naming_both(
    caplog: pytest.LogCaptureFixture,
) -> None:
    manager = manager_with(Recorder("builtin"), Recorder("mem0"))
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        assert manager.add_provider(Recorder("hindsight")) is False
    assert manager.provider_names == ["builtin", "mem0"]
    message = caplog.records[-1].getMessage()
    assert "'hindsight'" in message and "'mem0'" in message
    assert "memory.provider" in message and "config.yaml" in message


def test_two_externals_with_the_same_name_keep_only_the_first() -> None:
    first = Recorder("sqlite_memory")
    manager = manager_with(first)
    assert manager.add_provider(Recorder("sqlite_memory")) is False
    assert manager.providers == [first]


def test_several_builtins_are_accepted_and_stay_ahead_of_the_external() -> None:
    manager = manager_with(Recorder("builtin"), Recorder("ext"), Recorder("builtin"))
    assert manager.provider_names == ["builtin", "builtin", "ext"]


def test_failing_schema_load_leaves_the_manager_untouched() -> None:
    broken = Recorder("broken", fail=("get_tool_schemas",))
    manager = manager_with(Recorder("builtin"))
    with pytest.raises(RuntimeError, match="get_tool_schemas exploded"):
        manager.add_provider(broken)
    assert manager.provider_names == ["builtin"]
    # The external slot was not poisoned.
    assert manager.add_provider(Recorder("good", tools=[tool("good_recall")]))
    assert manager.provider_names == ["builtin", "good"]
    assert manager.has_tool("good_recall")


def test_providers_property_is_a_copy() -> None:
    manager = manager_with(Recorder("builtin"))
    manager.providers.clear()
    assert manager.provider_names == ["builtin"]


# ---------------------------------------------------------------- tool schemas and routing


def test_normalize_tool_schema_unwraps_and_rejects_nameless() -> None:
    wrapped = {"type": "function", "function": {"name": "x_grep", "parameters": {}}}
    assert normalize_tool_schema(wrapped) == {"name": "x_grep", "parameters": {}}
    assert normalize_tool_schema("nope") is None
    assert normalize_tool_schema(None) is None
    assert normalize_tool_schema({"description": "no name"}) is None
    assert normalize_tool_schema({"name": "  "}) is None
    assert normalize_tool_schema({"type": "function", "function": {"description": "x"}}) is None


def test_schemas_are_normalized_and_nameless_ones_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tools: list[Any] = [
        {"type": "function", "function": tool("x_grep")},
        {"type": "function", "function": {"type": "function", "function": tool("double")}},
        "not a schema",
        tool("x_find"),
    ]
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        manager = manager_with(Recorder("ext", tools=tools))
    assert [s["name"] for s in manager.get_all_tool_schemas()] == ["x_grep", "x_find"]
    assert all("type" not in s for s in manager.get_all_tool_schemas())
    warnings = [r.getMessage() for r in caplog.records]
    assert sum("a tool schema without a name" in w for w in warnings) == 1
    assert sum("a tool schema of type str (not a dict)" in w for w in warnings) == 1


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"name": "recall memories", "parameters": {}}, "tool names must match"),
        ({"name": "x" * 65, "parameters": {}}, "tool names must match"),
        ({"name": "ext_recall", "parameters": "query: str"}, "parameters of type str"),
        ({"name": "ext_recall", "description": ["list"]}, "description of type list"),
        ({"name": "ext_recall", "parameters": {"enum": {1, 2}}}, "not JSON"),
        ({"name": "ext_recall", "parameters": {"maximum": float("inf")}}, "not JSON"),
    ],
)
def test_schemas_a_request_could_not_carry_are_dropped_with_the_reason(
    caplog: pytest.LogCaptureFixture, schema: dict[str, Any], reason: str
) -> None:
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        manager = manager_with(Recorder("ext", tools=[schema, tool("ext_fine")]))
        manager.initialize_all("s1")  # re-reads the schemas; the warning is not repeated
    assert normalize_tool_schema(schema) is None
    assert manager.get_all_tool_names() == {"ext_fine"}
    (warning,) = [r.getMessage() for r in caplog.records]
    assert "Memory provider 'ext' declared" in warning and reason in warning
    assert "Fix the schema" in warning


def test_unpaired_surrogates_in_a_schema_are_replaced() -> None:
    schema = {"name": "ext_recall", "description": "odd \ud800", "parameters": {"k": "\udfff"}}
    assert normalize_tool_schema(schema) == {
        "name": "ext_recall",
        "description": "odd \ufffd",
        "parameters": {"k": "\ufffd"},
    }


def test_tools_of_all_providers_are_listed_and_routed() -> None:
    builtin = Recorder("builtin", tools=[tool("builtin_tool")])
    external = Recorder("ext", tools=[tool("ext_recall"), tool("ext_retain")])
    manager = manager_with(builtin, external)
    assert manager.get_all_tool_names() == {"builtin_tool", "ext_recall", "ext_retain"}
    answer = json.loads(manager.handle_tool_call("ext_retain", {"fact": "likes tea"}))
    assert answer == {"handled": "ext_retain", "by": "ext", "args": {"fact": "likes tea"}}
    assert json.loads(manager.handle_tool_call("builtin_tool", {}))["by"] == "builtin"
    for name in ("terminal", "memory", "todo", "session_search", "nonexistent"):
        assert not manager.has_tool(name)


def test_first_registered_provider_wins_a_tool_name(caplog: pytest.LogCaptureFixture) -> None:
    builtin = Recorder("builtin", tools=[tool("shared")])
    external = Recorder("ext", tools=[tool("shared")])
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        manager = manager_with(builtin, external)
    assert manager.has_tool("shared")
    assert json.loads(manager.handle_tool_call("shared", {}))["by"] == "builtin"
    assert [s["name"] for s in manager.get_all_tool_schemas()] == ["shared"]
    assert any(
        "Memory tool name conflict: 'shared' already registered by builtin, ignoring from ext"
        in r.getMessage()
        for r in caplog.records
    )


def test_builtin_added_late_still_owns_shared_tool_names() -> None:
    manager = manager_with(
        Recorder("ext", tools=[tool("shared")]), Recorder("builtin", tools=[tool("shared")])
    )
    assert json.loads(manager.handle_tool_call("shared", {}))["by"] == "builtin"


def test_reserved_names_are_refused_for_externals_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert {"memory", "session_search", "delegate_task", "clarify"} <= RESERVED_TOOL_NAMES
    builtin = Recorder("builtin", tools=[tool("memory"), tool("session_search")])
    external = Recorder("ext", tools=[tool("delegate_task"), tool("memory"), tool("ext_recall")])
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        manager = manager_with(builtin, external)
    assert manager.get_all_tool_names() == {"memory", "session_search", "ext_recall"}
    assert json.loads(manager.handle_tool_call("memory", {}))["by"] == "builtin"
    assert any(
        "'ext' tool 'delegate_task' shadows a reserved core tool name" in r.getMessage()
        for r in caplog.records
    )


def test_unknown_tool_returns_a_json_error() -> None:
    manager = manager_with(Recorder("builtin"))
    answer = json.loads(manager.handle_tool_call("terminal", {"cmd": "ls"}))
    assert answer == {"error": "No memory provider handles tool 'terminal'"}


def test_failing_tool_becomes_a_json_error_logged_at_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    manager = manager_with(Recorder("ext", tools=[tool("ext_recall")], fail=("handle_tool_call",)))
    with caplog.at_level(logging.DEBUG, logger="hermes_core.manager"):
        answer = json.loads(manager.handle_tool_call("ext_recall", {}))
    assert answer == {"error": "Memory tool 'ext_recall' failed: ext handle_tool_call exploded"}
    assert [r.levelname for r in caplog.records] == ["ERROR"]


def test_tool_results_json_cannot_encode_become_a_json_error() -> None:
    class Odd(Recorder):
        result: Any = None

        def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> Any:
            return self.result

    class Unprintable:
        def __init__(self, error: BaseException) -> None:
            self.error = error

        def __str__(self) -> str:
            raise self.error

    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    for result in (
        {("a", "b"): 1},
        cyclic,
        {"hit": Unprintable(RuntimeError("no text"))},
        [Unprintable(SystemExit(2))],
    ):
        provider = Odd("ext", tools=[tool("ext_recall")])
        provider.result = result
        manager = manager_with(provider)
        answer = json.loads(manager.handle_tool_call("ext_recall", {}))
        assert answer["error"].startswith(
            "Memory tool 'ext_recall' returned a result that cannot be encoded as JSON"
        )


def test_tool_results_in_bytes_are_decoded() -> None:
    class Raw(Recorder):
        def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> Any:
            return b'{"found": "caf\xe9"}'

    manager = manager_with(Raw("ext", tools=[tool("ext_recall")]))
    assert json.loads(manager.handle_tool_call("ext_recall", {})) == {"found": "caf\ufffd"}


def test_tool_arguments_are_redacted_without_touching_the_callers_dict() -> None:
    external = Recorder("ext", tools=[tool("ext_retain")])
    manager = manager_with(external)
    args = {"fact": f"my key is {SECRET}", "tags": ["keep"]}
    manager.handle_tool_call("ext_retain", args, task_id="t1")
    (_, received, kwargs) = external.hook_calls("handle_tool_call")[0]
    assert received == {"fact": "my key is [redacted]", "tags": ["keep"]}
    assert kwargs == {"task_id": "t1"}
    assert args["fact"] == f"my key is {SECRET}"


def test_tools_found_during_initialize_are_routed_afterwards() -> None:
    class LateTools(Recorder):
        def initialize(self, session_id: str, **kwargs: Any) -> None:
            super().initialize(session_id, **kwargs)
            self.tools = [tool("late_recall")]

    manager = manager_with(Recorder("builtin"), LateTools("late"))
    assert not manager.has_tool("late_recall")
    manager.initialize_all("s1", platform="cli")
    assert manager.has_tool("late_recall")
    assert json.loads(manager.handle_tool_call("late_recall", {}))["by"] == "late"


# ---------------------------------------------------------------- system prompt and prefetch


def test_system_prompt_joins_non_empty_blocks() -> None:
    both = manager_with(Recorder("builtin", prompt="Builtin block"), Recorder("e", prompt="Ext"))
    assert both.build_system_prompt() == "Builtin block\n\nExt"
    one = manager_with(Recorder("builtin", prompt="Has content"), Recorder("e", prompt="  \n"))
    assert one.build_system_prompt() == "Has content"


def test_system_prompt_survives_a_failing_block(caplog: pytest.LogCaptureFixture) -> None:
    manager = manager_with(
        Recorder("builtin", fail=("system_prompt_block",)), Recorder("e", prompt="works fine")
    )
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        assert manager.build_system_prompt() == "works fine"
    assert "system_prompt_block" in caplog.records[-1].getMessage()


def test_system_prompt_ignores_a_non_string_block(caplog: pytest.LogCaptureFixture) -> None:
    junk = Recorder("e")
    junk.prompt = {"not": "a string"}  # type: ignore[assignment]
    manager = manager_with(Recorder("builtin", prompt="frozen snapshot"), junk)
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        assert manager.build_system_prompt() == "frozen snapshot"
    assert "not str" in caplog.text


def test_prefetch_joins_results_and_passes_the_query() -> None:
    builtin = Recorder("builtin", recall="builtin memory")
    external = Recorder("ext", recall="external memory")
    manager = manager_with(builtin, external)
    result = manager.prefetch_all("what do you know?", session_id="s9")
    assert result == "builtin memory\n\nexternal memory"
    assert builtin.hook_calls("prefetch") == [("what do you know?", "s9")]
    assert external.hook_calls("prefetch") == [("what do you know?", "s9")]


def test_prefetch_drops_empty_results_and_survives_failures() -> None:
    assert (
        manager_with(Recorder("builtin", recall="Has memories"), Recorder("e")).prefetch_all("q")
        == "Has memories"
    )
    failing = manager_with(
        Recorder("builtin", fail=("prefetch",)), Recorder("e", recall="external memory")
    )
    assert failing.prefetch_all("q") == "external memory"


def test_prefetch_query_is_redacted() -> None:
    builtin = Recorder("builtin")
    external = Recorder("ext")
    manager = manager_with(builtin, external)
    manager.prefetch_all(f"use {SECRET} please")
    assert builtin.hook_calls("prefetch")[0][0] == "use [redacted] please"
    assert external.hook_calls("prefetch")[0][0] == "use [redacted] please"


def test_unpaired_surrogates_never_reach_a_provider() -> None:
    external = Recorder("ext")
    manager = manager_with(Recorder("builtin"), external)
    manager.prefetch_all("caf\udce9 \ud800 au lait")
    assert external.hook_calls("prefetch")[0][0] == "caf\ufffd \ufffd au lait"
    manager.sync_all("lone \udfff", "ok", messages=[{"role": "user", "content": "lone \udfff"}])
    assert manager.flush_pending(5)
    user, _assistant, *_rest = external.hook_calls("sync_turn")[0]
    assert user == "lone \ufffd"
    # nothing a provider was handed is unencodable
    json.dumps(external.calls, ensure_ascii=False, default=str).encode("utf-8")
    manager.shutdown_all()


def test_describe_recall_reports_providers_that_recalled() -> None:
    class Counted(Recorder):
        def __init__(self, name: str, recall: str, status: RecallStatus | None) -> None:
            super().__init__(name, recall=recall)
            self.status = status

        def recall_status(self) -> RecallStatus | None:
            return self.status

    manager = manager_with(
        Counted("builtin", "one fact", RecallStatus("Notes", 1)),
        Counted("ext", "many", RecallStatus("Honcho", 3, glyph="*")),
    )
    assert manager.describe_recall() == ""
    manager.prefetch_all("q")
    assert (
        manager.describe_recall() == "🧠 Notes — recalled 1 memory  * Honcho — recalled 3 memories"
    )

    vague = manager_with(Counted("builtin", "text", RecallStatus("Notes", 0)))
    vague.prefetch_all("q")
    assert vague.describe_recall() == "🧠 Notes — recalled relevant memory"

    # A provider that recalled nothing this turn is not described.
    silent = manager_with(Counted("builtin", "", RecallStatus("Notes", 2)))
    silent.prefetch_all("q")
    assert silent.describe_recall() == ""


def test_describe_recall_skips_a_status_that_is_not_a_recall_status() -> None:
    class Odd(Recorder):
        def __init__(self, name: str, status: Any) -> None:
            super().__init__(name, recall="text")
            self.status = status

        def recall_status(self) -> Any:
            return self.status

    manager = manager_with(Odd("builtin", {"count": 3}), Odd("ext", RecallStatus("Honcho", 2)))
    manager.prefetch_all("q")
    assert manager.describe_recall() == "🧠 Honcho — recalled 2 memories"
    wrong_count = manager_with(Odd("builtin", RecallStatus("Notes", "3")))  # type: ignore[arg-type]
    wrong_count.prefetch_all("q")
    assert wrong_count.describe_recall() == ""


# ---------------------------------------------------------------- turn hooks


def test_on_turn_start_reaches_a_legacy_two_argument_hook() -> None:
    class Legacy(Recorder):
        def on_turn_start(self, turn_number: int, message: str) -> None:  # type: ignore[override]
            self._record("on_turn_start", turn_number, message)

    legacy = Legacy("builtin")
    modern = Recorder("ext")
    manager = manager_with(legacy, modern)
    manager.on_turn_start(3, "hello", model="m1", remaining_tokens=900)
    assert legacy.hook_calls("on_turn_start") == [(3, "hello")]
    assert modern.hook_calls("on_turn_start") == [
        (3, "hello", {"model": "m1", "remaining_tokens": 900})
    ]


def test_on_turn_start_passes_only_declared_keywords_and_redacts_the_message() -> None:
    class Picky(Recorder):
        def on_turn_start(  # type: ignore[override]
            self, turn_number: int, message: str, *, model: str = ""
        ) -> None:
            self._record("on_turn_start", turn_number, message, model)

    picky = Picky("ext")
    manager = manager_with(picky)
    manager.on_turn_start(1, f"key {SECRET}", model="m1", platform="cli")
    assert picky.hook_calls("on_turn_start") == [(1, "key [redacted]", "m1")]


def test_on_turn_end_reaches_a_legacy_hook_and_passes_only_declared_keywords() -> None:
    class Legacy(Recorder):
        def on_turn_end(self, turn_number: int) -> None:  # type: ignore[override]
            self._record("on_turn_end", turn_number)

    legacy = Legacy("builtin")
    modern = Recorder("ext")
    manager = manager_with(legacy, modern)
    manager.on_turn_end(4, session_id="s1")
    assert legacy.hook_calls("on_turn_end") == [(4,)]
    assert modern.hook_calls("on_turn_end") == [(4, {"session_id": "s1"})]


def test_a_provider_without_on_turn_end_is_not_called() -> None:
    class Old(Recorder):
        on_turn_end = MemoryProvider.on_turn_end  # the contract's no-op, as an old plugin has

    old, new = Old("builtin"), Recorder("ext")
    manager = manager_with(old, new)
    manager.on_turn_end(1)
    assert old.hook_calls("on_turn_end") == []
    assert new.hook_calls("on_turn_end") == [(1, {})]


def test_a_hung_on_turn_end_costs_only_its_own_hook(caplog: pytest.LogCaptureFixture) -> None:
    release = threading.Event()

    class Hung(Recorder):
        def on_turn_end(self, turn_number: int, **kwargs: Any) -> None:
            self._record("on_turn_end", turn_number, kwargs)
            release.wait(30)

    builtin, hung = Recorder("builtin"), Hung("ext")
    manager = manager_with(builtin, hung, external_prefetch_timeout=0.2)
    try:
        with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
            manager.on_turn_end(1)
            manager.on_turn_end(2)
    finally:
        release.set()
    assert builtin.hook_calls("on_turn_end") == [(1, {}), (2, {})]
    warnings = [r.getMessage() for r in caplog.records if "on_turn_end" in r.getMessage()]
    assert warnings == ["Memory provider 'ext' on_turn_end: did not return within 0.2s"] * 2


def test_on_session_end_delivers_a_redacted_copy_and_isolates_failures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    builtin = Recorder("builtin", fail=("on_session_end",))
    external = Recorder("ext")
    manager = manager_with(builtin, external)
    messages = [{"role": "user", "content": "hi"}, {"role": "tool", "content": f"k={SECRET}"}]
    with caplog.at_level(logging.DEBUG, logger="hermes_core.manager"):
        manager.on_session_end(messages)
    expected = [{"role": "user", "content": "hi"}, {"role": "tool", "content": "k=[redacted]"}]
    assert builtin.hook_calls("on_session_end") == [(expected,)]
    assert external.hook_calls("on_session_end") == [(expected,)]
    assert messages[1]["content"] == f"k={SECRET}"
    warning, detail = caplog.records[-2:]  # one line for the console, the traceback at DEBUG
    assert (warning.levelname, warning.exc_info) == ("WARNING", None)
    assert "RuntimeError: builtin on_session_end exploded" in warning.getMessage()
    assert detail.levelname == "DEBUG" and detail.exc_info
    manager.on_session_end(None)
    assert external.hook_calls("on_session_end")[-1] == ([],)


def test_on_session_switch_forwards_lineage_and_rewound_only_when_true() -> None:
    external = Recorder("ext")
    manager = manager_with(external)
    manager.on_session_switch("")
    manager.on_session_switch("s2", parent_session_id="s1", reason="compression")
    manager.on_session_switch("s2", rewound=True)
    manager.on_session_switch("s3", reset=True)
    assert external.hook_calls("on_session_switch") == [
        ("s2", "s1", False, False, {"reason": "compression"}),
        ("s2", "", False, True, {}),
        ("s3", "", True, False, {}),
    ]


def test_on_delegation_redacts_and_forwards_keywords() -> None:
    external = Recorder("ext")
    manager = manager_with(external)
    manager.on_delegation("deploy", f"used {SECRET}", child_session_id="c1", depth=1)
    assert external.hook_calls("on_delegation") == [
        ("deploy", "used [redacted]", "c1", {"depth": 1})
    ]


def test_shutdown_runs_in_reverse_registration_order() -> None:
    order: list[str] = []

    class Ordered(Recorder):
        def shutdown(self) -> None:
            order.append(self.name)

    manager = manager_with(Ordered("builtin"), Ordered("external"))
    manager.shutdown_all()
    assert order == ["external", "builtin"]


# ---------------------------------------------------------------- pre-compress checkpoints


class CheckpointProvider(Recorder):
    pre_compress_checkpoint_api_version = 2

    def on_pre_compress(  # type: ignore[override]
        self, messages: list[dict[str, Any]], *, require_checkpoint: bool = False
    ) -> str:
        self._record("on_pre_compress", messages, require_checkpoint)
        return "checkpoint taken"


def test_pre_compress_collects_notes_from_every_provider() -> None:
    builtin = Recorder("builtin")
    external = Recorder("ext")
    manager = manager_with(builtin, external)
    messages = [{"role": "user", "content": "long story"}]
    assert manager.on_pre_compress(messages) == "builtin notes\n\next notes"
    assert external.hook_calls("on_pre_compress") == [(messages,)]


def test_checkpoint_providers_get_evidence_and_the_strict_flag() -> None:
    legacy = Recorder("builtin")
    checkpoint = CheckpointProvider("ext")
    manager = manager_with(legacy, checkpoint)
    messages = [{"role": "user", "content": "all"}]
    evidence = [{"role": "user", "content": f"evidence {SECRET}"}]
    text = manager.on_pre_compress(messages, evidence_messages=evidence, require_checkpoint=True)
    assert text == "builtin notes\n\ncheckpoint taken"
    assert legacy.hook_calls("on_pre_compress") == [(messages,)]
    assert checkpoint.hook_calls("on_pre_compress") == [
        ([{"role": "user", "content": "evidence [redacted]"}], True)
    ]
    assert manager.supports_pre_compress_checkpoint()
    assert not manager.supports_pre_compress_checkpoint(3)


def test_a_required_checkpoint_fails_closed() -> None:
    only_legacy = manager_with(Recorder("builtin"))
    with pytest.raises(PreCompressCheckpointError, match="checkpoint API v2") as raised:
        only_legacy.on_pre_compress([], require_checkpoint=True)
    assert isinstance(raised.value, RuntimeError)

    failing = manager_with(
        Recorder("builtin"), CheckpointProvider("ext", fail=("on_pre_compress",))
    )
    with pytest.raises(RuntimeError, match="ext on_pre_compress exploded"):
        failing.on_pre_compress([], require_checkpoint=True)
    # Without the strict flag the same failure is swallowed.
    assert failing.on_pre_compress([]) == "builtin notes"


def test_checkpoint_version_that_cannot_be_parsed_counts_as_version_one() -> None:
    class Odd(Recorder):
        pre_compress_checkpoint_api_version = "two"  # type: ignore[assignment]

    odd = Odd("ext")
    manager = manager_with(odd)
    assert not manager.supports_pre_compress_checkpoint()
    assert manager.on_pre_compress([{"role": "user", "content": "x"}]) == "ext notes"


# ---------------------------------------------------------------- initialize


def test_initialize_all_passes_session_and_kwargs_to_every_provider(hermes_home: Path) -> None:
    builtin = Recorder("builtin")
    external = Recorder("ext")
    manager = manager_with(builtin, external)
    manager.initialize_all("test-123", platform="cli")
    expected = ("test-123", {"platform": "cli", "hermes_home": str(hermes_home)})
    assert builtin.hook_calls("initialize") == [expected]
    assert external.hook_calls("initialize") == [expected]


class SelfDisabling(Recorder):
    """Fails to initialize and then reports itself unavailable (it shut itself down)."""

    def __init__(self, name: str = "ext", *, still_available: bool = False) -> None:
        super().__init__(name, tools=[tool("ext_search")], recall="remembered")
        self.still_available = still_available
        self.started = True

    def is_available(self) -> bool:
        return self.started or self.still_available

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.started = False
        try:
            raise OSError("config file is missing")
        except OSError as exc:
            raise RuntimeError("startup aborted") from exc


def test_a_provider_that_fails_to_initialize_and_says_it_cannot_run_is_dropped(
    hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    builtin, external = Recorder("builtin"), SelfDisabling()
    manager = manager_with(builtin, external)
    with caplog.at_level(logging.WARNING):
        manager.initialize_all("s1")
    assert "startup aborted (caused by OSError('config file is missing'))" in caplog.text
    assert "'ext' is not used for the rest of this session" in caplog.text
    assert manager.provider_names == ["builtin"]
    assert "ext_search" not in {s["name"] for s in manager.get_all_tool_schemas()}
    assert manager.prefetch_all("anything") == ""
    manager.sync_all("hello", "hi", session_id="s1")
    assert manager.flush_pending(timeout=5)
    assert external.hook_calls("sync_turn") == []


def test_a_provider_that_fails_to_initialize_but_still_says_it_can_run_stays(
    hermes_home: Path,
) -> None:
    # Hermes keeps such a provider; so does hermes-memory.
    manager = manager_with(Recorder("builtin"), SelfDisabling(still_available=True))
    manager.initialize_all("s1")
    assert manager.provider_names == ["builtin", "ext"]
    assert "ext_search" in {s["name"] for s in manager.get_all_tool_schemas()}


def test_initialize_for_inspection_never_calls_initialize(tmp_path: Path) -> None:
    external = Recorder("ext")
    manager = manager_with(external)
    manager.initialize_all_for_inspection("inspect-session", platform="cli", hermes_home="/x")
    assert external.hook_calls("initialize_for_inspection") == [
        ("inspect-session", {"platform": "cli", "hermes_home": "/x"})
    ]
    assert external.hook_calls("initialize") == []


def test_initialize_forwards_user_and_gateway_keys_and_drops_none(hermes_home: Path) -> None:
    builtin = Recorder("builtin")
    external = Recorder("ext")
    manager = manager_with(builtin, external)
    gateway = {
        "user_name": "Ada",
        "chat_id": "c-1",
        "chat_name": "ops",
        "chat_type": "group",
        "thread_id": "t-7",
    }
    manager.initialize_all(
        "s1", platform="telegram", user_id="tg_user_42", agent_context="primary", **gateway
    )
    (session_id, kwargs) = external.hook_calls("initialize")[0]
    assert session_id == "s1"
    assert kwargs == {
        "platform": "telegram",
        "user_id": "tg_user_42",
        "agent_context": "primary",
        "hermes_home": str(hermes_home),
        **gateway,
    }
    assert builtin.hook_calls("initialize") == external.hook_calls("initialize")

    cli = Recorder("ext2")
    cli_manager = manager_with(cli)
    cli_manager.initialize_all("s2", platform="cli", user_id=None)
    assert "user_id" not in cli.hook_calls("initialize")[0][1]


def test_a_failing_initialize_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    external = Recorder("ext")
    manager = manager_with(Recorder("builtin", fail=("initialize",)), external)
    with caplog.at_level(logging.WARNING, logger="hermes_core.manager"):
        manager.initialize_all("s1", platform="cli")
    assert len(external.hook_calls("initialize")) == 1
    assert "builtin" in caplog.records[-1].getMessage()


# ---------------------------------------------------------------- isolation levels


@pytest.mark.parametrize(
    ("hook", "call", "level"),
    [
        ("system_prompt_block", lambda m: m.build_system_prompt(), "WARNING"),
        ("prefetch", lambda m: m.prefetch_all("q"), "WARNING"),
        ("on_turn_start", lambda m: m.on_turn_start(1, "q"), "DEBUG"),
        ("on_turn_end", lambda m: m.on_turn_end(1), "WARNING"),
        ("on_session_end", lambda m: m.on_session_end([]), "WARNING"),
        ("on_session_switch", lambda m: m.on_session_switch("s2"), "DEBUG"),
        ("on_pre_compress", lambda m: m.on_pre_compress([]), "DEBUG"),
        ("on_delegation", lambda m: m.on_delegation("t", "r"), "DEBUG"),
        ("initialize", lambda m: m.initialize_all("s1"), "WARNING"),
        ("shutdown", lambda m: m.shutdown_all(), "WARNING"),
    ],
)
def test_each_hook_isolates_a_failing_provider(
    hook: str, call: Any, level: str, caplog: pytest.LogCaptureFixture
) -> None:
    failing = Recorder("builtin", fail=(hook,))
    healthy = Recorder("ext")
    manager = manager_with(failing, healthy)
    with caplog.at_level(logging.DEBUG, logger="hermes_core.manager"):
        call(manager)
    assert healthy.hook_calls(hook), f"{hook} did not reach the healthy provider"
    failures = [r for r in caplog.records if f"{hook} exploded" in r.getMessage()]
    assert [r.levelname for r in failures] == [level]
    assert f"Memory provider 'builtin' {hook}" in failures[0].getMessage()
    assert failures[0].exc_info is None  # one line on the console, no traceback


class OwnCrash(BaseException):
    """A provider's own ``BaseException`` subclass."""


class Crasher(Recorder):
    """A Recorder whose ``fail`` hooks raise *crash*, a ``BaseException``, instead."""

    def __init__(self, name: str, crash: BaseException, fail: tuple[str, ...], **kw: Any) -> None:
        super().__init__(name, fail=fail, **kw)
        self.crash = crash

    def _record(self, hook: str, *args: Any) -> None:
        self.calls.append((hook, *args))
        if hook in self.fail:
            raise self.crash

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        self._record("on_memory_write", action, target, content)

    def recall_status(self) -> RecallStatus | None:
        self._record("recall_status")
        return RecallStatus(self.name, 1)


CRASHES = [SystemExit(3), GeneratorExit(), OwnCrash("its own")]


def _flushed(call: Any) -> Any:
    def run(manager: MemoryManager) -> None:
        call(manager)
        assert manager.flush_pending(timeout=10)

    return run


@pytest.mark.parametrize("crash", CRASHES, ids=lambda crash: type(crash).__name__)
@pytest.mark.parametrize(
    ("hook", "call"),
    [
        ("system_prompt_block", lambda m: m.build_system_prompt()),
        ("prefetch", lambda m: m.prefetch_all("q")),
        ("on_turn_start", lambda m: m.on_turn_start(1, "q")),
        ("on_turn_end", lambda m: m.on_turn_end(1)),
        ("sync_turn", _flushed(lambda m: m.sync_all("u", "a"))),
        ("queue_prefetch", _flushed(lambda m: m.queue_prefetch_all("q"))),
        ("on_session_end", lambda m: m.on_session_end([])),
        (
            "on_session_end",
            _flushed(lambda m: m.commit_session_boundary_async([], new_session_id="s2")),
        ),
        ("on_session_switch", lambda m: m.on_session_switch("s2")),
        ("on_pre_compress", lambda m: m.on_pre_compress([])),
        ("on_delegation", lambda m: m.on_delegation("t", "r")),
        ("initialize", lambda m: m.initialize_all("s1")),
        ("shutdown", lambda m: m.shutdown_all()),
    ],
)
def test_a_provider_raising_a_base_exception_fails_alone(
    hook: str, call: Any, crash: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    failing = Crasher("builtin", crash, fail=(hook,))
    healthy = Recorder("ext")
    manager = manager_with(failing, healthy)
    with caplog.at_level(logging.DEBUG, logger="hermes_core.manager"):
        call(manager)
    assert healthy.hook_calls(hook), f"{hook} did not reach the healthy provider"
    assert any(
        f"Memory provider 'builtin' {hook}: {type(crash).__name__}" in r.getMessage()
        for r in caplog.records
    )
    if hook != "shutdown":  # the background worker is still alive: later writes arrive
        manager.sync_all("later", "turn")
        assert manager.flush_pending(timeout=10)
        assert ("later", "turn", "", None) in healthy.hook_calls("sync_turn")


@pytest.mark.parametrize("crash", CRASHES, ids=lambda crash: type(crash).__name__)
def test_an_external_raising_a_base_exception_fails_alone(crash: BaseException) -> None:
    external = Crasher(
        "ext",
        crash,
        fail=("prefetch", "handle_tool_call", "on_memory_write", "recall_status"),
        tools=[tool("ext_recall")],
    )
    manager = manager_with(Recorder("builtin", recall="builtin recall"), external)
    assert manager.prefetch_all("q") == "builtin recall"  # the external's own thread
    answer = json.loads(manager.handle_tool_call("ext_recall", {}))
    assert answer["error"].startswith(f"Memory tool 'ext_recall' failed: {type(crash).__name__}")
    manager.on_memory_write("add", "memory", "a fact")
    assert manager.write_mirror_failures == {"ext": 1}
    external.fail = {"recall_status"}
    external.recall = "ext recall"
    assert manager.prefetch_all("q") == "builtin recall\n\next recall"
    assert manager.describe_recall() == ""
    manager.shutdown_all()


def test_keyboard_interrupt_in_a_provider_still_stops_the_host() -> None:
    manager = manager_with(Crasher("builtin", KeyboardInterrupt(), fail=("on_turn_start",)))
    with pytest.raises(KeyboardInterrupt):
        manager.on_turn_start(1, "q")


class LegacyRecall(MemoryProvider):
    """A provider written against an older contract: no ``session_id`` keywords."""

    def __init__(self) -> None:
        self.queries: list[str] = []
        self.queued: list[str] = []

    @property
    def name(self) -> str:
        return "legacy"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def prefetch(self, query: str) -> str:  # type: ignore[override]
        self.queries.append(query)
        return "legacy recall"

    def queue_prefetch(self, query: str) -> None:  # type: ignore[override]
        self.queued.append(query)


def test_prefetch_hooks_without_session_id_keyword_still_work() -> None:
    legacy = LegacyRecall()
    manager = manager_with(Recorder("builtin"), legacy)
    assert manager.prefetch_all("what editor?", session_id="s1") == "legacy recall"
    manager.queue_prefetch_all("next question", session_id="s1")
    assert manager.flush_pending(timeout=5)
    assert legacy.queries == ["what editor?"]
    assert legacy.queued == ["next question"]
    manager.shutdown_all()


def test_prefetch_hooks_with_a_positional_only_session_id_receive_it() -> None:
    class PositionalOnly(LegacyRecall):
        def __init__(self) -> None:
            super().__init__()
            self.sessions: list[str] = []

        def prefetch(self, query: str, sid: str, /) -> str:  # type: ignore[override]
            self.sessions.append(sid)
            return f"recall for {sid}"

        def queue_prefetch(self, query: str, session_id: str = "", /) -> None:  # type: ignore[override]
            self.sessions.append(f"warm {session_id}")

    external = PositionalOnly()
    manager = manager_with(Recorder("builtin"), external)
    assert manager.prefetch_all("what editor?", session_id="s1") == "recall for s1"
    manager.queue_prefetch_all("next", session_id="s1")
    assert manager.flush_pending(timeout=5)
    manager.shutdown_all()
    assert external.sessions == ["s1", "warm s1"]


def test_a_defaulted_positional_only_slot_of_another_name_gets_no_session_id() -> None:
    class Limit(LegacyRecall):
        def prefetch(self, query: str, limit: int = 5, /) -> str:  # type: ignore[override]
            return f"top {limit}"

    manager = manager_with(Recorder("builtin"), Limit())
    assert manager.prefetch_all("what editor?", session_id="s1") == "top 5"
    manager.shutdown_all()


def test_schemas_handed_out_are_copies_of_the_providers_own() -> None:
    shared = {"name": "recall", "description": "d", "parameters": {"type": "object"}}

    class ModuleLevelSchemas(Recorder):
        def get_tool_schemas(self) -> list[dict[str, Any]]:
            return [shared]

    manager = manager_with(Recorder("builtin"), ModuleLevelSchemas("ext"))
    handed = manager.get_all_tool_schemas()
    handed[0]["parameters"]["type"] = "mutated"
    assert shared["parameters"] == {"type": "object"}
    assert manager.get_all_tool_schemas()[0]["parameters"] == {"type": "object"}
