"""The stateful property test of the suite: a provider against a reference model.

Hypothesis drives random sequences of store / forget / restart / session
switch / recall steps. The reference model is a dict of live and forgotten
facts; after every recall, each live fact of the queried topic must be in the
recall and no forgotten one may be. Steps a provider's capabilities do not
allow are left out of the machine.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule, run_state_machine_as_test

from hermes_core.testing.capabilities import Capability
from hermes_core.testing.pool import describe_outcome
from hermes_core.testing.probes import TOPICS, fact_text, query_text

if TYPE_CHECKING:
    from hermes_core.provider import MemoryProvider
    from hermes_core.testing.pool import ProviderPool
    from hermes_core.testing.suite import ProviderConformance

__all__ = ["run_reference_model"]


def _machine(suite: ProviderConformance, pool: ProviderPool) -> type[RuleBasedStateMachine]:
    probe = pool.new()
    capabilities = suite.declared(probe)

    class ReferenceModel(RuleBasedStateMachine):
        """One example: a fresh provider, unique topic words, and the expected memory."""

        def __init__(self) -> None:
            super().__init__()
            suffix = secrets.token_hex(2)
            self.topics = [f"{topic}{suffix}" for topic in TOPICS]
            self.session = f"stateful-{suffix}"
            self.sessions = 0
            self.live: dict[str, str] = {}  # topic -> fact
            self.forgotten: dict[str, list[str]] = {}  # topic -> facts
            self.provider: MemoryProvider = pool.start(self.session)

        def _free_topics(self) -> list[str]:
            return [t for t in self.topics if t not in self.live]

        @precondition(lambda self: bool(self._free_topics()))
        @rule(data=st.data())
        def store(self, data: st.DataObject) -> None:
            topic = data.draw(st.sampled_from(self._free_topics()), label="topic")
            fact = fact_text(topic, f"cw{secrets.token_hex(4)}")
            suite.remember(self.provider, fact, session_id=self.session)
            self.live[topic] = fact

        if Capability.FORGET in capabilities:

            @precondition(lambda self: bool(self.live))
            @rule(data=st.data())
            def forget(self, data: st.DataObject) -> None:
                topic = data.draw(st.sampled_from(sorted(self.live)), label="topic")
                fact = self.live.pop(topic)
                suite.forget(self.provider, fact, session_id=self.session)
                self.forgotten.setdefault(topic, []).append(fact)

        if Capability.PERSISTENCE in capabilities:

            @rule()
            def restart(self) -> None:
                outcome = pool.stop(self.provider)  # shutdown_budget, once
                assert outcome.finished and outcome.error is None, (
                    "shutdown() during a restart "
                    f"{describe_outcome(outcome)}.\nFix: make shutdown() "
                    "finish its queued writes within shutdown_budget, and never raise."
                )
                self.provider = pool.start(self.session)

        if Capability.CROSS_SESSION in capabilities:

            @rule(reset=st.booleans())
            def switch_session(self, reset: bool) -> None:
                self.sessions += 1
                parent, self.session = self.session, f"{self.session}-{self.sessions}"
                suite._hook(
                    self.provider,
                    "on_session_switch",
                    self.session,
                    parent_session_id=parent,
                    reset=reset,
                )

        @rule(data=st.data())
        def recall(self, data: st.DataObject) -> None:
            topic = data.draw(st.sampled_from(self.topics), label="topic")
            text = suite.recall(self.provider, query_text(topic), session_id=self.session)
            live = self.live.get(topic)
            if live is not None:
                token = live.rstrip(".").split()[-1]
                assert token in text, (
                    f"the live fact {live!r} was not recalled for {query_text(topic)!r}.\n"
                    f"Recalled: {text[:600]!r}\nFix: every stored fact must stay recallable "
                    "until it is forgotten (check writes, restarts and session switches)."
                )
            for fact in self.forgotten.get(topic, []):
                token = fact.rstrip(".").split()[-1]
                assert token not in text, (
                    f"the forgotten fact {fact!r} was still recalled.\nRecalled: {text[:600]!r}"
                    "\nFix: forget() must delete every copy from the backend."
                )

        def teardown(self) -> None:
            if Capability.FORGET in capabilities:  # keep capacity-bounded stores usable
                for fact in self.live.values():
                    suite.forget(self.provider, fact, session_id=self.session)
            pool.stop(self.provider)

    return ReferenceModel


def run_reference_model(suite: ProviderConformance, pool: ProviderPool) -> None:
    """Run the reference-model state machine against providers from *pool*."""
    machine: Any = _machine(suite, pool)
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=suite.stateful_max_examples,
            stateful_step_count=suite.stateful_step_count,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        ),
    )
