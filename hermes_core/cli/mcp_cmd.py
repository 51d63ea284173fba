"""``hermes-memory mcp``: serve the memory layers to MCP clients."""

from __future__ import annotations

import os
from pathlib import Path

import click

from hermes_core.errors import ConfigError


@click.command()
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="HERMES_HOME to serve (default: $HERMES_HOME or ~/.hermes).",
)
@click.option(
    "--http",
    "bind",
    metavar="HOST:PORT",
    help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.",
)
@click.option(
    "--token",
    envvar="HERMES_MCP_TOKEN",
    help="Bearer token every HTTP request must carry (required off loopback). "
    "[env: HERMES_MCP_TOKEN]",
)
@click.option("--user-id", help="The user whose memory is served (passed to the providers).")
def mcp(home: Path | None, bind: str | None, token: str | None, user_id: str | None) -> None:
    """Serve memory tools and resources over MCP (stdio by default).

    Needs the mcp extra: pip install "hermes-memory-core[mcp]".
    """
    try:
        from hermes_core.mcp.server import ServerOptions
        from hermes_core.mcp.transports import parse_bind, serve_http, serve_stdio
    except ImportError as exc:
        raise ConfigError(
            f"hermes-memory mcp needs the MCP SDK ({exc}); install it with "
            'pip install "hermes-memory-core[mcp]".'
        ) from exc
    if home is not None:
        os.environ["HERMES_HOME"] = str(home)
    options = ServerOptions(hermes_home=home, user_id=user_id or None)
    if bind is None:
        if token:
            click.echo("Note: --token applies to --http only; stdio needs none.", err=True)
        serve_stdio(options)
        return
    host, port = parse_bind(bind)
    serve_http(options, host, port, token or None)
