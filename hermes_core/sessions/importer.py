"""Importing history from JSONL files of OpenAI-style messages.

Each non-blank line is a JSON object, either

* a **message** — ``{"role": "user", "content": "..."}`` with optional
  ``tool_calls``, ``tool_call_id``, ``name`` (the speaker, or a tool result's
  tool), ``tool_name``, ``token_count``, ``finish_reason``, ``timestamp`` (epoch seconds,
  ISO 8601, or a written-out date such as ``2023/05/20 (Sat) 02:21`` or
  ``2:10 pm on 9 May, 2023``) and ``session_id``; messages without
  ``session_id`` form one session for the whole file; or
* a **conversation** — ``{"messages": [...]}`` (the fine-tuning format) with
  optional ``session_id``, ``title``, ``source``, ``model`` and ``started_at``
  (when the conversation happened; its messages without a ``timestamp`` are
  dated then, in order); one session per line. What ``sessions export`` writes
  adds ``parent_session_id`` (lineage), ``ended_at``, ``end_reason``,
  ``user_id`` and the session's other fields, and may give ``"messages": []``
  with the session's messages on the lines after it, each naming its
  ``session_id`` (a long session's line would be too long); message lines
  after a conversation line with their ``session_id`` always join it.

A LoCoMo or LongMemEval benchmark file (one JSON document) is read as its
sessions, dated and with speaker names (see :mod:`hermes_core.sessions.datasets`).

The whole file is checked before anything is written; every problem is
reported with its line number and the store writes all sessions in one
transaction, so a file is imported completely or not at all. A line longer
than :data:`MAX_LINE_BYTES` is refused as soon as it is seen (so ``/dev/zero``
is not read into memory); only a benchmark file, one JSON array, may be longer.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import itertools
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_core.errors import SessionImportError, SessionStoreError, SessionTitleError
from hermes_core.sessions.datasets import (
    DatasetError,
    dataset_layout,
    dataset_sessions,
    iter_dataset_sessions,
    iter_json_array,
)
from hermes_core.sessions.records import MAX_TIMESTAMP, valid_session_id
from hermes_core.sessions.titles import sanitize_title

__all__ = ["MAX_LINE_BYTES", "MAX_REPORTED_ERRORS", "VALID_ROLES", "read_jsonl"]

VALID_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
MAX_REPORTED_ERRORS = 20
MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest line of a JSONL file; one message or conversation is far smaller."""
_CHUNK_BYTES = 1024 * 1024
PROGRESS_LINES = 1_000
"""Lines checked between two calls of a progress callback."""
_LINE_END = re.compile(r"\r\n|\r|\n")
_NUMBER_TEXT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


class _LineError(ValueError):
    pass


_WEEKDAY_RE = re.compile(r"\s*\((?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\)\s*", re.IGNORECASE)
_DATE_FORMATS = (
    "%Y/%m/%d %H:%M",  # 2023/05/20 (Sat) 02:21, as conversational-memory datasets write it
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d",
    "%I:%M %p on %d %B, %Y",  # 2:10 pm on 9 May, 2023
    "%I:%M %p on %d %b, %Y",
    "%d %B %Y",
    "%d %B, %Y",
    "%B %d, %Y",
    "%b %d, %Y",
)
"""Dates written out by hand or by datasets, tried after ISO 8601 (local time unless zoned)."""


def _parse_date(text: str) -> datetime | None:
    text = " ".join(text.split())
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        pass
    plain = _WEEKDAY_RE.sub(" ", text).strip()
    for form in _DATE_FORMATS:
        try:
            return datetime.strptime(plain, form)
        except ValueError:
            continue
    return None


def _timestamp(value: Any) -> float | None:
    if value is None:
        return None
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        with contextlib.suppress(OverflowError):
            number = float(value)
    elif isinstance(value, str) and (parsed := _parse_date(value)) is not None:
        with contextlib.suppress(ValueError, OverflowError, OSError):  # year 1, 9999
            number = parsed.timestamp()
    elif isinstance(value, str) and _NUMBER_TEXT.fullmatch(value.strip()):
        # Not read as epoch seconds: "2023" would silently become January 1970.
        raise _LineError(
            f'"timestamp" {value!r:.60} is a number written as text: give epoch seconds as a '
            "JSON number, without quotes (1700000000), or a date such as "
            '"2023-05-20T02:21:00"'
        )
    else:
        raise _LineError(
            '"timestamp" must be epoch seconds, ISO 8601 or a date such as '
            f'"2023/05/20 (Sat) 02:21" or "2:10 pm on 9 May, 2023", got {value!r:.60}'
        )
    if number is None or not 0 < number < MAX_TIMESTAMP:
        raise _LineError(
            f'"timestamp" {value!r:.60} is not a time between 1970 and 3000 (epoch values are '
            "seconds, not milliseconds)"
        )
    return number


