"""Hostile plugin folders: each costs its own entry a named error, never the others or the CLI."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from plugin_kit import folder_plugin, fresh_discovery, provider_source

from hermes_core.cli import cli
from hermes_core.discovery.folders import MANIFEST_MAX_BYTES
from hermes_core.manager import MemoryManager
from hermes_core.plugins import activate_providers, discover_providers, load_memory_provider


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with fresh_discovery(tmp_path_factory.getbasetemp()):
        yield


@pytest.fixture
def plugins_dir(hermes_home: Path) -> Path:
    folder_plugin(hermes_home / "plugins", "healthy", provider_source("healthy"))
    return hermes_home / "plugins"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def listing() -> dict[str, object]:
    return {i.name: i for i in discover_providers()}


def method(name: str, body: str) -> str:
    return f"\n    def {name}(self, *args, **kwargs):\n        {body}\n"


CUSTOM_BASE = "\nclass Stop(BaseException):\n    pass\n"

# kind -> (__init__.py source, files beside it, text the error must contain)
EXITS: dict[str, tuple[str, dict[str, str], str]] = {
    "custom_base_exception_at_import": (
        provider_source("x") + CUSTOM_BASE + "raise Stop('stopped at import')\n",
        {},
        "raised Stop: stopped at import",
    ),
    "generator_exit_at_import": (
        provider_source("x") + "\nraise GeneratorExit\n",
        {},
        "raised GeneratorExit",
    ),
    "sys_exit_in_is_available": (
        provider_source("x") + method("is_available", "raise SystemExit(3)"),
        {},
        "is_available() raised SystemExit: 3",
    ),
    "sys_exit_in_name": (
        provider_source("x").replace('return "x"', "raise SystemExit('nameless')"),
        {},
        "name raised SystemExit: nameless",
    ),
    "sys_exit_in_get_tool_schemas": (
        provider_source("x") + method("get_tool_schemas", "raise SystemExit(1)"),
        {},
        "get_tool_schemas() raised SystemExit: 1",
    ),
    "generator_exit_in_constructor": (
        provider_source("x").replace("self.initialized = None", "raise GeneratorExit"),
        {},
        "creating Provider raised GeneratorExit",
    ),
    "sys_exit_in_register": (
        "# register_memory_provider\ndef register(ctx):\n    raise SystemExit(4)\n",
        {},
        "register(ctx) raised SystemExit: 4",
    ),
}


@pytest.mark.parametrize("kind", sorted(EXITS))
def test_a_plugin_exiting_is_its_own_failure(
    kind: str, plugins_dir: Path, hermes_home: Path
) -> None:
    source, files, cause = EXITS[kind]
    folder_plugin(plugins_dir, "exiting", source, **files)
    entries = listing()
    assert entries["healthy"].status == "available"  # type: ignore[attr-defined]
    assert entries["exiting"].status == "broken"  # type: ignore[attr-defined]
    assert cause in (entries["exiting"].error or "")  # type: ignore[attr-defined]
    (hermes_home / "config.yaml").write_text("memory:\n  provider: exiting\n", encoding="utf-8")
    manager = MemoryManager()
    assert activate_providers(manager, None, hermes_home) == ["builtin"]
    assert [p.name for p in manager.providers] == ["builtin"]


def test_a_sibling_module_exiting_does_not_stop_the_plugin(plugins_dir: Path) -> None:
    folder_plugin(
        plugins_dir,
        "sibling",
        provider_source("sibling"),
        **{"aaa.py": CUSTOM_BASE + "raise Stop('sibling')\n"},
    )
    assert listing()["sibling"].status == "available"  # type: ignore[attr-defined]


def test_ctrl_c_during_a_plugin_import_still_stops_discovery(plugins_dir: Path) -> None:
    folder_plugin(plugins_dir, "interrupted", provider_source("x") + "\nraise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        discover_providers()


def test_a_plugin_calling_sys_exit_does_not_end_the_cli(plugins_dir: Path) -> None:
    folder_plugin(plugins_dir, "quitter", provider_source("x") + method("is_available", "exit(0)"))
    result = invoke("plugins", "--all")
    assert result.exit_code == 0
    assert "broken: is_available() raised SystemExit: 0" in result.stdout
    assert "healthy" in result.stdout and "status: available" in result.stdout


@pytest.mark.skipif(sys.platform != "linux", reason="needs a file system taking any bytes")
def test_folder_name_that_is_not_utf8_is_listed_broken(plugins_dir: Path) -> None:
    raw = os.fsencode(plugins_dir) + b"/mem\xffory"
    os.mkdir(raw)
    with open(raw + b"/__init__.py", "w", encoding="utf-8") as handle:
        handle.write(provider_source("odd"))
    entries = listing()
    broken = entries["mem\\xffory"]
    assert broken.status == "broken"  # type: ignore[attr-defined]
    assert "not valid UTF-8" in (broken.error or "")  # type: ignore[attr-defined]
    assert entries["healthy"].status == "available"  # type: ignore[attr-defined]
    result = invoke("plugins", "--all")
    assert result.exit_code == 0 and "mem\\xffory" in result.stdout


BAD_MANIFESTS: dict[str, tuple[bytes, str]] = {
    "invalid_yaml": (b"name: [unclosed\n  : :\n", "cannot be read, ignoring it: ParserError"),
    "a_list": (b"- name\n- description\n", "holds a list, not a mapping"),
    "not_utf8": (b"name: \xff\xfe\n", "cannot be read, ignoring it: UnicodeDecodeError"),
    "too_deep": (b"[" * 20000, "cannot be read, ignoring it"),
    "wrong_types": (
        b"name: [a, b]\ndescription: {x: 1}\nversion: 1.2\n",
        "name must be a string, not list; ignoring it",
    ),
    "alias_bomb": (
        b"a: &a [x, x, x, x, x, x, x, x, x]\n"
        + b"".join(
            f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n".encode()
            for p, n in zip("abcdefgh", "bcdefghi", strict=True)
        )
        + b"description: *i\n",
        "description must be a string, not list; ignoring it",
    ),
    "huge": (
        b"description: " + b"x" * MANIFEST_MAX_BYTES + b"\n",
        f"more than the {MANIFEST_MAX_BYTES} a plugin.yaml may have",
    ),
}


@pytest.mark.parametrize("kind", sorted(BAD_MANIFESTS))
def test_a_bad_plugin_yaml_is_a_named_warning_and_the_plugin_still_loads(
    kind: str, plugins_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    content, problem = BAD_MANIFESTS[kind]
    root = folder_plugin(plugins_dir, "manifested", provider_source("manifested", doc="Doc."))
    (root / "plugin.yaml").write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="hermes_core.plugins"):
        info = listing()["manifested"]
    assert info.status == "available"  # type: ignore[attr-defined]
    assert info.description == "Doc."  # type: ignore[attr-defined]
    assert any(problem in w for w in info.warnings), info.warnings  # type: ignore[attr-defined]
    assert str(root / "plugin.yaml") in info.warnings[0]  # type: ignore[attr-defined]
    assert any(problem in r.getMessage() for r in caplog.records)
    assert load_memory_provider("manifested") is not None
    out = invoke("plugins").stdout
    assert "warning:" in out and problem in out
    doctor = invoke("doctor").stdout
    assert "[WARN] provider 'manifested' (folder)" in doctor and problem in doctor


def test_a_directory_named_plugin_yaml_is_a_warning(plugins_dir: Path) -> None:
    (plugins_dir / "healthy" / "plugin.yaml").mkdir()
    info = listing()["healthy"]
    assert info.status == "available"  # type: ignore[attr-defined]
    assert info.warnings == (
        f"{plugins_dir / 'healthy' / 'plugin.yaml'} is not a file; ignoring it",
    )  # type: ignore[attr-defined]


def test_manifest_fields_of_the_right_type_are_kept(plugins_dir: Path) -> None:
    (plugins_dir / "healthy" / "plugin.yaml").write_text(
        "name: calm\ndescription: Calm memory\nversion: 2\nhomepage: https://example.invalid\n",
        encoding="utf-8",
    )
    info = listing()["healthy"]
    assert (info.description, info.version, info.warnings) == ("Calm memory", "2", ())  # type: ignore[attr-defined]


def test_plugin_printing_while_loading_keeps_json_output_valid(plugins_dir: Path) -> None:
    folder_plugin(
        plugins_dir,
        "chatty",
        "print('hello from chatty')\n"
        + provider_source("chatty")
        + method("is_available", "print('probe'); return True"),
    )
    result = invoke("plugins", "--json")
    names = [p["name"] for p in json.loads(result.stdout)["providers"]]
    assert "chatty" in names and "healthy" in names
    assert "hello from chatty" in result.stderr


@pytest.mark.parametrize(
    ("returned", "problem"),
    [
        ('"builtin"', "reserved for hermes-memory's builtin provider"),
        ("None", "name is None; a provider's name must be a non-empty string"),
        ('""', "name is ''; a provider's name must be a non-empty string"),
    ],
)
def test_a_provider_name_that_cannot_be_used_is_refused(
    returned: str, problem: str, plugins_dir: Path, hermes_home: Path
) -> None:
    folder_plugin(plugins_dir, "impostor", provider_source("x").replace('"x"', returned))
    (hermes_home / "config.yaml").write_text("memory:\n  provider: impostor\n", encoding="utf-8")
    info = listing()["impostor"]
    assert info.status == "broken" and problem in (info.error or "")  # type: ignore[attr-defined]
    manager = MemoryManager()
    assert activate_providers(manager, None, hermes_home) == ["builtin"]
    assert [p.name for p in manager.providers] == ["builtin"]
    doctor = invoke("doctor")
    assert doctor.exit_code == 1
    failure = next(line for line in doctor.stdout.splitlines() if "[FAIL]" in line)
    assert "memory.provider 'impostor' is broken: name is" in failure and problem in failure


def test_register_with_two_providers_uses_the_first_and_says_so(
    plugins_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = (
        provider_source("first", cls="First")
        + provider_source("second", cls="Second").split("\n", 2)[2]
        + "\ndef register(ctx):\n"
        "    ctx.register_memory_provider(First())\n"
        "    ctx.register_memory_provider(Second())\n"
    )
    folder_plugin(plugins_dir, "pair", source)
    with caplog.at_level(logging.WARNING, logger="hermes_core.plugins"):
        info = listing()["pair"]
    assert info.provider_name == "first"  # type: ignore[attr-defined]
    assert any(
        "registered 2 memory providers; using the first (First)" in r.getMessage()
        for r in caplog.records
    )


def test_a_plugin_tool_or_hook_exiting_costs_only_that_call(
    plugins_dir: Path, hermes_home: Path
) -> None:
    source = (
        provider_source("exiter") + "\ndef register(ctx):\n"
        "    ctx.register_memory_provider(Provider())\n"
        "    schema = {'name': 'exit_tool', 'description': 'Exits.', 'parameters': {}}\n"
        "    ctx.register_tool('exit_tool', 'mem', schema, lambda args, **kw: exit(5))\n"
        "    ctx.register_hook('pre_llm_call', lambda **kw: exit(6))\n"
        "    ctx.register_hook('pre_llm_call', lambda **kw: {'context': 'second hook ran'})\n"
    )
    folder_plugin(plugins_dir, "exiter", source)
    (hermes_home / "config.yaml").write_text("memory:\n  provider: exiter\n", encoding="utf-8")
    manager = MemoryManager()
    assert activate_providers(manager, None, hermes_home) == ["builtin", "exiter"]
    try:
        manager.initialize_all("s1", platform="cli")
        answer = json.loads(manager.handle_tool_call("exit_tool", {}))
        assert "SystemExit: 5" in answer["error"]
        assert "second hook ran" in manager.prefetch_all("hello", session_id="s1")
    finally:
        manager.shutdown_all()


@pytest.fixture
def short_call_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.discovery import deadline

    monkeypatch.setattr(deadline, "PROVIDER_CALL_TIMEOUT", 0.3)


def test_a_provider_retrying_past_the_interruption_is_still_cut_off(
    short_call_limit: None, plugins_dir: Path, hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # An is_available() that retries its connection on any Exception must not swallow the
    # interruption and keep waiting.
    retrying = (
        "while True:\n            try:\n                __import__('time').sleep(10**6)\n"
        "            except Exception:\n                pass"
    )
    folder_plugin(plugins_dir, "retrying", provider_source("x") + method("is_available", retrying))
    # One that catches everything once and answers gets no credit for the answer either.
    answering = (
        "try:\n            __import__('time').sleep(10**6)\n"
        "        except BaseException:\n            return True"
    )
    folder_plugin(
        plugins_dir, "answering", provider_source("y") + method("is_available", answering)
    )
    entries = listing()
    assert entries["healthy"].status == "available"  # type: ignore[attr-defined]
    for name in ("retrying", "answering"):
        assert entries[name].status == "broken"  # type: ignore[attr-defined]
        assert "is_available() did not return within 0.3 s" in entries[name].error  # type: ignore[attr-defined]
    (hermes_home / "config.yaml").write_text("memory:\n  provider: retrying\n", encoding="utf-8")
    manager = MemoryManager()
    # Activation runs its own checks: a session start is never held up either.
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="hermes_core.plugins"):
        assert activate_providers(manager, None, hermes_home) == ["builtin"]
    assert "failed its availability check (is_available() did not return within" in caplog.text


def test_conformance_stops_before_its_run_when_is_available_never_returns(
    short_call_limit: None, plugins_dir: Path
) -> None:
    pytest.importorskip("hypothesis")
    folder_plugin(
        plugins_dir,
        "stuck",
        provider_source("stuck") + method("is_available", "__import__('time').sleep(10**6)"),
    )
    result = CliRunner().invoke(cli, ["conformance", "stuck"])
    assert result.exit_code == 1
    assert "The provider 'stuck' is installed but broken" in result.output
    assert "is_available() did not return within 0.3 s" in result.output
