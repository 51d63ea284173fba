"""Public conversational-memory benchmark files, read as sessions to import.

Two layouts are recognised, as their JSON files are published:

* **LoCoMo** — a list of samples (or one sample), each with ``sample_id`` and a
  ``conversation`` holding ``speaker_a``, ``speaker_b``, ``session_<n>`` (turns
  of ``speaker``, ``text``, ``dia_id`` and sometimes ``blip_caption``) and
  ``session_<n>_date_time`` (``"2:10 pm on 9 May, 2023"``). Session ``n`` of
  sample ``conv-26`` becomes the session ``conv-26_session_<n>``; its turns
  become messages in order (``dia_id`` ``D<n>:<k>`` is the session's message
  ``k - 1``), the first speaker's as ``user`` and the second's as
  ``assistant``, each named by its speaker. A shared image's caption is kept
  as ``[shares an image: …]``.
* **LongMemEval** — a list of instances with ``haystack_session_ids``,
  ``haystack_dates`` (``"2023/05/20 (Sat) 02:21"``) and ``haystack_sessions``
  (lists of ``{"role", "content"}``). Each haystack session is imported once
  under its own id, however many instances share it.

A published file is large (``longmemeval_s.json`` is about 265 MB, ``_m``
about 2.7 GB), so :func:`iter_json_array` reads a file's array one element at
a time and :func:`iter_dataset_sessions` turns the elements into sessions as
they come: memory holds the distinct sessions, not the file's text and its
parsed copy (where most sessions appear in hundreds of instances).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TextIO

__all__ = [
    "DatasetError",
    "dataset_layout",
    "dataset_sessions",
    "iter_dataset_sessions",
    "iter_json_array",
]

_CHUNK_CHARS = 1 << 20
_DECODER = json.JSONDecoder()
_BLANK = re.compile(r"[ \t\n\r]*")

_SESSION_KEY = re.compile(r"session_([1-9][0-9]*)")  # the key is looked up by this number


class DatasetError(ValueError):
    """A benchmark file whose shape is recognised but whose content is not usable."""


def dataset_layout(item: Any) -> str | None:
    """``"LoCoMo"`` or ``"LongMemEval"`` for a sample or instance of one, else ``None``."""
    if not isinstance(item, Mapping):
        return None
    if isinstance(item.get("conversation"), Mapping):
        return "LoCoMo"
    return "LongMemEval" if "haystack_sessions" in item else None


def dataset_sessions(data: Any, source: str) -> list[dict[str, Any]] | None:
    """Sessions (``import_sessions`` shape, dates as text) of a benchmark file, or ``None``.

    ``None`` means *data* is neither layout. Raises :class:`DatasetError` naming
    the sample or session that is malformed.
    """
    items = data if isinstance(data, list) else [data]
    layouts = {dataset_layout(item) for item in items}
    if len(layouts) != 1 or None in layouts:
        return None
    return list(iter_dataset_sessions(items, source))


def iter_dataset_sessions(items: Iterable[Any], source: str) -> Iterator[dict[str, Any]]:
    """The sessions of a benchmark file's samples or instances, read one at a time.

    The layout is the first item's; a later item of another shape raises
    :class:`DatasetError`, as does a malformed one. A LongMemEval session
    shared by several instances is given once (from the first).
    """
    layout: str | None = None
    seen: set[str] = set()
    for n, item in enumerate(items):
        kind = dataset_layout(item)
        if layout is None:
            layout = kind
        if kind is None or kind != layout:
            raise DatasetError(
                f"item #{n + 1} of the array is not a {layout or 'LoCoMo or LongMemEval'} "
                f"{'instance' if layout == 'LongMemEval' else 'sample'} like the first"
            )
        if layout == "LoCoMo":
            yield from _locomo(item, n, source)
        else:
            yield from _longmemeval_instance(item, n + 1, source, seen)


def iter_json_array(stream: TextIO, chunk_chars: int | None = None) -> Iterator[Any]:
    """The elements of the one JSON array *stream* holds, parsed one at a time.

    Only the element being read is held in memory (besides a read buffer), so
    a file of several gigabytes is read in the memory of its largest element.
    Raises :class:`json.JSONDecodeError` (a :class:`ValueError`) when the text
    is not one JSON array, and :class:`RecursionError` when it nests too deeply.
    """
    size = chunk_chars or _CHUNK_CHARS
    buffer = ""
    eof = False

    def more(at_least: int) -> bool:
        """Append at least *at_least* characters (at least a chunk); ``False`` at the end."""
        nonlocal buffer, eof
        parts = [buffer]
        got = 0
        while not eof and got < max(at_least, size):
            chunk = stream.read(max(at_least, size) - got)
            eof = not chunk
            parts.append(chunk)
            got += len(chunk)
        buffer = "".join(parts)
        return got > 0

    def skip_blank(pos: int) -> int:
        """The position of the next non-blank character, or the end of the text."""
        while True:
            pos = _BLANK.match(buffer, pos).end()  # type: ignore[union-attr]
            if pos < len(buffer) or not more(0):
                return pos

    def expect(pos: int, marks: str, what: str) -> str:
        if buffer[pos : pos + 1] not in marks or pos == len(buffer):
            raise json.JSONDecodeError(f"Expecting {what}", buffer, pos)
        return buffer[pos]

    pos = skip_blank(0)
    pos = skip_blank(pos + 1) if buffer.startswith("\ufeff", pos) else pos
    expect(pos, "[", "'['")
    pos = skip_blank(pos + 1)
    mark = "," if buffer[pos : pos + 1] != "]" else "]"
    if mark == "]":
        pos = skip_blank(pos + 1)
    while mark == ",":
        if pos >= max(size, len(buffer) // 2):  # drop what was read (at most half: no O(n²))
            buffer, pos = buffer[pos:], 0
        while True:
            try:
                value, end = _DECODER.raw_decode(buffer, pos)
            except json.JSONDecodeError:
                if more(len(buffer) - pos):  # the element goes on: read as much again
                    continue
                raise
            # a number ending the buffer ("-1." of "-1.5e10") may go on in the next read
            if end < len(buffer) and buffer[end] not in "+-.0123456789Ee":
                break
            if not more(len(buffer) - pos):
                break
        yield value
        pos = skip_blank(end)
        mark = expect(pos, ",]", "',' delimiter")
        pos = skip_blank(pos + 1)
    if pos < len(buffer):
        raise json.JSONDecodeError("Extra data", buffer, pos)


def _name(value: Any, default: str, where: str) -> str:
    """An id written in the file: text or a whole number (*default* when absent)."""
    if value is None or value == "":
        return default
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return str(value)
    raise DatasetError(f"{where} must be text or a whole number, got {value!r:.60}")


def _locomo(sample: Mapping[str, Any], index: int, source: str) -> list[dict[str, Any]]:
    conversation = sample["conversation"]
    sample_id = _name(
        sample.get("sample_id"), f"sample_{index + 1}", f"LoCoMo sample #{index + 1}: sample_id"
    )
    speakers = [conversation.get("speaker_a"), conversation.get("speaker_b")]
    if not all(isinstance(name, str) and name.strip() for name in speakers):
        raise DatasetError(f"LoCoMo sample {sample_id}: speaker_a and speaker_b must be names")
    speakers = [name.strip() for name in speakers]
    if speakers[0] == speakers[1]:
        raise DatasetError(
            f"LoCoMo sample {sample_id}: speaker_a and speaker_b are both {speakers[0]!r}; "
            "they must name the two people of the conversation"
        )
    roles = {speakers[0]: "user", speakers[1]: "assistant"}
    numbers = sorted(
        int(match.group(1))
        for key in conversation
        if (match := _SESSION_KEY.fullmatch(str(key))) is not None
    )
    sessions = []
    for number in numbers:
        where = f"LoCoMo sample {sample_id}, session_{number}"
        turns = conversation[f"session_{number}"]
        if not isinstance(turns, list):
            raise DatasetError(f"{where}: expected a list of turns")
        messages = []
        for k, turn in enumerate(turns, start=1):
            speaker = turn.get("speaker") if isinstance(turn, Mapping) else None
            speaker = speaker.strip() if isinstance(speaker, str) else None
            text = turn.get("text", "") if isinstance(turn, Mapping) else None
            if speaker not in roles or not isinstance(text, str):
                raise DatasetError(
                    f"{where}, turn {k}: needs a 'speaker' ({speakers[0]} or {speakers[1]}) "
                    "and a 'text'"
                )
            caption = turn.get("blip_caption")
            if isinstance(caption, str) and caption.strip():
                text = f"{text} [shares an image: {caption.strip()}]"
            messages.append({"role": roles[speaker], "content": text, "name": speaker})
        if not messages:
            continue
        session: dict[str, Any] = {
            "id": f"{sample_id}_session_{number}",
            "source": source,
            "title": f"{sample_id}: {speakers[0]} and {speakers[1]}, session {number}",
            "messages": messages,
        }
        when = conversation.get(f"session_{number}_date_time")
        if when is not None:
            session["started_at"] = when
        sessions.append(session)
    return sessions


def _longmemeval_instance(
    item: Mapping[str, Any], n: int, source: str, seen: set[str]
) -> Iterator[dict[str, Any]]:
    """The sessions of instance *n* not in *seen* (which gains their ids)."""
    instance = _name(
        item.get("question_id"), f"instance_{n}", f"LongMemEval instance #{n}: question_id"
    )
    where = f"LongMemEval instance {instance}"
    haystack = item.get("haystack_sessions")
    if not isinstance(haystack, list):
        raise DatasetError(f"{where}: haystack_sessions must be a list of sessions")
    ids = item.get("haystack_session_ids")
    ids = [f"{instance}_session_{k + 1}" for k in range(len(haystack))] if ids is None else ids
    dates = item.get("haystack_dates")
    dates = [None] * len(haystack) if dates is None else dates
    if (
        not isinstance(ids, list)
        or not isinstance(dates, list)
        or not (len(haystack) == len(ids) == len(dates))
    ):
        raise DatasetError(
            f"{where}: haystack_sessions, haystack_session_ids and haystack_dates must be "
            "lists of the same length"
        )
    for k, (raw_id, when, turns) in enumerate(zip(ids, dates, haystack, strict=True)):
        session_id = _name(raw_id, "", f"{where}: haystack_session_ids[{k}]")
        if not session_id:
            raise DatasetError(f"{where}: haystack_session_ids[{k}] is empty")
        if session_id in seen:
            continue
        if not isinstance(turns, list) or not all(
            isinstance(turn, Mapping) and isinstance(turn.get("content"), str) for turn in turns
        ):
            raise DatasetError(f"{where}, session {session_id}: expected a list of messages")
        messages = [{"role": turn.get("role"), "content": turn["content"]} for turn in turns]
        if messages:
            session: dict[str, Any] = {"id": session_id, "source": source}
            session["messages"] = messages
            if when is not None:
                session["started_at"] = when
            seen.add(session_id)
            yield session
