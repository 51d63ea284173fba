"""The author's path under hostile input: providers that misbehave, odd options, direct pytest use.

Each provider here breaks the contract in a way that used to give a misleading
or empty report (a crash called a timeout, a truncated run called a pass, a
run stalled until its time limit, a bare exception text); the run must now
say what the provider did and what to change.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hermes_core.cli import cli
from hermes_core.testing import runner
from hermes_core.testing.report import ConformanceReport, TestResult
from hermes_core.testing.runner import run_pytest

CASES = Path(__file__).parent / "conformance_cases"
PREFETCH = '    def prefetch(self, query: str, *, session_id: str = "") -> str:\n'
INITIALIZE = "    def initialize(self, session_id: str, **kwargs: Any) -> None:\n"


def _plugin(home: Path, name: str, *, after: str = "", insert: str = "") -> None:
    """A plugin folder holding the correct sample provider, with *insert* placed after *after*."""
    source = (CASES / "dict_provider.py").read_text(encoding="utf-8")
    source = source.replace('return "dict-notes"', f"return {name!r}")
    if after:
        assert after in source
        source = source.replace(after, after + insert, 1)
    folder = home / "plugins" / name
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(source, encoding="utf-8")


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["conformance", *args], catch_exceptions=False)


def test_a_provider_that_ends_the_process_is_a_crash_not_a_timeout(hermes_home: Path) -> None:
    _plugin(hermes_home, "exits", after=PREFETCH, insert="        import os; os._exit(7)\n")
    result = _run("exits", "-k", "stable_identifier or prefetch_returns")
    assert result.exit_code == 1, result.output
    assert "PASS  name is a stable identifier" in result.output
    assert "ERROR prefetch returns within budget" in result.output
    assert "The test process exited with status 7 while this test was running" in result.output
    assert "Fix:" in result.output
    assert "time limit" not in result.output


def test_a_keyboard_interrupt_from_the_provider_never_passes_a_truncated_run(
    hermes_home: Path,
) -> None:
    # system_prompt_block runs on the test's own thread, so pytest ends the whole session there.
    _plugin(
        hermes_home,
        "interrupts",
        after="    def is_available(self) -> bool:\n        return True\n",
        insert="\n    def system_prompt_block(self) -> str:\n        raise KeyboardInterrupt\n",
    )
    result = _run("interrupts", "-k", "stable_identifier or optional_hooks or shutdown_within")
    assert result.exit_code == 1, result.output
    assert "ERROR optional hooks honour return types" in result.output
    assert "KeyboardInterrupt stopped the whole pytest run" in result.output
    assert "raised in system_prompt_block()" in result.output
    assert "shutdown within budget" not in result.output  # it never ran: not a pass


def test_a_thread_left_running_fails_and_does_not_stall_the_run(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The runner stops a pytest process that outlives its last test by EXIT_GRACE (10 s);
    # 2 s here is the same path, sooner.
    monkeypatch.setattr(runner, "EXIT_GRACE", 2.0)
    _plugin(
        hermes_home,
        "lingers",
        after=INITIALIZE,
        insert="        import threading, time\n"
        "        threading.Thread(target=time.sleep, args=(3600,), name='lingerer').start()\n",
    )
    started = time.monotonic()
    result = _run("lingers", "-k", "stable_identifier", "--timeout", "90")
    assert time.monotonic() - started < 60, "the run waited for its time limit"
    assert result.exit_code == 1, result.output
    assert "left non-daemon threads running: ['lingerer']" in result.output
    assert "the test process exits" in result.output and "was stopped" in result.output


def test_a_raising_initialize_is_named_with_its_arguments_and_a_fix(hermes_home: Path) -> None:
    _plugin(
        hermes_home,
        "refuses",
        after=INITIALIZE,
        insert="        raise RuntimeError('no backend configured')\n",
    )
    result = _run("refuses", "-k", "stable_identifier")
    assert result.exit_code == 1, result.output
    assert "initialize('conformance-session', hermes_home=" in result.output
    assert "raised RuntimeError('no backend configured')" in result.output
    assert "Fix: make initialize() succeed in the test setup" in result.output


def test_a_hook_that_raises_says_which_hook(hermes_home: Path) -> None:
    _plugin(hermes_home, "sync-raises")
    folder = hermes_home / "plugins" / "sync-raises" / "__init__.py"
    source = folder.read_text(encoding="utf-8").replace(
        "        self._add(user_content)\n",
        "        raise ValueError('disk full')\n",
    )
    folder.write_text(source, encoding="utf-8")
    result = _run("sync-raises", "-k", "remembered_fact")
    assert result.exit_code == 1, result.output
    assert "sync_turn() raised ValueError('disk full')" in result.output
    assert "Fix: sync_turn() must not raise" in result.output


def test_a_tool_with_malformed_parameters_fails_only_the_schema_test(hermes_home: Path) -> None:
    _plugin(hermes_home, "bad-params")
    folder = hermes_home / "plugins" / "bad-params" / "__init__.py"
    source = folder.read_text(encoding="utf-8")
    schema = (
        '                "parameters": {\n'
        '                    "type": "object",\n'
        '                    "properties": {"query": {"type": "string"}},\n'
        '                    "required": ["query"],\n'
        "                },\n"
    )
    assert schema in source
    source = source.replace(schema, '                "parameters": "query: str",\n')
    folder.write_text(source, encoding="utf-8")
    result = _run("bad-params", "-k", "strict_backend or bad_arguments")
    assert result.exit_code == 1, result.output
    assert "FAIL  tool schemas are strict backend safe" in result.output
    assert "has parameters of type str" in result.output
    assert "PASS  tool calls with bad arguments return json errors" in result.output
    assert "has no attribute" not in result.output


@pytest.mark.parametrize("key", ["session_id", "hermes_home"])
def test_init_may_not_replace_what_the_suite_owns(hermes_home: Path, key: str) -> None:
    _plugin(hermes_home, "plain")
    result = CliRunner().invoke(cli, ["conformance", "plain", "--init", f"{key}=/tmp/x"])
    assert result.exit_code == 2, result.output
    assert f"{key} cannot be set" in result.output


def test_a_path_given_as_the_provider_says_to_pass_a_name(hermes_home: Path) -> None:
    _plugin(hermes_home, "plain")
    result = CliRunner().invoke(cli, ["conformance", str(hermes_home / "plugins" / "plain")])
    assert result.exit_code == 1
    assert "not a path" in result.output and "$HERMES_HOME/plugins/" in result.output


def test_what_a_provider_prints_never_mixes_into_the_json_report(hermes_home: Path) -> None:
    _plugin(
        hermes_home,
        "loud",
        after="    def __init__(self) -> None:\n",
        insert="        print('hello from the provider')\n",
    )
    result = CliRunner().invoke(cli, ["conformance", "loud", "-k", "stable_identifier", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["ok"] is True
    assert "hello from the provider" in result.stderr


def test_a_run_pytest_ended_early_is_never_ok() -> None:
    passed = [TestResult("test_a", "test_a", "passed")]
    assert ConformanceReport(results=passed, exitstatus=0).ok
    assert not ConformanceReport(results=passed, exitstatus=2).ok  # interrupted


def _author_suite(tmp_path: Path, body: str) -> ConformanceReport:
    """Run a provider author's own test module (the plugin used directly) and read its report."""
    (tmp_path / "test_author.py").write_text(
        "import pytest\n"
        "from hermes_core.testing import ProviderConformance\n"
        "from dict_provider import DictProvider\n\n\n" + body,
        encoding="utf-8",
    )
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(CASES)!r})\n", encoding="utf-8"
    )
    run = run_pytest(["test_author.py"], cwd=tmp_path, args=["-k", "stable_identifier"])
    assert run.report is not None, run.output
    return run.report


