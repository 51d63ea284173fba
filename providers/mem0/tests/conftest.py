"""Shared fixtures: a temporary HERMES_HOME for every test, no network, the platform fake."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fake_mem0 import FakeMem0Platform
from hermes_memory_mem0 import Mem0MemoryProvider

StartProvider = Callable[..., Mem0MemoryProvider]
"""``start_provider(config, *, env=None, session_id=..., **initialize_kwargs)``."""

# Captured before the autouse fixture scrubs the environment: live tests need it.
LIVE_API_KEY = os.environ.get("MEM0_API_KEY", "")

# mem0 writes MEM0_DIR/config.json when first imported; keep that out of ~/.mem0 for the
# whole session (test_sdk_offline checks the provider's own choice in a fresh process).
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-dir-"))

_SCRUBBED_ENV = (
    "MEM0_API_KEY",
    "MEM0_MODE",
    "MEM0_HOST",
    "MEM0_USER_ID",
    "MEM0_AGENT_ID",
    "HERMES_MODEL",
    "HERMES_MODEL_BASE_URL",
    "HERMES_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)


@pytest.fixture(autouse=True)
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test runs against its own empty HERMES_HOME and a clean mem0 environment."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    for name in _SCRUBBED_ENV:
        monkeypatch.delenv(name, raising=False)
    return home


def _is_loopback(host: Any) -> bool:
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def no_network(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[list[Any]]:
    """Refuse (and record) any connection or DNS lookup beyond loopback; fail the test on one."""
    if request.node.get_closest_marker("live"):
        yield []
        return
    attempts: list[Any] = []
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def guarded_connect(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
            attempts.append(address)
            raise ConnectionRefusedError(f"test network guard: no connection to {address!r}")
        return real_connect(sock, address)

    def guarded_connect_ex(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
            attempts.append(address)
            return 111
        return real_connect_ex(sock, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_loopback(host):
            attempts.append(("dns", host))
            raise socket.gaierror(f"test network guard: no DNS lookup of {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    yield attempts
    assert not attempts, f"the test tried to reach the network: {attempts}"


@pytest.fixture
def fake_platform() -> Iterator[FakeMem0Platform]:
    with FakeMem0Platform() as fake:
        yield fake


def platform_config(fake: FakeMem0Platform, **overrides: Any) -> dict[str, Any]:
    """A config.yaml dict pointing the provider at *fake*, with fast retries."""
    section: dict[str, Any] = {
        "mode": "platform",
        "host": fake.url,
        "timeout": 2.0,
        "retries": 1,
        "retry_backoff": 0.01,
        "prefetch_wait": 10.0,
    }
    section.update(overrides)
    return {"mem0": section}


def local_config(**overrides: Any) -> dict[str, Any]:
    """A config.yaml dict for the local engine with the hash embedder."""
    section: dict[str, Any] = {
        "mode": "local",
        "local": {"embedder": "hash"},
        "prefetch_wait": 30.0,
    }
    section.update(overrides)
    return {"mem0": section}


@pytest.fixture
def start_provider(hermes_home: Path) -> Iterator[StartProvider]:
    """Build and initialize providers; every one is shut down after the test."""
    started: list[Mem0MemoryProvider] = []

    def start(
        config: dict[str, Any],
        *,
        env: dict[str, str] | None = None,
        session_id: str = "session-1",
        **kwargs: Any,
    ) -> Mem0MemoryProvider:
        provider = Mem0MemoryProvider(config, env=env or {}, **kwargs.pop("provider_kwargs", {}))
        kwargs.setdefault("hermes_home", str(hermes_home))
        kwargs.setdefault("platform", "cli")
        provider.initialize(session_id, **kwargs)
        started.append(provider)
        return provider

    yield start
    for provider in started:
        provider.shutdown()
