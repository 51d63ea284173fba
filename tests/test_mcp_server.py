"""`hermes-memory mcp` end to end: the MCP SDK's own client against the real server process.

Over stdio (the server as a subprocess, one client each) and over streamable
HTTP (one server, concurrent clients, a bearer token), with a real builtin
provider and a real ``state.db`` in a temporary HERMES_HOME.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")
httpx2 = pytest.importorskip("httpx2")

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from hermes_core.mcp.server import MAX_ARGUMENT_BYTES  # noqa: E402
from hermes_core.sessions import SessionStore  # noqa: E402

# A server that stops answering must fail its test, not hang the run.
pytestmark = pytest.mark.timeout(180)

CLI = ["-c", "from hermes_core.cli import main; main()", "mcp"]
TOKEN = "test-token-" + "8f3a1c"


def server_env(home: Path) -> dict[str, str]:
    return {**os.environ, "HERMES_HOME": str(home), "HERMES_SEMANTIC_SEARCH": "off"}


def stdio(home: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=CLI, env=server_env(home))


def text(result: Any) -> str:
    return str(result.content[0].text)


def sessions(home: Path) -> list[dict[str, Any]]:
    store = SessionStore(home / "state.db", read_only=True)
    try:
        return store.list_sessions(limit=50, collapse_lineage=False)
    finally:
        store.close()


def memory_file(home: Path) -> str:
    path = home / "memories" / "USER.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


async def first_session(home: Path) -> str:
    async with Client(stdio(home)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert {"memory", "session_search", "remember_turn"} <= set(tools)
        assert tools["session_search"].annotations.read_only_hint is True
        assert tools["memory"].annotations.read_only_hint is False
        assert tools["memory"].annotations.destructive_hint is True
        assert tools["remember_turn"].annotations.destructive_hint is False
        # Same schema as a turn gives the model.
        assert tools["memory"].input_schema["properties"]["action"]["enum"]

        added = await client.call_tool(
            "memory", {"action": "add", "target": "user", "content": "Keeps bees in Lyon."}
        )
        assert not added.is_error, text(added)
        kept = await client.call_tool(
            "remember_turn",
            {"user": "My hive swarmed near the Saone river.", "assistant": "Catch it at dusk."},
        )
        assert not kept.is_error
        session_id = json.loads(text(kept))["session_id"]
        # Frozen for this session: the write shows in the next one.
        snapshot = await client.read_resource("memory://snapshot")
        assert "Keeps bees" not in snapshot.contents[0].text
        return str(session_id)


async def second_session(home: Path, first_id: str) -> None:
    async with Client(stdio(home)) as client:
        snapshot = await client.read_resource("memory://snapshot")
        assert "Keeps bees in Lyon." in snapshot.contents[0].text
        user_file = await client.read_resource("memory://files/USER.md")
        assert "Keeps bees in Lyon." in user_file.contents[0].text
        recent = json.loads((await client.read_resource("sessions://recent")).contents[0].text)
        assert first_id in [row["id"] for row in recent]
        found = await client.call_tool("session_search", {"query": "hive swarmed river"})
        assert not found.is_error
        assert first_id in text(found)
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert uris == {
            "memory://snapshot",
            "memory://files/MEMORY.md",
            "memory://files/USER.md",
            "sessions://recent",
        }


def test_stdio_memory_written_in_one_session_is_in_the_next(hermes_home: Path) -> None:
    first_id = asyncio.run(first_session(hermes_home))
    rows = {row["id"]: row for row in sessions(hermes_home)}
    assert rows[first_id]["source"] == "mcp"
    assert rows[first_id]["end_reason"] == "mcp_disconnect"  # ended on disconnect
    asyncio.run(second_session(hermes_home, first_id))


async def bad_calls(home: Path) -> list[Any]:
    async with Client(stdio(home)) as client:
        return [
            await client.call_tool("no_such_tool", {}),
            await client.call_tool(
                "memory", {"action": "add", "target": "user", "content": "x" * MAX_ARGUMENT_BYTES}
            ),
            await client.call_tool("memory", {"action": "explode", "target": "user"}),
            await client.call_tool("memory", {"action": "add", "target": 7, "content": "y"}),
            await client.call_tool("remember_turn", {"user": "", "assistant": "a"}),
            await client.call_tool("remember_turn", {"user": "u", "assistant": "a", "x": 1}),
            await client.call_tool("session_search", {"query": "still alive?"}),
        ]


def test_stdio_bad_input_gets_tool_errors_and_writes_nothing(hermes_home: Path) -> None:
    *errors, alive = asyncio.run(bad_calls(hermes_home))
    for result in errors:
        assert result.is_error, text(result)
        assert json.loads(text(result))["error"]
    assert "Unknown tool 'no_such_tool'" in text(errors[0])
    assert f"{MAX_ARGUMENT_BYTES:,}" in text(errors[1])
    assert not alive.is_error  # the server survived every bad call
    assert memory_file(hermes_home) == ""
    (row,) = sessions(hermes_home)
    assert row["message_count"] == 0


# ---------------------------------------------------------------- streamable HTTP


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server(hermes_home: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, *CLI, "--http", f"127.0.0.1:{port}", "--token", TOKEN],
        env=server_env(hermes_home),
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)


def http_client(url: str, token: str | None, mode: str = "auto") -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = streamable_http_client(
        url, http_client=httpx2.AsyncClient(headers=headers, timeout=30)
    )
    return Client(transport, mode=mode)


async def chat_as(url: str, name: str, mode: str) -> str:
    async with http_client(url, TOKEN, mode) as client:
        added = await client.call_tool(
            "memory", {"action": "add", "target": "memory", "content": f"Fact from {name}."}
        )
        assert not added.is_error, text(added)
        kept = await client.call_tool(
            "remember_turn", {"user": f"{name} asks about kayaks", "assistant": "Sure."}
        )
        assert not kept.is_error
        return str(json.loads(text(kept))["session_id"])


def test_http_two_concurrent_clients_share_one_state_db(
    hermes_home: Path, http_server: tuple[str, subprocess.Popen[str]]
) -> None:
    url, process = http_server

    async def both() -> list[str]:
        return list(
            await asyncio.gather(chat_as(url, "ada", "legacy"), chat_as(url, "bob", "legacy"))
        )

    ada, bob = asyncio.run(both())
    assert ada != bob  # one memory session per MCP session

    async def later() -> tuple[str, str]:
        async with http_client(url, TOKEN) as client:
            snapshot = await client.read_resource("memory://snapshot")
            found = await client.call_tool("session_search", {"query": "kayaks"})
            return snapshot.contents[0].text, text(found)

    snapshot, found = asyncio.run(later())
    assert "Fact from ada." in snapshot and "Fact from bob." in snapshot
    assert ada in found and bob in found
    rows = {row["id"]: row for row in sessions(hermes_home)}
    assert rows[ada]["message_count"] == rows[bob]["message_count"] == 2
    # SIGTERM: the server closes every memory session it still has, then exits.
    # (uvicorn re-raises the signal once it has shut down cleanly.)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) in (0, -signal.SIGTERM)
    ended = {row["id"]: row["end_reason"] for row in sessions(hermes_home)}
    assert ended[ada] == ended[bob] == "mcp_disconnect"
    assert all(ended.values()), ended  # the shared stateless session too


@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_http_refuses_a_missing_or_wrong_token(
    hermes_home: Path, http_server: tuple[str, subprocess.Popen[str]], token: str | None
) -> None:
    url, process = http_server

    async def attempt() -> None:
        async with http_client(url, token) as client:
            await client.call_tool(
                "memory", {"action": "add", "target": "user", "content": "sneaky"}
            )

    with pytest.raises(Exception):  # noqa: B017 - the SDK raises its own HTTP/MCP error types
        asyncio.run(attempt())
    headers = {"Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = httpx2.post(url, json=request, headers=headers)
    assert response.status_code == 401
    assert process.poll() is None  # still serving
    assert memory_file(hermes_home) == ""
    assert not (hermes_home / "state.db").exists()  # no memory session was even opened


def test_http_off_loopback_without_a_token_refuses_to_start(hermes_home: Path) -> None:
    env = {k: v for k, v in server_env(hermes_home).items() if k != "HERMES_MCP_TOKEN"}
    done = subprocess.run(
        [sys.executable, *CLI, "--http", "0.0.0.0:8765"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "--token" in done.stderr and "HERMES_MCP_TOKEN" in done.stderr


def test_http_oversized_request_is_refused_and_nothing_is_written(
    hermes_home: Path, http_server: tuple[str, subprocess.Popen[str]]
) -> None:
    url, process = http_server
    content = "x" * (2 * 1024 * 1024)
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "memory", "arguments": {"action": "add", "content": content}},
    }
    headers = {
        "Authorization": f"Bearer {TOKEN}",
        "Accept": "application/json, text/event-stream",
    }
    response = httpx2.post(url, json=request, headers=headers)
    assert response.status_code == 413
    assert process.poll() is None
    assert memory_file(hermes_home) == ""


async def with_jotter(home: Path) -> tuple[Any, Any, Any, str]:
    async with Client(stdio(home)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        kept = await client.call_tool(
            "remember_turn", {"user": "Remember the marmalade recipe.", "assistant": "Kept."}
        )
        added = await client.call_tool(
            "memory", {"action": "add", "target": "memory", "content": "Oven runs hot."}
        )
        assert not kept.is_error and not added.is_error
        return (
            tools,
            kept,
            added,
            (await client.read_resource("memory://snapshot")).contents[0].text,
        )


async def search_jotter(home: Path) -> str:
    async with Client(stdio(home)) as client:
        return text(await client.call_tool("jotter_search", {"query": "marmalade oven"}))


def test_stdio_serves_the_external_providers_tools_and_syncs_to_it(hermes_home: Path) -> None:
    from thirdparty_kit import fixture, install, write_config

    install(hermes_home, fixture("jotter"))
    write_config(hermes_home, "jotter")
    tools, _, _, snapshot = asyncio.run(with_jotter(hermes_home))
    hints = tools["jotter_search"].annotations
    assert (hints.read_only_hint, hints.destructive_hint, hints.open_world_hint) == (
        False,
        True,
        True,
    )
    assert tools["jotter_search"].input_schema["required"] == ["query"]
    assert "Jotter memory" in snapshot  # the external provider's block is in the snapshot
    found = json.loads(asyncio.run(search_jotter(hermes_home)))
    # remember_turn reached sync_turn, the memory write reached on_memory_write.
    assert "Remember the marmalade recipe." in found["results"]
    assert "Oven runs hot." in found["results"]


def test_stdio_sigterm_ends_the_memory_session_before_exiting(hermes_home: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, *CLI],
        env=server_env(hermes_home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert process.stdin is not None
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()

    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
    assert json.loads(process.stdout.readline())["id"] == 1
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    turn = {"user": "The garage code is in the blue notebook.", "assistant": "Noted."}
    call = {"name": "remember_turn", "arguments": turn}
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
    answer = json.loads(process.stdout.readline())
    session_id = json.loads(answer["result"]["content"][0]["text"])["session_id"]
    # Arguments that are not an object, and a request that is not JSON: errors, no crash.
    bad = {"name": "memory", "arguments": ["add", "user", "x"]}
    send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": bad})
    assert json.loads(process.stdout.readline())["error"]["code"] == -32602
    process.stdin.write("{this is not json\n")
    send({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
    replies = []
    while not any(r.get("id") == 4 for r in replies):  # a parse-error reply may come first
        replies.append(json.loads(process.stdout.readline()))
    assert "result" in replies[-1], replies
    process.send_signal(signal.SIGTERM)  # stdin stays open: only the signal ends it
    assert process.wait(timeout=60) == 0
    (row,) = sessions(hermes_home)
    assert row["id"] == session_id
    assert row["end_reason"] == "mcp_disconnect"
    assert row["message_count"] == 2


SLOTH = """
import time
from agent.memory_provider import MemoryProvider

