"""The facts, questions and codewords the conformance suite stores and asks for.

Each fact carries a codeword no provider has seen before, so a recall that
finds it proves the fact went through the provider. :func:`fix_message` is the
form of every failure message: what went wrong, then what to fix.
"""

from __future__ import annotations

import itertools
import secrets
from typing import Any

from hermes_core.provider import MemoryPrefetchResult

TOPICS = ("harbor", "violin", "glacier", "saffron", "lantern", "orchid", "compass", "meadow")
_counter = itertools.count(1)


def codeword() -> str:
    """A word no provider has seen before: letters and digits only."""
    return f"cw{secrets.token_hex(4)}x{next(_counter)}"


def fact_text(topic: str, token: str) -> str:
    """A fact the suite stores: the codeword *token* of the *topic* project."""
    return f"The conformance codeword for the {topic} project is {token}."


def query_text(topic: str) -> str:
    """The question that should recall :func:`fact_text` for *topic*."""
    return f"What is the conformance codeword for the {topic} project?"


def fix_message(what: str, fix: str) -> str:
    return f"{what}\nFix: {fix}"


def recall_text(result: Any) -> Any:
    """The text of a ``prefetch`` result: a str, or a MemoryPrefetchResult's ``context``."""
    return result.context if isinstance(result, MemoryPrefetchResult) else result


def is_error_answer(payload: Any) -> bool:
    """Whether a tool's decoded result is an error answer (``{"error": …}``)."""
    return isinstance(payload, dict) and "error" in payload
