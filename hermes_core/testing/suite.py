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

from typing import Any

from hermes_core.testing.capabilities import Capability
from hermes_core.testing.contract_checks import ContractChecks
from hermes_core.testing.harness import StoreInspector
from hermes_core.testing.pool import ProviderPool
from hermes_core.testing.probes import fix_message
from hermes_core.testing.recall_checks import RecallChecks

__all__ = ["ProviderConformance", "StoreInspector"]


def _xfail_reason(function: Any) -> str:
    for mark in getattr(function, "pytestmark", []):
        if mark.name == "xfail":
            reason = mark.kwargs.get("reason", "")
            if isinstance(reason, str) and reason.strip():
                return reason
    return ""


class ProviderConformance(ContractChecks, RecallChecks):
    """The standard tests every memory provider should pass.

    Supply the ``create_provider`` fixture (a zero-argument callable returning
    a new, uninitialized provider wired to an empty backend for this test) and
    declare ``capabilities``. Optional: ``init_kwargs`` (what ``initialize``
    receives), ``store_inspector`` (read the backend out of band), and the
    helpers ``remember`` / ``recall`` / ``forget`` / ``settle`` when your
    provider stores and recalls memory some other way than ``sync_turn`` and
    ``prefetch``. The checks live in :mod:`.contract_checks` and
    :mod:`.recall_checks`, the fixtures and helpers in :mod:`.harness`.
    """

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
        standard = {
            name
            for klass in ProviderConformance.__mro__
            for name in vars(klass)
            if name.startswith("test_")
        }
        offenders = []
        for klass in type(self).__mro__:
            if klass is ProviderConformance:
                break
            for name in standard & set(vars(klass)):
                if not _xfail_reason(vars(klass)[name]):
                    offenders.append(f"{klass.__name__}.{name}")
        assert not offenders, fix_message(
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