def test_create_provider_returning_an_instance_says_to_return_the_class(tmp_path: Path) -> None:
    report = _author_suite(
        tmp_path,
        "class TestNotes(ProviderConformance):\n"
        "    @pytest.fixture\n"
        "    def create_provider(self):\n"
        "        return DictProvider()\n",
    )
    message = report.find("test_name_is_a_stable_identifier").message
    assert "not a callable" in message
    assert "`return MyProvider`, not `return MyProvider()`" in message


def test_a_raw_exception_names_where_it_was_raised_and_what_to_do(tmp_path: Path) -> None:
    report = _author_suite(
        tmp_path,
        "class Broken(DictProvider):\n"
        "    @property\n"
        "    def name(self):\n"
        "        raise LookupError('name table missing')\n\n\n"
        "class TestNotes(ProviderConformance):\n"
        "    @pytest.fixture\n"
        "    def create_provider(self):\n"
        "        return Broken\n",
    )
    message = report.find("test_name_is_a_stable_identifier").message
    assert message.startswith("LookupError: name table missing")
    assert "(raised in name() at " in message and "test_author.py:" in message
    assert "Fix: a provider must not raise into the host" in message


def test_the_testing_package_re_exports_explicitly_for_strict_type_checkers() -> None:
    """``mypy --strict`` refuses ``from hermes_core.testing import X`` without ``as X``."""
    import hermes_core.testing as testing

    tree = ast.parse(Path(testing.__file__).read_text(encoding="utf-8"))
    aliases = {
        alias.asname: alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module != "__future__"
        for alias in node.names
        if node.module and node.module.startswith("hermes_core.testing.")
    }
    for name in testing.__all__:
        assert aliases.get(name) == name, f"{name} is not re-exported as `import {name} as {name}`"


