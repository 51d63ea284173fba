"""Messages and sessions as rows of ``state.db``: validating and encoding what is written,
decoding what is read."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import time
import unicodedata
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hermes_core.errors import SessionStoreError
from hermes_core.fencing import sanitize_context

log = logging.getLogger(__name__)

LEGACY_JSON_PREFIX = "\x00json:"
"""How Hermes Agent stores list/dict message content in ``messages.content``."""


def scrub(text: str) -> str:
    """Replace lone surrogates, which UTF-8 cannot encode, with U+FFFD (and say so)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        log.warning("Stored text had unpaired surrogates; each became U+FFFD")
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    return text


def _text_parts(parts: Any) -> str:
    """The text of OpenAI multimodal content (a list of parts, or one part)."""
    items = parts if isinstance(parts, list) else [parts]
    texts = []
    for item in items:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, Mapping) and isinstance(item.get("text"), str):
            texts.append(item["text"])
    return "\n".join(texts)


def encode_content(content: Any) -> tuple[str | None, str | None]:
    """(``content``, ``content_parts``) columns for a message's content."""
    if content is None:
        return None, None
    if isinstance(content, str):
        return scrub(content), None
    if isinstance(content, (list, dict)):
        return scrub(_text_parts(content)), scrub(json.dumps(content, ensure_ascii=False))
    return scrub(str(content)), None


def encode_tool_calls(tool_calls: Any) -> str | None:
    """``tool_calls`` as JSON text; a JSON string is kept as is (never double-encoded)."""
    if tool_calls is None or tool_calls == [] or tool_calls == "":
        return None
    if isinstance(tool_calls, str):
        return scrub(tool_calls)
    return scrub(json.dumps(tool_calls, ensure_ascii=False, default=str))