def _tool_calls(value: Any) -> list[Any] | None:
    """The tool calls of a message: a list, or that list as JSON text (as Hermes stores it)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            value = None
    if not isinstance(value, list):
        raise _LineError('"tool_calls" must be a list of tool calls (or that list as JSON text)')
    calls = []
    for n, call in enumerate(value):
        function = call.get("function") if isinstance(call, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(call, Mapping) or not isinstance(name or call.get("name"), str):
            raise _LineError(f'tool call #{n + 1} needs "function": {{"name": ...}}')
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        if isinstance(function, Mapping) and not isinstance(arguments, (str, type(None))):
            # OpenAI sends arguments as JSON text; an object given as is is stored so.
            text = json.dumps(arguments, ensure_ascii=False)
            call = {**call, "function": {**function, "arguments": text}}
        calls.append(call)
    return calls


def _text_field(data: Mapping[str, Any], key: str, what: str) -> str | None:
    """*data[key]* when it is text (a number becomes its digits); ``None`` when absent."""
    value = data.get(key)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise _LineError(f'"{key}" must be text ({what}), got {value!r:.40}')


def _message(data: Mapping[str, Any]) -> dict[str, Any]:
    role = data.get("role")
    if not isinstance(role, str) or role not in VALID_ROLES:
        raise _LineError(
            f'"role" must be one of {", ".join(sorted(VALID_ROLES))}, got {role!r:.40}'
        )
    content = data.get("content")
    if content is not None and not isinstance(content, (str, list)):
        kind = "an object" if isinstance(content, dict) else type(content).__name__
        raise _LineError(f'"content" must be text, a list of parts or null, got {kind}')
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise _LineError(f'"name" must be text (who spoke, or the tool), got {name!r:.40}')
    message: dict[str, Any] = {"role": role, "content": content}
    token_count = data.get("token_count")
    if token_count is not None and (
        isinstance(token_count, bool) or not isinstance(token_count, int) or token_count < 0
    ):
        raise _LineError(f'"token_count" must be a whole number of tokens, got {token_count!r:.40}')
    fields = {
        "tool_calls": _tool_calls(data.get("tool_calls")),
        "tool_call_id": _text_field(data, "tool_call_id", "the id of the call answered"),
        "tool_name": _text_field(data, "tool_name", "the tool that was run"),
        "name": name,
        "finish_reason": _text_field(data, "finish_reason", "why the model stopped"),
        "token_count": token_count,
    }
    message.update((key, value) for key, value in fields.items() if value is not None)
    stamp = _timestamp(data.get("timestamp"))
    if stamp is not None:
        message["timestamp"] = stamp
    return message


def _session_id(data: Mapping[str, Any]) -> str | None:
    """The line's ``session_id``, ``None`` when absent; an empty or unprintable one is refused."""
    value = _text_field(data, "session_id", "the conversation's id")
    if value is None:
        return None
    try:
        return valid_session_id(value, '"session_id"')
    except SessionStoreError as exc:
        raise _LineError(str(exc).rstrip(".")) from exc


def _title(data: Mapping[str, Any]) -> str | None:
    try:
        return sanitize_title(_text_field(data, "title", "the conversation's name"))
    except SessionTitleError as exc:
        raise _LineError(str(exc)) from exc


_DETAIL_TEXT = {
    "user_id": "whose conversation it is",
    "end_reason": "why it ended",
    "system_prompt": "the system prompt it ran with",
    "cwd": "the folder it ran in",
    "git_repo_root": "the git checkout it ran in",
}
_DETAIL_COUNTS = ("input_tokens", "output_tokens")


