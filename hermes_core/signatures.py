"""What arguments a provider's or plugin's callable accepts, read from its signature.

Providers and Hermes plugins were written against several versions of the
hook signatures. The manager and the plugin bridge read each callable's
signature once and pass only what it takes, so an older provider keeps working
when a hook gains an argument.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["keyword_names", "only_accepted", "with_session_id"]


def keyword_names(fn: Callable[..., Any], skip: int = 0) -> frozenset[str] | None:
    """Keyword arguments *fn* takes after its first *skip* parameters.

    ``None`` means "any": *fn* takes ``**kwargs`` or its signature cannot be read.
    """
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(
        p.name for p in parameters[skip:] if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    )


def only_accepted(keywords: frozenset[str] | None, values: Mapping[str, Any]) -> dict[str, Any]:
    """The items of *values* named in *keywords* (all of them for ``None``)."""
    return dict(values) if keywords is None else {k: v for k, v in values.items() if k in keywords}


def _session_id_is_positional(fn: Callable[..., Any]) -> bool:
    """Whether *fn*'s second parameter is positional-only and is the session id.

    It is when it is named ``session_id`` or has no default (a required slot
    only the session id can fill), as in ``prefetch(query, session_id, /)``.
    """
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    return (
        len(parameters) >= 2
        and parameters[1].kind is inspect.Parameter.POSITIONAL_ONLY
        and (parameters[1].name == "session_id" or parameters[1].default is parameters[1].empty)
    )


def with_session_id(fn: Callable[..., Any]) -> Callable[[Any, str], Any]:
    """``fn(query, session_id=...)``, ``fn(query, session_id)`` or ``fn(query)``.

    The session id goes by keyword when *fn* accepts it so, positionally when
    its second parameter is a positional-only session id, and not at all for a
    legacy ``fn(query)``.
    """
    keywords = keyword_names(fn, skip=1)
    if keywords is None or "session_id" in keywords:
        return lambda query, session_id: fn(query, session_id=session_id)
    if _session_id_is_positional(fn):
        return lambda query, session_id: fn(query, session_id)
    return lambda query, session_id: fn(query)
