"""``hermes-memory conformance PROVIDER`` against plugin folders holding sample providers."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hermes_core.cli import cli

CASES = Path(__file__).parent / "conformance_cases"


def _plugin(home: Path, name: str, source: str) -> None:
    folder = home / "plugins" / name
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(source, encoding="utf-8")


def _dict_provider_source(*, replace: str = "", by: str = "", name: str = "dict-notes") -> str:
    source = (CASES / "dict_provider.py").read_text(encoding="utf-8")
    source = source.replace('return "dict-notes"', f"return {name!r}")
    return source.replace(replace, by) if replace else source


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["conformance", *args], catch_exceptions=False)


def test_a_conforming_provider_passes_with_a_readable_report(hermes_home: Path) -> None:
    _plugin(hermes_home, "dict-notes", _dict_provider_source())
    result = _run("dict-notes")
    assert result.exit_code == 0, result.output
    assert "Conformance suite: provider 'dict-notes'" in result.output
    assert "declared by the provider (conformance_capabilities)" in result.output
    assert "PASS  users are isolated" in result.output
    assert "SKIP  cjk round trip [1char]" in result.output
    assert "because capability not declared: cjk" in result.output
    assert "Failed" not in result.output
    assert "Result: " in result.output and " passed" in result.output


def test_a_broken_provider_fails_with_what_to_fix(hermes_home: Path) -> None:
    broken = _dict_provider_source(replace='"name": "dict_search"', by='"name": "dict search"')
    _plugin(hermes_home, "dict-notes", broken)
    result = _run("dict-notes", "-k", "strict_backend or stable_identifier")
    assert result.exit_code == 1, result.output
    assert "PASS  name is a stable identifier" in result.output
    assert "FAIL  tool schemas are strict backend safe" in result.output
    assert "names must match" in result.output and "Fix:" in result.output
    assert result.output.rstrip().endswith("Result: 1 passed, 1 failed")


def test_json_output_and_chosen_capabilities(hermes_home: Path) -> None:
    _plugin(hermes_home, "dict-notes", _dict_provider_source())
    result = _run("dict-notes", "-c", "tools", "-c", "sync", "-k", "declared_tools", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["capabilities"] == ["sync", "tools"]
    assert [(r["test"], r["outcome"]) for r in payload["results"]] == [
        ("test_declared_tools_are_exposed", "passed")
    ]


def test_an_unknown_capability_is_refused(hermes_home: Path) -> None:
    _plugin(hermes_home, "dict-notes", _dict_provider_source())
    result = CliRunner().invoke(cli, ["conformance", "dict-notes", "-c", "telepathy"])
    assert result.exit_code == 2
    assert "unknown capability 'telepathy'; valid capabilities: tools, prefetch" in result.output


def test_an_unknown_provider_names_the_installed_ones(hermes_home: Path) -> None:
    _plugin(hermes_home, "dict-notes", _dict_provider_source())
    result = CliRunner().invoke(cli, ["conformance", "no-such-provider"])
    assert result.exit_code == 1
    assert "No memory provider named 'no-such-provider' was found" in result.output
    assert "dict-notes" in result.output


def test_an_unavailable_provider_says_how_to_configure_it(hermes_home: Path) -> None:
    source = _dict_provider_source(
        replace="    def is_available(self) -> bool:\n        return True",
        by="    def is_available(self) -> bool:\n        return False\n\n"
        "    def unavailable_reason(self) -> str:\n        return 'set NOTES_API_KEY'",
    )
    _plugin(hermes_home, "dict-notes", source)
    result = CliRunner().invoke(cli, ["conformance", "dict-notes"])
    assert result.exit_code == 1
    assert "not available in the test home: set NOTES_API_KEY" in result.output
    assert "--config-from" in result.output


def test_missing_pytest_names_the_testing_extra(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "hypothesis", None)  # as if it were not installed
    result = CliRunner().invoke(cli, ["conformance", "anything"])
    assert result.exit_code == 1
    assert "needs hypothesis, which is not installed" in result.output
    assert "pip install 'hermes-memory-core[testing]'" in result.output


def test_config_from_seeds_each_test_home(hermes_home: Path, tmp_path: Path) -> None:
    configured = tmp_path / "configured-home"
    configured.mkdir()
    (configured / ".env").write_text("NOTES_API_KEY=abc\n", encoding="utf-8")
    source = _dict_provider_source(
        replace="    def is_available(self) -> bool:\n        return True",
        by="    def is_available(self) -> bool:\n"
        "        return (get_hermes_home() / '.env').is_file()",
    )
    _plugin(hermes_home, "dict-notes", source)
    refused = CliRunner().invoke(cli, ["conformance", "dict-notes", "-k", "in_the_test_setup"])
    assert refused.exit_code == 1 and "not available" in refused.output
    result = _run("dict-notes", "--config-from", str(configured), "-k", "in_the_test_setup")
    assert result.exit_code == 0, result.output
    assert "PASS  is available in the test setup" in result.output


def test_relative_paths_to_the_configured_home_and_plugins_work(
    hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pytest runs the suite in a scratch folder, where a relative path points nowhere.
    configured = tmp_path / "configured-home"
    configured.mkdir()
    (configured / ".env").write_text("NOTES_API_KEY=abc\n", encoding="utf-8")
    source = _dict_provider_source(
        replace="    def is_available(self) -> bool:\n        return True",
        by="    def is_available(self) -> bool:\n"
        "        return (get_hermes_home() / '.env').is_file()",
    )
    _plugin(hermes_home, "dict-notes", source)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HERMES_HOME", os.path.relpath(hermes_home, tmp_path))
    result = _run("dict-notes", "--config-from", "configured-home", "-k", "in_the_test_setup")
    assert result.exit_code == 0, result.output
    assert "PASS  is available in the test setup" in result.output


def test_forget_is_reported_as_not_checked_by_the_command(hermes_home: Path) -> None:
    _plugin(hermes_home, "dict-notes", _dict_provider_source())
    result = _run("dict-notes", "-c", "tools", "-c", "forget", "-k", "declared_tools")
    assert result.exit_code == 0, result.output
    assert "Capabilities: tools - given with --capability" in result.output
    assert "Not checked here: forget (it needs the forget() helper" in result.output


def test_a_run_where_everything_skips_is_not_a_pass(hermes_home: Path) -> None:
    _plugin(hermes_home, "dict-notes", _dict_provider_source())
    result = _run("dict-notes", "-c", "tools", "-k", "cjk_round_trip")
    assert result.exit_code == 1
    assert "Result: 3 skipped" in result.output
    assert "No test passed, so nothing was shown to conform" in result.output


def test_a_selection_matching_no_test_says_nothing_was_checked(hermes_home: Path) -> None:
    _plugin(hermes_home, "dict-notes", _dict_provider_source())
    result = _run("dict-notes", "-k", "no_test_has_this_name")
    assert result.exit_code == 1, result.output
    assert "Result: no tests ran" in result.output
    assert "No test matched -k 'no_test_has_this_name', so nothing was checked" in result.output
    assert "all were skipped" not in result.output


def test_a_bad_selection_shows_the_pytest_error(hermes_home: Path) -> None:
    _plugin(hermes_home, "dict-notes", _dict_provider_source())
    result = CliRunner().invoke(cli, ["conformance", "dict-notes", "-k", "users and (("])
    assert result.exit_code == 1, result.output
    assert "Wrong expression passed to '-k'" in result.output
    assert "pytest could not run the suite (exit status 4)" in result.output


def test_a_run_stopped_by_its_timeout_names_the_hung_test(hermes_home: Path) -> None:
    hanging = _dict_provider_source(
        replace="    def is_available(self) -> bool:",
        by="    def system_prompt_block(self) -> str:\n"
        "        threading.Event().wait()\n"
        "        return ''\n\n"
        "    def is_available(self) -> bool:",
    )
    _plugin(hermes_home, "dict-notes", hanging)
    # Time enough for the passing test on a loaded machine; the hung one waits it out.
    result = _run("dict-notes", "-k", "stable_identifier or optional_hooks", "--timeout", "12")
    assert result.exit_code == 1, result.output
    assert "PASS  name is a stable identifier" in result.output
    assert "ERROR optional hooks honour return types" in result.output
    assert "a call it made into the provider never returned" in result.output
    assert "The run was stopped at its time limit (12s, --timeout)" in result.output
    assert result.output.count("Result: 1 passed, 1 error") == 1


def test_an_unknown_declared_capability_is_refused_naming_the_class(hermes_home: Path) -> None:
    source = _dict_provider_source(
        replace='            "session_end_extraction",\n', by='            "telepathy",\n'
    )
    _plugin(hermes_home, "dict-notes", source)
    result = CliRunner().invoke(cli, ["conformance", "dict-notes"])
    assert result.exit_code == 1, result.output
    assert "declares capabilities the suite cannot hold it to" in result.output
    assert "DictProvider.conformance_capabilities: unknown capability 'telepathy'" in result.output
    assert "Traceback" not in result.output


def test_contradicting_declared_capabilities_are_refused_before_the_run(hermes_home: Path) -> None:
    """The template declares cross_session; adding session_scoped beside it can never pass."""
    source = _dict_provider_source(
        replace='            "session_end_extraction",\n', by='            "session_scoped",\n'
    )
    _plugin(hermes_home, "dict-notes", source)
    result = CliRunner().invoke(cli, ["conformance", "dict-notes"])
    assert result.exit_code == 1, result.output
    assert "cross_session and session_scoped contradict each other" in result.output
    assert "declare only the one your recall follows" in result.output
    assert "Passed" not in result.output


def test_comma_separated_capabilities_are_accepted(hermes_home: Path) -> None:
    _plugin(hermes_home, "dict-notes", _dict_provider_source())
    result = _run("dict-notes", "-c", "tools,sync", "-k", "declared_tools", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["capabilities"] == ["sync", "tools"]


def test_a_provider_name_with_quotes_runs(hermes_home: Path) -> None:
    name = 'notes"""x\'s'
    _plugin(hermes_home, name, _dict_provider_source(name=name))
    result = _run(name, "-k", "stable_identifier")
    assert result.exit_code == 0, result.output
    assert "PASS  name is a stable identifier" in result.output


