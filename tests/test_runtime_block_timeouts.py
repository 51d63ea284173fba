"""A provider that hangs in ``system_prompt_block`` costs only its own block, in the runtime too.

The manager bounds each external block by ``prefetch_timeout``; the runtime's guard
around the whole build must not be shorter, or a hung external provider would take the
builtin MEMORY.md/USER.md block with it for the whole session.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from runtime_kit import FaultyProvider, build_session

from hermes_core.runtime.session import RuntimeSettings
from hermes_core.testing.openai_fake import FakeOpenAIServer


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.mark.parametrize(("hook_timeout", "prefetch_timeout"), [(3.0, 0.3), (0.3, 1.0)])
def test_a_hung_external_block_leaves_the_builtin_block(
    hermes_home: Path,
    server: FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
    hook_timeout: float,
    prefetch_timeout: float,
) -> None:
    memory_file = hermes_home / "memories" / "MEMORY.md"
    memory_file.parent.mkdir(parents=True)
    memory_file.write_text("The build runs on Python 3.12\n", encoding="utf-8")
    hung = FaultyProvider("hang")
    settings = RuntimeSettings(hook_timeout=hook_timeout)
    try:
        with caplog.at_level(logging.WARNING):
            session = build_session(
                hermes_home, server, hung, settings=settings, prefetch_timeout=prefetch_timeout
            )
            with session:
                prompt = session.system_prompt
                hung.release.set()  # the session may end without waiting for it
    finally:
        hung.release.set()
    assert "The build runs on Python 3.12" in prompt
    assert "FAULTY-BLOCK" not in prompt
    assert any("'faulty-hang' system_prompt_block" in r.getMessage() for r in caplog.records), (
        "the warning names the provider that lost its block"
    )