def _decode_json(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value


def _count_calls(role: str, tool_calls: Any) -> int:
    if role != "assistant" or tool_calls is None:
        return 0
    value = _decode_json(tool_calls) if isinstance(tool_calls, str) else tool_calls
    return len(value) if isinstance(value, list) else 1


_EARLIER_CALLS = 20
"""How many of a session's last tool-calling assistant messages name a result's call."""


def name_results_of_earlier_calls(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Give nameless tool results in *rows* the name of a call stored earlier (in place).

    A host that stores a reply's tool calls and then each result as it comes
    (one ``append_message`` each) leaves the calls out of the result's batch.
    """
    wanting = [n for n, row in enumerate(rows) if row[1] == "tool" and row[6] is None and row[4]]
    if not wanting:
        return
    called: dict[str, str] = {}
    for (tool_calls,) in conn.execute(
        "SELECT tool_calls FROM messages WHERE session_id = ? AND role = 'assistant' "
        f"AND tool_calls IS NOT NULL ORDER BY id DESC LIMIT {_EARLIER_CALLS}",
        (rows[0][0],),
    ):
        called = {**called_tools(tool_calls), **called}  # the latest call with an id wins
    for n in wanting:
        if rows[n][4] in called:
            rows[n] = (*rows[n][:6], called[rows[n][4]], *rows[n][7:])


def not_utf8_error(exc: UnicodeEncodeError) -> SessionStoreError:
    """The error for text handed to a store that UTF-8 cannot encode (a lone surrogate)."""
    return SessionStoreError(
        f"{exc.object[:60]!r} is not valid UTF-8 text (it holds {exc.object[exc.start]!r}, "
        "what Python makes of a byte that is not UTF-8); pass text decoded from UTF-8."
    )


def called_tools(tool_calls: Any) -> dict[str, str]:
    """``call id -> tool name`` of an assistant message's tool calls."""
    value = _decode_json(tool_calls) if isinstance(tool_calls, str) else tool_calls
    names = {}
    for call in value if isinstance(value, list) else []:
        if not isinstance(call, Mapping):
            continue
        function = call.get("function")
        name = function.get("name") if isinstance(function, Mapping) else None
        name = name or call.get("name")
        if isinstance(call.get("id"), str) and isinstance(name, str) and name:
            names[call["id"]] = name
    return names


MAX_TIMESTAMP = 32503680000.0
"""Epoch seconds of the year 3000: later times (or milliseconds) are not dates of a chat."""


def sane_timestamp(value: Any, fallback: float) -> float:
    """*value* when it is a plausible date in epoch seconds, else *fallback*."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return fallback
    try:
        number = float(value)
    except OverflowError:  # an int beyond any float
        return fallback
    return number if 0 < number < MAX_TIMESTAMP else fallback


def _label(message: Mapping[str, Any], key: str) -> str | None:
    """A short text field of *message* (a number becomes its digits); ``None`` when absent."""
    value = message.get(key)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise SessionStoreError(
        f"A message's {key} must be text, got {type(value).__name__}: {dict(message)!r:.200}"
    )


_UNSAFE_ID_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
"""Control characters (a terminal would act on them) and text that is not UTF-8."""


def valid_session_id(value: Any, what: str = "A session id") -> str:
    """*value* when it is usable as a session id: non-blank text, no control characters,
    nothing invisible (zero-width, bidi and other format characters)."""
    if not isinstance(value, str) or not value.strip():
        raise SessionStoreError(f"{what} must be non-empty text, got {value!r:.60}.")
    bad = _UNSAFE_ID_CHARS.search(value)
    if bad is not None:
        raise SessionStoreError(
            f"{what} {value!r:.60} holds {bad.group()!r}, a control character or text that is "
            "not UTF-8; use printable text such as letters, digits, '-' and '_'."
        )
    if not value.isascii():
        for char in value:
            if unicodedata.category(char) == "Cf":
                # ``ab\u200bc`` prints as ``abc``; U+202E turns ``chat\u202eexe.ftp`` around.
                raise SessionStoreError(
                    f"{what} {value!r:.60} holds U+{ord(char):04X}, an invisible (format or "
                    "bidi) character that would make it look like another id; use printable "
                    "text such as letters, digits, '-' and '_'."
                )
    return value


def encode_messages(
    session_id: str, messages: Iterable[Mapping[str, Any]]
) -> tuple[list[tuple[Any, ...]], int]:
    """``messages`` rows for *messages* of one session, and how many tool calls they make.

    Refuses (:class:`SessionStoreError`) a message without a role or with a field of
    the wrong type; timestamps that are no date become now, and each row is dated
    after the one before.
    """
    rows: list[tuple[Any, ...]] = []
    calls = 0
    called: dict[str, str] = {}  # call id -> tool name, for results that omit the name
    last = 0.0
    now = time.time()
    for message in messages:
        role = message.get("role")
        if not isinstance(role, str) or not role:
            raise SessionStoreError(f"Message without a role: {dict(message)!r:.200}")
        content, parts = encode_content(message.get("content"))
        tool_calls = encode_tool_calls(message.get("tool_calls"))
        calls += _count_calls(role, message.get("tool_calls"))
        stamp = sane_timestamp(message.get("timestamp"), now)
        stamp = max(stamp, last + 1e-6) if rows else stamp
        last = stamp
        name = message.get("name")
        if name is not None and not isinstance(name, str):
            raise SessionStoreError(
                f"A message's name must be text (who spoke it), got {type(name).__name__}: "
                f"{dict(message)!r:.200}"
            )
        tool_call_id, tool_name, finish_reason = (
            _label(message, key) for key in ("tool_call_id", "tool_name", "finish_reason")
        )
        if role == "assistant" and message.get("tool_calls"):
            called.update(called_tools(message.get("tool_calls")))
        if role == "tool":
            tool_name, name = tool_name or name or called.get(tool_call_id or ""), None
        token_count = message.get("token_count")
        if token_count is not None and (
            not isinstance(token_count, (int, float)) or isinstance(token_count, bool)
        ):
            raise SessionStoreError(
                f"A message's token_count must be a number, got "
                f"{type(token_count).__name__}: {dict(message)!r:.200}"
            )
        rows.append(
            (
                session_id,
                role,
                content,
                parts,
                tool_call_id,
                tool_calls,
                tool_name,
                stamp,
                token_count,
                finish_reason,
                name or None,
            )
        )
    return rows, calls


_TEXT_COLUMNS = frozenset(
    {
        # messages
        "role",
        "content",
        "content_parts",
        "tool_call_id",
        "tool_calls",
        "tool_name",
        "name",
        "finish_reason",
        # sessions
        "id",
        "session_id",
        "source",
        "user_id",
        "model",
        "model_config",
        "system_prompt",
        "parent_session_id",
        "end_reason",
        "title",
        "cwd",
        "git_repo_root",
    }
)
"""Columns that hold text; another program may have stored bytes (a BLOB) in them."""


def row_dict(cursor: sqlite3.Cursor, row: Sequence[Any]) -> dict[str, Any]:
    """*row* of *cursor* as ``column -> value``, text another program stored as bytes decoded."""
    values = {col[0]: value for col, value in zip(cursor.description, row, strict=True)}
    for key, value in values.items():
        if isinstance(value, bytes) and key in _TEXT_COLUMNS:
            # A C or Go program binding bytes, not text: read as UTF-8 like lenient_text.
            values[key] = value.decode("utf-8", "replace")
    return values


def decode_message(row: dict[str, Any]) -> dict[str, Any]:
    """A ``messages`` row dict with ``content`` and ``tool_calls`` decoded (in place)."""
    content = row.get("content")
    if isinstance(content, str) and content.startswith(LEGACY_JSON_PREFIX):
        row["content"] = _decode_json(content[len(LEGACY_JSON_PREFIX) :])
    elif row.get("content_parts"):
        row["content"] = _decode_json(row["content_parts"])
    row.pop("content_parts", None)
    if row.get("tool_calls"):
        row["tool_calls"] = _decode_json(row["tool_calls"])
    return row


def client_tokens(given: Sequence[str] | None, count: int) -> list[str]:
    """One client token per message: *given* (one each, else an error), or new ones."""
    tokens = list(given) if given is not None else []
    if tokens and len(tokens) != count:
        raise SessionStoreError(
            f"{len(tokens)} client tokens for {count} messages; give one per message."
        )
    return tokens or [uuid.uuid4().hex for _ in range(count)]


def message_fields(
    role: str,
    content: Any = None,
    *,
    tool_calls: Any = None,
    tool_call_id: str | None = None,
    tool_name: str | None = None,
    token_count: int | None = None,
    finish_reason: str | None = None,
    timestamp: float | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """One message as ``append_messages`` takes it (what ``append_message`` passes on)."""
    return {
        "role": role,
        "content": content,
        "tool_calls": tool_calls,
        "tool_call_id": tool_call_id,
        "tool_name": tool_name,
        "token_count": token_count,
        "finish_reason": finish_reason,
        "timestamp": timestamp,
        "name": name,
    }


def as_conversation(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Stored messages (``get_messages`` rows) as OpenAI chat messages: ``role``,
    ``content``, ``name`` and the tool fields; leaked ``<memory-context>`` blocks are
    removed from user and assistant text."""
    conversation = []
    for row in rows:
        content = row.get("content")
        if row["role"] in ("user", "assistant") and isinstance(content, str):
            content = sanitize_context(content).strip()
        message: dict[str, Any] = {"role": row["role"], "content": content}
        if row.get("tool_calls"):
            message["tool_calls"] = row["tool_calls"]
        if row.get("tool_call_id"):
            message["tool_call_id"] = row["tool_call_id"]
        if row["role"] == "tool" and row.get("tool_name"):
            message["name"] = row["tool_name"]
        elif row.get("name"):
            message["name"] = row["name"]
        if row["role"] == "assistant" and row.get("finish_reason"):
            message["finish_reason"] = row["finish_reason"]
        conversation.append(message)
    return conversation
