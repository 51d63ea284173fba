"""``agent.redact``: removing secrets from text a plugin logs, shows or sends on.

Served by hermes-memory-core's egress scrubber (:mod:`hermes_core.redaction`), the one
that already cleans everything handed to providers: vendor API keys, bearer
and basic credentials, passwords in URLs, secret-named assignments and
private-key blocks become ``[redacted]``. Hermes's switches (``force``,
``redact_url_credentials``, ``file_read``, …) are accepted; here redaction is
always on and always covers URL credentials.
"""

import logging
from typing import Any, NoReturn, TypeVar

from hermes_core.hermes_compat.finder import missing_attribute
from hermes_core.redaction import redact_egress

__hermes_compat__ = True

__all__ = ["RedactingFormatter", "redact_sensitive_text"]

_T = TypeVar("_T")


def redact_sensitive_text(text: _T, *, force: bool = False, **options: Any) -> _T:
    """*text* with its secrets replaced; anything that is not a string comes back as is."""
    del force, options  # always on here
    return redact_egress(text) if isinstance(text, str) else text


class RedactingFormatter(logging.Formatter):
    """A :class:`logging.Formatter` whose output has its secrets removed."""

    def format(self, record: logging.LogRecord) -> str:
        return redact_egress(super().format(record))


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
