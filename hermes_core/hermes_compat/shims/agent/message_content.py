"""``agent.message_content``: the visible text of a chat message's ``content``.

Chat Completions and Responses messages carry either a string or a list of
parts (``{"type": "text", "text": ...}``, ``input_text``, ``output_text``,
images, audio). :func:`flatten_message_text` keeps the text of each part and
drops the rest, as Hermes Agent does before handing a turn to a memory plugin.
"""

from collections.abc import Mapping
from typing import Any, NoReturn

from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = ["flatten_message_text"]

_MEDIA_TYPES = frozenset({"image", "image_url", "input_image", "audio", "input_audio"})
_TEXT_FIELDS = ("text", "content", "input_text", "output_text", "summary_text")


def _get(part: Any, key: str) -> Any:
    return part.get(key) if isinstance(part, Mapping) else getattr(part, key, None)


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if part is None or str(_get(part, "type") or "").strip().lower() in _MEDIA_TYPES:
        return ""
    return next((value for key in _TEXT_FIELDS if isinstance(value := _get(part, key), str)), "")


def flatten_message_text(content: Any, *, sep: str = "\n") -> str:
    """The text of *content*: a string as is, the text parts of a list joined by *sep*.

    Media parts and empty parts are skipped; a single part object gives its
    text, and anything else its ``str()`` (``""`` for ``None``).
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return sep.join(text for text in map(_part_text, content) if text)
    text = _part_text(content)
    if text:
        return text
    try:
        return str(content)
    except Exception:
        return ""


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
