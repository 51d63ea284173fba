"""How ``hermes-memory mcp`` is reached: stdio (one client) or streamable HTTP (many).

HTTP binds loopback unless told otherwise; any other address needs a bearer
token (``--token`` or ``HERMES_MCP_TOKEN``), which every request must carry.
SIGTERM and SIGINT end the server cleanly: every memory session is closed
(``on_session_end``, bounded ``shutdown_all``) before the process exits.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import signal

import anyio
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.stdio import stdio_server
from pydantic import AnyHttpUrl

from hermes_core.errors import ConfigError
from hermes_core.mcp.server import ServerOptions, build_server

__all__ = ["MAX_REQUEST_BYTES", "is_loopback", "parse_bind", "serve_http", "serve_stdio"]

logger = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 1024 * 1024
"""The largest HTTP request body accepted (larger ones get HTTP 413)."""


def is_loopback(host: str) -> bool:
    """Whether *host* is a loopback address (``127.0.0.0/8``, ``::1``, ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_bind(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6, or just ``PORT``) as a host and a port."""
    host, sep, port_text = value.rpartition(":")
    if not sep:
        host, port_text = "127.0.0.1", value
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise ConfigError(f"--http takes HOST:PORT with a port from 1 to 65535, got {value!r}.")
    return host, port


class _StaticToken:
    """The bearer token the server was started with (a constant-time comparison)."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token):
            return AccessToken(token=token, client_id="hermes-mcp", scopes=[])
        return None


def _shutdown_bound(options: ServerOptions) -> float:
    """Seconds closing every session may take: ``on_session_end`` then ``shutdown_all``."""
    return options.session_end_timeout * 2 + 5


def serve_stdio(options: ServerOptions) -> None:
    """Serve one client over stdin/stdout until it disconnects or SIGTERM/SIGINT arrives.

    The read of stdin blocks a thread that cancellation cannot interrupt, so a
    signal closes the memory sessions (bounded) and then ends the process.
    """
    server, sessions = build_server(options, per_connection=False)

    async def on_signal() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                logger.info("Signal %d: closing the memory sessions", signum)
                with anyio.move_on_after(_shutdown_bound(options), shield=True):
                    await sessions.close_all()
                os._exit(0)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(on_signal)
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()

    anyio.run(main)


def serve_http(options: ServerOptions, host: str, port: int, token: str | None) -> None:
    """Serve streamable HTTP at ``http://HOST:PORT/mcp``; refuses a bare non-loopback bind."""
    import uvicorn

    if not is_loopback(host) and not token:
        raise ConfigError(
            f"Refusing to serve MCP on {host}, which is not a loopback address, without a "
            "token: pass --token or set HERMES_MCP_TOKEN (clients then send "
            "'Authorization: Bearer <token>'), or bind 127.0.0.1."
        )
    server, _ = build_server(options, per_connection=True)
    auth = verifier = None
    if token:
        issuer = AnyHttpUrl(f"http://{'[' + host + ']' if ':' in host else host}:{port}")
        auth = AuthSettings(issuer_url=issuer, resource_server_url=None)
        verifier = _StaticToken(token)
    app = server.streamable_http_app(
        host=host, max_request_body_size=MAX_REQUEST_BYTES, auth=auth, token_verifier=verifier
    )
    shown = f"[{host}]" if ":" in host else host
    logger.warning("hermes-memory MCP server on http://%s:%d/mcp", shown, port)
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=int(_shutdown_bound(options)),
    )
