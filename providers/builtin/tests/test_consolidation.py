"""The cap on failed consolidation attempts, within a turn and across turns."""

from __future__ import annotations

import json

from hermes_memory_builtin.consolidation import ConsolidationGuard
from hermes_memory_builtin.provider import BuiltinMemoryProvider
from hermes_memory_builtin.store import MemoryStore
from memory_support import MemoryBackend


def test_the_guard_allows_three_failures_per_turn() -> None:
    guard = ConsolidationGuard()
    assert [guard.record_failure() for _ in range(5)] == [False, False, False, True, True]


def test_a_success_restores_the_allowance() -> None:
    guard = ConsolidationGuard()
    guard.record_failure()
    guard.record_failure()
    guard.record_success()
    assert [guard.record_failure() for _ in range(4)] == [False, False, False, True]


def test_a_turn_with_few_failures_leaves_the_next_turn_untouched() -> None:
    guard = ConsolidationGuard()
    guard.record_failure()
    guard.record_failure()
    guard.start_turn()
    assert not guard.exhausted
    assert [guard.record_failure() for _ in range(4)] == [False, False, False, True]


def test_an_exhausted_streak_carries_over_until_a_success() -> None:
    guard = ConsolidationGuard()
    for _ in range(4):
        guard.record_failure()
    guard.start_turn()
    assert guard.exhausted and guard.allowance == 1
    assert [guard.record_failure(), guard.record_failure()] == [False, True]
    guard.start_turn()
    assert guard.exhausted  # still failing: still one attempt per turn
    guard.record_success()
    assert not guard.exhausted and guard.allowance == 3


def test_reset_forgets_everything() -> None:
    guard = ConsolidationGuard()
    for _ in range(4):
        guard.record_failure()
    guard.start_turn()
    guard.reset()
    assert not guard.exhausted and guard.turn_failures == 0


def _zero_match(store: MemoryStore) -> dict[str, object]:
    return store.replace("memory", "no such entry", "new text")


def test_the_fourth_failure_in_a_turn_is_terminal(store: MemoryStore) -> None:
    store.add("memory", "fact A")
    for _ in range(3):
        result = _zero_match(store)
        assert result["success"] is False and result["current_entries"] == ["fact A"]
    terminal = _zero_match(store)
    assert terminal["success"] is False and terminal["done"] is True
    assert "Stop calling the memory tool" in str(terminal["error"])
    assert "current_entries" not in terminal


def test_failing_batches_count_and_never_echo_entries(
    store: MemoryStore, backend: MemoryBackend
) -> None:
    store.add("memory", "secretive fact one")
    store.add("memory", "secretive fact two")
    before = backend.raw("memory")
    bad = [{"action": "remove", "old_text": "absent"}]
    results = [store.apply_batch("memory", bad) for _ in range(4)]
    assert [r.get("done") for r in results] == [None, None, None, True]
    for result in results:
        assert "secretive" not in json.dumps(result)
    assert backend.raw("memory") == before


def test_ambiguous_matches_are_not_counted(store: MemoryStore) -> None:
    store.add("memory", "nginx port 80")
    store.add("memory", "nginx config path")
    for _ in range(5):
        assert "done" not in store.remove("memory", "nginx")
    assert store.consolidation.turn_failures == 0


def test_success_and_explicit_reset_clear_the_count(store: MemoryStore) -> None:
    store.add("memory", "fact A")
    for _ in range(3):
        _zero_match(store)
    assert store.add("memory", "fact B")["success"] is True
    assert "current_entries" in _zero_match(store)
    _zero_match(store)
    _zero_match(store)
    store.reset_consolidation_failures()
    assert "current_entries" in _zero_match(store)


def test_a_doomed_consolidation_does_not_restart_every_turn(
    hermes_home: object, backend: MemoryBackend
) -> None:
    provider = BuiltinMemoryProvider()
    provider.initialize("session-1", hermes_home=str(hermes_home), platform="cli")

    def replace() -> dict[str, object]:
        return json.loads(
            provider.handle_tool_call(
                "memory", {"action": "replace", "target": "memory", "old_text": "x", "content": "y"}
            )
        )

    provider.handle_tool_call("memory", {"action": "add", "target": "memory", "content": "fact"})
    provider.on_turn_start(1, "remember this")
    assert [replace().get("done") for _ in range(4)] == [None, None, None, True]
    provider.on_turn_start(2, "and this")
    first, second = replace(), replace()
    assert "current_entries" in first  # one informed attempt per turn ...
    assert second.get("done") is True  # ... then the model is told to stop
    provider.on_turn_start(3, "one more")
    assert "current_entries" in replace()
    provider.handle_tool_call("memory", {"action": "add", "target": "memory", "content": "ok"})
    provider.on_turn_start(4, "fresh start")
    assert [replace().get("done") for _ in range(4)] == [None, None, None, True]
    provider.on_session_switch("session-2", reset=True)
    assert "current_entries" in replace()
