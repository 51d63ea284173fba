"""``MemoryStore``: the two memory files and every safe way to change them.

Every change runs the same steps: validate and scan the new text, take the
target's lock, re-read the file (so writes of other sessions and processes
are never lost), refuse if the file exists but cannot be read, apply the
change to the fresh entries, check the budget, and replace the file
atomically. Results are plain dicts, ready to be sent back to the model as
JSON; nothing is changed on disk unless ``success`` is true (except in one
case that says so in its error: the change was saved, but a save another
program made at the same instant could not be put back).
"""

from __future__ import annotations

import contextlib
import logging
import os
import reprlib
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.config import get_hermes_home, load_config
from hermes_core.errors import ConfigError, MemoryStoreError
from hermes_core.fencing import sanitize_context
from hermes_core.users import user_folder_name, valid_user_id
from hermes_memory_builtin import drift
from hermes_memory_builtin.archive import read_raw
from hermes_memory_builtin.consolidation import ConsolidationGuard
from hermes_memory_builtin.documents import PostgresDocuments
from hermes_memory_builtin.entries import (
    dedupe,
    find_unique_match,
    is_delimiter_line,
    join_entries,
    normalize_newlines,
    parse_entries,
    total_chars,
)
from hermes_memory_builtin.files import (
    FileChangedError,
    FileIdentity,
    FileRead,
    read_memory_file,
    remove_stale_temp_files,
    replace_if_unchanged,
    resolved_file,
)
from hermes_memory_builtin.held_rows import HeldRows
from hermes_memory_builtin.locking import exclusive_lock, lock_path_for
from hermes_memory_builtin.origins import ORIGINS_DOCUMENT, EntryOrigins, ledger_filename
from hermes_memory_builtin.provenance import Screening, origin_of, screen
from hermes_memory_builtin.quarantine import HELD_FILE, HeldWrite, Quarantine
from hermes_memory_builtin.settings import (
    DEFAULT_MEMORY_CHAR_LIMIT,
    DEFAULT_USER_CHAR_LIMIT,
    MemorySettings,
)
from hermes_memory_builtin.side_documents import DatabaseDocument, FileDocument, SideDocument
from hermes_memory_builtin.snapshot import (
    format_counts,
    format_usage,
    render_block,
    unrendered,
)
from hermes_memory_builtin.targets import TARGET_NAMES, TARGETS, Target
from hermes_memory_builtin.threats import MAX_SCAN_CHARS, first_threat_message

if TYPE_CHECKING:
    from hermes_memory_builtin.judge import WriteJudge
    from hermes_memory_builtin.overflow import OverflowArchiver

logger = logging.getLogger(__name__)

Result = dict[str, Any]

ACTIONS = ("add", "replace", "remove")
SUCCESS_NOTE = "Saved. This change is complete; do not repeat it."
BATCH_ABORT_SUFFIX = " No operations were applied (the batch is all-or-nothing)."
PENDING_NOTE = (
    "NOT in memory and will not be in the prompt unless the user accepts it with "
    "`hermes-memory memory review`. Do not retry or rephrase it."
)
MAX_BATCH_OPERATIONS = 1_000
"""Operations one batch may hold; a longer list is refused before any work is done."""
RESULT_ENTRIES_CHARS = 16_000
"""Characters of entry text a result may carry (``current_entries`` and the like)."""
WRITE_ATTEMPTS = 5
"""Tries of one change while another program keeps rewriting the file under it."""
_PREVIEW_CHARS = 80
_ENTRY_PREVIEW_CHARS = 2_000


def memory_dir_for(
    hermes_home: str | os.PathLike[str] | None = None, user_id: str | None = None
) -> Path:
    """``<HERMES_HOME>/memories`` (the active home when *hermes_home* is None); with
    *user_id*, that user's own folder ``memories/users/<escaped id>`` (see
    :func:`hermes_core.users.user_folder_name`; an unusable id raises ConfigError)."""
    home = Path(hermes_home) if hermes_home is not None else get_hermes_home()
    user = valid_user_id(user_id)
    if user is None:
        return home / "memories"
    return home / "memories" / "users" / user_folder_name(user)


def _coerce_limit(value: Any, name: str) -> int:
    wrong = ConfigError(f"{name} must be a whole number of characters, found {echo_value(value)}.")
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise wrong  # 2.5 is not a number of characters, and int() would drop the .5
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise wrong from None
    if number < 1:
        raise ConfigError(f"{name} must be at least 1, found {number}.")
    return number


_ECHO = reprlib.Repr()
_ECHO.maxstring = _ECHO.maxother = _PREVIEW_CHARS
_ECHO.maxlevel = 2


def echo_value(value: Any) -> str:
    """*value* as an error message may quote it: a short ``repr`` whatever its size or depth.

    Lone surrogates and control characters come out escaped, so the message
    can always be encoded and printed.
    """
    return _ECHO.repr(value)


def _preview(entry: str, chars: int = _PREVIEW_CHARS) -> str:
    return entry if len(entry) <= chars else entry[:chars] + "..."


def bounded_entries(entries: Sequence[str]) -> list[str]:
    """*entries* for a result: long ones shortened, and no more than the result can carry."""
    shown: list[str] = []
    used = 0
    for number, entry in enumerate(entries):
        preview = _preview(entry, _ENTRY_PREVIEW_CHARS)
        if shown and used + len(preview) > RESULT_ENTRIES_CHARS:
            rest = entries[number:]
            shown.append(
                f"[... {len(rest):,} more entries ({total_chars(rest):,} chars) not shown]"
            )
            break
        shown.append(preview)
        used += len(preview)
    return shown


