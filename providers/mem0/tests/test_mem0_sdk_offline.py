"""A fresh interpreter: mem0 imported through the provider stays offline and in HERMES_HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import json, os, socket, sys

    attempts = []
    real_connect = socket.socket.connect

    def guard(sock, address):
        inet = sock.family in (socket.AF_INET, socket.AF_INET6)
        if inet and address[0] not in ("127.0.0.1", "::1"):
            attempts.append(str(address))
            raise OSError("blocked")
        return real_connect(sock, address)

    socket.socket.connect = guard
    real_getaddrinfo = socket.getaddrinfo

    def no_dns(host, *args, **kwargs):
        if host not in ("localhost", "127.0.0.1", "::1", None):
            attempts.append(f"dns:{host}")
            raise socket.gaierror("blocked")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.getaddrinfo = no_dns

    from hermes_memory_mem0 import Mem0MemoryProvider

    provider = Mem0MemoryProvider({"mem0": {"mode": "local", "local": {"embedder": "hash"}}})
    assert "mem0" not in sys.modules, "importing the plugin must not import the SDK"
    provider.initialize("s1", hermes_home=os.environ["HERMES_HOME"], platform="cli", user_id="u")
    added = json.loads(provider.handle_tool_call("mem0_add", {"content": "The sky is green here"}))
    found = json.loads(provider.handle_tool_call("mem0_search", {"query": "sky green"}))
    provider.shutdown()
    telemetry = sys.modules["mem0.memory.telemetry"]
    print(json.dumps({
        "added": added,
        "found": [hit["memory"] for hit in found["results"]],
        "mem0_dir": os.environ.get("MEM0_DIR"),
        "telemetry_flag": telemetry.MEM0_TELEMETRY,
        "posthog": telemetry.client_telemetry.posthog is not None,
        "attempts": attempts,
    }))
    """
)


def test_fresh_process_stays_offline_and_inside_hermes_home(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    user_home = tmp_path / "user"
    home.mkdir()
    user_home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEM0_")}
    env.update(HERMES_HOME=str(home), HOME=str(user_home), MEM0_TELEMETRY="True")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["added"]["result"] == "Fact stored."
    assert report["found"] == ["The sky is green here"]
    assert report["mem0_dir"] == str(home / "mem0")
    assert report["telemetry_flag"] is False and report["posthog"] is False
    assert report["attempts"] == []
    assert not (user_home / ".mem0").exists()
    assert (home / "mem0" / "config.json").is_file()
