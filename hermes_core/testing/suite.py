"""The provider conformance suite: subclass :class:`ProviderConformance` in your tests.

::

    import pytest
    from hermes_core.testing import ProviderConformance

    class TestNotesProvider(ProviderConformance):
        capabilities = {"tools", "prefetch", "sync", "recall", "multi_user", "persistence"}

        @pytest.fixture
        def create_provider(self, hermes_home):
            return NotesProvider          # a zero-argument callable: a new, uninitialized provider

Every standard test checks one promise of the provider contract that the host
relies on. A test that needs a capability the provider does not declare is
skipped with the reason. A standard test may only be overridden to mark it
``@pytest.mark.xfail(reason=...)``; ``test_standard_tests_are_not_overridden``
fails otherwise. Failure messages say what went wrong and what to fix.
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hermes_core.fencing import build_memory_context_block
from hermes_core.provider import MemoryPrefetchResult, MemoryProvider, RecallStatus
from hermes_core.testing.capabilities import (
    Capability,
    declared_capabilities,
    inferred_capabilities,
    parse_capabilities,
)
from hermes_core.testing.netguard import block_network
from hermes_core.testing.pool import (
    DEFAULT_SESSION,
    ProviderPool,
    call_within,
    describe_outcome,
)
from hermes_core.testing.schema_check import tool_schema_problems
from hermes_core.threads import threads_left_running
from hermes_core.writeshim import MemoryWriteShim

__all__ = ["ProviderConformance", "StoreInspector"]

StoreInspector = Callable[[], str]
"""Reads everything the backend stored, without going through the provider."""

TOPICS = ("harbor", "violin", "glacier", "saffron", "lantern", "orchid", "compass", "meadow")
_counter = itertools.count(1)

THREAD_EXIT_WAIT = 3.0
"""Seconds threads a provider started may take to end after ``shutdown()``."""


def _token() -> str:
    """A word no provider has seen before: letters and digits only."""
    return f"cw{secrets.token_hex(4)}x{next(_counter)}"


def fact_text(topic: str, token: str) -> str:
    """A fact the suite stores: the codeword *token* of the *topic* project."""
    return f"The conformance codeword for the {topic} project is {token}."


def query_text(topic: str) -> str:
    """The question that should recall :func:`fact_text` for *topic*."""
    return f"What is the conformance codeword for the {topic} project?"


def _fix(what: str, fix: str) -> str:
    return f"{what}\nFix: {fix}"


def _example_value(schema: Any) -> Any:
    """A plausible value for a JSON-Schema property (for generated tool calls)."""
    if not isinstance(schema, dict):
        return "conformance probe"
    if schema.get("enum"):
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf"):
        options = schema.get(combinator)
        if isinstance(options, list) and options:
            return _example_value(options[0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "integer":
        low = schema.get("minimum", 1)
        return int(low) if isinstance(low, int | float) else 1
    if kind == "number":
        low = schema.get("minimum", 1.0)
        return float(low) if isinstance(low, int | float) else 1.0
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return "conformance probe"


def example_arguments(parameters: Any) -> dict[str, Any]:
    """Arguments that fill every required parameter with a value of the right type."""
    if not isinstance(parameters, dict):
        return {}
    properties = parameters.get("properties") or {}
    required = parameters.get("required") or []
    return {name: _example_value(properties.get(name)) for name in required}


def _wrong_type_value(schema: Any) -> Any:
    kind = schema.get("type") if isinstance(schema, dict) else None
    return {"unexpected": ["structure"]} if kind == "string" else "not-the-declared-type"


def _recall_text(result: Any) -> Any:
    """The text of a ``prefetch`` result: a str, or a MemoryPrefetchResult's ``context``."""
    return result.context if isinstance(result, MemoryPrefetchResult) else result


def _is_error(payload: Any) -> bool:
    """Whether a tool's decoded result is an error answer (``{"error": …}``)."""
    return isinstance(payload, dict) and "error" in payload


def _plain_schemas(provider: MemoryProvider) -> list[dict[str, Any]]:
    plain = []
    for raw in provider.get_tool_schemas():
        schema = (
            raw.get("function") if isinstance(raw, dict) and raw.get("type") == "function" else raw
        )
        if isinstance(schema, dict) and isinstance(schema.get("name"), str):
            plain.append(schema)
    return plain


def _raised_in_availability(label: str, exc: Exception) -> str:
    return _fix(
        f"is_available()/unavailable_reason() on {label} provider raised {exc!r}.",
        "never raise there: return False from is_available() and say what is missing in "
        "unavailable_reason() (the host asks at startup, and a raise counts the provider broken).",
    )


def _xfail_reason(function: Any) -> str:
    for mark in getattr(function, "pytestmark", []):
        if mark.name == "xfail":
            reason = mark.kwargs.get("reason", "")
            if isinstance(reason, str) and reason.strip():
                return reason
    return ""