def test_config_from_brings_the_providers_own_settings_files(
    hermes_home: Path, tmp_path: Path
) -> None:
    # Hermes plugins keep settings beside config.yaml (honcho.json) or in a folder of
    # their own (hindsight/config.json); a run with --config-from needs them too.
    configured = tmp_path / "configured-home"
    (configured / "dict-notes").mkdir(parents=True)
    (configured / "dict-notes.json").write_text('{"workspace": "w"}', encoding="utf-8")
    (configured / "dict-notes" / "config.json").write_text('{"bank": "b"}', encoding="utf-8")
    source = _dict_provider_source(
        replace="    def is_available(self) -> bool:\n        return True",
        by="    def is_available(self) -> bool:\n"
        "        home = get_hermes_home()\n"
        "        return (home / 'dict-notes.json').is_file() and "
        "(home / 'dict-notes' / 'config.json').is_file()",
    )
    _plugin(hermes_home, "dict-notes", source)
    result = _run("dict-notes", "--config-from", str(configured), "-k", "in_the_test_setup")
    assert result.exit_code == 0, result.output
    assert "PASS  is available in the test setup" in result.output


def test_config_from_says_what_it_copied_when_the_provider_keeps_settings_elsewhere(
    hermes_home: Path, tmp_path: Path
) -> None:
    # chronalyn keeps its settings in $HERMES_HOME/memory-router/, not under its own name.
    configured = tmp_path / "configured-home"
    (configured / "memory-router").mkdir(parents=True)
    (configured / "memory-router" / "config.json").write_text("{}", encoding="utf-8")
    (configured / ".env").write_text("X=1\n", encoding="utf-8")
    source = _dict_provider_source(
        replace="    def is_available(self) -> bool:\n        return True",
        by="    def is_available(self) -> bool:\n"
        "        return (get_hermes_home() / 'memory-router' / 'config.json').is_file()",
    )
    _plugin(hermes_home, "dict-notes", source)
    result = _run("dict-notes", "--config-from", str(configured), "-k", "in_the_test_setup")
    assert result.exit_code == 1
    assert f"The test home got .env from {configured}." in result.output
    assert "keeps settings in a file or folder" in result.output
    assert "set them in the environment" in result.output


