"""A scripted local model: a deterministic stand-in for a chat model, for the offline demo.

:class:`ScriptedModel` is a responder for
:class:`hermes_core.testing.openai_fake.FakeOpenAIServer`, so the runtime talks
to it over real HTTP exactly as it would to a hosted model. It follows a few
plain rules on the latest message of each request:

* "remember …" → a ``memory`` tool call (``target='user'`` for facts about the
  speaker, ``'memory'`` otherwise), then a confirmation once the result is back;
* "what do you know about me" → an answer read from the system prompt's frozen
  memory snapshot;
* "last time" / "earlier" / "before" → a ``session_search`` tool call with the
  message's keywords, then an answer built from the search result;
* a checkpoint request from the compressor → a short structured checkpoint;
* anything else → a brief acknowledgement.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.testing.openai_fake import FakeReply, tool_call

__all__ = ["ScriptedModel", "search_keywords"]

_REMEMBER_RE = re.compile(
    r"\bremember(?:\s+that)?\s*[:,]?\s*(?P<fact>.+)", re.IGNORECASE | re.DOTALL
)
_ABOUT_SPEAKER_RE = re.compile(r"\b(?:i|i'm|i am|my|me|mine)\b", re.IGNORECASE)
_RECALL_ME_RE = re.compile(r"what do you (?:know|remember) about me|who am i", re.IGNORECASE)
_PAST_RE = re.compile(
    r"\b(?:last time|did we|we discussed|previous (?:session|conversation)|remind me)\b",
    re.IGNORECASE,
)
_THIRD_PERSON = (
    (re.compile(r"\bI am\b|\bI'm\b"), "they are"),
    (re.compile(r"\bI\b"), "they"),
    (re.compile(r"\bmy\b", re.IGNORECASE), "their"),
    (re.compile(r"\bme\b", re.IGNORECASE), "them"),
    (re.compile(r"\bmine\b", re.IGNORECASE), "theirs"),
)
_STOP_WORDS_TEXT = (
    "a an and are as at be before did do does earlier for from how i in is it last me my of "
    "on or our previous previously so that the this time to up us was we were what when where "
    "which who why with you your set discussed remind again"
)
_STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
_ORIGIN_TAG = re.compile(r"^\[(?:user|model|tool|unknown)\] ")
"""The origin tag each entry of the memory snapshot starts with."""
_CHECKPOINT_MARKERS = ("TURNS TO SUMMARIZE:", "NEW TURNS TO FOLD IN:")
_RECAP_RE = re.compile(r"^Search topic: (?P<topic>[^\n]+)\n(?:.*\n)*?TRANSCRIPT:", re.M)


def search_keywords(text: str, limit: int = 3) -> str:
    """The content words of *text*, at most *limit*, as a search query."""
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9_-]*", text)
    content = [w for w in words if w.lower() not in _STOP_WORDS and len(w) > 2]
    return " ".join(dict.fromkeys(content[:limit]))


def _text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _user_text(message: Mapping[str, Any]) -> str:
    """The user's own words, without an appended ``<memory-context>`` block."""
    return _text(message).split("<memory-context>", 1)[0].strip()