TOOL = {"name": "sloth_lookup", "description": "Look something up, slowly.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}


class SlothMemoryProvider(MemoryProvider):
    @property
    def name(self):
        return "sloth"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def get_tool_schemas(self):
        return [TOOL]

    def handle_tool_call(self, tool_name, args, **kwargs):
        time.sleep(30)
        return "{}"
"""


def test_a_hung_provider_tool_costs_its_timeout_not_the_server(hermes_home: Path) -> None:
    """In-process: the hung call is bounded by tool_timeout and the loop keeps serving."""
    from hermes_core.mcp.server import ServerOptions, build_server

    plugin = hermes_home / "plugins" / "sloth"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(SLOTH, encoding="utf-8")
    (hermes_home / "config.yaml").write_text("memory:\n  provider: sloth\n", encoding="utf-8")
    server, _ = build_server(
        ServerOptions(hermes_home=hermes_home, settings={"tool_timeout": 1.0}),
        per_connection=False,
    )

    async def main() -> tuple[Any, Any, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        async with Client(server) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "sloth_lookup" in names
            task = asyncio.create_task(ticker())
            hung = await client.call_tool("sloth_lookup", {"q": "x"})
            alive = await client.call_tool("session_search", {"query": "anything"})
            task.cancel()
            return hung, alive, ticks

    hung, alive, ticks = asyncio.run(main())
    assert hung.is_error
    assert "did not complete" in text(hung)  # the guard gave up after tool_timeout
    assert not alive.is_error
    assert ticks >= 20  # the event loop kept running during the hung call


def as_user(home: Path, user: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=[*CLI, "--user-id", user], env=server_env(home)
    )


async def user_writes(home: Path, user: str, fact: str) -> None:
    async with Client(as_user(home, user)) as client:
        added = await client.call_tool(
            "memory", {"action": "add", "target": "user", "content": fact}
        )
        assert not added.is_error, text(added)
        await client.call_tool(
            "remember_turn", {"user": f"{fact} (said {user})", "assistant": "ok"}
        )


async def user_reads(home: Path, user: str) -> tuple[str, str]:
    async with Client(as_user(home, user)) as client:
        snapshot = (await client.read_resource("memory://snapshot")).contents[0].text
        found = text(await client.call_tool("session_search", {"query": "violin cello"}))
        return snapshot, found


def test_each_user_id_gets_only_its_own_memory(hermes_home: Path) -> None:
    asyncio.run(user_writes(hermes_home, "alice", "Plays the violin."))
    asyncio.run(user_writes(hermes_home, "bob", "Plays the cello."))
    alice_snapshot, alice_found = asyncio.run(user_reads(hermes_home, "alice"))
    bob_snapshot, bob_found = asyncio.run(user_reads(hermes_home, "bob"))
    assert "violin" in alice_snapshot and "cello" not in alice_snapshot
    assert "cello" in bob_snapshot and "violin" not in bob_snapshot
    assert "said alice" in alice_found and "said bob" not in alice_found
    assert "said bob" in bob_found and "said alice" not in bob_found
