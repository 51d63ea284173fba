"""``$HERMES_HOME/config.yaml``: reading, checking and saving it, and the helpers that
read settings out of it.

``get_hermes_home``, ``file_lock``, ``replacing`` and ``write_text_atomically``
live in :mod:`hermes_core.home` (``.env`` in :mod:`hermes_core.secrets` builds on
them, and ``config.yaml`` on both) and are importable from here too.
"""

from __future__ import annotations

import copy
import functools
import logging
import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hermes_core.errors import ConfigError
from hermes_core.home import file_lock, get_hermes_home, replacing, write_text_atomically
from hermes_core.secrets import profile_environ

CONFIG_FILENAME = "config.yaml"

_MISSING = object()


def config_path(hermes_home: str | os.PathLike[str] | None = None) -> Path:
    """Path of ``config.yaml`` inside *hermes_home* (default: the active home)."""
    home = Path(hermes_home) if hermes_home is not None else get_hermes_home()
    return home / CONFIG_FILENAME


ENV_TEMPLATE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""A ``${VAR}`` reference in a ``config.yaml`` value, as Hermes Agent expands them."""


def load_config(hermes_home: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Read ``config.yaml`` with ``${VAR}`` references expanded; missing or empty is ``{}``.

    As in Hermes Agent, a reference takes the variable's value from the
    environment, then from the profile's ``.env``; one that is set in neither
    stays as written. Raises :class:`ConfigError` naming the file when it is not
    valid YAML or not a mapping at the top level.
    """
    config = load_config_raw(hermes_home)
    if not _has_template(config):
        return config
    environ = profile_environ(hermes_home)
    expanded: dict[str, Any] = _expand(config, environ)
    return expanded


def _has_template(value: Any) -> bool:
    if isinstance(value, str):
        return ENV_TEMPLATE.search(value) is not None
    if isinstance(value, Mapping):
        return any(_has_template(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_template(item) for item in value)
    return False


def _expand(value: Any, environ: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return ENV_TEMPLATE.sub(lambda m: environ.get(m.group(1), m.group(0)), value)
    if isinstance(value, Mapping):
        return {key: _expand(item, environ) for key, item in value.items()}
    if isinstance(value, list):
        return [_expand(item, environ) for item in value]
    return value


def load_config_raw(hermes_home: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """``config.yaml`` as written, ``${VAR}`` references kept (what a writer edits)."""
    path = config_path(hermes_home)
    if path.parent.exists() and not path.parent.is_dir():
        raise ConfigError(
            f"HERMES_HOME {path.parent} is not a directory. Point HERMES_HOME at a folder "
            "(or unset it to use ~/.hermes)."
        )
    if not path.parent.exists() and path.parent.is_symlink():
        # A dangling link or a loop: every write under it would fail as "File exists".
        raise ConfigError(
            f"HERMES_HOME {path.parent} is a symbolic link that leads nowhere (to "
            f"{_link_target(path.parent)}, which is missing or links back round in a loop). "
            "Create the folder it points to, or point HERMES_HOME at a folder."
        )
    if path.exists() and not path.is_file() and not path.is_dir():
        raise ConfigError(
            f"Cannot read {path}: it is not a regular file (a pipe or a device, which could "
            "be read forever). Replace it with a text file."
        )
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except IsADirectoryError as exc:
        raise ConfigError(
            f"Cannot read {path}: it is a directory, not a file. Move it aside and retry."
        ) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"Cannot read {path}: not valid UTF-8 at byte {exc.start}. Save it as UTF-8 text."
        ) from exc
    except OSError as exc:
        raise ConfigError(
            f"Cannot read {path}: {exc.strerror or exc}. Fix the file or its permissions."
        ) from exc
    return parse_config(path, text)


def _link_target(link: Path) -> str:
    try:
        return os.readlink(link)
    except OSError:
        return "?"


_parsed: dict[tuple[Path, str], dict[str, Any] | ConfigError] = {}
"""The last few config texts read and what they gave: commands read config.yaml
many times, and a hostile one can take a second to refuse."""


def parse_config(path: Path, text: str) -> dict[str, Any]:
    """*text* (read from *path*) as a config mapping; :class:`ConfigError` naming *path* if not.

    Refuses text that is not YAML, not a mapping, nested too deeply or whose
    aliases expand past :data:`MAX_CONFIG_VALUES`. Each call returns a fresh copy.
    """
    known = _parsed.get((path, text))
    if known is None:
        try:
            known = _parse_text(path, text)
        except ConfigError as exc:
            known = exc
        if len(_parsed) >= 8:
            _parsed.clear()
        _parsed[(path, text)] = known
    if isinstance(known, ConfigError):
        raise ConfigError(str(known))
    return copy.deepcopy(known)


def _parse_text(path: Path, text: str) -> dict[str, Any]:
    import yaml  # imported here: commands that never read config skip its cost

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{_describe_yaml_error(path, exc)} Fix the syntax and retry.") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path} is nested too deeply to read. Flatten it and retry.") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path} must hold a mapping at the top level (lines like `memory:` and "
            f"`model:`), found a {type(data).__name__}. Fix the file and retry."
        )
    if not _within(data, MAX_CONFIG_VALUES):
        raise ConfigError(
            f"{path} expands to more than {MAX_CONFIG_VALUES:,} values: its YAML aliases "
            "(*name) repeat or contain themselves. Write the values out and retry."
        )
    return data


