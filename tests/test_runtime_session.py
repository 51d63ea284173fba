"""Full sessions through AgentSession against a real model server on loopback.

Covers the frozen system prompt (L0), prefetch fencing, hook order and
arguments, egress redaction, tool routing and the session boundaries.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from runtime_kit import NOTE_TOOL, RecordingProvider, build_session, system_prompts

from hermes_core.errors import ConfigError, LLMNotConfiguredError
from hermes_core.manager import MemoryManager
from hermes_core.plugins import load_builtin_provider
from hermes_core.runtime.session import DELEGATION_SOURCE, AgentSession, RuntimeSettings
from hermes_core.sessions import SessionStore
from hermes_core.testing.openai_fake import FakeOpenAIServer, FakeReply, tool_call

SECRET = "sk-proj-" + "Zq8Lm2Xv9Tb4Nw7Rc1Ks5Jd3Hf6"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def memory_call(target: str, content: str, call_id: str = "") -> FakeReply:
    args = {"action": "add", "target": target, "content": content}
    return FakeReply(tool_calls=[tool_call("memory", args, call_id)])


def stored(home: Path, session_id: str) -> list[dict[str, object]]:
    store = SessionStore(home / "state.db", read_only=True)
    try:
        return store.get_messages_as_conversation(session_id)
    finally:
        store.close()


def row(home: Path, session_id: str) -> dict[str, object]:
    store = SessionStore(home / "state.db", read_only=True)
    try:
        found = store.get_session(session_id)
        assert found is not None
        return found
    finally:
        store.close()


# ---------------------------------------------------------------- L0: the frozen prompt


def test_system_prompt_is_byte_identical_for_every_call_despite_memory_writes(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    server.script(
        memory_call("user", "The user is Ada Lovelace"),
        FakeReply(content="Saved."),
        memory_call("memory", "Staging deploys listen on port 8443"),
        FakeReply(content="Noted."),
        FakeReply(content="A plain answer."),
    )
    with build_session(hermes_home, server) as session:
        frozen = session.system_prompt
        first = session.run_turn("I am Ada, remember that")
        session.run_turn("remember the staging port")
        session.run_turn("what next?")
        assert session.system_prompt == frozen
        session_id = session.session_id
    assert json.loads(first.tool_runs[0].result)["success"] is True
    assert "Ada Lovelace" in (hermes_home / "memories" / "USER.md").read_text(encoding="utf-8")
    assert "8443" in (hermes_home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    prompts = system_prompts(server)
    assert len(prompts) == 5
    assert set(prompts) == {frozen}
    assert "Ada Lovelace" not in frozen
    assert len({json.dumps(r.body["tools"]) for r in server.chat_requests}) == 1
    assert row(hermes_home, session_id)["system_prompt"] == frozen

    server.script(FakeReply(content="hello again"))
    with build_session(hermes_home, server) as next_session:
        assert "Ada Lovelace" in next_session.system_prompt
        assert "8443" in next_session.system_prompt
        next_session.run_turn("hi")
    assert system_prompts(server)[-1] == next_session.system_prompt


def test_new_session_rebuilds_the_prompt_with_the_new_snapshot(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    recorder = RecordingProvider()
    server.script(
        memory_call("user", "Prefers metric units"),
        FakeReply(content="Saved."),
        FakeReply(content="fresh start"),
    )
    with build_session(hermes_home, server, recorder) as session:
        old_id = session.session_id
        session.run_turn("remember I use metric units")
        assert "metric" not in session.system_prompt
        transcript = session.messages
        new_id = session.new_session(title="Second")
        assert new_id != old_id
        assert "Prefers metric units" in session.system_prompt
        assert session.messages == []
        session.run_turn("hello")
        assert server.chat_requests[-1].messages[1:] == [{"role": "user", "content": "hello"}]
    assert row(hermes_home, old_id)["end_reason"] == "new_session"
    assert row(hermes_home, new_id)["title"] == "Second"
    hooks = recorder.hooks()
    end = hooks.index("on_session_end")
    assert hooks[end + 1] == "on_session_switch"
    (ended,), _ = recorder.calls_to("on_session_end")[0]
    assert [m["role"] for m in ended] == [m["role"] for m in transcript]
    args, kwargs = recorder.calls_to("on_session_switch")[0]
    assert args == (new_id,)
    assert kwargs == {"parent_session_id": old_id, "reset": True, "reason": "new_session"}


def test_identity_and_context_files_enter_the_prompt(
    hermes_home: Path, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    (hermes_home / "SOUL.md").write_text("You are Quill, an exacting editor.")
    (tmp_path / "AGENTS.md").write_text("Run `make check` before committing.")
    settings = RuntimeSettings(working_dir=tmp_path, system_message="HOST RULES")
    with build_session(hermes_home, server, settings=settings) as session:
        prompt = session.system_prompt
    assert prompt.startswith("You are Quill, an exacting editor.")
    assert prompt.index("HOST RULES") < prompt.index("make check")
    assert "Conversation started:" in prompt


# ---------------------------------------------------------------- prefetch fencing


@pytest.mark.parametrize("stream", [True, False])
def test_prefetch_reaches_the_api_copy_only(
    hermes_home: Path, server: FakeOpenAIServer, stream: bool
) -> None:
    recorder = RecordingProvider(recall="RECALL-7f3a: the user drinks green tea")
    echo = "<memory-context>\nRECALL-7f3a echoed\n</memory-context>\nTry green tea."
    server.script(
        FakeReply(content=echo, chunk_size=5),
        FakeReply(content="Fine."),
        FakeReply(content="Soup."),
    )
    settings = RuntimeSettings(stream=stream)
    with build_session(hermes_home, server, recorder, settings=settings) as session:
        chunks: list[str] = []
        first = session.run_turn("What should I drink?", on_text=chunks.append)
        second = session.run_turn("ok")
        third = session.run_turn("And for dinner?")
        session_id = session.session_id
    shown = "".join(chunks)
    assert "Try green tea." in shown
    assert "RECALL-7f3a" not in shown and "memory-context" not in shown
    assert first.content == shown
    assert "RECALL-7f3a: the user drinks green tea" in first.recalled
    assert second.recalled == ""
    assert third.recalled == first.recalled

    requests = server.chat_requests
    api_user = requests[0].messages[-1]["content"]
    assert api_user.startswith("What should I drink?\n\n<memory-context>\n")
    assert "RECALL-7f3a: the user drinks green tea" in api_user
    assert requests[1].messages[-1]["content"] == "ok"  # trivial: no recall
    assert requests[1].messages[1] == requests[0].messages[1]  # replayed byte for byte
    assert requests[2].messages[1] == requests[0].messages[1]
    assert [args for args, _ in recorder.calls_to("prefetch")] == [
        ("What should I drink?",),
        ("And for dinner?",),
    ]
    transcript = stored(hermes_home, session_id)
    assert "RECALL-7f3a" not in json.dumps(transcript)
    assert "memory-context" not in json.dumps(transcript)
    assert transcript[0] == {"role": "user", "content": "What should I drink?"}
    assert transcript[1]["content"] == shown.strip()


# ---------------------------------------------------------------- hook order and arguments


def test_hooks_run_in_lifecycle_order_with_their_arguments(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    recorder = RecordingProvider(recall="something recalled", block="RECORDER-BLOCK")
    server.script(
        FakeReply(
            tool_calls=[
                tool_call("memory", {"action": "add", "target": "user", "content": "likes tea"}),
                tool_call("recorder_note", {"text": "n1"}),
            ]
        ),
        FakeReply(content="done"),
    )
    session = build_session(hermes_home, server, recorder, title="Hooks")
    session_id = session.start()
    assert recorder.hooks() == ["initialize", "system_prompt_block"]
    ((args, kwargs),) = recorder.calls_to("initialize")
    assert args == (session_id,)
    assert kwargs == {
        "hermes_home": str(hermes_home),
        "platform": "cli",
        "agent_context": "primary",
        "agent_identity": "default",
        "agent_workspace": "hermes",
        "session_title": "Hooks",
    }
    assert "RECORDER-BLOCK" in session.system_prompt
    assert [t["name"] for t in session.tool_schemas] == [
        "memory",
        "session_search",
        NOTE_TOOL["name"],
    ]

    result = session.run_turn("I like tea, remember it")
    assert session.manager.flush_pending(5)
    assert recorder.hooks()[2:] == [
        "on_turn_start",
        "prefetch",
        "on_memory_write",
        "handle_tool_call",
        "on_turn_end",
        "sync_turn",
        "queue_prefetch",
    ]
    ((args, kwargs),) = recorder.calls_to("on_turn_start")
    assert args == (1, "I like tea, remember it")
    assert kwargs["model"] == "fake-model" and kwargs["platform"] == "cli"
    assert kwargs["tool_count"] == 3 and kwargs["remaining_tokens"] > 0
    assert recorder.calls_to("prefetch") == [
        (("I like tea, remember it",), {"session_id": session_id})
    ]
    ((args, kwargs),) = recorder.calls_to("on_memory_write")
    assert args == ("add", "user", "likes tea")
    assert recorder.calls_to("handle_tool_call") == [(("recorder_note", {"text": "n1"}), {})]
    assert recorder.calls_to("on_turn_end") == [((1,), {"session_id": session_id})]
    ((args, kwargs),) = recorder.calls_to("sync_turn")
    assert args == ("I like tea, remember it", "done")
    assert kwargs["session_id"] == session_id
    assert kwargs["messages"] == session.messages
    assert recorder.calls_to("queue_prefetch") == [
        (("I like tea, remember it",), {"session_id": session_id})
    ]
    assert [r.name for r in result.tool_runs] == ["memory", "recorder_note"]

    transcript = session.messages
    session.close()
    assert recorder.hooks()[-2:] == ["on_session_end", "shutdown"]
    (ended,), _ = recorder.calls_to("on_session_end")[0]
    assert ended == transcript
    assert [m["role"] for m in transcript] == ["user", "assistant", "tool", "tool", "assistant"]
    assert row(hermes_home, session_id)["end_reason"] == "user_exit"
    session.close()  # idempotent
    assert recorder.hooks().count("shutdown") == 1


def test_second_turn_numbers_and_tool_results_reach_the_model(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    recorder = RecordingProvider()
    server.script(
        FakeReply(tool_calls=[tool_call("recorder_note", {"text": "x"}, "c-1")]),
        FakeReply(content="first"),
        FakeReply(content="second"),
    )
    with build_session(hermes_home, server, recorder) as session:
        session.run_turn("turn one")
        session.run_turn("turn two")
    assert [args[0] for args, _ in recorder.calls_to("on_turn_start")] == [1, 2]
    tool_message = server.chat_requests[1].messages[-1]
    assert tool_message == {
        "role": "tool",
        "tool_call_id": "c-1",
        "content": json.dumps({"success": True, "stored": {"text": "x"}}),
    }


def test_everything_handed_to_providers_is_redacted(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    recorder = RecordingProvider(pre_compress="kept")
    server.script(
        FakeReply(tool_calls=[tool_call("recorder_note", {"text": f"key {SECRET}"})]),
        FakeReply(content=f"I will not repeat {SECRET}"),
    )
    with build_session(hermes_home, server, recorder) as session:
        session.run_turn(f"my key is {SECRET}, keep it safe")
        session.manager.flush_pending(5)
        session.delegate(f"check {SECRET}")
    handed = json.dumps(recorder.calls, default=str)
    for hook in (
        "on_turn_start",
        "prefetch",
        "handle_tool_call",
        "sync_turn",
        "queue_prefetch",
        "on_session_end",
        "on_delegation",
    ):
        assert recorder.calls_to(hook), hook
    assert SECRET not in handed
    assert "[redacted]" in handed
    # the model (not a provider) still saw the user's words as typed
    assert SECRET in server.chat_requests[0].messages[-1]["content"]


# ---------------------------------------------------------------- tools


def test_unknown_tools_and_bad_arguments_are_reported_to_the_model(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    server.script(
        FakeReply(
            tool_calls=[
                tool_call("no_such_tool", {}, "c1"),
                tool_call("memory", '{"action": "add", "content": ', "c2"),
            ]
        ),
        FakeReply(content="sorry"),
    )
    with build_session(hermes_home, server) as session:
        result = session.run_turn("do things")
    unknown, malformed = (json.loads(r.result) for r in result.tool_runs)
    assert "Unknown tool 'no_such_tool'" in unknown["error"]
    assert "memory" in unknown["error"]
    assert "malformed arguments for tool 'memory'" in malformed["error"]
    results = [m for m in server.chat_requests[1].messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == ["c1", "c2"]


def test_tool_rounds_are_bounded(hermes_home: Path, server: FakeOpenAIServer) -> None:
    loop = FakeReply(tool_calls=[tool_call("session_search", {"query": "again"})])
    server.script(loop, loop, loop)
    settings = RuntimeSettings(max_tool_iterations=2)
    with build_session(hermes_home, server, settings=settings) as session:
        result = session.run_turn("loop forever")
    assert result.model_calls == 3
    assert len(result.tool_runs) == 2
    assert "tools" not in server.chat_requests[-1].body  # last round: answer without tools
    assert result.content == ""  # the third scripted reply's calls are ignored, no text
    assert session.messages[-1]["role"] == "assistant"


def test_session_search_finds_an_earlier_session(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    server.script(FakeReply(content="Blue-green on port 8443, noted."))
    with build_session(hermes_home, server, title="Deploy talk") as first:
        first.run_turn("Our staging deploy uses blue-green releases on port 8443.")
        earlier = first.session_id
    server.script(
        FakeReply(tool_calls=[tool_call("session_search", {"query": "blue-green staging"})]),
        FakeReply(content="Found it."),
    )
    with build_session(hermes_home, server) as second:
        result = second.run_turn("How did we deploy staging last time?")
    assert earlier in result.tool_runs[0].result


# ---------------------------------------------------------------- delegation


def test_delegation_creates_a_marked_child_and_notifies_providers(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    recorder = RecordingProvider()
    server.script(FakeReply(content="the answer is 42"))
    with build_session(hermes_home, server, recorder) as session:
        answer = session.delegate("compute the answer")
        parent = session.session_id
    assert answer == "the answer is 42"
    ((args, kwargs),) = recorder.calls_to("on_delegation")
    assert args == ("compute the answer", "the answer is 42")
    child = kwargs["child_session_id"]
    child_row = row(hermes_home, child)
    assert child_row["parent_session_id"] == parent
    assert child_row["source"] == DELEGATION_SOURCE
    assert child_row["end_reason"] == "delegation_complete"
    assert json.loads(str(child_row["model_config"])) == {"_delegate_from": parent}
    assert [m["role"] for m in stored(hermes_home, child)] == ["user", "assistant"]


def test_without_a_model_run_turn_and_delegate_say_what_to_configure(hermes_home: Path) -> None:
    """Both need model.base_url and model.model; setting base_url alone is not enough."""
    manager = MemoryManager()
    manager.add_provider(load_builtin_provider())
    store = SessionStore(hermes_home / "state.db")
    with AgentSession(manager, store, None, hermes_home=hermes_home) as session:
        for call in (lambda: session.run_turn("hello"), lambda: session.delegate("look it up")):
            with pytest.raises(LLMNotConfiguredError) as caught:
                call()
            message = str(caught.value)
            assert "model.base_url" in message and "model.model" in message, message
            assert "HERMES_MODEL_BASE_URL" in message, message


# ---------------------------------------------------------------- open() from config


def test_open_builds_everything_from_hermes_home(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    plugin = hermes_home / "plugins" / "notes"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(
        "from hermes_core.provider import MemoryProvider\n\n"
        "class NotesProvider(MemoryProvider):\n"
        "    name = 'notes'\n"
        "    def is_available(self):\n        return True\n"
        "    def initialize(self, session_id, **kwargs):\n        pass\n"
        "    def get_tool_schemas(self):\n        return []\n"
        "    def system_prompt_block(self):\n        return 'NOTES PROVIDER ACTIVE'\n"
    )
    (hermes_home / "config.yaml").write_text(
        f"model:\n  base_url: {server.base_url}\n  model: fake-model\nmemory:\n  provider: notes\n"
    )
    server.script(FakeReply(content="configured"))
    with AgentSession.open(title="From config") as session:
        assert session.manager.provider_names == ["builtin", "notes"]
        assert "NOTES PROVIDER ACTIVE" in session.system_prompt
        assert session.run_turn("hello").content == "configured"
        assert session.store.path == hermes_home / "state.db"


def test_repeated_tool_call_ids_are_made_unique(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    search = FakeReply(tool_calls=[tool_call("session_search", {"query": "x"})])  # id call_0
    server.script(search, search, FakeReply(content="done"))
    with build_session(hermes_home, server) as session:
        session.run_turn("search twice")
    sent = server.chat_requests[-1].messages
    call_ids = [c["id"] for m in sent for c in m.get("tool_calls") or []]
    result_ids = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
    assert call_ids[0] == "call_0"
    assert len(set(call_ids)) == 2
    assert result_ids == call_ids


def test_untitled_sessions_take_their_first_message_as_title(
    hermes_home: Path, server: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    ids = []
    for _ in range(2):
        with build_session(hermes_home, server) as session:
            session.run_turn("  hi   there ")
            ids.append(session.session_id)
    assert [row(hermes_home, i)["title"] for i in ids] == ["hi there", None]
    assert not [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]


@pytest.mark.parametrize(
    ("profile", "settings", "identity"),
    [
        ("profiles/work", RuntimeSettings(), "work"),
        ("plain", RuntimeSettings(), "default"),
        (
            "profiles/work",
            RuntimeSettings.from_config({"runtime": {"agent_identity": "ops"}}),
            "ops",
        ),
    ],
)
def test_providers_get_the_profile_as_agent_identity(
    tmp_path: Path,
    server: FakeOpenAIServer,
    profile: str,
    settings: RuntimeSettings,
    identity: str,
) -> None:
    home = tmp_path / profile
    home.mkdir(parents=True)
    recorder = RecordingProvider()
    session = build_session(home, server, recorder, settings=settings)
    session.start()
    ((_, kwargs),) = recorder.calls_to("initialize")
    assert kwargs["agent_identity"] == identity
    assert kwargs["agent_workspace"] == "hermes"  # the name Hermes gives, not a directory
    assert "cwd" not in kwargs  # no working directory configured
    session.close()


def test_providers_get_the_working_directory_as_cwd_and_a_configured_workspace(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    settings = RuntimeSettings.from_config(
        {"runtime": {"agent_workspace": " team "}}, working_dir=tmp_path
    )
    recorder = RecordingProvider()
    session = build_session(tmp_path / "home", server, recorder, settings=settings)
    session.start()
    ((_, kwargs),) = recorder.calls_to("initialize")
    assert (kwargs["agent_workspace"], kwargs["cwd"]) == ("team", str(tmp_path))
    session.close()
    for bad in ("", "  ", 7):
        with pytest.raises(ConfigError, match=r"runtime\.agent_workspace"):
            RuntimeSettings.from_config({"runtime": {"agent_workspace": bad}})


def test_the_session_row_records_where_it_ran(tmp_path: Path, server: FakeOpenAIServer) -> None:
    # Hermes' sessions carry cwd and git_repo_root; plugins scope project memory by them
    # (local_rag reads them from state.db).
    checkout = tmp_path / "repo"
    (checkout / ".git").mkdir(parents=True)
    (checkout / "src" / "app").mkdir(parents=True)
    settings = RuntimeSettings(working_dir=checkout / "src" / "app")
    session = build_session(tmp_path / "home", server, settings=settings)
    session.start()
    row = session.store.get_session(session.session_id)
    assert row is not None
    assert row["cwd"] == str(checkout / "src" / "app")
    assert row["git_repo_root"] == str(checkout)
    session.close()
    outside = build_session(tmp_path / "home2", server, settings=RuntimeSettings())
    outside.start()
    row = outside.store.get_session(outside.session_id)
    assert row is not None and row["cwd"] is None and row["git_repo_root"] is None
    outside.close()


def test_a_gateway_host_passes_its_chat_context_to_providers(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    context = {"user_name": "Ana", "chat_id": "c-42", "gateway_session_key": "tg:dm:42"}
    settings = RuntimeSettings(platform="telegram", user_id="u1", provider_context=context)
    recorder = RecordingProvider()
    session = build_session(tmp_path / "home", server, recorder, settings=settings)
    session.start()
    ((_, kwargs),) = recorder.calls_to("initialize")
    assert {key: kwargs[key] for key in context} == context
    assert (kwargs["platform"], kwargs["user_id"]) == ("telegram", "u1")
    session.close()


@pytest.mark.parametrize(
    ("context", "problem"),
    [
        ({"user_id": "u2"}, "cannot set 'user_id'"),
        ({"agent_workspace": "x"}, "cannot set 'agent_workspace'"),
        ({"chat id": "c"}, "must be a keyword name"),
        ({"chat_id": 42}, r"provider_context\['chat_id'\] must be text"),
    ],
)
def test_provider_context_cannot_replace_what_the_runtime_gives(
    context: dict[str, object], problem: str
) -> None:
    with pytest.raises(ConfigError, match=problem):
        RuntimeSettings(provider_context=context)  # type: ignore[arg-type]


def test_agent_identity_must_be_text() -> None:
    with pytest.raises(ConfigError, match=r"runtime\.agent_identity"):
        RuntimeSettings.from_config({"runtime": {"agent_identity": 7}})


def test_a_working_directory_named_in_another_encoding_is_recorded_readably(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    # A Latin-1 folder name reaches Python as lone surrogates, which SQLite cannot store.
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/proj_caf\xe9"))
    (odd / ".git").mkdir(parents=True)
    session = build_session(tmp_path / "home", server, settings=RuntimeSettings(working_dir=odd))
    session.start()
    row = session.store.get_session(session.session_id)
    assert row is not None
    assert row["cwd"] == str(tmp_path) + "/proj_caf\ufffd"
    assert row["git_repo_root"] == row["cwd"]
    session.close()


def test_a_conversation_deleted_while_in_use_goes_on_from_the_next_message(
    hermes_home: Path, server: FakeOpenAIServer
) -> None:
    # Before: every later turn failed with "Session … does not exist; call
    # create_session() first" once `hermes-memory sessions delete` removed the chat.
    server.script(FakeReply(content="first"), FakeReply(content="second"))
    with build_session(hermes_home, server, title="Shed plans") as session:
        session.run_turn("The vault code is 4417.")
        with SessionStore(hermes_home / "state.db") as other:  # another process
            assert other.delete_conversation(session.session_id) == [session.session_id]
        assert session.run_turn("Let's talk about the shed roof.").content == "second"
        sid = session.session_id
    kept = stored(hermes_home, sid)
    assert [m["content"] for m in kept] == ["Let's talk about the shed roof.", "second"]
    assert row(hermes_home, sid)["title"] == "Shed plans"