class ScriptedModel:
    """Answers chat-completions requests by rule; see the module docstring."""

    def __init__(self) -> None:
        self._calls = 0

    def __call__(self, body: dict[str, Any]) -> FakeReply:
        messages: Sequence[Mapping[str, Any]] = [
            m for m in body.get("messages") or [] if isinstance(m, Mapping)
        ]
        tools = {
            str((t.get("function") or {}).get("name"))
            for t in body.get("tools") or []
            if isinstance(t, Mapping)
        }
        if not messages:
            return FakeReply(content="(no messages)")
        last = messages[-1]
        if last.get("role") == "user" and any(m in _text(last) for m in _CHECKPOINT_MARKERS):
            return FakeReply(content=self._checkpoint(_text(last)))
        if last.get("role") == "user" and _RECAP_RE.search(_text(last)):
            return FakeReply(content=self._recap(_text(last)))
        if last.get("role") == "tool":
            return FakeReply(content=self._after_tool(messages))
        user = _user_text(last)
        remember = _REMEMBER_RE.search(user)
        if remember and "memory" in tools:
            fact = remember.group("fact").strip().rstrip(".")
            target = "user" if _ABOUT_SPEAKER_RE.search(fact) else "memory"
            if target == "user":
                for pattern, replacement in _THIRD_PERSON:
                    fact = pattern.sub(replacement, fact)
                fact = f"The user said {fact}"
            else:
                fact = fact[:1].upper() + fact[1:]
            return self._tool("memory", {"action": "add", "target": target, "content": fact})
        if _RECALL_ME_RE.search(user):
            return FakeReply(content=self._what_i_know(messages))
        if _PAST_RE.search(user) and "session_search" in tools:
            return self._tool("session_search", {"query": search_keywords(user)})
        return FakeReply(content=f"Understood. Noted for this conversation: {user[:160]}")

    def _tool(self, name: str, arguments: dict[str, Any]) -> FakeReply:
        self._calls += 1
        return FakeReply(tool_calls=[tool_call(name, arguments, f"call_{self._calls}")])

    @staticmethod
    def _after_tool(messages: Sequence[Mapping[str, Any]]) -> str:
        result_text = _text(messages[-1])
        name = ""
        call_id = messages[-1].get("tool_call_id")
        for message in reversed(messages):
            for call in message.get("tool_calls") or []:
                if isinstance(call, Mapping) and call.get("id") == call_id:
                    name = str((call.get("function") or {}).get("name") or "")
        try:
            result = json.loads(result_text)
        except json.JSONDecodeError:
            result = {"text": result_text}
        if not isinstance(result, Mapping):
            result = {"result": result}
        if result.get("error") or result.get("success") is False:
            return f"The {name or 'tool'} call failed: {result.get('error') or result_text[:200]}"
        if name == "memory":
            return "Saved. I will know this in our next conversation."
        if name == "session_search":
            return _describe_search(result)
        return f"Done: {result_text[:200]}"

    @staticmethod
    def _what_i_know(messages: Sequence[Mapping[str, Any]]) -> str:
        system = next((_text(m) for m in messages if m.get("role") == "system"), "")
        lines = (_ORIGIN_TAG.sub("", line).strip() for line in system.splitlines())
        facts = [line for line in lines if line.startswith("The user said")]
        if not facts:
            return "I don't have anything saved about you yet."
        return "From my memory: " + " ".join(dict.fromkeys(facts))

    @staticmethod
    def _recap(prompt: str) -> str:
        """A query-focused recap of a past session (for ``session_search`` summaries)."""
        found = _RECAP_RE.search(prompt)
        topic = found.group("topic").strip() if found else ""
        transcript = prompt.split("TRANSCRIPT:", 1)[-1]
        words = [w.lower() for w in re.findall(r"\w{3,}", topic)]
        lines = [
            " ".join(line.split())[:200]
            for line in transcript.splitlines()
            if line.startswith("[") and any(w in line.lower() for w in words)
        ]
        if not lines:
            return f"That conversation did not discuss {topic}."
        return f"On {topic}: " + " ".join(dict.fromkeys(lines[:3]))

    @staticmethod
    def _checkpoint(prompt: str) -> str:
        turns = prompt
        for marker in _CHECKPOINT_MARKERS:
            if marker in prompt:
                turns = prompt.split(marker, 1)[1]
        turns = turns.split("\n\nWrite a new checkpoint", 1)[0].split("\n\nUpdate the previous", 1)[
            0
        ]
        asks = re.findall(r"^\[USER\]: (.+)$", turns, flags=re.MULTILINE)
        calls = re.findall(r"^\[ASSISTANT TOOL CALL\]: (.+)$", turns, flags=re.MULTILINE)
        actions = "\n".join(f"{i}. {c[:80]}" for i, c in enumerate(calls, 1)) or "None."
        topics = "\n".join(f"- {a[:60]}" for a in asks) or "None."
        return (
            "## Historical Task Snapshot\n"
            + (asks[-1][:120] if asks else "None.")
            + "\n\n## Goal\n"
            + (asks[0][:120] if asks else "Not stated.")
            + "\n\n## Completed Actions\n"
            + actions
            + "\n\n## Critical Context\n"
            + topics
        )


def _describe_search(result: Mapping[str, Any]) -> str:
    hits = None
    for key in ("results", "sessions", "matches"):
        if isinstance(result.get(key), list):
            hits = result[key]
            break
    if not hits:
        return "I searched our earlier conversations but found nothing about that."
    lines = []
    for hit in hits[:3]:
        if not isinstance(hit, Mapping):
            continue
        label = str(hit.get("title") or hit.get("session_id") or "a session")
        if hit.get("when"):
            label += f" ({hit['when']})"
        detail = ""
        for key in ("summary", "preview", "snippet", "excerpt", "text"):
            if isinstance(hit.get(key), str) and hit[key].strip():
                detail = " ".join(hit[key].split())[:200]
                break
        lines.append(f"- {label}: {detail}" if detail else f"- {label}")
    return "I found this in our earlier conversations:\n" + "\n".join(lines)