def test_demo_expands_a_tilde_the_shell_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["demo", "--home", "~/demo-home"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "user" / "demo-home" / "config.yaml").is_file()
    assert not (tmp_path / "~").exists()


def test_a_misspelt_capability_says_which_class_and_what_to_declare(tmp_path: Path) -> None:
    report = _author_suite(
        tmp_path,
        "class TestNotes(ProviderConformance):\n"
        '    capabilities = {"tools", "recal"}\n\n'
        "    @pytest.fixture\n"
        "    def create_provider(self):\n"
        "        return DictProvider\n\n"
        "    def test_stable_identifier_and_declared(self, provider):\n"
        "        self.declared(provider)\n",
    )
    message = report.find("test_stable_identifier_and_declared").message
    assert message.startswith("TestNotes.capabilities: unknown capability 'recal'")
    assert "Fix: declare only those names" in message
    assert "a provider must not raise" not in message


def _finished_then_busy(tmp_path: Path, seconds: float) -> tuple[subprocess.Popen[str], Path]:
    """A process that writes a finished run's report, then keeps the CPU busy *seconds*."""
    report = tmp_path / "report.json"
    code = (
        "import json, os, sys, time\n"
        "path = sys.argv[1]\n"
        "with open(path + '.partial', 'w') as f:\n"
        "    json.dump({'exitstatus': 0, 'running': None, 'results': []}, f)\n"
        "os.replace(path + '.partial', path)\n"
        "end = time.monotonic() + float(sys.argv[2])\n"
        "while time.monotonic() < end:\n"
        "    pass\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code, str(report), str(seconds)], text=True)
    return process, report


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="CPU time read from /proc")
def test_a_process_still_working_after_its_last_test_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On a loaded machine pytest's own exit can take longer than the grace: it is not idle.
    # (3 s of grace: a starved process may get no CPU for a second; the clock rule fails it.)
    monkeypatch.setattr(runner, "EXIT_GRACE", 3.0)
    process, report = _finished_then_busy(tmp_path, 6.0)
    assert runner._wait(process, report, timeout=600) == "finished"
    assert process.returncode == 0


def test_a_process_busy_long_after_its_last_test_lingered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A spinning non-daemon thread never sits idle: at the time limit it still counts as lingering.
    monkeypatch.setattr(runner, "EXIT_GRACE", 1.0)
    process, report = _finished_then_busy(tmp_path, 3600.0)
    assert runner._wait(process, report, timeout=10) == "lingered"
    assert process.returncode is not None


def test_a_process_busy_after_its_last_test_is_stopped_even_without_a_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With no timeout, a spinning thread is stopped at BUSY_EXIT_LIMIT, not waited for forever.
    monkeypatch.setattr(runner, "EXIT_GRACE", 1.0)
    monkeypatch.setattr(runner, "BUSY_EXIT_LIMIT", 4.0)
    process, report = _finished_then_busy(tmp_path, 3600.0)
    assert runner._wait(process, report, timeout=None) == "lingered"
    assert process.returncode is not None