def _bounded_by_number(entries: Mapping[int, str]) -> dict[int | str, str]:
    """Replaced or removed entries by operation number, as many as a result can carry."""
    shown: dict[int | str, str] = {}
    used = 0
    for position, (number, entry) in enumerate(entries.items()):
        if shown and used + len(entry) > RESULT_ENTRIES_CHARS:
            shown["more"] = f"[... {len(entries) - position:,} more not shown]"
            break
        shown[number] = entry
        used += len(entry)
    return shown


def _text_problem(text: str, field: str) -> str | None:
    """Why *text* cannot be stored in a UTF-8 file at all, or ``None``."""
    for char in text:
        code = ord(char)
        if 0xD800 <= code <= 0xDFFF:
            return (
                f"{field} contains U+{code:04X}, half of a UTF-16 surrogate pair, which is not "
                "text and cannot be saved as UTF-8 (a terminal or client decoded bytes with "
                "the wrong encoding). Send valid Unicode text."
            )
    return None


def _control_problem(text: str) -> str | None:
    """Why *text* cannot be an entry because of control characters, or ``None``."""
    for char in text:
        code = ord(char)
        if (code < 0x20 and char not in "\t\n") or code == 0x7F:
            return (
                f"Content contains the control character U+{code:04X}, which has no place in "
                "a memory entry (it makes the file binary to other tools). Remove it and retry."
            )
    return None


class _Refusal(Exception):
    """Internal: stop an operation and answer with *result*."""

    def __init__(self, result: Result) -> None:
        super().__init__(result.get("error", ""))
        self.result = result


def _failure(error: str, **extra: Any) -> Result:
    return {"success": False, "error": error, **extra}


@dataclass(frozen=True)
class _Op:
    """One normalised operation of a batch."""

    number: int
    action: str
    content: str | None
    old_text: str | None

    @property
    def label(self) -> str:
        return f"Operation {self.number} ({self.action})"