def test_a_plugin_that_registers_one_module_level_instance_is_refused_up_front(
    hermes_home: Path,
) -> None:
    # memory_tencentdb_cloud: register(ctx) hands Hermes a provider made at import time.
    source = _dict_provider_source() + (
        "\n\nSHARED = DictProvider()\n\n\ndef register(ctx):\n"
        "    ctx.register_memory_provider(SHARED)\n"
    )
    _plugin(hermes_home, "dict-notes", source)
    result = _run("dict-notes")
    assert result.exit_code == 1
    assert "is one shared instance" in result.output
    assert "inside register(ctx)" in result.output


def test_init_passes_keywords_a_gateway_would_to_every_initialize(hermes_home: Path) -> None:
    # memorose refuses to start without the user_id Hermes' gateway passes.
    source = _dict_provider_source(
        replace="    def initialize(self, session_id: str, **kwargs: Any) -> None:\n",
        by="    def initialize(self, session_id: str, **kwargs: Any) -> None:\n"
        "        if not kwargs.get('user_id'):\n"
        "            raise RuntimeError('needs the gateway user_id')\n",
    )
    _plugin(hermes_home, "dict-notes", source)
    refused = _run("dict-notes", "-k", "stable_identifier")
    assert refused.exit_code == 1
    passed = _run("dict-notes", "--init", "user_id=u-42", "-k", "stable_identifier")
    assert passed.exit_code == 0, passed.output
    bad = CliRunner().invoke(cli, ["conformance", "dict-notes", "--init", "user id"])
    assert bad.exit_code == 2 and "is not KEY=VALUE" in bad.output


