"""Broken variants of :class:`DictProvider`, each breaking one promise of the contract.

The conformance-suite tests check that the suite catches each one and says what to fix.
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

from dict_provider import DictProvider

__all__ = [
    "BlockingPrefetchProvider",
    "DictProvider",
    "EchoingProvider",
    "LeakyUsersProvider",
    "MalformedSchemaProvider",
    "NetworkCheckProvider",
    "RaisingToolProvider",
]

_RELEASE = threading.Event()


class BlockingPrefetchProvider(DictProvider):
    """Breaks the prefetch budget: prefetch waits on the backend with no timeout."""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        _RELEASE.wait()
        return ""


class MalformedSchemaProvider(DictProvider):
    """Breaks strict backends: a bad tool name, top-level anyOf, no description."""

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [
            {
                "name": "dict search!",
                "parameters": {"anyOf": [{"type": "object"}, {"type": "string"}]},
            }
        ]


class LeakyUsersProvider(DictProvider):
    """Breaks user isolation: every user reads and writes one shared pool."""

    user_scoped = False


class EchoingProvider(DictProvider):
    """Breaks fencing: stores recalled <memory-context> blocks as new memory."""

    sanitize = False


class NetworkCheckProvider(DictProvider):
    """Breaks is_available: it pings a server to decide."""

    def is_available(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", 9), timeout=0.2):
                return True
        except OSError:
            return True


class RaisingToolProvider(DictProvider):
    """Breaks handle_tool_call: bad arguments raise instead of answering JSON."""

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        return json.dumps({"results": self._search(args["query"].lower())})
