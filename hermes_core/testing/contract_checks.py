"""Conformance checks of the provider contract: identity, availability, tools, hooks."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_core.provider import MemoryProvider, RecallStatus
from hermes_core.testing.arguments import example_arguments, plain_schemas, wrong_type_value
from hermes_core.testing.capabilities import Capability
from hermes_core.testing.harness import ConformanceHarness, raised_in_availability
from hermes_core.testing.netguard import block_network
from hermes_core.testing.pool import DEFAULT_SESSION, ProviderPool, call_within, describe_outcome
from hermes_core.testing.probes import (
    TOPICS,
    codeword,
    fact_text,
    fix_message,
    is_error_answer,
    query_text,
    recall_text,
)
from hermes_core.testing.schema_check import tool_schema_problems
from hermes_core.writeshim import MemoryWriteShim


class ContractChecks(ConformanceHarness):
    """The standard tests of identity, availability, tool schemas and calls, and hook budgets."""

    # ------------------------------------------------------------------ identity

    def test_name_is_a_stable_identifier(self, provider: MemoryProvider) -> None:
        """``name`` is a non-empty string without spaces, the same every time."""
        name = provider.name
        assert isinstance(name, str) and name and name == name.strip() and " " not in name, (
            fix_message(
                f"name is {name!r}.", "return a short identifier such as 'notes' from `name`."
            )
        )
        assert provider.name == name, fix_message(
            "name changed between reads.", "return a constant."
        )

    def test_is_available_makes_no_network_call(self, provider_factory: ProviderPool) -> None:
        """``is_available`` and ``unavailable_reason`` never touch the network."""
        for label, provider in (
            ("a new", provider_factory.new()),
            ("an initialized", provider_factory.start()),
        ):
            with block_network() as attempts:
                try:
                    available = provider.is_available()
                    reason = provider.unavailable_reason()
                except OSError as exc:
                    attempts.append(f"raised {exc!r}")
                    available, reason = None, ""
                except Exception as exc:
                    raise AssertionError(raised_in_availability(label, exc)) from exc
            assert not attempts, fix_message(
                f"is_available()/unavailable_reason() on {label} provider used the network: "
                f"{attempts}.",
                "decide availability from configuration and installed packages only (the host "
                "calls it at startup, before any turn, and must not wait on the network).",
            )
            assert isinstance(available, bool), fix_message(
                f"is_available() returned {available!r}.", "return True or False."
            )
            assert isinstance(reason, str), fix_message(
                f"unavailable_reason() returned {reason!r}.", 'return a str ("" when available).'
            )

    def test_is_available_in_the_test_setup(self, provider: MemoryProvider) -> None:
        """The provider under test is available; otherwise every other test proves nothing."""
        try:
            available = provider.is_available()
        except Exception as exc:
            raise AssertionError(raised_in_availability("an initialized", exc)) from exc
        assert available, fix_message(
            f"is_available() is False: {provider.unavailable_reason() or 'no reason given'}",
            "configure the backend in create_provider/init_kwargs (for example point it at a "
            "local fake server and set its API key) so the provider can run.",
        )

    # ------------------------------------------------------------------ tools

    def test_tool_schemas_are_strict_backend_safe(self, provider: MemoryProvider) -> None:
        """Every tool schema is well formed and accepted by strict model backends."""
        from hermes_core.manager import BUILTIN_PROVIDER_NAME
        from hermes_core.toolschema import RESERVED_TOOL_NAMES

        reserved = () if provider.name == BUILTIN_PROVIDER_NAME else RESERVED_TOOL_NAMES
        problems = tool_schema_problems(provider.get_tool_schemas(), reserved_names=reserved)
        assert not problems, fix_message(
            "get_tool_schemas() has problems:\n- " + "\n- ".join(problems),
            "correct each schema as described: the host sends them to the model API as they "
            "are, and a strict backend rejects the whole request for one bad tool.",
        )

    def test_tool_schemas_are_stable(
        self, provider_factory: ProviderPool, provider: MemoryProvider
    ) -> None:
        """The tool list is the same on every call and before ``initialize``."""
        names = [s.get("name") for s in plain_schemas(provider)]
        again = [s.get("name") for s in plain_schemas(provider)]
        before = [s.get("name") for s in plain_schemas(provider_factory.new())]
        assert names == again, fix_message(
            f"get_tool_schemas() changed between calls: {names} then {again}.",
            "return the same tools every time; the manager builds its routing table once.",
        )
        assert names == before, fix_message(
            f"tools before initialize() were {before}, after {names}.",
            "declare the same tools before initialize(): discovery lists them from a new "
            "instance, and Hermes Agent indexes tools when the provider is added, before "
            "initialize(), so a tool that appears later is never routed there (hermes-memory "
            "reads them again after initialize()).",
        )

    def test_declared_tools_are_exposed(self, provider: MemoryProvider) -> None:
        """A provider declaring ``tools`` exposes at least one."""
        self.require(provider, Capability.TOOLS)
        assert plain_schemas(provider), fix_message(
            "the 'tools' capability is declared but get_tool_schemas() returned no named tool.",
            "return your tool schemas, or drop 'tools' from the declared capabilities.",
        )

    def _call_tool(self, provider: MemoryProvider, name: str, args: dict[str, Any]) -> Any:
        outcome = call_within(self.prefetch_budget, provider.handle_tool_call, name, args)
        assert outcome.finished, fix_message(
            f"handle_tool_call({name!r}, {args!r}) did not return within {self.prefetch_budget}s.",
            "bound every backend call a tool makes with a timeout.",
        )
        assert outcome.error is None, fix_message(
            f"handle_tool_call({name!r}, {args!r}) raised {outcome.error!r}.",
            'catch errors and return json.dumps({"error": "<what went wrong>"}) instead.',
        )
        result = outcome.result
        assert isinstance(result, str), fix_message(
            f"handle_tool_call({name!r}, {args!r}) returned {type(result).__name__}.",
            "return a JSON string (json.dumps of a dict).",
        )
        try:
            payload = json.loads(result)
        except ValueError:
            raise AssertionError(
                fix_message(
                    f"handle_tool_call({name!r}, {args!r}) returned text that is not JSON: "
                    f"{result[:200]!r}.",
                    "return json.dumps(...) of a dict.",
                )
            ) from None
        return payload  # any JSON value: Hermes passes a result through as it is

    def test_tool_calls_with_valid_arguments_return_json(self, provider: MemoryProvider) -> None:
        """Each tool, given its required arguments, answers a JSON object."""
        self.require(provider, Capability.TOOLS)
        for schema in plain_schemas(provider):
            name = schema["name"]
            self._call_tool(provider, name, example_arguments(schema.get("parameters")))
            for args in self.tool_examples.get(name, ()):
                payload = self._call_tool(provider, name, dict(args))
                assert not is_error_answer(payload), fix_message(
                    f"the example call {name}({dict(args)!r}) answered an error: {payload}.",
                    "the tool should succeed on the arguments listed in tool_examples.",
                )

    def test_tool_calls_with_bad_arguments_return_json_errors(
        self, provider: MemoryProvider
    ) -> None:
        """Missing, mistyped or unknown arguments and tools give JSON, never an exception."""
        self.require(provider, Capability.TOOLS)
        for schema in plain_schemas(provider):
            name = schema["name"]
            params = schema.get("parameters") or {}
            if not isinstance(params, dict):
                continue  # malformed: test_tool_schemas_are_strict_backend_safe says how
            properties = params.get("properties") or {}
            required = params.get("required") or []
            if not isinstance(properties, dict) or not isinstance(required, list):
                continue
            good = example_arguments(params)
            bad_calls: list[dict[str, Any]] = [{}, {**good, "no_such_argument": 1}]
            for key in required:
                bad_calls.append({**good, key: wrong_type_value(properties.get(key))})
                bad_calls.append({**good, key: None})
            for args in bad_calls:
                self._call_tool(provider, name, args)
        payload = self._call_tool(provider, "conformance_no_such_tool", {})
        assert is_error_answer(payload), fix_message(
            f"an unknown tool name answered {payload} without an error.",
            'answer {"error": "unknown tool ..."} for a tool name you do not own.',
        )

    # ------------------------------------------------------------------ hooks

    def test_prefetch_returns_within_budget(self, provider: MemoryProvider) -> None:
        """``prefetch`` answers a str within ``prefetch_budget`` seconds, cold and warm."""
        for query in (query_text("harbor"), "Tell me what you remember about my projects."):
            outcome = call_within(
                self.prefetch_budget, provider.prefetch, query, session_id=DEFAULT_SESSION
            )
            assert outcome.finished, fix_message(
                f"prefetch({query!r}) did not return within {self.prefetch_budget}s "
                "(prefetch_budget).",
                "prefetch() runs on the turn's critical path: serve results that queue_prefetch "
                "fetched in the background, and bound any wait with a short timeout.",
            )
            assert outcome.error is None, fix_message(
                f"prefetch({query!r}) raised {outcome.error!r}.",
                'degrade to "" (and log) when the backend fails; never raise into the turn.',
            )
            assert isinstance(recall_text(outcome.result), str), fix_message(
                f"prefetch() returned {type(outcome.result).__name__}.",
                'return a str ("" when nothing is recalled) or a MemoryPrefetchResult.',
            )
            status = provider.recall_status()
            assert status is None or isinstance(status, RecallStatus), fix_message(
                f"recall_status() returned {status!r}.", "return a RecallStatus or None."
            )

    def test_background_hooks_do_not_block(self, provider: MemoryProvider) -> None:
        """Hooks the host calls on the turn path hand their work to the background."""
        calls: list[tuple[str, Callable[[], Any]]] = [
            ("on_turn_start", lambda: provider.on_turn_start(1, query_text("violin"))),
            ("on_turn_end", lambda: provider.on_turn_end(1, session_id=DEFAULT_SESSION)),
            (
                "queue_prefetch",
                lambda: provider.queue_prefetch(query_text("violin"), session_id=DEFAULT_SESSION),
            ),
        ]
        for index in range(5):
            fact = fact_text(TOPICS[index], codeword())

            def sync(fact: str = fact) -> None:
                provider.sync_turn(fact, "Noted.", session_id=DEFAULT_SESSION)

            calls.append(("sync_turn", sync))
        calls.append(
            (
                "on_memory_write",
                lambda: MemoryWriteShim(provider)(
                    "add", "user", "Prefers short answers.", {"session_id": DEFAULT_SESSION}
                ),
            )
        )
        for hook, call in calls:
            outcome = call_within(self.nonblocking_budget, call)
            assert outcome.finished, fix_message(
                f"{hook}() did not return within {self.nonblocking_budget}s (nonblocking_budget).",
                f"{hook}() must hand its work to a background thread and return at once.",
            )
            assert outcome.error is None, fix_message(
                f"{hook}() raised {outcome.error!r}.", "log the failure and return; never raise."
            )

    def test_optional_hooks_honour_return_types(self, provider: MemoryProvider) -> None:
        """Every optional hook accepts the documented arguments and returns the documented type."""
        transcript = [
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi! How can I help?"},
        ]
        block = provider.system_prompt_block()
        assert isinstance(block, str), fix_message(
            f"system_prompt_block() returned {type(block).__name__}.", "return a str."
        )
        compressed = provider.on_pre_compress(transcript)
        # None means "nothing to keep", as both Hermes' manager and ours read it.
        assert compressed is None or isinstance(compressed, str), fix_message(
            f"on_pre_compress() returned {type(compressed).__name__}.",
            'return the text to keep in the summary ("" or None for none).',
        )
        provider.on_turn_start(
            2,
            "What did we decide yesterday?",
            remaining_tokens=1000,
            model="test-model",
            platform="cli",
        )
        provider.on_turn_end(2, session_id=DEFAULT_SESSION)
        provider.on_delegation("summarise the notes", "done", child_session_id="child-1")
        schema = provider.get_config_schema()
        assert isinstance(schema, list) and all(
            isinstance(f, dict) and isinstance(f.get("key"), str) for f in schema
        ), fix_message(
            f"get_config_schema() returned {schema!r}.",
            'return a list of dicts, each with at least a "key".',
        )
        paths = provider.backup_paths()
        assert isinstance(paths, list) and all(
            isinstance(p, str) and Path(p).is_absolute() for p in paths
        ), fix_message(
            f"backup_paths() returned {paths!r}.", "return a list of absolute path strings."
        )

    def test_initialize_for_inspection_starts_quietly(self, provider_factory: ProviderPool) -> None:
        """``initialize_for_inspection`` succeeds and leaves a provider that can shut down."""
        inspected = provider_factory.new()
        inspected.initialize_for_inspection(DEFAULT_SESSION, **provider_factory.init_kwargs())
        block = inspected.system_prompt_block()
        assert isinstance(block, str), fix_message(
            f"system_prompt_block() after initialize_for_inspection() returned "
            f"{type(block).__name__}.",
            'return a str ("" when there is nothing to add).',
        )
        outcome = provider_factory.stop(inspected, self.shutdown_budget)
        assert outcome.finished and outcome.error is None, fix_message(
            f"shutdown() after initialize_for_inspection() {describe_outcome(outcome)}.",
            "shutdown() must work whichever initialize variant ran.",
        )

    def test_shutdown_within_budget(self, provider_factory: ProviderPool) -> None:
        """``shutdown`` ends within ``shutdown_budget``, queued writes included; twice is safe."""
        provider = provider_factory.start()
        for topic in TOPICS[:3]:
            self._hook(
                provider,
                "sync_turn",
                fact_text(topic, codeword()),
                "Noted.",
                session_id=DEFAULT_SESSION,
            )
        self._hook(
            provider,
            "queue_prefetch",
            query_text("harbor"),
            session_id=DEFAULT_SESSION,
        )
        outcome = provider_factory.stop(provider, self.shutdown_budget)
        assert outcome.finished, fix_message(
            f"shutdown() did not return within {self.shutdown_budget}s (shutdown_budget).",
            "bound the time shutdown() waits for queued writes and background threads.",
        )
        assert outcome.error is None, fix_message(
            f"shutdown() raised {outcome.error!r}.", "log and swallow errors during shutdown()."
        )
        again = call_within(self.shutdown_budget, provider.shutdown)
        assert again.finished and again.error is None, fix_message(
            f"a second shutdown() {describe_outcome(again)}.",
            "make shutdown() idempotent: the host may call it more than once.",
        )