MAX_CONFIG_VALUES = 100_000
"""Values a config.yaml may expand to, aliases counted each time they are used."""


def _within(data: Any, budget: int) -> bool:
    """True when *data* holds at most *budget* values, counting shared ones each time."""
    stack = [data]
    while stack:
        budget -= 1
        if budget < 0:
            return False
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return True


def _describe_yaml_error(path: Path, exc: Exception) -> str:
    """One line naming where *path* stops being valid YAML and why."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is None or not problem:
        detail = " ".join(str(exc).split())
        return f"{path} is not valid YAML: {detail}."
    where = f"{path}, line {mark.line + 1}, column {mark.column + 1}"
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if context and context_mark is not None:
        problem = f"{problem} ({context} that starts on line {context_mark.line + 1})"
    return f"{where}: {problem}; this is not valid YAML."


def save_config(
    config: Mapping[str, Any], hermes_home: str | os.PathLike[str] | None = None
) -> Path:
    """Write *config* to ``config.yaml`` atomically (temp file, fsync, rename).

    An existing file is edited where it differs from *config*, so the user's
    comments, key order, quoting and indentation stay as they were (see
    :func:`edited_yaml`). A symlinked ``config.yaml`` is written where it points
    and an existing file keeps its permissions. Raises :class:`ConfigError` (and
    leaves the file as it was) when *config* cannot be written as YAML or the file
    cannot be replaced.
    """
    with replacing(config_path(hermes_home)) as path:
        try:
            mode: int | None = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = None
        try:
            written: str | None = path.read_text(encoding="utf-8-sig") if path.is_file() else None
        except (OSError, UnicodeDecodeError):
            written = None  # unreadable: rewritten whole, as a new file would be
        text = edited_yaml(path, written, config) if written else _dump_yaml(config)
        write_text_atomically(path, text, mode=mode)
    return path


def edited_yaml(path: Path, written: str, config: Mapping[str, Any]) -> str:
    """*written* (the text of *path*) edited so that it reads as *config*.

    Only the values that differ are touched: everything else keeps its comments,
    order, quoting and layout (ruamel.yaml's round-trip mode). Reading the result
    the way :func:`load_config` does gives *config* exactly; where an in-place
    edit cannot (a file whose aliases share a changed value, say), the file is
    rewritten from *config* without its comments, with a warning.
    """
    text = _dump_yaml(config)  # refuses what YAML cannot hold, whatever the file is
    wanted = parse_config(path, text)
    try:
        before = parse_config(path, written)
    except ConfigError:
        return text  # not YAML we can read: nothing in it to keep
    try:
        edited = _round_trip_edit(written, before, wanted)
    except Exception as exc:  # ruamel.yaml refused what PyYAML read: keep it correct
        logging.getLogger(__name__).debug("round-trip edit of %s failed: %s", path, exc)
        edited = None
    try:
        if edited is not None and parse_config(path, edited) == wanted:
            return edited
    except ConfigError:
        pass
    logging.getLogger(__name__).warning(
        "%s could not be edited in place; it was rewritten without its comments", path
    )
    return text


def _round_trip_edit(written: str, before: dict[str, Any], wanted: dict[str, Any]) -> str:
    """ruamel.yaml's round-trip view of *written* (PyYAML reads it as *before*), edited to
    read as *wanted*."""
    import io

    from ruamel.yaml import YAML

    if _same(before, wanted):
        return written  # nothing changed: not a byte rewritten
    yaml = YAML()  # round-trip: comments, order and quoting are kept
    yaml.Constructor, yaml.Representer = _round_trip_classes()
    yaml.preserve_quotes = True
    yaml.width = 1_000_000  # never re-fold a long line
    mapping, sequence, offset = _guess_indent(written)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    document = yaml.load(written)
    if document is None and not before:  # only comments and blank lines: keep them, add after
        head = written if written.endswith("\n") else f"{written}\n"
        return head + (_dump_yaml(wanted) if wanted else "")
    document = _edited_node(document, before, wanted, _shared_nodes(document))
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()


@functools.cache
def _round_trip_classes() -> tuple[type, type]:
    """ruamel.yaml's round-trip constructor and representer, with numbers and nulls as PyYAML
    reads and writes them.

    ruamel.yaml keeps a float's own digits and re-emits some (``3.678648508455322e+16``)
    rounded, and writes ``None`` as nothing; here floats are plain floats written exactly
    (``1.0e+16``, which PyYAML reads as a number, not ``1e+16``, which it reads as text)
    and ``None`` is ``null``. Subclasses, so other users of ruamel.yaml are unaffected.
    """
    from ruamel.yaml.constructor import RoundTripConstructor, SafeConstructor
    from ruamel.yaml.representer import RoundTripRepresenter

    class Constructor(RoundTripConstructor):
        pass

    class Representer(RoundTripRepresenter):
        pass

    def represent_float(representer: Any, value: float) -> Any:
        if value != value:
            text = ".nan"
        elif value in (float("inf"), float("-inf")):
            text = ".inf" if value > 0 else "-.inf"
        else:
            text = repr(value).lower()
            if "." not in text and "e" in text:
                text = text.replace("e", ".0e", 1)
        return representer.represent_scalar("tag:yaml.org,2002:float", text)

    def represent_null(representer: Any, value: None) -> Any:
        return representer.represent_scalar("tag:yaml.org,2002:null", "null")

    Constructor.add_constructor("tag:yaml.org,2002:float", SafeConstructor.construct_yaml_float)
    Representer.add_representer(float, represent_float)
    Representer.add_representer(type(None), represent_null)
    return Constructor, Representer


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types throughout (``1`` is not ``True``, ``1`` is not ``1.0``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _same_key(theirs: Any, ours: Any) -> bool:
    """Whether ruamel.yaml's key *theirs* is PyYAML's key *ours* (ruamel.yaml's text keys
    may be quoted-string subclasses of ``str``)."""
    return (
        isinstance(theirs, str) == isinstance(ours, str)
        and isinstance(theirs, bool) == isinstance(ours, bool)
        and bool(theirs == ours)
    )


def _shared_nodes(document: Any) -> set[int]:
    """The ids of the mappings and lists *document* holds more than once (through aliases)."""
    seen: set[int] = set()
    shared: set[int] = set()
    stack = [document]
    while stack:
        node = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        if id(node) in seen:
            shared.add(id(node))
            continue
        seen.add(id(node))
        stack.extend(node.values() if isinstance(node, dict) else node)
    return shared


def _edited_node(node: Any, before: Any, wanted: Any, shared: set[int]) -> Any:
    """*node* (ruamel.yaml's, read by PyYAML as *before*) changed in place to read as *wanted*.

    A node that aliases share (ids in *shared*) is replaced, never changed in place.
    """
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

    if _same(before, wanted):
        return node
    if id(node) in shared:
        return _fresh_node(wanted)
    if (
        isinstance(node, CommentedMap)
        and isinstance(before, dict)
        and isinstance(wanted, dict)
        and len(node) == len(before)
        and all(_same_key(a, b) for a, b in zip(node, before, strict=True))
    ):
        for key in before:
            if key not in wanted:
                del node[key]
        for key, value in wanted.items():
            if key in before:
                node[key] = _edited_node(node[key], before[key], value, shared)
            else:
                node[_fresh_node(key)] = _fresh_node(value)
        return node
    if (
        isinstance(node, CommentedSeq)
        and isinstance(before, list)
        and isinstance(wanted, list)
        and len(node) == len(before) == len(wanted)
    ):
        for index, value in enumerate(wanted):
            node[index] = _edited_node(node[index], before[index], value, shared)
        return node
    if isinstance(node, (SingleQuotedScalarString, DoubleQuotedScalarString)) and isinstance(
        wanted, str
    ):
        return type(node)(wanted)  # quoted as it was
    return _fresh_node(wanted)


def _fresh_node(value: Any) -> Any:
    """*value* to add to a round-trip document; text PyYAML would read as another type (``yes``,
    ``0777``, ``1:30``) is quoted."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    if isinstance(value, dict):
        return CommentedMap((_fresh_node(key), _fresh_node(item)) for key, item in value.items())
    if isinstance(value, list):
        return CommentedSeq(_fresh_node(item) for item in value)
    if isinstance(value, str) and not _reads_as_text(value):
        return DoubleQuotedScalarString(value)
    return value


def _reads_as_text(value: str) -> bool:
    """Whether *value* written plain is read back by PyYAML as this text."""
    import yaml

    try:
        return bool(yaml.safe_load(value) == value)
    except yaml.YAMLError:
        return False


_KEY_LINE = re.compile(r"^( *)([^\s#-][^:#]*|-[^\s][^:#]*):(\s|$)")
_DASH_LINE = re.compile(r"^( *)- ")


def _guess_indent(text: str) -> tuple[int, int, int]:
    """(mapping indent, sequence indent, dash offset) of *text*, for ruamel.yaml's
    ``indent()``; PyYAML's layout (2, 2, 0) where the text does not show one."""
    mapping = 0
    offset: int | None = None
    parents: list[int] = []  # columns of the keys that open the lines below them
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        column = len(line) - len(line.lstrip(" "))
        if _DASH_LINE.match(line):  # a list's dash may stand in its key's column
            while parents and parents[-1] > column:
                parents.pop()
            if offset is None and parents:
                offset = column - parents[-1]
            continue
        while parents and parents[-1] >= column:
            parents.pop()
        if _KEY_LINE.match(line):
            if parents and column > parents[-1] and not mapping:
                mapping = column - parents[-1]
            if stripped.endswith(":"):
                parents.append(column)
    mapping = mapping or 2
    offset = 0 if offset is None else max(0, offset)
    return mapping, max(mapping, offset + 2), offset


def update_config(
    change: Callable[[dict[str, Any]], object],
    hermes_home: str | os.PathLike[str] | None = None,
) -> Path:
    """Read ``config.yaml``, let *change* edit the dict in place, and save it, under a lock.

    Writers using this function in other threads or processes take turns on
    ``config.yaml.lock``, each reading what the previous one saved, so two setup
    runs at once both keep their settings (a plain :func:`load_config` then
    :func:`save_config` can lose the other's). If *change* raises, nothing is
    written. Returns the path written.
    """
    with replacing(config_path(hermes_home)) as path, file_lock(path):
        config = load_config_raw(hermes_home)  # templates stay templates, secrets stay out
        change(config)
        return save_config(config, hermes_home)


def _dump_yaml(config: Mapping[str, Any]) -> str:
    """*config* as YAML text; :class:`ConfigError` naming the problem when it cannot be."""
    import yaml

    if not isinstance(config, Mapping):
        raise ConfigError(
            f"The configuration to save must be a mapping of settings, got {type(config).__name__}."
        )
    try:
        text = yaml.safe_dump(dict(config), sort_keys=False, allow_unicode=True)
        if "\x85" in text:  # PyYAML folds a NEL in a quoted string into a space: escape it
            text = yaml.safe_dump(dict(config), sort_keys=False)
    except yaml.representer.RepresenterError as exc:
        value = exc.args[1] if len(exc.args) > 1 else None
        raise ConfigError(
            f"Cannot save a value of type {type(value).__name__} in config.yaml: use "
            "text, numbers, booleans, lists and mappings only."
        ) from exc
    except RecursionError as exc:
        raise ConfigError(
            "The configuration to save is nested too deeply (or contains itself) to "
            "write as YAML. Flatten it and retry."
        ) from exc
    return text


def is_http_url(text: str) -> bool:
    """Whether *text* is an ``http://`` or ``https://`` URL with a host (and a valid port)."""
    if not text or any(ch.isspace() or not ch.isprintable() for ch in text):
        return False
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def header_value_problem(value: str) -> str | None:
    """Why *value* (an API key, a token) cannot be sent in an HTTP header, or ``None``.

    Names the first offending character by kind and position, never the value, so a
    provider can put the answer in an error a user, a log or a model reads.
    """
    for position, ch in enumerate(value, 1):
        if ch in "\r\n":
            kind = "a line break"
        elif ch.isspace():
            kind = "a space"
        elif not ch.isascii():
            kind = f"the non-ASCII character U+{ord(ch):04X}"
        elif not ch.isprintable():
            kind = "a control character"
        else:
            continue
        return f"{kind} (character {position})"
    return None


def cfg_get(config: Mapping[str, Any] | None, dotted_key: str, default: Any = None) -> Any:
    """Look up ``"a.b.c"`` in nested mappings, returning *default* when absent."""
    node: Any = config or {}
    for part in dotted_key.split("."):
        if not isinstance(node, Mapping):
            return default
        node = node.get(part, _MISSING)
        if node is _MISSING:
            return default
    return node


def lenient_count(value: Any, default: int, low: int, high: int) -> int:
    """*value* read as a whole number and clamped to [low, high]; *default* when it is none.

    ``2``, ``2.0`` and ``"2"`` are 2; a boolean, a non-number or an infinity is
    *default*. For settings a tool reads forgivingly (``doctor`` says which
    values it had to clamp or replace).
    """
    if isinstance(value, bool):
        number = default
    elif isinstance(value, int):
        number = value
    else:
        try:
            number = int(float(str(value).strip()))
        except (TypeError, ValueError, OverflowError):
            number = default
    return max(low, min(high, number))


LONGEST_SECONDS = 86_400.0
"""The longest duration :func:`lenient_seconds` honours; more is read as a day."""


def lenient_seconds(value: Any, default: float) -> float:
    """*value* read as seconds, at most :data:`LONGEST_SECONDS`; *default* when it is not a
    positive number (a boolean, text, zero, a negative number or NaN)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    if isinstance(value, bool) or not number > 0:  # NaN is not > 0 either
        return default
    return min(number, LONGEST_SECONDS)


def model_endpoint(
    config: Mapping[str, Any] | None,
    section: str = "model",
    environ: Mapping[str, str] | None = None,
) -> tuple[Any, Any]:
    """The ``(base_url, model)`` that *section* names, unchecked (``None`` when unset).

    Each falls back to the ``model`` section, then to ``HERMES_MODEL_BASE_URL``
    (or ``OPENAI_BASE_URL``) and ``HERMES_MODEL`` in *environ* (default
    ``os.environ``). The model may also be given as ``default``, the key Hermes
    Agent writes (``model: {default: …}``).
    """

    def pick(*keys: str) -> Any:
        for name in dict.fromkeys((section, "model")):
            for key in keys:
                value = cfg_get(config, f"{name}.{key}")
                if value not in (None, ""):
                    return value
        return None

    env = os.environ if environ is None else environ
    base_url = pick("base_url") or env.get("HERMES_MODEL_BASE_URL") or env.get("OPENAI_BASE_URL")
    return base_url or None, pick("model", "default") or env.get("HERMES_MODEL") or None


def config_section(config: Mapping[str, Any] | None, dotted_key: str) -> Mapping[str, Any]:
    """The settings under *dotted_key* (``{}`` when absent).

    Raises :class:`ConfigError` when the key holds something other than a
    mapping (``compression: 7``), which would otherwise be silently ignored.
    """
    value = cfg_get(config, dotted_key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{dotted_key} must be a mapping of settings (indented `key: value` lines under "
            f"`{dotted_key.rsplit('.', 1)[-1]}:`), found {value!r:.80}. Fix it in config.yaml."
        )
    return value


def set_config_value(config: dict[str, Any], dotted_key: str, value: Any) -> None:
    """Set ``"a.b.c"`` in nested dicts, creating intermediate dicts.

    Raises :class:`ConfigError`, leaving *config* unchanged, when *dotted_key*
    has an empty part (``"a..b"``) or passes through a value that is not a
    mapping (``model: gpt-4o`` for ``"model.base_url"``), which would be lost.
    """
    parts = dotted_key.split(".") if isinstance(dotted_key, str) else [""]
    if not all(part.strip() for part in parts):
        raise ConfigError(
            f"{dotted_key!r} is not a setting name: use dot-separated names such as model.base_url."
        )
    node = config
    for depth, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            section = ".".join(parts[: depth + 1])
            raise ConfigError(
                f"Cannot set {dotted_key}: {section} holds a {type(child).__name__}, not a "
                f"section of settings. Change {section} in config.yaml to a mapping first."
            )
        node = child
    node[parts[-1]] = value


TRUTHY_STRINGS = frozenset({"1", "true", "yes", "on"})
"""Setting values read as "on" (compared stripped and lower-cased)."""


def is_truthy(value: Any, default: bool = False) -> bool:
    """``True`` for True, non-zero numbers and ``1/true/yes/on``; *default* for None."""
    if value is None:
        return default
    if isinstance(value, str):
        return value.strip().lower() in TRUTHY_STRINGS
    return bool(value)


def selected_provider(config: Mapping[str, Any] | None) -> str | None:
    """The external provider named by ``memory.provider``, or ``None`` for builtin only."""
    value = cfg_get(config, "memory.provider")
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"memory.provider must be a provider name (a string), found {value!r}.")
    from hermes_core.provider import is_core_memory_provider  # the provider contract's rule

    value = value.strip()
    return None if is_core_memory_provider(value) else value