def _session_details(data: Mapping[str, Any]) -> dict[str, Any]:
    """The optional fields of a conversation line that ``sessions export`` writes.

    ``parent_session_id`` (the session it continues or was started from),
    ``ended_at``, ``end_reason``, ``user_id``, ``system_prompt``,
    ``model_config`` (an object), ``input_tokens``, ``output_tokens``, ``cwd``
    and ``git_repo_root``; absent ones are left out.
    """
    details: dict[str, Any] = {
        key: _text_field(data, key, what) for key, what in _DETAIL_TEXT.items()
    }
    parent = _text_field(data, "parent_session_id", "the id of the session it continues")
    if parent is not None:
        try:
            details["parent_session_id"] = valid_session_id(parent, '"parent_session_id"')
        except SessionStoreError as exc:
            raise _LineError(str(exc).rstrip(".")) from exc
    try:
        details["ended_at"] = _timestamp(data.get("ended_at"))
    except _LineError as exc:
        raise _LineError(str(exc).replace('"timestamp"', '"ended_at"')) from exc
    config = data.get("model_config")
    if config is not None and not isinstance(config, dict):
        raise _LineError(f'"model_config" must be a JSON object, got {config!r:.40}')
    details["model_config"] = config
    for key in _DETAIL_COUNTS:
        value = data.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise _LineError(f'"{key}" must be a whole number of tokens, got {value!r:.40}')
        details[key] = value
    return {key: value for key, value in details.items() if value is not None}


def _claim(
    first_line: dict[tuple[str, str, str | None], int],
    key: tuple[str, str],
    number: int,
    scope: str | None = None,
) -> None:
    """Note that line *number* names a session by *key* (its id or title), used once per file
    (a title once per user: *scope*)."""
    earlier = first_line.setdefault((*key, scope), number)
    if earlier != number:
        what, value = key
        raise _LineError(
            f"session {what} {value!r} is already used on line {earlier}; give each "
            f"conversation its own {what}"
        )


def _document(text: str) -> Any:
    """The file as one JSON array or object, else ``None`` (JSONL, or broken JSON)."""
    if not text.lstrip().startswith(("[", "{")):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # ValueError: a number of over 4,300 digits, too
        return None  # the line-by-line reader reports what is wrong


def _read_dataset(path: Path, data: Any, source: str) -> list[dict[str, Any]] | None:
    """The sessions of a LoCoMo or LongMemEval file (one JSON document), else ``None``."""
    try:
        sessions = dataset_sessions(data, source)
    except DatasetError as exc:
        raise SessionImportError(f"{path}: {exc}; nothing was imported.") from exc
    if sessions is None:
        if isinstance(data, list):
            raise SessionImportError(
                f"{path} is one JSON array, but not a LoCoMo or LongMemEval file; import "
                "JSONL (one message or conversation object per line) or one of those."
            )
        return None  # one message or conversation object: read as a line of JSONL
    return _dataset_messages(path, sessions)


