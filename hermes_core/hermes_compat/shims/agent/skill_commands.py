"""``agent.skill_commands``: the user's words inside a turn a ``/skill`` command expanded.

hermes-memory has no skills, so its own turns never carry this scaffolding and
:func:`extract_user_instruction_from_skill_message` returns them unchanged.
Memory plugins written for Hermes Agent call it on every turn they store, and a
conversation imported from Hermes may still hold expanded turns: for those the
user's instruction is recovered as Hermes does, and ``None`` means there was none.
"""

from typing import Any, NoReturn

from hermes_core.hermes_compat.finder import missing_attribute

__hermes_compat__ = True

__all__ = ["extract_user_instruction_from_skill_message"]

# The fixed phrases of the message Hermes Agent builds when a skill is invoked.
_INVOKED = "[IMPORTANT: The user has invoked the "
_ONE_SKILL = "The full skill content is loaded below.]"
_ONE_SKILL_INSTRUCTION = (
    "The user has provided the following instruction alongside the skill invocation: "
)
_RUNTIME_NOTE = "\n\n[Runtime note:"
_BUNDLE = " skill bundle,"
_BUNDLE_INSTRUCTION = "\nUser instruction: "
_BUNDLE_FIRST_SKILL = "\n\n[Loaded as part of the "


def _between(text: str, start: int, marker: str, end_marker: str) -> str | None:
    if start < 0:
        return None
    instruction = text[start + len(marker) :]
    end = instruction.find(end_marker)
    if end >= 0:
        instruction = instruction[:end]
    return instruction.strip() or None


def extract_user_instruction_from_skill_message(content: Any) -> str | None:
    """*content* unchanged unless a skill expanded it; then the user's instruction, or ``None``.

    A non-string *content* gives ``None``.
    """
    if not isinstance(content, str):
        return None
    if not content.startswith(_INVOKED):
        return content
    if _BUNDLE in content:
        # a bundle states the instruction before its skills: the first one is the user's
        start = content.find(_BUNDLE_INSTRUCTION)
        return _between(content, start, _BUNDLE_INSTRUCTION, _BUNDLE_FIRST_SKILL)
    if _ONE_SKILL in content:
        # a single skill appends it after the skill body, which may quote the phrase
        start = content.rfind(_ONE_SKILL_INSTRUCTION)
        return _between(content, start, _ONE_SKILL_INSTRUCTION, _RUNTIME_NOTE)
    return None


def __getattr__(name: str) -> NoReturn:
    raise missing_attribute(__name__, name, __all__)
