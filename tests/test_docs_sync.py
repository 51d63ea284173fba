"""Every hook is documented with its exact signature (in the style of datasette's docs test).

Adding a hookspec or a provider hook without documenting it, or changing a
signature without updating the docs, fails here.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core import hookspecs
from hermes_core.provider import MemoryProvider

DOCS = Path(__file__).resolve().parent.parent / "docs"
PLUGINS_DOC = DOCS / "plugins.md"
CONTRACT_DOC = DOCS / "provider-contract.md"


def _default(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def render_signature(name: str, fn: Callable[..., Any]) -> str:
    """``name(a: int, *, b: str = "") -> None`` from the source annotations, without self."""
    signature = inspect.signature(fn)
    params = [p for p in signature.parameters.values() if p.name != "self"]
    parts: list[str] = []
    bare_star_done = any(p.kind is p.VAR_POSITIONAL for p in params)
    for p in params:
        if p.kind is p.KEYWORD_ONLY and not bare_star_done:
            parts.append("*")
            bare_star_done = True
        text = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name
        if p.annotation is not p.empty:
            text += f": {p.annotation}"
        if p.default is not p.empty:
            text += f" = {_default(p.default)}"
        parts.append(text)
    returns = signature.return_annotation
    suffix = f" -> {returns}" if returns is not signature.empty else ""
    return f"{name}({', '.join(parts)}){suffix}"


def hookspec_names() -> list[str]:
    return sorted(
        name
        for name, value in vars(hookspecs).items()
        if callable(value) and hasattr(value, "hermes_memory_spec")
    )


def provider_members() -> dict[str, str]:
    """Public member of MemoryProvider -> its documented signature line."""
    members = {}
    for name in dir(MemoryProvider):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(MemoryProvider, name)
        if isinstance(attr, property):
            members[name] = f"{name} -> {attr.fget.__annotations__['return']}"  # type: ignore[union-attr]
        elif callable(attr):
            members[name] = render_signature(name, attr)
        else:
            annotation = inspect.get_annotations(MemoryProvider)[name]
            members[name] = f"{name}: {annotation} = {attr!r}"
    return members


def heading_names(text: str) -> set[str]:
    return set(re.findall(r"^#{2,4} `([A-Za-z_][A-Za-z0-9_]*)`\s*$", text, re.MULTILINE))


def test_there_is_something_to_check() -> None:
    assert hookspec_names() == ["register_commands", "register_memory_providers"]
    assert {"name", "initialize", "sync_turn", "on_memory_write"} <= set(provider_members())


@pytest.mark.parametrize("hook", hookspec_names())
def test_hookspec_is_documented_with_its_signature(hook: str) -> None:
    text = PLUGINS_DOC.read_text(encoding="utf-8")
    assert hook in heading_names(text), f"docs/plugins.md needs a heading `{hook}`"
    signature = render_signature(hook, getattr(hookspecs, hook))
    assert signature in text, f"docs/plugins.md must show `{signature}`"


@pytest.mark.parametrize("member", sorted(provider_members()))
def test_provider_member_is_documented_with_its_signature(member: str) -> None:
    text = CONTRACT_DOC.read_text(encoding="utf-8")
    assert member in heading_names(text), f"docs/provider-contract.md needs a heading `{member}`"
    signature = provider_members()[member]
    assert signature in text, f"docs/provider-contract.md must show `{signature}`"


def test_contract_documents_no_hook_that_does_not_exist() -> None:
    documented = heading_names(CONTRACT_DOC.read_text(encoding="utf-8"))
    assert documented - set(provider_members()) == set()


def test_plugins_page_documents_no_hookspec_that_does_not_exist() -> None:
    text = PLUGINS_DOC.read_text(encoding="utf-8")
    hooks_section = text.split("\n## Hooks\n", 1)[1].split("\n## ", 1)[0]
    assert heading_names(hooks_section) == set(hookspec_names())
