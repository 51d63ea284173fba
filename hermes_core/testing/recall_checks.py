"""Conformance checks of memory: what is remembered is recalled, isolated and kept."""

from __future__ import annotations

import itertools
import threading

import pytest

from hermes_core.fencing import build_memory_context_block
from hermes_core.provider import MemoryProvider
from hermes_core.testing.capabilities import Capability
from hermes_core.testing.harness import ConformanceHarness, StoreInspector
from hermes_core.testing.pool import DEFAULT_SESSION, ProviderPool, call_within, describe_outcome
from hermes_core.testing.probes import (
    TOPICS,
    codeword,
    fact_text,
    fix_message,
    query_text,
    recall_text,
)


class RecallChecks(ConformanceHarness):
    """The standard tests of recall, forgetting, isolation, sessions and persistence."""

    # ------------------------------------------------------------------ memory round trips

    def test_fresh_provider_recalls_nothing_unknown(self, provider: MemoryProvider) -> None:
        """A new, empty provider never invents a memory it was not given."""
        self.require(provider, Capability.RECALL)
        token = codeword()
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
        token = codeword()
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
        tokens = {topic: codeword() for topic in TOPICS}
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
                    assert isinstance(recall_text(result), str), f"prefetch() returned {result!r}"
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
        assert not problem, fix_message(
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
        own, echoed = codeword(), codeword()
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
            token = tokens[context] = codeword()
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
        alice_token, bob_token = codeword(), codeword()
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
        token = codeword()
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
        assert "北京烤鸭" in text, fix_message(
            f"the Chinese text came back altered: {text[:300]!r}",
            "store and return text as UTF-8 without transliteration.",
        )

    def test_memory_survives_session_switches(self, provider: MemoryProvider) -> None:
        """What one session stored is recalled after compression and after a reset."""
        self.require(provider, Capability.CROSS_SESSION, Capability.RECALL)
        token = codeword()
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
        token = codeword()
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
        token = codeword()
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
        token = codeword()
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
        token = codeword()
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
        kept, gone = codeword(), codeword()
        self.remember(provider, fact_text("compass", kept), session_id=DEFAULT_SESSION)
        self.forget(provider, fact_text("meadow", codeword()), session_id=DEFAULT_SESSION)
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
        first, second = fact_text("saffron", codeword()), fact_text("saffron", codeword())
        meta = {"session_id": DEFAULT_SESSION, "write_origin": "assistant_tool"}
        self._hook(provider, "on_memory_write", "add", "user", first, dict(meta))
        self._hook(provider, "on_memory_write", "add", "user", first, dict(meta))
        self._hook(
            provider,
            "on_memory_write",
            "remove",
            "user",
            "",
            {**meta, "previous_content": fact_text("saffron", codeword())},
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
        token = codeword()
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
        token = codeword()
        self.remember(first, fact_text("violin", token), session_id="conformance-first")
        outcome = provider_factory.stop(first, self.shutdown_budget)
        assert outcome.finished and outcome.error is None, fix_message(
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
        token = codeword()
        fact = fact_text("glacier", token)
        self.remember(provider, fact, session_id=DEFAULT_SESSION)
        self.settle(provider)
        stored = store_inspector()
        assert token in stored, fix_message(
            f"the provider accepted a write but the backend does not hold {token!r}.",
            "make the write reach storage (no buffer that is never flushed).",
        )
        if Capability.FORGET in self.declared(provider):
            self.forget(provider, fact, session_id=DEFAULT_SESSION)
            self.settle(provider)
            assert token not in store_inspector(), fix_message(
                f"forget() returned but the backend still holds {token!r}.",
                "delete from storage, not just from an in-memory index.",
            )