GENERAL_PLUGIN = '''"""Watches every turn (a general Hermes plugin)."""


def _on_post_llm_call(**kwargs):
    pass


def register(ctx):
    ctx.register_hook("post_llm_call", _on_post_llm_call)
'''


@pytest.mark.parametrize("kind", ["general", "misfiled"])
def test_an_installed_entry_point_no_memory_loader_reads_is_named(
    hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    # Before: "No memory provider named 'observer' was found … Install its distribution
    # (pip install ...)", about a package that is installed.
    from plugin_kit import fresh_discovery, install_distribution, provider_source

    site = tmp_path / "site-packages"
    if kind == "general":
        install_distribution(
            site,
            "observer-hermes",
            version="0.1.4",
            entry_points={"hermes_agent.plugins": {"observer": "observer_plugin"}},
            modules={"observer_plugin.py": GENERAL_PLUGIN},
        )
    else:
        install_distribution(
            site,
            "observer-hermes",
            version="0.1.4",
            entry_points={"hermes.plugins.memory": {"observer": "observer_mem:Provider"}},
            modules={"observer_mem.py": provider_source("observer")},
        )
    monkeypatch.syspath_prepend(str(site))
    _plugin(hermes_home, "dict-notes", _dict_provider_source())
    with fresh_discovery(tmp_path):
        result = CliRunner().invoke(cli, ["conformance", "observer"])
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "No memory provider named" not in text and "pip install ..." not in text
    assert "dict-notes" in text  # what to pick instead
    if kind == "general":
        assert (
            "'observer' is not a memory provider: observer-hermes 0.1.4 (hermes_agent.plugins: "
            "observer = observer_plugin) is a general Hermes plugin" in text
        )
        assert "Pick a memory provider instead" in text
    else:
        assert (
            "'observer' is installed, but under the wrong entry-point group: observer-hermes "
            "0.1.4 (hermes.plugins.memory: observer = observer_mem:Provider) declares a memory "
            "provider under hermes.plugins.memory" in text
        )
        assert "read hermes_agent.memory_providers and hermes_memory" in text
        assert "Move the entry point to the group hermes_agent.memory_providers" in text


@pytest.mark.parametrize("where", ["general folder", "misplaced folder"])
def test_a_plugin_folder_the_suite_cannot_check_is_named(hermes_home: Path, where: str) -> None:
    # Before: "No memory provider named 'observer' was found … Install its distribution",
    # about a folder sitting in $HERMES_HOME.
    if where == "general folder":
        folder = hermes_home / "plugins" / "observer"
        source = GENERAL_PLUGIN
    else:  # where some installers put it, and no scan (Hermes' included) looks
        folder = hermes_home / "plugins" / "memory" / "observer"
        source = _dict_provider_source()
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(source)
    result = CliRunner().invoke(cli, ["conformance", "observer"])
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "Install its distribution" not in text
    if where == "general folder":
        assert f"'observer' is not a memory provider: the folder {folder} offers none" in text
        assert "general Hermes plugin" in text and "Pick a memory provider instead" in text
    else:
        assert f"a plugin folder of that name is at {folder}, where no scan looks" in text
        assert "Copy or move it to $HERMES_HOME/plugins/observer/" in text
