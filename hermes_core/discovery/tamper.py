"""Detect a plugin that replaces hermes-memory's own functions while it loads.

A plugin runs arbitrary code at import. One that rebinds, say,
``hermes_core.fencing.sanitize_context`` or a method of ``MemoryManager``
would quietly switch off a defence for every provider; so would one that
rebinds a compiled pattern (``fencing._LT``) or a constant
(``provenance.TOOL_OVERLAP``). :func:`watch` takes a snapshot of every
function, class, compiled pattern and upper-case constant bound in our modules
(and the functions of our classes) before a plugin loads and compares after:
each binding that changed is put back and reported as a :class:`Replacement`
naming what was replaced and by what. A list, dict or set bound to an
upper-case name (``threats._LOOKALIKES``, ``tool.MEMORY_SCHEMA``) is copied
too, deeply: one whose contents a plugin changed in place gets its contents
back, in the same object, and is reported as changed in place. (Upper case
means constant here: module state our code changes at run time has a
lower-case name.)
"""

from __future__ import annotations

import contextlib
import copy
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["OWN_PACKAGES", "Replacement", "watch"]

OWN_PACKAGES = ("hermes_core", "hermes_memory_builtin")
"""Packages whose bindings a plugin must not change."""

_Key = tuple[str, str, str]  # (module, class or "", attribute)


@dataclass(frozen=True)
class Replacement:
    """One binding a plugin changed: *where* (``module.name`` or ``module.Class.name``)."""

    where: str
    replaced_by: str
    in_place: bool = False
    """The binding stayed; the contents of the list, dict or set it names changed."""

    def describe(self) -> str:
        """``"replaced hermes_core.fencing.sanitize_context with evil.f"`` (or ``"changed
        hermes_memory_builtin.threats._LOOKALIKES in place"``)."""
        if self.in_place:
            return f"changed {self.where} in place"
        return f"replaced {self.where} with {self.replaced_by}"


def _ours(value: Any) -> bool:
    module = getattr(value, "__module__", None)
    return isinstance(module, str) and module.split(".")[0] in OWN_PACKAGES


def _guarded(value: Any) -> bool:
    return callable(value) or isinstance(value, (staticmethod, classmethod, property))


_CONSTANT_TYPES = (str, bytes, int, float, tuple, frozenset, re.Pattern)


def _constant(attribute: str, value: Any) -> bool:
    """A compiled pattern, or an immutable value bound to an upper-case name."""
    return isinstance(value, re.Pattern) or (
        attribute.isupper() and isinstance(value, _CONSTANT_TYPES)
    )


_CONTAINER_TYPES = (list, dict, set)


def _our_modules() -> Iterator[tuple[str, Any]]:
    for module_name, module in list(sys.modules.items()):
        if module is not None and module_name.split(".")[0] in OWN_PACKAGES:
            yield module_name, module


def _containers() -> dict[_Key, tuple[Any, Any]]:
    """Each upper-case list, dict and set our modules bind: ``(the object, a deep copy)``;
    one that deepcopy cannot take, or whose copy is not equal to it (objects compared by
    identity), is left out: a later comparison could not tell a change."""
    found: dict[_Key, tuple[Any, Any]] = {}
    for module_name, module in _our_modules():
        for attribute, value in list(vars(module).items()):
            if attribute.isupper() and type(value) in _CONTAINER_TYPES:
                with contextlib.suppress(Exception):
                    contents = copy.deepcopy(value)
                    if contents == value:
                        found[(module_name, "", attribute)] = (value, contents)
    return found


def _refill(container: Any, contents: Any) -> None:
    """Put *contents* (a deep copy made before) back into *container*, the same object."""
    if isinstance(container, list):
        container[:] = copy.deepcopy(contents)
    else:
        container.clear()
        container.update(copy.deepcopy(contents))


def _snapshot() -> dict[_Key, Any]:
    """Every function and class our modules bind, and the functions of our classes."""
    found: dict[_Key, Any] = {}
    for module_name, module in _our_modules():
        for attribute, value in list(vars(module).items()):
            if _constant(attribute, value):
                found[(module_name, "", attribute)] = value
                continue
            if not _guarded(value) or not _ours(value):
                continue
            found[(module_name, "", attribute)] = value
            if isinstance(value, type) and value.__module__ == module_name:
                for member, inner in list(vars(value).items()):
                    if _guarded(inner) and not member.startswith("__"):
                        found[(module_name, value.__qualname__, member)] = inner
    return found


def _describe_value(value: Any) -> str:
    if value is None:
        return "nothing (deleted)"
    if isinstance(value, _CONSTANT_TYPES):
        shown = repr(value)
        return shown if len(shown) <= 80 else shown[:77] + "..."
    module = getattr(value, "__module__", None) or type(value).__module__
    name = getattr(value, "__qualname__", None) or type(value).__qualname__
    return f"{module}.{name}"


def _current(key: _Key) -> Any:
    module_name, class_name, attribute = key
    owner: Any = sys.modules.get(module_name)
    if owner is None:
        return None
    if class_name:
        owner = vars(owner).get(class_name.split(".")[0])
        if owner is None:
            return None
        return vars(owner).get(attribute) if isinstance(owner, type) else None
    return vars(owner).get(attribute)


def _restore(key: _Key, value: Any) -> None:
    module_name, class_name, attribute = key
    owner: Any = sys.modules[module_name]
    if class_name:
        owner = getattr(owner, class_name.split(".")[0])
    with contextlib.suppress(AttributeError, TypeError):
        setattr(owner, attribute, value)


@contextlib.contextmanager
def watch(found: list[Replacement]) -> Iterator[None]:
    """Within the block, changes to our bindings are undone and appended to *found*."""
    before = _snapshot()
    containers = _containers()
    try:
        yield
    finally:
        for key, (container, contents) in containers.items():
            before.setdefault(key, container)  # a rebinding is undone below
            with contextlib.suppress(Exception):  # a comparison that raises: left
                if container != contents:
                    found.append(Replacement(_where(key), "", in_place=True))
                    _refill(container, contents)
        for key, original in before.items():
            now = _current(key)
            if now is original or (
                isinstance(original, _CONSTANT_TYPES)
                and type(now) is type(original)
                and now == original
            ):
                continue
            found.append(Replacement(_where(key), _describe_value(now)))
            _restore(key, original)


def _where(key: _Key) -> str:
    return ".".join(part for part in key if part)