def _dataset_messages(path: Path, sessions: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """*sessions* of a benchmark file with their messages checked and dated."""
    checked = []
    for session in sessions:
        try:
            started = _timestamp(session.pop("started_at", None))
            session["messages"] = [_message(message) for message in session["messages"]]
        except _LineError as exc:
            raise SessionImportError(
                f"{path}, session {session['id']}: {exc}; nothing was imported."
            ) from exc
        if started is not None:
            session["started_at"] = started
            for message in session["messages"]:
                message.setdefault("timestamp", started)
        checked.append(session)
    if not checked:
        raise SessionImportError(f"{path} holds no conversations; nothing to import.")
    return checked


def _stream_dataset(path: Path, source: str) -> list[dict[str, Any]] | None:
    """The sessions of a benchmark file read one sample or instance at a time, else ``None``.

    A regular file holding a JSON array whose first element is a LoCoMo sample
    or LongMemEval instance is read so, in the memory of its distinct sessions
    (not its text and a parsed copy of it); anything else (JSONL, another
    array, broken JSON, not UTF-8) is ``None``, for :func:`read_jsonl` to read
    whole and report.
    """
    try:
        with path.open(encoding="utf-8-sig") as stream:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                return None
            head = ""
            while not head and (piece := stream.read(4096)):
                head = piece.lstrip()
            if not head.startswith("["):
                return None
            stream.seek(0)
            items = iter_json_array(stream)
            first = next(items, None)
            if dataset_layout(first) is None:
                return None
            return _dataset_messages(
                path, iter_dataset_sessions(itertools.chain([first], items), source)
            )
    except DatasetError as exc:
        raise SessionImportError(f"{path}: {exc}; nothing was imported.") from exc
    except (OSError, ValueError, RecursionError):  # JSON or UTF-8 errors: reported by the reader
        return None


def _file_id(path: Path, digest: str) -> str:
    stem = "".join(c if c.isalnum() else "_" for c in path.stem)[:40] or "history"
    return f"import_{stem}_{digest[:8]}"


def _read_text(path: Path) -> tuple[str, str]:
    """The file's text and the SHA-1 of its bytes, read in chunks.

    A line longer than :data:`MAX_LINE_BYTES` is refused when it is reached,
    unless the file is a regular file holding one JSON array (a benchmark file).
    """
    digest = hashlib.sha1()
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    parts: list[str] = []
    offset = newlines = run = 0  # bytes read, line breaks seen, bytes since the last one
    unbounded: bool | None = None  # decided by the first character that is not blank
    try:
        with path.open("rb") as stream:
            regular = stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
            while chunk := stream.read(_CHUNK_BYTES):
                digest.update(chunk)
                parts.append(_decode(path, decoder, chunk, offset))
                if unbounded is None and (head := parts[-1].lstrip()):
                    unbounded = regular and head.startswith("[")
                if not unbounded:
                    first, *rest = chunk.split(b"\n")
                    lengths = [run + len(first), *map(len, rest)]
                    longest = max(lengths)
                    if longest > MAX_LINE_BYTES:
                        raise SessionImportError(
                            f"{path}: line {newlines + lengths.index(longest) + 1} is longer "
                            f"than {MAX_LINE_BYTES // 2**20} MiB; nothing was imported. Give "
                            "each message or conversation its own line, or leave out what "
                            "makes it that large (an inlined file or image)."
                        )
                    run = lengths[-1]
                    newlines += len(rest)
                offset += len(chunk)
            parts.append(_decode(path, decoder, b"", offset, final=True))
    except OSError as exc:
        raise SessionImportError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    return "".join(parts), digest.hexdigest()


def _decode(
    path: Path, decoder: codecs.IncrementalDecoder, chunk: bytes, offset: int, final: bool = False
) -> str:
    held = len(decoder.getstate()[0])  # the start of a character split between chunks
    try:
        return decoder.decode(chunk, final)
    except UnicodeDecodeError as exc:
        raise SessionImportError(
            f"{path} is not UTF-8 text (byte {offset - held + exc.start}); save it as UTF-8 "
            "JSONL and retry."
        ) from exc


def _without_overrides(
    path: Path, dataset: list[dict[str, Any]], session_id: str | None, title: str | None
) -> list[dict[str, Any]]:
    """A benchmark file's sessions; --session-id and --title cannot rename them."""
    if session_id is not None or title:
        raise SessionImportError(
            f"{path} is a benchmark file whose sessions carry their own ids and titles; "
            "import it without --session-id and --title."
        )
    return dataset


def read_jsonl(
    path: Path,
    *,
    source: str = "import",
    session_id: str | None = None,
    title: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Sessions (for ``SessionStore.import_sessions``) read from *path*.

    *progress* is called with (lines read, lines in all) as the lines are checked.

    *session_id* and *title* name the session of the messages that name none
    (message lines without ``session_id``) or, in a file of one conversation,
    that conversation, replacing what the file gives; a file of several
    conversations that all name themselves is refused with them.
    Raises :class:`~hermes_core.errors.SessionImportError` naming every bad line
    (up to 20) when the file cannot be imported as a whole.
    """
    try:
        if session_id is not None:
            valid_session_id(session_id, "--session-id")
    except SessionStoreError as exc:
        raise SessionImportError(str(exc)) from exc
    try:
        title = sanitize_title(title)
    except SessionTitleError as exc:
        raise SessionImportError(f"--title: {exc}") from exc
    dataset = _stream_dataset(path, source)
    if dataset is not None:
        return _without_overrides(path, dataset, session_id, title)
    text, digest = _read_text(path)
    base_id = _file_id(path, digest)
    loose: dict[str, list[dict[str, Any]]] = {}
    conversations: list[dict[str, Any]] = []
    named: dict[str, dict[str, Any]] = {}  # conversations by their line's "session_id"
    first_line: dict[tuple[str, str, str | None], int] = {}
    errors: list[str] = []
    unnamed = False  # some messages name no session: they form the base_id session
    document = _document(text)
    dataset = None if document is None else _read_dataset(path, document, source)
    if dataset is not None:
        return _without_overrides(path, dataset, session_id, title)
    # One object may be pretty-printed over several lines; it is still one line of JSONL.
    # Lines end at \n, \r\n or \r only: str.splitlines() would also cut at U+2028, U+2029
    # and U+0085, which JSON lets a string hold as they are (json.dumps(ensure_ascii=False)).
    lines = [json.dumps(document)] if isinstance(document, dict) else _LINE_END.split(text)
    for number, line in enumerate(lines, start=1):
        if progress is not None and number % PROGRESS_LINES == 0:
            progress(number, len(lines))
        if not line.strip():
            continue
        try:
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise _LineError(f"not valid JSON ({exc.msg} at column {exc.colno})") from exc
            except RecursionError as exc:
                raise _LineError("JSON nested too deeply to read") from exc
            except ValueError as exc:  # Python reads integers of at most 4,300 digits
                raise _LineError(
                    f"a number too long to read ({exc}); write it as text or leave it out"
                ) from exc
            if not isinstance(data, dict):
                raise _LineError(f"expected a JSON object, got {type(data).__name__}")
            if "messages" in data:
                items = data["messages"]
                if not isinstance(items, list) or not (items or "session_id" in data):
                    raise _LineError(
                        '"messages" must be a non-empty list (or [] with a "session_id": '
                        "a session whose messages follow on lines of their own, or has none)"
                    )
                messages = []
                for n, item in enumerate(items, start=1):
                    if not isinstance(item, dict):
                        raise _LineError(f"message #{n} is not a JSON object")
                    try:
                        messages.append(_message(item))
                    except _LineError as exc:
                        raise _LineError(f"message #{n}: {exc}") from exc
                conversation_id = _session_id(data) or f"{base_id}_{number}"
                conversation_title = _title(data)
                conversation: dict[str, Any] = {
                    "id": conversation_id,
                    "title": conversation_title,
                    "source": _text_field(data, "source", "where it happened") or source,
                    "model": _text_field(data, "model", "the model's name"),
                    **_session_details(data),
                    "messages": messages,
                }
                try:
                    started = _timestamp(data.get("started_at"))
                except _LineError as exc:
                    raise _LineError(str(exc).replace('"timestamp"', '"started_at"')) from exc
                if started is not None:
                    conversation["started_at"] = started
                    for message in messages:
                        message.setdefault("timestamp", started)  # the store keeps their order
                _claim(first_line, ("id", conversation_id), number)
                if conversation_title is not None:
                    scope = conversation.get("user_id")
                    _claim(first_line, ("title", conversation_title), number, scope)
                conversations.append(conversation)
                named[conversation_id] = conversation
            else:
                owner = _session_id(data) or base_id
                unnamed = unnamed or owner == base_id
                message = _message(data)
                if owner in named:  # a message of a conversation given on an earlier line
                    started = named[owner].get("started_at")
                    if started is not None:
                        message.setdefault("timestamp", started)
                    named[owner]["messages"].append(message)
                    continue
                if owner not in loose:
                    _claim(first_line, ("id", owner), number)
                loose.setdefault(owner, []).append(message)
        except _LineError as exc:
            errors.append(f"line {number}: {exc}")
            if len(errors) >= MAX_REPORTED_ERRORS:
                errors.append("(stopped after 20 errors)")
                break
    if progress is not None:
        progress(len(lines), len(lines))
    if errors:
        raise SessionImportError(
            f"{path} has bad lines; nothing was imported.\n  "
            + "\n  ".join(errors)
            + '\nEach line must be a JSON object: an OpenAI message with "role" and '
            '"content", or a conversation {"messages": [...]}. Fix them and import again.'
        )
    sessions = [
        {"id": owner, "source": source, "messages": messages} for owner, messages in loose.items()
    ]
    sessions.extend(conversations)
    if not sessions:
        raise SessionImportError(f"{path} holds no messages; nothing to import.")
    if session_id is not None or title:
        if not unnamed and len(sessions) > 1:
            raise SessionImportError(
                f"{path} holds {len(sessions)} conversations, each naming its own session, but "
                "--session-id and --title name one; nothing was imported. Import it without "
                'them (each keeps the "session_id" and "title" the file gives it), or split '
                "the file."
            )
        target = next(s for s in sessions if s["id"] == base_id) if unnamed else sessions[0]
        if session_id is not None:
            target["id"] = session_id
        if title:
            target["title"] = title
    return sessions