class MemoryStore:
    """``MEMORY.md`` and ``USER.md`` with live entries and a frozen snapshot.

    *memory_dir* defaults to ``$HERMES_HOME/memories``, resolved on every use
    so a profile switch is honoured. Limits given as strings (``"20000"``)
    are accepted. The store is safe to share between threads and between
    processes (through the lock files).
    """

    def __init__(
        self,
        memory_dir: str | os.PathLike[str] | None = None,
        *,
        memory_char_limit: int | str = DEFAULT_MEMORY_CHAR_LIMIT,
        user_char_limit: int | str = DEFAULT_USER_CHAR_LIMIT,
        memory_enabled: bool = True,
        user_profile_enabled: bool = True,
        consolidation: ConsolidationGuard | None = None,
        documents: PostgresDocuments | None = None,
    ) -> None:
        self._memory_dir = Path(memory_dir) if memory_dir is not None else None
        self._documents = documents
        """Where the two documents live when not in files (``memory.url``)."""
        self._savers: dict[str, Callable[[str], None]] = {}
        self._limits = {
            "memory": _coerce_limit(memory_char_limit, "memory_char_limit"),
            "user": _coerce_limit(user_char_limit, "user_char_limit"),
        }
        self._enabled = {"memory": bool(memory_enabled), "user": bool(user_profile_enabled)}
        self._entries: dict[str, list[str]] = {name: [] for name in TARGET_NAMES}
        self._snapshot: dict[str, str | None] = dict.fromkeys(TARGET_NAMES)
        self._read_errors: dict[str, str | None] = dict.fromkeys(TARGET_NAMES)
        self._versions: dict[str, FileIdentity | None] = dict.fromkeys(TARGET_NAMES)
        self.consolidation = consolidation or ConsolidationGuard()
        self.overflow: OverflowArchiver | None = None
        """Set for ``memory.overflow: archive``: over-budget adds archive entries instead."""
        self._mutex = threading.RLock()
        self.turn_user_message: str | None = None
        """The user's message of the current turn (set by the provider), for provenance."""
        self.turn_tool_output = ""
        """Tool output seen this turn (untrusted; a write repeating it is tool-derived)."""
        self.unattributed_origin = "model"
        """The origin of a write that neither the user's message nor tool output explain:
        ``client`` while the host cannot see the turn's tool results (set by the provider)."""
        self.judge: WriteJudge | None = None
        """Set for ``memory.judge: true``: a model that may refuse any write that is held."""

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def from_settings(
        cls,
        settings: MemorySettings,
        memory_dir: str | os.PathLike[str] | None = None,
        documents: PostgresDocuments | None = None,
    ) -> MemoryStore:
        """A store with the budgets and switches of *settings* (its documents in
        PostgreSQL when *documents* is given)."""
        return cls(
            memory_dir,
            documents=documents,
            memory_char_limit=settings.memory_char_limit,
            user_char_limit=settings.user_char_limit,
            memory_enabled=settings.memory_enabled,
            user_profile_enabled=settings.user_profile_enabled,
        )

    @classmethod
    def from_config(
        cls,
        hermes_home: str | os.PathLike[str] | None = None,
        config: Mapping[str, Any] | None = None,
        *,
        user_id: str | None = None,
    ) -> MemoryStore:
        """A store for *hermes_home* configured from its ``config.yaml`` (or *config*);
        with *user_id*, that user's own files.

        Raises :class:`ConfigError` when a ``memory.*`` value or the user id is unusable.
        """
        if config is None:
            config = load_config(hermes_home)
        settings = MemorySettings.from_config(config)
        return cls.from_settings(settings, memory_dir_for(hermes_home, user_id))

    # -- facts ---------------------------------------------------------------------------------

    @property
    def memory_dir(self) -> Path:
        """The folder holding the memory files."""
        return self._memory_dir if self._memory_dir is not None else memory_dir_for()

    def path(self, target: str) -> Path:
        """The file of *target* (``memory`` → ``MEMORY.md``, ``user`` → ``USER.md``)."""
        return self.memory_dir / TARGETS[target].filename

    def char_limit(self, target: str) -> int:
        """The budget of *target* in characters."""
        return self._limits[target]

    def is_enabled(self, target: str) -> bool:
        """Whether *target* is switched on in the configuration."""
        return self._enabled[target]

    def entries(self, target: str) -> list[str]:
        """The live entries of *target* as of the last load or write (a copy)."""
        with self._mutex:
            return list(self._entries[target])

    @property
    def memory_entries(self) -> list[str]:
        """Live entries of ``MEMORY.md``."""
        return self.entries("memory")

    @property
    def user_entries(self) -> list[str]:
        """Live entries of ``USER.md``."""
        return self.entries("user")

    def read_error(self, target: str) -> str | None:
        """Why *target*'s file could not be read at the last load, or ``None``."""
        return self._read_errors[target]

    def usage(self, target: str) -> str:
        """Live usage of *target*, e.g. ``12% — 264/2,200 chars``."""
        return format_usage(total_chars(self.entries(target)), self.char_limit(target))

    # -- loading and the frozen snapshot --------------------------------------------------------

    def load_from_disk(self) -> None:
        """Read both files into the live entries and freeze the system-prompt snapshot.

        Unreadable files load as empty (and are reported by :meth:`read_error`
        and a warning); every later write to them is refused until they can be
        read. A file already over its budget is loaded in full with a warning.
        """
        with self._mutex:
            with contextlib.suppress(OSError):  # unreadable below, and writes say why
                self.memory_dir.mkdir(parents=True, exist_ok=True)
            for name in TARGET_NAMES:
                target = TARGETS[name]
                path = self.path(name) if self._documents is None else self._documents.where
                read = self.read_document(name)
                if not read.ok:
                    logger.warning(
                        "Cannot read %s (%s); it is left out of the system prompt and writes "
                        "to it are refused until it can be read.",
                        path,
                        read.error,
                    )
                    entries: list[str] = []
                else:
                    entries = dedupe(parse_entries(read.text))
                self._read_errors[name] = read.error
                self._entries[name] = entries
                size, limit = total_chars(entries), self.char_limit(name)
                if size > limit:
                    logger.warning(
                        "%s holds %s characters, which exceeds its budget of %s; it is loaded "
                        "in full, but adds will fail until entries are shortened or removed.",
                        target.filename,
                        f"{size:,}",
                        f"{limit:,}",
                    )
                origins = self.entry_origins().of(name)
                self._snapshot[name] = render_block(target, entries, limit, origins)

    def format_for_system_prompt(self, target: str) -> str | None:
        """The frozen block of *target* (``None`` when it was empty at load time)."""
        return self._snapshot[target]

    def location(self, target: str) -> str:
        """Where *target* is kept, for people: its file, or its database (password masked)."""
        if self._documents is not None:
            return f"{self._documents.where} ({TARGETS[target].filename})"
        return str(self.path(target))

    def read_document(self, target: str) -> FileRead:
        """*target*'s document now: its file, or its row when the store uses a database."""
        if self._documents is not None:
            return self._documents.read(target)
        return read_memory_file(self.path(target))

    def raw_text(self, target: str) -> str | None:
        """*target*'s exact text now (a BOM kept; ``None``: no file), as the archive logs it."""
        if self._documents is not None:
            return self._documents.raw(target)
        return read_raw(self.path(target))

    @property
    def documents(self) -> PostgresDocuments | None:
        """The PostgreSQL rows holding the documents, or ``None`` for the files."""
        return self._documents

    def refresh(self, target: str) -> list[str]:
        """Re-read *target* without the lock and return its entries (live list updated).

        Reads are safe without the lock because writes replace the file
        atomically. On a read failure the previous live entries are returned.
        """
        read = self.read_document(target)
        with self._mutex:
            if read.ok:
                self._entries[target] = dedupe(parse_entries(read.text))
            return list(self._entries[target])

    # -- operations ----------------------------------------------------------------------------

    def add(
        self, target: str, content: Any, origin: str | None = None, *, reviewed: bool = False
    ) -> Result:
        """Append *content* as a new entry of *target*.

        *origin* ``"tool"`` says the content repeats untrusted tool output: the
        write is then held for review. A write in the detector's review band is
        held too (the result has ``staged: true``). *reviewed* (a person adding
        it themselves) skips holding; every other check still runs.
        """
        return self._run(self._add, target, content, origin, reviewed)

    def accept_held(self, held_id: str) -> Result:
        """Store the held write *held_id* (the user accepted it); every other check runs."""
        held = self.held_writes().take(held_id)
        if held.operations:
            result = self._run(self._apply_batch, held.target, held.operations, held)
        elif held.replaces:
            result = self.replace(
                held.target, held.replaces, held.content, held.origin, reviewed=True
            )
        else:
            result = self.add(held.target, held.content, held.origin, reviewed=True)
        if not result.get("success"):
            self.held_writes().hold(
                held.target,
                held.content,
                held.origin,
                held.score,
                held.reason,
                held.replaces,
                held.operations,
            )
        return result

    def reject_held(self, held_id: str) -> None:
        """Drop the held write *held_id*."""
        self.held_writes().take(held_id)

    def replace(
        self,
        target: str,
        old_text: Any,
        new_content: Any,
        origin: str | None = None,
        *,
        reviewed: bool = False,
    ) -> Result:
        """Replace the whole entry that *old_text* identifies with *new_content*.

        Held for review like :meth:`add` (the entry it would replace stays).
        """
        return self._run(self._replace, target, old_text, new_content, origin, reviewed)

    def remove(self, target: str, old_text: Any) -> Result:
        """Delete the entry that *old_text* identifies."""
        return self._run(self._remove, target, old_text)

    def apply_batch(self, target: str, operations: Any) -> Result:
        """Apply several operations atomically; the budget is checked on the final state.

        Each operation is ``{"action", "content"?, "old_text"?}`` (``new_text`` is
        accepted as an alias of ``content``). Either every operation is applied
        or none is. When one of them must be held for review, the whole batch
        is held (``staged: true``): none is applied until the user accepts it.
        """
        return self._run(self._apply_batch, target, operations, None)

    def target_error(self, target: Any) -> Result | None:
        """The failure a write to *target* would get (unknown or disabled), or ``None``."""
        try:
            self._target(target)
        except _Refusal as refusal:
            return refusal.result
        return None

    def reset_consolidation_failures(self) -> None:
        """Forget counted failures (see :class:`ConsolidationGuard`)."""
        with self._mutex:
            self.consolidation.reset()

    # -- implementation ------------------------------------------------------------------------

    def _run(self, operation: Any, *args: Any) -> Result:
        """Run *operation*; start over (re-reading the file) if another program rewrote
        the file before the change could be saved."""
        with self._mutex:
            for _attempt in range(WRITE_ATTEMPTS):
                try:
                    result: Result = operation(*args)
                except FileChangedError as exc:
                    changed = exc
                    continue
                except _Refusal as refusal:
                    return refusal.result
                except MemoryStoreError as exc:
                    return _failure(str(exc))
                if result.get("success"):
                    self.consolidation.record_success()
                return result
            return _failure(
                f"{changed} It kept changing over {WRITE_ATTEMPTS} attempts: another program "
                "is rewriting it. Wait until it is done, then retry."
            )

    def _target(self, target: Any) -> Target:
        if not isinstance(target, str) or target not in TARGETS:
            raise _Refusal(
                _failure(f"Invalid memory target {echo_value(target)}. Use 'memory' or 'user'.")
            )
        spec = TARGETS[target]
        if not self._enabled[spec.name]:
            key = "memory_enabled" if spec.name == "memory" else "user_profile_enabled"
            raise _Refusal(
                _failure(
                    f"Writes to {spec.filename} are disabled in config (memory.{key} is false).",
                    target=spec.name,
                )
            )
        return spec

    @staticmethod
    def _clean_text(value: Any, field: str) -> str:
        """*value* as stored: a string with normalised newlines, stripped."""
        if value is None:
            return ""
        if not isinstance(value, str):
            raise _Refusal(_failure(f"{field} must be a string, got {type(value).__name__}."))
        problem = _text_problem(value, field)
        if problem:
            raise _Refusal(_failure(problem))
        # A model copying an entry from its prompt copies its origin tag and marks too.
        return unrendered(normalize_newlines(value).strip()).strip()

    @staticmethod
    def _entry_problem(text: str) -> str | None:
        """Why *text* cannot be stored as an entry, or ``None``."""
        if any(is_delimiter_line(line) for line in text.split("\n")):
            return (
                "Content contains a line holding only '§', which separates entries in the "
                "file. Remove that line, or save the parts as separate entries."
            )
        if len(text) > MAX_SCAN_CHARS:
            return (
                f"Content is {len(text):,} characters long, more than the {MAX_SCAN_CHARS:,} "
                "that can be scanned. Save a shorter entry."
            )
        if sanitize_context(text) != text:
            return (
                "Content holds a <memory-context> block or its note: that is memory recalled "
                "for this turn, not something the user said, and saving it would store the "
                "recall again every time. Save the fact itself, in your own words."
            )
        problem = _control_problem(text) or first_threat_message(text, scope="strict")
        if problem is None and screen(text, "model").action == "block":
            problem = (
                f"Blocked: the injection detector scores this content "
                f"{screen(text, 'model').score:.2f}, at or above its block threshold. Memory "
                "is injected into future system prompts, so it must not carry instructions to "
                "the model. Rephrase it as a plain fact."
            )
        return problem

    def _entry_text(self, value: Any, field: str, empty_error: str) -> str:
        text = self._clean_text(value, field)
        if not text:
            raise _Refusal(_failure(empty_error))
        problem = self._entry_problem(text)
        if problem:
            raise _Refusal(_failure(problem))
        return text

    def _old_text(self, value: Any) -> str:
        text = self._clean_text(value, "old_text")
        if not text:
            raise _Refusal(
                _failure("old_text cannot be empty: give a short unique part of the entry.")
            )
        return text

    @contextlib.contextmanager
    def _exclusive(self, spec: Target) -> Iterator[list[str]]:
        """Hold *spec*'s lock and yield its entries freshly read from disk.

        The lock is the real file's (a symbolic link is followed first), so
        every writer of one file excludes the others whatever link it came
        through.
        """
        if self._documents is not None:
            with self._documents.locked(spec.name) as (read, save):
                entries = dedupe(parse_entries(read.text))
                self._entries[spec.name] = list(entries)
                self._read_errors[spec.name] = None
                self._savers[spec.name] = save
                yield entries
            return
        path = self.path(spec.name)
        with exclusive_lock(path) as lock_path:
            real = resolved_file(path)
            if lock_path_for(real) != lock_path:
                raise FileChangedError(
                    f"{spec.filename} was pointed at another file while this write waited "
                    "for its lock. Nothing was written; retry."
                )
            remove_stale_temp_files(real)
            read = read_memory_file(path)
            if not read.ok:
                raise _Refusal(
                    _failure(
                        f"Refusing to write {spec.filename}: it exists but could not be read "
                        f"({read.error}). Nothing was changed. If another program is writing "
                        "it, retry in a moment; otherwise fix the file (valid UTF-8, readable) "
                        "first.",
                        target=spec.name,
                    )
                )
            entries = dedupe(parse_entries(read.text))
            self._entries[spec.name] = list(entries)
            self._read_errors[spec.name] = None
            self._versions[spec.name] = read.identity
            yield entries

    def _commit(
        self, spec: Target, entries: Sequence[str], origins: Mapping[str, str] | None = None
    ) -> None:
        """Save *entries*, unless the file changed since :meth:`_exclusive` read it (in
        PostgreSQL: in the transaction holding the row lock); then record the origin of
        each new entry in *origins* (``{entry: origin}``)."""
        if self._documents is not None:
            self._savers[spec.name](join_entries(entries))
        else:
            replace_if_unchanged(
                self.path(spec.name), join_entries(entries), self._versions[spec.name]
            )
        self._entries[spec.name] = list(entries)
        self.entry_origins().record(spec.name, entries, origins or {})

    def _success(self, spec: Target, message: str, **extra: Any) -> Result:
        entries = self._entries[spec.name]
        return {
            "success": True,
            "done": True,
            "target": spec.name,
            "usage": format_usage(total_chars(entries), self.char_limit(spec.name)),
            "entry_count": len(entries),
            "message": message,
            **extra,
            "note": SUCCESS_NOTE,
        }

    def _counted(self, result: Result) -> Result:
        """Count a consolidation failure; past the allowance answer terminally."""
        if self.consolidation.record_failure():
            return {
                "success": False,
                "done": True,
                "error": (
                    "Memory writes keep failing "
                    f"({self.consolidation.turn_failures} failed attempts this turn). Stop "
                    "calling the memory tool: leave memory as it is and continue with your "
                    "reply to the user. The fact can be saved in a later turn."
                ),
            }
        return result

    def _state(self, spec: Target, entries: Sequence[str]) -> dict[str, Any]:
        return {
            "current_entries": bounded_entries(entries),
            "usage": format_counts(total_chars(entries), self.char_limit(spec.name)),
        }

    def _no_match(self, spec: Target, entries: Sequence[str], old: str, verb: str) -> Result:
        return self._counted(
            _failure(
                f"No entry matched '{_preview(old)}'. Check current_entries below and retry "
                f"with text copied from the entry you want to {verb}.",
                target=spec.name,
                **self._state(spec, entries),
            )
        )

    @staticmethod
    def _ambiguous(spec: Target, old: str, candidates: Sequence[str]) -> Result:
        return _failure(
            f"'{_preview(old)}' matches {len(candidates)} different entries. Use a longer part "
            "of the one you mean (see matches).",
            target=spec.name,
            matches=bounded_entries([_preview(entry) for entry in candidates]),
        )

    def _drift_refusal(self, spec: Target, entry: str, old: str) -> _Refusal:
        path = self.path(spec.name)
        raw = self.read_document(spec.name).text
        backup = drift.save_backup(path, raw)
        limit = self.char_limit(spec.name)
        if backup.saved:
            saved = f"A copy of the file was saved to {backup.path}."
        else:
            saved = f"Saving a backup copy failed ({backup.error}); the file is unchanged on disk."
        return _Refusal(
            _failure(
                f"Refusing to change {spec.filename}: the entry matched by '{_preview(old)}' is "
                f"{len(entry):,} characters long, more than the whole {limit:,}-character "
                "budget, so it is probably text added outside the memory tool without '§' "
                f"separator lines, and rewriting it would lose that text. {saved}",
                target=spec.name,
                drift_backup=str(backup.path) if backup.saved else None,
                remediation=(
                    f"Open {self._editable(spec)}, split the long text into entries separated "
                    "by lines holding only '§' (or move it elsewhere), then retry."
                ),
            )
        )

    def _editable(self, spec: Target) -> str:
        """What a person opens to edit *spec* by hand: its file, or its row."""
        if self._documents is None:
            return str(self.path(spec.name))
        return (
            f"the body of memory_documents row (owner {self._documents.owner!r}, target "
            f"{spec.name!r}) in {self._documents.where}"
        )

    def _locate(self, spec: Target, entries: Sequence[str], old: str, verb: str) -> int:
        match = find_unique_match(entries, old)
        if match.ambiguous:
            raise _Refusal(self._ambiguous(spec, old, match.candidates))
        if match.index is None:
            raise _Refusal(self._no_match(spec, entries, old, verb))
        if drift.is_oversized(entries[match.index], self.char_limit(spec.name)):
            raise self._drift_refusal(spec, entries[match.index], old)
        return match.index

    def note_tool_output(self, text: str) -> None:
        """Remember untrusted tool output of this turn (the last 200,000 characters)."""
        self.turn_tool_output = (self.turn_tool_output + "\n" + text)[-200_000:]

    def held_writes(self) -> Quarantine | HeldRows:
        """The writes staged for the user's review (they never reach the prompt)."""
        if self._documents is not None:
            return HeldRows(self._documents)
        return Quarantine(FileDocument(self.memory_dir / HELD_FILE))

    def entry_origins(self) -> EntryOrigins:
        """Where each stored entry came from (``user``, ``model``, ``tool``)."""
        return EntryOrigins(self._ledger)

    def _ledger(self, target: str) -> SideDocument:
        """*target*'s origin ledger, changed only under the target's own lock."""
        if self._documents is not None:
            return DatabaseDocument(self._documents, f"{ORIGINS_DOCUMENT}:{target}")
        path = self.memory_dir / ledger_filename(TARGETS[target].filename)
        return FileDocument(path, durable=False, own_lock=False)

    def _screen(self, text: str, origin: str | None) -> tuple[str, Screening]:
        """The origin of *text* and what to do with it; a hold (for the detector's score or
        for repeating tool output) goes to the model judge when one is set, which may refuse
        it, never store it."""
        source = origin_of(
            text, self.turn_user_message, origin, self.turn_tool_output, self.unattributed_origin
        )
        screening = screen(text, source)
        if screening.action == "hold" and self.judge is not None:
            opinion = self.judge.review(text)
            if opinion.blocks:
                raise _Refusal(
                    _failure(
                        f"Blocked: the model judge found this content to be an instruction "
                        f"to the model ({opinion.reason}). Memory is injected into future "
                        "system prompts, so it must not carry instructions. Rephrase it as a "
                        "plain fact."
                    )
                )
            screening = Screening("hold", screening.score, f"{screening.reason}; {opinion.reason}")
        return source, screening

    @staticmethod
    def _staged(held: HeldWrite, reason: str, what: str = "it is") -> Result:
        return {
            "success": True,
            "staged": True,
            "pending_review": True,
            "held_id": held.id,
            "origin": held.origin,
            "message": f"Held for the user's review ({reason}); {what} {PENDING_NOTE}",
        }

    def _hold_if_needed(
        self, spec: Target, text: str, origin: str | None, reviewed: bool, replaces: str = ""
    ) -> tuple[str, Result | None]:
        """The origin of *text*, and a staged result when it must wait for review."""
        if reviewed:
            return origin_of(text, None, origin), None
        source, screening = self._screen(text, origin)
        if screening.action != "hold":
            return source, None
        held = self.held_writes().hold(
            spec.name, text, source, screening.score, screening.reason, replaces
        )
        return source, self._staged(held, screening.reason)

    def _add(
        self, target: Any, content: Any, origin: str | None = None, reviewed: bool = False
    ) -> Result:
        spec = self._target(target)
        text = self._entry_text(content, "content", "Content cannot be empty.")
        source, staged = self._hold_if_needed(spec, text, origin, reviewed)
        if staged is not None:
            return staged
        with self._exclusive(spec) as entries:
            if text in entries:
                return self._success(spec, "Entry already exists (no duplicate added).")
            updated = [*entries, text]
            limit = self.char_limit(spec.name)
            if total_chars(updated) > limit:
                archived = self._archive_to_fit(spec, entries, text, source, "Entry added.")
                if archived is not None:
                    return archived
                return self._counted(
                    _failure(
                        f"{spec.filename} is at {format_counts(total_chars(entries), limit)} "
                        f"chars; adding this entry ({len(text):,} chars) would exceed the "
                        "limit. Make room in this same turn: merge overlapping entries with "
                        "'replace' or drop stale ones with 'remove' (see current_entries), then "
                        "retry the add. One call with 'operations' can do all of it at once.",
                        target=spec.name,
                        **self._state(spec, entries),
                    )
                )
            self._commit(spec, updated, {text: source})
            return self._success(spec, "Entry added.")

    def _replace(
        self,
        target: Any,
        old_text: Any,
        new_content: Any,
        origin: str | None = None,
        reviewed: bool = False,
    ) -> Result:
        spec = self._target(target)
        old = self._old_text(old_text)
        text = self._entry_text(
            new_content,
            "content",
            "The new content cannot be empty. Use 'remove' to delete an entry.",
        )
        source, staged = self._hold_if_needed(spec, text, origin, reviewed, old)
        if staged is not None:
            return staged
        with self._exclusive(spec) as entries:
            index = self._locate(spec, entries, old, "replace")
            previous = entries[index]
            updated = list(entries)
            updated[index] = text
            updated = dedupe(updated)
            if not self._fits(spec, entries, updated):
                others = [entry for entry in updated if entry != text]
                archived = self._archive_to_fit(
                    spec, others, text, source, "Entry replaced.", replaced_entry=previous
                )
                if archived is not None:
                    return archived
                return self._counted(
                    _failure(
                        f"The replacement would put {spec.filename} at "
                        f"{format_counts(total_chars(updated), self.char_limit(spec.name))} "
                        "chars. Shorten the new content, or remove other stale entries (see "
                        "current_entries), then retry in this turn.",
                        target=spec.name,
                        **self._state(spec, entries),
                    )
                )
            self._commit(spec, updated, {text: source})
            return self._success(spec, "Entry replaced.", replaced_entry=previous)

    def _remove(self, target: Any, old_text: Any) -> Result:
        spec = self._target(target)
        old = self._old_text(old_text)
        with self._exclusive(spec) as entries:
            index = self._locate(spec, entries, old, "remove")
            previous = entries[index]
            self._commit(spec, [e for i, e in enumerate(entries) if i != index])
            return self._success(spec, "Entry removed.", removed_entry=previous)

    def _archive_to_fit(
        self, spec: Target, others: Sequence[str], text: str, origin: str, done: str, **extra: Any
    ) -> Result | None:
        """With ``memory.overflow: archive``: save *others* + *text*, archiving the least
        valuable of *others* to fit, and say what moved; ``None`` when that cannot be done
        (the policy is ``reject``, or *text* alone is over the budget)."""
        if self.overflow is None:
            return None
        plan = self.overflow.make_room(spec.name, others, text, self.char_limit(spec.name))
        if plan is None:
            return None
        with self.overflow.moving(spec.name, self.raw_text(spec.name), plan):
            self._commit(spec, plan.after, {text: origin})
        count = len(plan.moved)
        return self._success(
            spec,
            f"{done} To make room, {count} older entr{'y was' if count == 1 else 'ies were'} "
            "moved to the archive (still recalled when relevant; see archived_entries).",
            archived_entries=bounded_entries(plan.moved_texts),
            **extra,
        )

    def _longer_than_budget(
        self, spec: Target, before: Sequence[str], written: Sequence[str]
    ) -> str | None:
        """Why one of the *written* entries, new compared with *before*, is refused for its
        length alone, or ``None``.

        A batch may shrink an over-budget file by merging entries, but never
        into one entry longer than the whole budget: the drift guard would then
        take it for pasted-in text and refuse to change it ever after. (A single
        ``replace`` cannot: an entry longer than the budget replacing a shorter
        one always grows the file.)
        """
        limit = self.char_limit(spec.name)
        old = set(before)
        for text in written:
            if drift.is_oversized(text, limit) and text not in old:
                return (
                    f"The new entry '{_preview(text)}' is {len(text):,} characters, more than "
                    f"the whole {limit:,}-character budget of {spec.filename}. Shorten it, or "
                    "split it into several smaller entries."
                )
        return None

    def _fits(self, spec: Target, before: Sequence[str], after: Sequence[str]) -> bool:
        """Within budget, or at least no larger than before (an over-budget file may shrink)."""
        size = total_chars(after)
        return size <= self.char_limit(spec.name) or size <= total_chars(before)

    def _normalise_op(self, number: int, raw: Any) -> _Op:
        """Validate one batch operation; ``new_text`` is folded into ``content`` first,
        so the alias goes through the same scan."""
        if not isinstance(raw, Mapping):
            raise _Refusal(
                _failure(
                    f"Operation {number}: must be an object with action, content and old_text."
                    + BATCH_ABORT_SUFFIX
                )
            )
        action = raw.get("action")
        shown = echo_value(action)[1:-1] if isinstance(action, str) else "unknown"
        label = f"Operation {number} ({shown})"
        if action not in ACTIONS:
            raise _Refusal(
                _failure(
                    f"{label}: unknown action. Use add, replace or remove." + BATCH_ABORT_SUFFIX
                )
            )
        content_value = raw.get("content")
        if content_value is None or (isinstance(content_value, str) and not content_value.strip()):
            content_value = raw.get("new_text")
        try:
            content = self._clean_text(content_value, "content") or None
            old_text = self._clean_text(raw.get("old_text"), "old_text") or None
        except _Refusal as refusal:
            raise _Refusal(
                _failure(f"{label}: {refusal.result['error']}" + BATCH_ABORT_SUFFIX)
            ) from None
        if action in ("replace", "remove") and old_text is None:
            raise _Refusal(_failure(f"{label}: old_text is required." + BATCH_ABORT_SUFFIX))
        if action == "add" and content is None:
            raise _Refusal(_failure(f"{label}: content is required." + BATCH_ABORT_SUFFIX))
        if action == "replace" and content is None:
            raise _Refusal(
                _failure(
                    f"{label}: content is required (use action 'remove' to delete)."
                    + BATCH_ABORT_SUFFIX
                )
            )
        if content is not None and action != "remove":
            problem = self._entry_problem(content)
            if problem:
                raise _Refusal(_failure(f"Operation {number}: {problem}" + BATCH_ABORT_SUFFIX))
        return _Op(number, action, content, old_text)

    def _apply_batch(self, target: Any, operations: Any, accepted: HeldWrite | None) -> Result:
        """The batch *operations*; *accepted* is the held batch the user accepted (then
        nothing is held again, and each entry keeps the origin it was held with)."""
        spec = self._target(target)
        if not isinstance(operations, list):
            raise _Refusal(
                _failure("operations must be a list of {action, content?, old_text?} objects.")
            )
        if not operations:
            raise _Refusal(_failure("operations list is empty: give at least one operation."))
        if len(operations) > MAX_BATCH_OPERATIONS:
            raise _Refusal(
                _failure(
                    f"operations holds {len(operations):,} operations; one call takes at most "
                    f"{MAX_BATCH_OPERATIONS:,}. Merge them into fewer, larger entries, or split "
                    "the work over several calls." + BATCH_ABORT_SUFFIX
                )
            )
        ops = [self._normalise_op(number, raw) for number, raw in enumerate(operations, 1)]
        origins, hold = self._screen_batch(ops, accepted)
        with self._exclusive(spec) as entries:
            working = list(entries)
            replaced: dict[int, str] = {}
            removed: dict[int, str] = {}
            for op in ops:
                if op.action == "add":
                    assert op.content is not None
                    if op.content not in working:  # repeating an add is harmless
                        working.append(op.content)
                    continue
                assert op.old_text is not None
                index = self._locate_in_batch(spec, entries, working, op)
                if op.action == "replace":
                    assert op.content is not None
                    replaced[op.number] = working[index]
                    working[index] = op.content
                else:
                    removed[op.number] = working.pop(index)
            working = dedupe(working)
            limit = self.char_limit(spec.name)
            usage = format_counts(total_chars(entries), limit)
            if entries and not working:
                return self._counted(
                    _failure(
                        f"Refusing to empty {spec.filename}: a batch may not delete every entry. "
                        "Keep at least one entry, or remove the last one with a single "
                        "'remove' call if that is really intended." + BATCH_ABORT_SUFFIX,
                        target=spec.name,
                        usage=usage,
                    )
                )
            if not self._fits(spec, entries, working):
                return self._counted(
                    _failure(
                        f"After applying all {len(ops)} operations, {spec.filename} would be at "
                        f"{format_counts(total_chars(working), limit)} chars, over the limit. "
                        "Remove or shorten more entries in the same batch, then retry."
                        + BATCH_ABORT_SUFFIX,
                        target=spec.name,
                        usage=usage,
                    )
                )
            too_long = self._longer_than_budget(spec, entries, working)
            if too_long:
                return self._counted(
                    _failure(too_long + BATCH_ABORT_SUFFIX, target=spec.name, usage=usage)
                )
            if hold is None:
                self._commit(spec, working, origins)
                extra: dict[str, Any] = {}
                if replaced:
                    extra["replaced_entries"] = _bounded_by_number(replaced)
                if removed:
                    extra["removed_entries"] = _bounded_by_number(removed)
                return self._success(spec, f"Applied {len(ops)} operation(s).", **extra)
        # Staged once the target's lock (in PostgreSQL: its transaction) is released.
        return self._hold_batch(spec, ops, origins, *hold)

    def _screen_batch(
        self, ops: Sequence[_Op], accepted: HeldWrite | None
    ) -> tuple[dict[str, str], tuple[_Op, Screening] | None]:
        """``{content: origin}`` of the batch's new entries, and its first operation that
        must be held (with why), if any; a refusal of the model judge refuses the batch."""
        origins: dict[str, str] = {}
        hold: tuple[_Op, Screening] | None = None
        for op in ops:
            if op.content is None or op.action == "remove":
                continue
            if accepted is not None:
                declared = accepted.operations[op.number - 1].get("origin")
                origins[op.content] = origin_of(op.content, None, declared or accepted.origin)
                continue
            try:
                origins[op.content], screening = self._screen(op.content, None)
            except _Refusal as refusal:
                raise _Refusal(
                    _failure(f"{op.label}: {refusal.result['error']}" + BATCH_ABORT_SUFFIX)
                ) from None
            if screening.action == "hold" and hold is None:
                hold = (op, screening)
        return origins, hold

    def _hold_batch(
        self,
        spec: Target,
        ops: Sequence[_Op],
        origins: Mapping[str, str],
        held_op: _Op,
        screening: Screening,
    ) -> Result:
        """Stage the whole batch *ops* because of *held_op*: nothing of it is applied."""
        batch = [
            {
                key: value
                for key, value in (
                    ("action", op.action),
                    ("content", op.content),
                    ("old_text", op.old_text),
                    ("origin", origins.get(op.content or "")),
                )
                if value is not None
            }
            for op in ops
        ]
        assert held_op.content is not None
        reason = f"{held_op.label}: {screening.reason}"
        held = self.held_writes().hold(
            spec.name,
            held_op.content,
            origins[held_op.content],
            screening.score,
            reason,
            operations=batch,
        )
        return self._staged(
            held,
            reason,
            f"the whole batch of {len(ops)} operation(s) waits with it and none is applied "
            "(a batch is all-or-nothing), so it is",
        )

    def _locate_in_batch(
        self, spec: Target, entries: Sequence[str], working: Sequence[str], op: _Op
    ) -> int:
        assert op.old_text is not None
        usage = format_counts(total_chars(entries), self.char_limit(spec.name))
        match = find_unique_match(working, op.old_text)
        if match.ambiguous:
            raise _Refusal(
                self._counted(
                    _failure(
                        f"{op.label}: '{_preview(op.old_text)}' matched several different "
                        "entries; be more specific." + BATCH_ABORT_SUFFIX,
                        target=spec.name,
                        usage=usage,
                    )
                )
            )
        if match.index is None:
            raise _Refusal(
                self._counted(
                    _failure(
                        f"{op.label}: no entry matched '{_preview(op.old_text)}'."
                        + BATCH_ABORT_SUFFIX,
                        target=spec.name,
                        usage=usage,
                    )
                )
            )
        if drift.is_oversized(working[match.index], self.char_limit(spec.name)):
            raise self._drift_refusal(spec, working[match.index], op.old_text)
        return match.index
