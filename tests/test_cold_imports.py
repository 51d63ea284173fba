"""``hermes-memory plugins`` imports nothing that only a running session needs.

Listing providers creates each one and asks for its availability and tool
schemas; none of that may pull in an HTTP client, a vendor SDK, the session
store or numerical libraries. Each check runs the real command in a fresh
interpreter (a test process has imported half the world already) and looks at
``sys.modules`` afterwards, so it pins the behaviour behind the cold-start
budget without timing anything. A module that is not installed in the test's
environment cannot be imported by anyone, so it is skipped rather than counted
as a pass.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

# Modules a listing must not import: only a running session (or a tool call) needs them.
SESSION_ONLY_MODULES = (
    "httpx",  # the HTTP client of hermes_core.llm and of the providers' clients
    "hermes_core.llm",
    "hermes_core.sessions.store",
    "tenacity",  # retry policies are built when a provider's client starts
    "honcho",
    "mem0",
    "supermemory",
    "numpy",
    "tokenizers",
)

LIST_PROVIDERS = textwrap.dedent(
    """
    import contextlib, io, json, sys

    from hermes_core.cli import main

    listing = io.StringIO()
    with contextlib.redirect_stdout(listing):
        main(["plugins", "--json"])
    json.dump(
        {"listing": json.loads(listing.getvalue()), "modules": sorted(sys.modules)}, sys.stdout
    )
    """
)


# With these set, the installed external providers report themselves available, so the
# listing also asks them for their tool schemas; without them it asks why they are not.
FAKE_CREDENTIALS = {
    "HONCHO_API_KEY": "hc-test",
    "MEM0_API_KEY": "m0-test",
    "SUPERMEMORY_API_KEY": "sm-test",
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is missing
        return False


@pytest.fixture(scope="module", params=["unconfigured", "with-credentials"])
def cold_listing(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """The ``plugins --json`` payload and ``sys.modules`` of a fresh process that ran it."""
    home = tmp_path_factory.mktemp("cold_home")
    env = {k: v for k, v in os.environ.items() if k not in FAKE_CREDENTIALS}
    env["HERMES_HOME"] = str(home)
    if request.param == "with-credentials":
        env.update(FAKE_CREDENTIALS)
    done = subprocess.run(
        [sys.executable, "-c", LIST_PROVIDERS],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_the_listing_probes_the_installed_providers(cold_listing: dict[str, Any]) -> None:
    if not _installed("hermes_memory_builtin"):
        pytest.skip("the builtin provider is not installed")
    providers = {p["name"]: p for p in cold_listing["listing"]["providers"]}
    # Available, so the listing also asked for its tool schemas (session_search included).
    assert providers["builtin"]["status"] == "available"
    assert "hermes_memory_builtin.provider" in cold_listing["modules"]


@pytest.mark.parametrize("module", SESSION_ONLY_MODULES)
def test_listing_providers_leaves_session_only_modules_unimported(
    cold_listing: dict[str, Any], module: str
) -> None:
    if not _installed(module):
        pytest.skip(f"{module} is not installed here")
    assert module not in cold_listing["modules"], (
        f"`hermes-memory plugins` imported {module}; import it inside the function that "
        "needs it (TYPE_CHECKING for annotations) so listing providers stays cheap"
    )


@pytest.mark.parametrize("package", ["hermes_core", "hermes_core.runtime", "hermes_core.testing"])
def test_every_lazy_export_is_listed_in_a_literal_all(package: str) -> None:
    """``__all__`` names exactly the lazy exports, as a literal strict type checkers can read.

    ``mypy --strict`` (nox -s typecheck checks tests/typecheck/strict_consumer.py)
    treats a name as re-exported only when ``__all__`` is a literal list naming
    it or the name is imported ``as`` itself.
    """
    module = importlib.import_module(package)
    exported = set(module.__all__) - {"__version__"}
    assert exported == set(module._EXPORTS)
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    assigned = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    ]
    assert len(assigned) == 1 and isinstance(assigned[0], ast.List)
    assert all(isinstance(item, ast.Constant) for item in assigned[0].elts)
