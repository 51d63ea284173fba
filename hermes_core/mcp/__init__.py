"""``hermes-memory mcp``: the memory layers as an MCP server (needs the ``[mcp]`` extra).

* :mod:`~hermes_core.mcp.server` — the tools, resources and per-connection memory sessions;
* :mod:`~hermes_core.mcp.transports` — stdio and streamable HTTP (bearer token, bind rules).

Nothing here is imported by ``import hermes_core``.
"""