class ProviderConformance:
    """The standard tests every memory provider should pass.

    Supply the ``create_provider`` fixture (a zero-argument callable returning
    a new, uninitialized provider wired to an empty backend for this test) and
    declare ``capabilities``. Optional: ``init_kwargs`` (what ``initialize``
    receives), ``store_inspector`` (read the backend out of band), and the
    helpers ``remember`` / ``recall`` / ``forget`` / ``settle`` when your
    provider stores and recalls memory some other way than ``sync_turn`` and
    ``prefetch``.
    """

    _hermes_conformance_suite: ClassVar[bool] = True

    capabilities: ClassVar[Collection[str] | None] = None
    """Declared capabilities; ``None`` reads the provider's ``conformance_capabilities``
    attribute, or else infers ``tools`` / ``prefetch`` / ``sync`` from its hooks."""

    prefetch_budget: ClassVar[float] = 8.0
    """Seconds ``prefetch`` may take (the manager abandons it after ``memory.prefetch_timeout``)."""

    nonblocking_budget: ClassVar[float] = 2.0
    """Seconds ``sync_turn``, ``queue_prefetch``, ``on_turn_start`` and ``on_memory_write``
    may take: the host expects them to hand work to the background."""

    shutdown_budget: ClassVar[float] = 15.0
    """Seconds ``shutdown`` may take, queued writes included."""

    settle_timeout: ClassVar[float] = 30.0
    """Seconds :meth:`settle` waits for background work before the test fails."""

    tool_examples: ClassVar[Mapping[str, Sequence[Mapping[str, Any]]]] = {}
    """Realistic arguments per tool name; each must give a JSON object without ``"error"``."""

    stateful_max_examples: ClassVar[int] = 4
    stateful_step_count: ClassVar[int] = 8

    # ------------------------------------------------------------------ fixtures

    @pytest.fixture
    def create_provider(self) -> Callable[[], MemoryProvider]:
        """A zero-argument callable: a new, uninitialized provider on an empty backend."""
        raise NotImplementedError(
            f"{type(self).__name__} must define a `create_provider` fixture returning a "
            "zero-argument callable that makes a new, uninitialized provider (for example "
            "the provider class itself) wired to an empty backend for this test."
        )

    @pytest.fixture
    def init_kwargs(self, hermes_home: Path) -> dict[str, Any]:
        """Keyword arguments of ``initialize`` (``hermes_home`` and ``platform`` always)."""
        return {"hermes_home": str(hermes_home), "platform": "cli"}

    @pytest.fixture
    def provider_factory(
        self, create_provider: Callable[[], MemoryProvider], init_kwargs: dict[str, Any]
    ) -> Iterator[ProviderPool]:
        """Makes more providers on the same backend: a second user, a new session, a restart."""
        before = set(threading.enumerate())
        pool = ProviderPool(create_provider, init_kwargs, shutdown_timeout=self.shutdown_budget)
        try:
            yield pool
        finally:
            pool.close()
        stray = threads_left_running(before, THREAD_EXIT_WAIT)
        assert not stray, _fix(
            f"after shutdown() the provider left non-daemon threads running: {stray}. Such a "
            "thread keeps the host process (and this pytest run) from exiting.",
            "stop background threads in shutdown() and join them with a timeout, or start "
            "them with daemon=True.",
        )

    @pytest.fixture
    def provider(self, provider_factory: ProviderPool) -> MemoryProvider:
        """A fresh, empty, initialized provider."""
        return provider_factory.start(DEFAULT_SESSION)

    @pytest.fixture
    def store_inspector(self) -> StoreInspector | None:
        """Override to return a callable reading the backend directly (zarr's out-of-band get)."""
        return None

    # ------------------------------------------------------------------ helpers

    def declared(self, provider: MemoryProvider) -> frozenset[Capability]:
        """The capabilities the suite holds *provider* to."""
        if self.capabilities is not None:
            try:
                return parse_capabilities(self.capabilities)
            except ValueError as exc:
                raise ValueError(
                    _fix(
                        f"{type(self).__name__}.capabilities: {exc}",
                        "declare only those names in the test class's `capabilities` "
                        "(or None to use the provider's own conformance_capabilities).",
                    )
                ) from None
        declared = declared_capabilities(provider)
        return declared if declared is not None else inferred_capabilities(provider)

    def require(self, provider: MemoryProvider, *needed: Capability) -> None:
        """Skip the test unless every capability in *needed* is declared."""
        missing = [c.value for c in needed if c not in self.declared(provider)]
        if missing:
            pytest.skip(f"capability not declared: {', '.join(missing)}")

    def settle(self, provider: MemoryProvider) -> None:
        """Wait for the provider's background work: its ``wait_idle`` or ``flush`` if any."""
        for name in ("wait_idle", "flush"):
            method = getattr(provider, name, None)
            if callable(method):
                outcome = call_within(self.settle_timeout + 1.0, method, self.settle_timeout)
                if not outcome.finished or outcome.error is not None:
                    what = describe_outcome(outcome)
                else:
                    what = f"returned {outcome.result!r}"
                assert outcome.finished and outcome.error is None and outcome.result is not False, (
                    _fix(
                        f"{name}({self.settle_timeout}) did not report the provider idle "
                        f"(it {what}).",
                        "background writes and recalls must finish while the backend answers; "
                        "check the worker threads, or raise settle_timeout for a slow backend.",
                    )
                )
                return

    def _hook(self, provider: MemoryProvider, hook: str, *args: Any, **kwargs: Any) -> Any:
        """Call *provider*'s *hook*; one that hangs fails the test instead of the whole run.

        ``on_memory_write`` goes through :class:`MemoryWriteShim`, as the manager
        delivers it, so each of Hermes' signatures for it is called the way it accepts.
        """
        method = MemoryWriteShim(provider) if hook == "on_memory_write" else getattr(provider, hook)
        outcome = call_within(self.settle_timeout, method, *args, **kwargs)
        assert outcome.finished, _fix(
            f"{hook}() did not return within {self.settle_timeout}s (settle_timeout).",
            f"{hook}() must return promptly: bound every backend call it makes with a timeout "
            "and hand slow work to a background thread.",
        )
        if outcome.error is not None:
            raise AssertionError(
                _fix(
                    f"{hook}() raised {outcome.error!r}.",
                    f"{hook}() must not raise: log backend failures and return (the host calls "
                    "it on every turn, and an exception there costs the user the turn).",
                )
            ) from outcome.error
        return outcome.result

    def remember(self, provider: MemoryProvider, fact: str, *, session_id: str) -> None:
        """Store *fact* (default: a completed turn through ``sync_turn``), then settle."""
        self._hook(provider, "sync_turn", fact, "Noted.", session_id=session_id)
        self.settle(provider)

    def recall(self, provider: MemoryProvider, query: str, *, session_id: str) -> str:
        """What the provider recalls for *query* (default: ``queue_prefetch`` then ``prefetch``)."""
        self.settle(provider)
        self._hook(provider, "queue_prefetch", query, session_id=session_id)
        self.settle(provider)
        outcome = call_within(self.prefetch_budget, provider.prefetch, query, session_id=session_id)
        assert outcome.finished, _fix(
            f"prefetch() did not return within {self.prefetch_budget}s.",
            "serve recall from a cache filled in the background (queue_prefetch) instead of "
            "querying the backend inside prefetch().",
        )
        if outcome.error is not None:
            raise AssertionError(
                _fix(
                    f"prefetch({query!r}) raised {outcome.error!r}.",
                    'degrade to "" (and log) when the backend fails; never raise into the turn.',
                )
            ) from outcome.error
        result = _recall_text(outcome.result)
        assert isinstance(result, str), _fix(
            f"prefetch() returned {type(outcome.result).__name__}.", 'return a str ("" for none).'
        )
        return result

    def forget(self, provider: MemoryProvider, fact: str, *, session_id: str) -> None:
        """Remove *fact*; override it (and declare ``forget``) when the provider can."""
        raise NotImplementedError(
            f"{type(self).__name__} declares the 'forget' capability but does not override "
            "forget(provider, fact, *, session_id)."
        )

    def _session_after(self, provider: MemoryProvider, ended: str, new: str) -> str:
        """Where a later recall of what *ended* stored runs: *new* when memory is declared to
        cross sessions (``cross_session``), else *ended* itself, resumed."""
        return new if Capability.CROSS_SESSION in self.declared(provider) else ended

    def _recalls(self, provider: MemoryProvider, topic: str, session_id: str) -> str:
        return self.recall(provider, query_text(topic), session_id=session_id)

    def _assert_recalled(self, text: str, token: str, what: str, fix: str) -> None:
        assert token in text, _fix(
            f"{what}: the recall did not contain {token!r}.\nRecalled: {text[:600]!r}", fix
        )

    def _assert_not_recalled(self, text: str, token: str, what: str, fix: str) -> None:
        assert token not in text, _fix(
            f"{what}: the recall contained {token!r}.\nRecalled: {text[:600]!r}", fix
        )

    # ------------------------------------------------------------------ identity

    def test_name_is_a_stable_identifier(self, provider: MemoryProvider) -> None:
        """``name`` is a non-empty string without spaces, the same every time."""
        name = provider.name
        assert isinstance(name, str) and name and name == name.strip() and " " not in name, _fix(
            f"name is {name!r}.", "return a short identifier such as 'notes' from `name`."
        )
        assert provider.name == name, _fix("name changed between reads.", "return a constant.")

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
                    raise AssertionError(_raised_in_availability(label, exc)) from exc
            assert not attempts, _fix(
                f"is_available()/unavailable_reason() on {label} provider used the network: "
                f"{attempts}.",
                "decide availability from configuration and installed packages only (the host "
                "calls it at startup, before any turn, and must not wait on the network).",
            )
            assert isinstance(available, bool), _fix(
                f"is_available() returned {available!r}.", "return True or False."
            )
            assert isinstance(reason, str), _fix(
                f"unavailable_reason() returned {reason!r}.", 'return a str ("" when available).'
            )

    def test_is_available_in_the_test_setup(self, provider: MemoryProvider) -> None:
        """The provider under test is available; otherwise every other test proves nothing."""
        try:
            available = provider.is_available()
        except Exception as exc:
            raise AssertionError(_raised_in_availability("an initialized", exc)) from exc
        assert available, _fix(
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
        assert not problems, _fix(
            "get_tool_schemas() has problems:\n- " + "\n- ".join(problems),
            "correct each schema as described: the host sends them to the model API as they "
            "are, and a strict backend rejects the whole request for one bad tool.",
        )

    def test_tool_schemas_are_stable(
        self, provider_factory: ProviderPool, provider: MemoryProvider
    ) -> None:
        """The tool list is the same on every call and before ``initialize``."""
        names = [s.get("name") for s in _plain_schemas(provider)]
        again = [s.get("name") for s in _plain_schemas(provider)]
        before = [s.get("name") for s in _plain_schemas(provider_factory.new())]
        assert names == again, _fix(
            f"get_tool_schemas() changed between calls: {names} then {again}.",
            "return the same tools every time; the manager builds its routing table once.",
        )
        assert names == before, _fix(
            f"tools before initialize() were {before}, after {names}.",
            "declare the same tools before initialize(): discovery lists them from a new "
            "instance, and Hermes Agent indexes tools when the provider is added, before "
            "initialize(), so a tool that appears later is never routed there (hermes-memory "
            "reads them again after initialize()).",
        )

    def test_declared_tools_are_exposed(self, provider: MemoryProvider) -> None:
        """A provider declaring ``tools`` exposes at least one."""
        self.require(provider, Capability.TOOLS)
        assert _plain_schemas(provider), _fix(
            "the 'tools' capability is declared but get_tool_schemas() returned no named tool.",
            "return your tool schemas, or drop 'tools' from the declared capabilities.",
        )

    def _call_tool(self, provider: MemoryProvider, name: str, args: dict[str, Any]) -> Any:
        outcome = call_within(self.prefetch_budget, provider.handle_tool_call, name, args)
        assert outcome.finished, _fix(
            f"handle_tool_call({name!r}, {args!r}) did not return within {self.prefetch_budget}s.",
            "bound every backend call a tool makes with a timeout.",
        )
        assert outcome.error is None, _fix(
            f"handle_tool_call({name!r}, {args!r}) raised {outcome.error!r}.",
            'catch errors and return json.dumps({"error": "<what went wrong>"}) instead.',
        )
        result = outcome.result
        assert isinstance(result, str), _fix(
            f"handle_tool_call({name!r}, {args!r}) returned {type(result).__name__}.",
            "return a JSON string (json.dumps of a dict).",
        )
        try:
            payload = json.loads(result)
        except ValueError:
            raise AssertionError(
                _fix(
                    f"handle_tool_call({name!r}, {args!r}) returned text that is not JSON: "
                    f"{result[:200]!r}.",
                    "return json.dumps(...) of a dict.",
                )
            ) from None
        return payload  # any JSON value: Hermes passes a result through as it is

    def test_tool_calls_with_valid_arguments_return_json(self, provider: MemoryProvider) -> None:
        """Each tool, given its required arguments, answers a JSON object."""
        self.require(provider, Capability.TOOLS)
        for schema in _plain_schemas(provider):
            name = schema["name"]
            self._call_tool(provider, name, example_arguments(schema.get("parameters")))
            for args in self.tool_examples.get(name, ()):
                payload = self._call_tool(provider, name, dict(args))
                assert not _is_error(payload), _fix(
                    f"the example call {name}({dict(args)!r}) answered an error: {payload}.",
                    "the tool should succeed on the arguments listed in tool_examples.",
                )

    def test_tool_calls_with_bad_arguments_return_json_errors(
        self, provider: MemoryProvider
    ) -> None:
        """Missing, mistyped or unknown arguments and tools give JSON, never an exception."""
        self.require(provider, Capability.TOOLS)
        for schema in _plain_schemas(provider):
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
                bad_calls.append({**good, key: _wrong_type_value(properties.get(key))})
                bad_calls.append({**good, key: None})
            for args in bad_calls:
                self._call_tool(provider, name, args)
        payload = self._call_tool(provider, "conformance_no_such_tool", {})
        assert _is_error(payload), _fix(
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
            assert outcome.finished, _fix(
                f"prefetch({query!r}) did not return within {self.prefetch_budget}s "
                "(prefetch_budget).",
                "prefetch() runs on the turn's critical path: serve results that queue_prefetch "
                "fetched in the background, and bound any wait with a short timeout.",
            )
            assert outcome.error is None, _fix(
                f"prefetch({query!r}) raised {outcome.error!r}.",
                'degrade to "" (and log) when the backend fails; never raise into the turn.',
            )
            assert isinstance(_recall_text(outcome.result), str), _fix(
                f"prefetch() returned {type(outcome.result).__name__}.",
                'return a str ("" when nothing is recalled) or a MemoryPrefetchResult.',
            )
            status = provider.recall_status()
            assert status is None or isinstance(status, RecallStatus), _fix(
                f"recall_status() returned {status!r}.", "return a RecallStatus or None."
            )

    def test_background_hooks_do_not_block(self, provider: MemoryProvider) -> None:
        """Hooks the host calls on the turn path hand their work to the background."""
        calls: list[tuple[str, Callable[[], Any]]] = [
            ("on_turn_start", lambda: provider.on_turn_start(1, query_text("violin"))),
            (
                "queue_prefetch",
                lambda: provider.queue_prefetch(query_text("violin"), session_id=DEFAULT_SESSION),
            ),
        ]
        for index in range(5):
            fact = fact_text(TOPICS[index], _token())

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
            assert outcome.finished, _fix(
                f"{hook}() did not return within {self.nonblocking_budget}s (nonblocking_budget).",
                f"{hook}() must hand its work to a background thread and return at once.",
            )
            assert outcome.error is None, _fix(
                f"{hook}() raised {outcome.error!r}.", "log the failure and return; never raise."
            )

    def test_optional_hooks_honour_return_types(self, provider: MemoryProvider) -> None:
        """Every optional hook accepts the documented arguments and returns the documented type."""
        transcript = [
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi! How can I help?"},
        ]
        block = provider.system_prompt_block()
        assert isinstance(block, str), _fix(
            f"system_prompt_block() returned {type(block).__name__}.", "return a str."
        )
        compressed = provider.on_pre_compress(transcript)
        # None means "nothing to keep", as both Hermes' manager and ours read it.
        assert compressed is None or isinstance(compressed, str), _fix(
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
        provider.on_delegation("summarise the notes", "done", child_session_id="child-1")
        schema = provider.get_config_schema()
        assert isinstance(schema, list) and all(
            isinstance(f, dict) and isinstance(f.get("key"), str) for f in schema
        ), _fix(
            f"get_config_schema() returned {schema!r}.",
            'return a list of dicts, each with at least a "key".',
        )
        paths = provider.backup_paths()
        assert isinstance(paths, list) and all(
            isinstance(p, str) and Path(p).is_absolute() for p in paths
        ), _fix(f"backup_paths() returned {paths!r}.", "return a list of absolute path strings.")

    def test_initialize_for_inspection_starts_quietly(self, provider_factory: ProviderPool) -> None:
        """``initialize_for_inspection`` succeeds and leaves a provider that can shut down."""
        inspected = provider_factory.new()
        inspected.initialize_for_inspection(DEFAULT_SESSION, **provider_factory.init_kwargs())
        block = inspected.system_prompt_block()
        assert isinstance(block, str), _fix(
            f"system_prompt_block() after initialize_for_inspection() returned "
            f"{type(block).__name__}.",
            'return a str ("" when there is nothing to add).',
        )
        outcome = provider_factory.stop(inspected, self.shutdown_budget)
        assert outcome.finished and outcome.error is None, _fix(
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
                fact_text(topic, _token()),
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
        assert outcome.finished, _fix(
            f"shutdown() did not return within {self.shutdown_budget}s (shutdown_budget).",
            "bound the time shutdown() waits for queued writes and background threads.",
        )
        assert outcome.error is None, _fix(
            f"shutdown() raised {outcome.error!r}.", "log and swallow errors during shutdown()."
        )
        again = call_within(self.shutdown_budget, provider.shutdown)
        assert again.finished and again.error is None, _fix(
            f"a second shutdown() {describe_outcome(again)}.",
            "make shutdown() idempotent: the host may call it more than once.",
        )

    # ------------------------------------------------------------------ memory round trips

    def test_fresh_provider_recalls_nothing_unknown(self, provider: MemoryProvider) -> None:
        """A new, empty provider never invents a memory it was not given."""
        self.require(provider, Capability.RECALL)
        token = _token()
        text = self.recall(provider, f"What is {token}?", session_id=DEFAULT_SESSION)
        self._assert_not_recalled(
            text,
            token,
            "an empty provider recalled an unknown word",
            "create_provider must give a provider on an EMPTY backend.",
        )

    def test_remembered_fact_is_recalled(self, provider: MemoryProvider) -> None:
        """A fact stored with ``remember`` comes back from ``recall`` for a related query."""
        self.require(provider, Capability.RECALL)
        token = _token()
        self.remember(provider, fact_text("harbor", token), session_id=DEFAULT_SESSION)
        text = self._recalls(provider, "harbor", DEFAULT_SESSION)
        self._assert_recalled(
            text,
            token,
            "a stored fact was not recalled",
            "make sure writes reach the backend and recall searches it.",
        )

    def test_background_writes_overlap_foreground_reads(self, provider: MemoryProvider) -> None:
        """Turns synced on one thread while another thread recalls are all kept, with no error."""
        self.require(provider, Capability.SYNC, Capability.RECALL)
        tokens = {topic: _token() for topic in TOPICS}
        writing = threading.Event()
        writing.set()
        read_errors: list[BaseException] = []

        def write_all() -> None:
            try:
                for topic, token in tokens.items():
                    provider.sync_turn(
                        fact_text(topic, token), "Noted.", session_id=DEFAULT_SESSION
                    )
            finally:
                writing.clear()

        def read_while_writing() -> None:
            topics = itertools.cycle(TOPICS)
            while writing.is_set() and not read_errors:
                try:
                    result = provider.prefetch(query_text(next(topics)), session_id=DEFAULT_SESSION)
                    assert isinstance(_recall_text(result), str), f"prefetch() returned {result!r}"
                except BaseException as exc:  # reported below, with what to fix
                    read_errors.append(exc)

        reader = threading.Thread(target=read_while_writing, name="conformance-reader", daemon=True)
        reader.start()
        written = call_within(self.settle_timeout, write_all)
        writing.clear()
        reader.join(self.prefetch_budget)
        if not written.finished:
            problem = f"sync_turn() did not return within {self.settle_timeout}s"
        elif written.error is not None:
            problem = f"sync_turn() raised {written.error!r}"
        elif read_errors:
            problem = f"prefetch() raised {read_errors[0]!r}"
        else:
            problem = ""
        assert not problem, _fix(
            f"with prefetch() running on another thread, {problem}.",
            "the host syncs turns on a background thread while the turn's thread recalls and "
            "calls tools: guard shared state with a lock, write files atomically (temp file + "
            "os.replace), and give each thread its own "
            "database connection (or one opened with check_same_thread=False under a lock).",
        )
        self.settle(provider)
        for topic, token in tokens.items():
            text = self._recalls(provider, topic, DEFAULT_SESSION)
            crowded = sum(other in text for other in tokens.values() if other != token)
            self._assert_recalled(
                text,
                token,
                "a turn synced while another thread was recalling was lost",
                f"recall returned {crowded} of the other facts of this test but not this one: "
                f"rank results by relevance to the query (its distinctive word is {topic!r}) "
                "before cutting them to a limit."
                if crowded
                else "guard the store with a lock: concurrent read-modify-write loses writes.",
            )

    def test_fenced_recall_is_not_reingested(self, provider: MemoryProvider) -> None:
        """Recalled ``<memory-context>`` text inside a user message is never stored again."""
        self.require(provider, Capability.SYNC, Capability.RECALL)
        own, echoed = _token(), _token()
        user_text = (
            fact_text("lantern", own)
            + "\n\n"
            + build_memory_context_block(fact_text("orchid", echoed))
        )
        self._hook(provider, "sync_turn", user_text, "Noted.", session_id=DEFAULT_SESSION)
        self.settle(provider)
        for topic in ("orchid", "lantern"):
            text = self._recalls(provider, topic, DEFAULT_SESSION)
            self._assert_not_recalled(
                text,
                echoed,
                "recalled context fenced in <memory-context> was stored as new memory",
                "strip fenced context before storing a turn: "
                "hermes_core.sanitize_context(user_content) in sync_turn().",
            )
        self._assert_recalled(
            text,
            own,
            "the user's own words next to the fence were lost",
            "remove only the fenced block, keep the rest of the message.",
        )

    def test_non_primary_agents_do_not_write(self, provider_factory: ProviderPool) -> None:
        """Subagent and cron runs read memory but never write it."""
        reader = provider_factory.start()
        self.require(reader, Capability.SYNC, Capability.RECALL)
        tokens = {}
        for context in ("subagent", "cron"):
            token = tokens[context] = _token()
            other = provider_factory.start(f"{context}-session", agent_context=context)
            self._hook(
                other,
                "sync_turn",
                fact_text("compass", token),
                "Noted.",
                session_id=f"{context}-session",
            )
            self.settle(other)
            provider_factory.stop(other)
        text = self._recalls(reader, "compass", DEFAULT_SESSION)
        for context, token in tokens.items():
            self._assert_not_recalled(
                text,
                token,
                f"a turn synced with agent_context={context!r} was stored",
                "skip writes unless initialize() got agent_context='primary' (or none).",
            )

    def test_users_are_isolated(self, provider_factory: ProviderPool) -> None:
        """A recall for user A never returns user B's memory, and B still gets it."""
        alice = provider_factory.start("alice-session", user_id="alice-conformance")
        self.require(alice, Capability.MULTI_USER, Capability.RECALL)
        bob = provider_factory.start("bob-session", user_id="bob-conformance")
        alice_token, bob_token = _token(), _token()
        self.remember(alice, fact_text("saffron", alice_token), session_id="alice-session")
        self.remember(bob, fact_text("saffron", bob_token), session_id="bob-session")
        self.settle(alice)
        for query in (query_text("saffron"), f"Is the codeword {bob_token}?"):
            text = self.recall(alice, query, session_id="alice-session")
            self._assert_not_recalled(
                text,
                bob_token,
                "user A's recall returned user B's memory",
                "scope every read and write by the user_id passed to initialize().",
            )
        text = self._recalls(bob, "saffron", "bob-session")
        self._assert_recalled(
            text,
            bob_token,
            "user B's own memory was not recalled",
            "scope reads by user_id, but do find the user's own memory.",
        )
        self._assert_not_recalled(
            text,
            alice_token,
            "user B's recall returned user A's memory",
            "scope every read and write by user_id.",
        )

    @pytest.mark.parametrize("query", ["鸭", "烤鸭", "北京烤鸭"], ids=["1char", "2char", "3char+"])
    def test_cjk_round_trip(self, provider: MemoryProvider, query: str) -> None:
        """Chinese text is stored intact and recalled by 1-, 2- and 3+-character queries."""
        self.require(provider, Capability.CJK, Capability.RECALL)
        token = _token()
        self.remember(
            provider, f"用户最喜欢的菜是北京烤鸭，暗号 {token}。", session_id=DEFAULT_SESSION
        )
        text = self.recall(provider, query, session_id=DEFAULT_SESSION)
        self._assert_recalled(
            text,
            token,
            f"the {len(query)}-character query {query!r} missed a Chinese fact",
            "index CJK text so short queries match "
            "(character n-grams or a trigram index plus a short-query path).",
        )
        assert "北京烤鸭" in text, _fix(
            f"the Chinese text came back altered: {text[:300]!r}",
            "store and return text as UTF-8 without transliteration.",
        )

    def test_memory_survives_session_switches(self, provider: MemoryProvider) -> None:
        """What one session stored is recalled after compression and after a reset."""
        self.require(provider, Capability.CROSS_SESSION, Capability.RECALL)
        token = _token()
        self.remember(provider, fact_text("glacier", token), session_id=DEFAULT_SESSION)
        self._hook(
            provider,
            "on_session_switch",
            "conformance-compressed",
            parent_session_id=DEFAULT_SESSION,
            reason="compression",
        )
        self._hook(provider, "on_session_switch", "conformance-new", reset=True)
        text = self._recalls(provider, "glacier", "conformance-new")
        self._assert_recalled(
            text,
            token,
            "a fact from the previous session was not recalled after on_session_switch(reset=True)",
            "keep durable memory across sessions; only drop per-session buffers on reset.",
        )

    def test_provider_works_after_a_reset(self, provider: MemoryProvider) -> None:
        """After ``on_session_switch(reset=True)`` new writes are recalled, not a stale cache."""
        self.require(provider, Capability.RECALL)
        self._recalls(provider, "meadow", DEFAULT_SESSION)  # warm any per-session cache
        self._hook(provider, "on_session_switch", "conformance-after-reset", reset=True)
        token = _token()
        self.remember(provider, fact_text("meadow", token), session_id="conformance-after-reset")
        text = self._recalls(provider, "meadow", "conformance-after-reset")
        self._assert_recalled(
            text,
            token,
            "a fact stored after a session reset was not recalled (a stale recall was served?)",
            "on reset, drop cached recall of the old session and follow the new session id.",
        )

    def test_session_memory_is_isolated_on_reset(self, provider: MemoryProvider) -> None:
        """Session-scoped memory is not recalled in a new session, but is again on resume."""
        self.require(provider, Capability.SESSION_SCOPED, Capability.RECALL)
        token = _token()
        self.remember(provider, fact_text("violin", token), session_id=DEFAULT_SESSION)
        self._hook(provider, "on_session_switch", "conformance-other", reset=True)
        text = self._recalls(provider, "violin", "conformance-other")
        self._assert_not_recalled(
            text,
            token,
            "another session's memory leaked into a new session",
            "scope reads by the session id.",
        )
        self._hook(provider, "on_session_switch", DEFAULT_SESSION)
        text = self._recalls(provider, "violin", DEFAULT_SESSION)
        self._assert_recalled(
            text,
            token,
            "resuming a session lost its memory",
            "keep session memory; on_session_switch only changes the scope.",
        )

    def test_writes_follow_the_switched_session(self, provider: MemoryProvider) -> None:
        """A turn synced without a session id after a switch belongs to the new session."""
        self.require(provider, Capability.SESSION_SCOPED, Capability.RECALL)
        self._hook(
            provider,
            "on_session_switch",
            "conformance-switched",
            parent_session_id=DEFAULT_SESSION,
        )
        token = _token()
        self.remember(provider, fact_text("orchid", token), session_id="")
        text = self._recalls(provider, "orchid", "conformance-switched")
        self._assert_recalled(
            text,
            token,
            "a write after on_session_switch() was not stored in the new session",
            "track the current session id in "
            "on_session_switch() and use it when session_id is empty.",
        )
        self._hook(provider, "on_session_switch", "conformance-elsewhere", reset=True)
        text = self._recalls(provider, "orchid", "conformance-elsewhere")
        self._assert_not_recalled(
            text,
            token,
            "the write leaked into an unrelated session",
            "scope writes by the session they were made in.",
        )

    def test_repeated_writes_are_idempotent(self, provider: MemoryProvider) -> None:
        """Storing the same fact twice is harmless; with ``forget``, one removal removes it."""
        self.require(provider, Capability.RECALL)
        token = _token()
        fact = fact_text("lantern", token)
        self.remember(provider, fact, session_id=DEFAULT_SESSION)
        self.remember(provider, fact, session_id=DEFAULT_SESSION)
        text = self._recalls(provider, "lantern", DEFAULT_SESSION)
        self._assert_recalled(
            text,
            token,
            "a fact stored twice was not recalled",
            "a repeated write must not undo or corrupt the first one.",
        )
        if Capability.FORGET not in self.declared(provider):
            return
        self.forget(provider, fact, session_id=DEFAULT_SESSION)
        self.settle(provider)
        text = self._recalls(provider, "lantern", DEFAULT_SESSION)
        self._assert_not_recalled(
            text,
            token,
            "after storing a fact twice and forgetting it once, a copy remained",
            "make writes idempotent: storing an existing fact again must not create a duplicate.",
        )

    def test_forgetting_missing_facts_is_harmless(self, provider: MemoryProvider) -> None:
        """Removing a fact never stored (or twice) raises nothing and keeps other memory."""
        self.require(provider, Capability.RECALL, Capability.FORGET)
        kept, gone = _token(), _token()
        self.remember(provider, fact_text("compass", kept), session_id=DEFAULT_SESSION)
        self.forget(provider, fact_text("meadow", _token()), session_id=DEFAULT_SESSION)
        self.remember(provider, fact_text("meadow", gone), session_id=DEFAULT_SESSION)
        self.forget(provider, fact_text("meadow", gone), session_id=DEFAULT_SESSION)
        self.forget(provider, fact_text("meadow", gone), session_id=DEFAULT_SESSION)
        self.settle(provider)
        text = self._recalls(provider, "compass", DEFAULT_SESSION)
        self._assert_recalled(
            text,
            kept,
            "removing a missing fact disturbed other memory",
            "a removal that matches nothing must change nothing.",
        )
        text = self._recalls(provider, "meadow", DEFAULT_SESSION)
        self._assert_not_recalled(
            text,
            gone,
            "a forgotten fact was still recalled",
            "delete the fact from the backend, not just from a cache.",
        )

    def test_builtin_memory_writes_are_mirrored(self, provider: MemoryProvider) -> None:
        """Mirrored builtin writes: add stores once, replace swaps, remove forgets."""
        self.require(provider, Capability.MIRROR, Capability.RECALL)
        first, second = fact_text("saffron", _token()), fact_text("saffron", _token())
        meta = {"session_id": DEFAULT_SESSION, "write_origin": "assistant_tool"}
        self._hook(provider, "on_memory_write", "add", "user", first, dict(meta))
        self._hook(provider, "on_memory_write", "add", "user", first, dict(meta))
        self._hook(
            provider,
            "on_memory_write",
            "remove",
            "user",
            "",
            {**meta, "previous_content": fact_text("saffron", _token())},
        )
        self.settle(provider)
        text = self._recalls(provider, "saffron", DEFAULT_SESSION)
        self._assert_recalled(
            text,
            first.split()[-1].rstrip("."),
            "a mirrored builtin 'add' was not recalled",
            "store on_memory_write('add', ...) content.",
        )
        self._hook(
            provider,
            "on_memory_write",
            "replace",
            "user",
            second,
            {**meta, "previous_content": first, "old_text": first},
        )
        self.settle(provider)
        text = self._recalls(provider, "saffron", DEFAULT_SESSION)
        self._assert_recalled(
            text,
            second.split()[-1].rstrip("."),
            "a mirrored 'replace' did not store the new text",
            "on 'replace', store the new content.",
        )
        self._assert_not_recalled(
            text,
            first.split()[-1].rstrip("."),
            "a mirrored 'replace' kept the old text (or a duplicate of it)",
            "on 'replace', remove metadata['previous_content'] and every copy of it.",
        )
        self._hook(
            provider,
            "on_memory_write",
            "remove",
            "user",
            "",
            {**meta, "previous_content": second},
        )
        self.settle(provider)
        text = self._recalls(provider, "saffron", DEFAULT_SESSION)
        self._assert_not_recalled(
            text,
            second.split()[-1].rstrip("."),
            "a mirrored 'remove' did not forget",
            "on 'remove', delete the memory holding metadata['previous_content'].",
        )

    def test_session_end_extracts_unsynced_turns(self, provider: MemoryProvider) -> None:
        """``on_session_end(messages)`` stores facts from turns that were never synced."""
        self.require(provider, Capability.SESSION_END_EXTRACTION, Capability.RECALL)
        token = _token()
        messages = [
            {"role": "user", "content": fact_text("harbor", token)},
            {"role": "assistant", "content": "Noted, I will remember that."},
        ]
        self._hook(provider, "on_session_end", messages)
        self.settle(provider)
        self._hook(provider, "on_session_switch", "conformance-next", reset=True)
        session = self._session_after(provider, DEFAULT_SESSION, "conformance-next")
        if session == DEFAULT_SESSION:  # session-scoped memory: resume the ended session
            self._hook(provider, "on_session_switch", DEFAULT_SESSION)
        text = self._recalls(provider, "harbor", session)
        self._assert_recalled(
            text,
            token,
            f"a fact from the ended session's transcript was not stored (recalled in {session!r})",
            "extract and store the transcript in on_session_end(), under the session that ended.",
        )

    def test_memory_persists_across_instances(self, provider_factory: ProviderPool) -> None:
        """What one instance stored, a new instance (after shutdown) recalls."""
        first = provider_factory.start("conformance-first")
        self.require(first, Capability.PERSISTENCE, Capability.RECALL)
        token = _token()
        self.remember(first, fact_text("violin", token), session_id="conformance-first")
        outcome = provider_factory.stop(first, self.shutdown_budget)
        assert outcome.finished and outcome.error is None, _fix(
            f"shutdown() {describe_outcome(outcome)}.",
            "make shutdown() finish its queued writes within shutdown_budget, and never raise.",
        )
        session = self._session_after(first, "conformance-first", "conformance-second")
        second = provider_factory.start(session)
        text = self._recalls(second, "violin", session)
        self._assert_recalled(
            text,
            token,
            f"a new instance (session {session!r}) did not recall what the previous one stored",
            "persist writes in the backend (under hermes_home for "
            "local stores), not in process memory.",
        )

    def test_writes_reach_the_store_out_of_band(
        self, provider: MemoryProvider, store_inspector: StoreInspector | None
    ) -> None:
        """The backend itself, read without the provider's API, holds what was stored."""
        if store_inspector is None:
            pytest.skip(
                "no store_inspector fixture: override it to read the backend directly "
                "(the file, the database, the fake server's state)"
            )
        self.require(provider, Capability.RECALL)
        token = _token()
        fact = fact_text("glacier", token)
        self.remember(provider, fact, session_id=DEFAULT_SESSION)
        self.settle(provider)
        stored = store_inspector()
        assert token in stored, _fix(
            f"the provider accepted a write but the backend does not hold {token!r}.",
            "make the write reach storage (no buffer that is never flushed).",
        )
        if Capability.FORGET in self.declared(provider):
            self.forget(provider, fact, session_id=DEFAULT_SESSION)
            self.settle(provider)
            assert token not in store_inspector(), _fix(
                f"forget() returned but the backend still holds {token!r}.",
                "delete from storage, not just from an in-memory index.",
            )

    def test_stateful_against_reference_model(self, provider_factory: ProviderPool) -> None:
        """Random sequences of writes, removals, restarts and recalls match a reference model."""
        probe = provider_factory.start("conformance-probe")
        self.require(probe, Capability.RECALL)
        provider_factory.stop(probe)
        from hermes_core.testing.stateful import run_reference_model

        run_reference_model(self, provider_factory)

    # ------------------------------------------------------------------ the guard

    def test_standard_tests_are_not_overridden(self) -> None:
        """A standard test may be overridden only to mark it ``xfail`` with a reason."""
        standard = {name for name in vars(ProviderConformance) if name.startswith("test_")}
        offenders = []
        for klass in type(self).__mro__:
            if klass is ProviderConformance:
                break
            for name in standard & set(vars(klass)):
                if not _xfail_reason(vars(klass)[name]):
                    offenders.append(f"{klass.__name__}.{name}")
        assert not offenders, _fix(
            f"standard conformance tests overridden without an xfail reason: {sorted(offenders)}.",
            "do not override standard tests; to record a known deviation, override it with "
            '@pytest.mark.xfail(reason="why the provider differs") and keep the body.',
        )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "test_standard_tests_are_not_overridden" in vars(cls):
            raise TypeError(
                f"{cls.__name__} overrides test_standard_tests_are_not_overridden, the guard "
                "of the conformance suite; remove that override."
            )
