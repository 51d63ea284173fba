"""Context compression: when a session's context passes a share of the model's window.

:class:`ContextCompressor` keeps the first messages (the head, 3 by default)
and a tail that fits a token budget (at most 6 messages by default, and always
the latest user message), and replaces the middle with one checkpoint
(:mod:`hermes_core.runtime.summary`). The checkpoint comes from the model,
iteratively (the previous one is carried forward), or from a deterministic
extractive summary when no model is configured or it fails. A tool call is
never separated from its results.

This module only transforms message lists. Ending the old session, creating
the child with ``parent_session_id``, numbering its title and notifying the
providers is :class:`hermes_core.runtime.session.AgentSession`'s job.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from hermes_core.config import cfg_get, config_section
from hermes_core.errors import ConfigError
from hermes_core.runtime.summary import (
    SUMMARY_END_MARKER,
    build_summary_prompt,
    content_text,
    extractive_budget,
    extractive_summary,
    serialize_turns,
    split_handoff,
    strip_reasoning,
    summary_target_tokens,
    with_summary_prefix,
)
from hermes_core.runtime.tokens import (
    CHARS_PER_TOKEN,
    estimate_message_tokens,
    estimate_messages_tokens,
)

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "CompressionResult",
    "CompressionSettings",
    "CompressionWindow",
    "ContextCompressor",
    "assemble_compressed",
    "repair_tool_pairs",
    "select_window",
]

logger = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 128_000
"""Assumed context window when ``model.context_window`` is not configured."""

MIN_MIDDLE_MESSAGES = 2
"""A window with fewer messages to drop is not worth a checkpoint."""

MAX_INEFFECTIVE_STREAK = 2
"""Automatic compression pauses after this many compressions that did not get under."""

Summarizer = Callable[[str], str]
"""Turns a checkpoint prompt into checkpoint text; raises on failure."""


def _number(config: Mapping[str, Any] | None, key: str, default: float, kind: type) -> Any:
    value = cfg_get(config, key, None)
    if value in (None, ""):
        return default
    if isinstance(value, bool):
        raise ConfigError(f"{key} must be a number, got {value!r}.")
    try:
        number = kind(value)
    except (TypeError, ValueError, OverflowError) as exc:  # int(.inf) overflows
        raise ConfigError(f"{key} must be a finite number, got {value!r}.") from exc
    if not math.isfinite(number):
        raise ConfigError(f"{key} must be a finite number, got {value!r}.")
    return number


@dataclass(frozen=True)
class CompressionSettings:
    """When to compress and what to keep (``compression.*`` and ``model.context_window``)."""

    enabled: bool = True
    threshold: float = 0.75
    context_window: int = DEFAULT_CONTEXT_WINDOW
    protect_first_n: int = 3
    protect_last_n: int = 6
    tail_ratio: float = 0.20
    max_summary_tokens: int = 4_000

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise ConfigError(
                f"compression.threshold must be a share of the window in (0, 1], "
                f"got {self.threshold!r}; 0.75 means compress at 75 %."
            )
        if self.context_window < 256:
            raise ConfigError(
                f"model.context_window must be at least 256 tokens, got {self.context_window!r}."
            )
        if self.protect_first_n < 0 or self.protect_last_n < 1:
            raise ConfigError(
                "compression.protect_first_n must be >= 0 and compression.protect_last_n >= 1."
            )
        if not 0.05 <= self.tail_ratio <= 0.8:
            raise ConfigError(
                f"compression.tail_ratio must be within [0.05, 0.8], got {self.tail_ratio!r}."
            )

    @property
    def threshold_tokens(self) -> int:
        """Context size (tokens) at which compression triggers."""
        return max(1, int(self.context_window * self.threshold))

    @property
    def tail_token_budget(self) -> int:
        """Tokens the kept tail may use."""
        return max(1, int(self.threshold_tokens * self.tail_ratio))

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> CompressionSettings:
        """Read ``compression.*`` and ``model.context_window``; :class:`ConfigError` if bad."""
        config_section(config, "compression")
        config_section(config, "model")
        enabled = cfg_get(config, "compression.enabled", True)
        if not isinstance(enabled, bool):
            raise ConfigError(f"compression.enabled must be true or false, got {enabled!r}.")
        return cls(
            enabled=enabled,
            threshold=_number(config, "compression.threshold", cls.threshold, float),
            context_window=_number(config, "model.context_window", DEFAULT_CONTEXT_WINDOW, int),
            protect_first_n=_number(config, "compression.protect_first_n", 3, int),
            protect_last_n=_number(config, "compression.protect_last_n", 6, int),
            tail_ratio=_number(config, "compression.tail_ratio", cls.tail_ratio, float),
            max_summary_tokens=_number(config, "compression.max_summary_tokens", 4_000, int),
        )


@dataclass(frozen=True)
class CompressionWindow:
    """``messages[:head_end]`` and ``messages[tail_start:]`` are kept; the middle goes."""

    head_end: int
    tail_start: int

    @property
    def middle_size(self) -> int:
        """How many messages the checkpoint replaces."""
        return max(0, self.tail_start - self.head_end)


def _role(message: Mapping[str, Any]) -> str:
    return str(message.get("role") or "")


def select_window(
    messages: Sequence[Mapping[str, Any]], settings: CompressionSettings
) -> CompressionWindow:
    """Choose head and tail; neither boundary falls inside a tool-call group.

    The tail grows backwards while it has fewer than ``protect_last_n``
    messages and stays within the token budget (one message is always kept),
    starts at the assistant message owning any tool results it holds, and
    always contains the latest user message.
    """
    n = len(messages)
    head_end = min(settings.protect_first_n, n)
    while head_end < n and _role(messages[head_end]) == "tool":
        head_end += 1
    tail_start, used = n, 0
    budget = settings.tail_token_budget
    while tail_start > head_end:
        kept = n - tail_start
        if kept >= settings.protect_last_n:
            break
        cost = estimate_message_tokens(messages[tail_start - 1])
        if kept >= 1 and used + cost > budget:
            break
        used += cost
        tail_start -= 1
    while head_end < tail_start < n and _role(messages[tail_start]) == "tool":
        tail_start -= 1
    users = [i for i, m in enumerate(messages) if _role(m) == "user"]
    if users and head_end <= users[-1] < tail_start:
        tail_start = users[-1]
    return CompressionWindow(head_end=head_end, tail_start=max(tail_start, head_end))


def repair_tool_pairs(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop tool results without an earlier call and tool calls without a later result.

    ``tool_calls`` that are not a list of dicts (a JSON string, say) count as no calls,
    and an assistant message left without calls loses its ``tool_calls`` key.
    """
    last_result = {
        str(m.get("tool_call_id")): i for i, m in enumerate(messages) if _role(m) == "tool"
    }
    issued: set[str] = set()
    repaired: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if _role(message) == "assistant" and "tool_calls" in message:
            raw = message["tool_calls"]
            listed = raw if isinstance(raw, list) else []  # a JSON string, say: unusable
            calls = [
                c
                for c in listed
                if isinstance(c, Mapping) and last_result.get(str(c.get("id")), -1) > index
            ]
            issued.update(str(c.get("id")) for c in calls)
            fixed = dict(message)
            if calls:
                fixed["tool_calls"] = calls
            else:
                fixed.pop("tool_calls")  # an empty list is refused by strict backends
                if raw and not content_text(fixed.get("content")).strip():
                    fixed["content"] = "(tool call removed)"
            repaired.append(fixed)
        elif _role(message) == "tool":
            if str(message.get("tool_call_id")) in issued:
                repaired.append(message)
        else:
            repaired.append(message)
    return repaired


def assemble_compressed(
    head: Sequence[Mapping[str, Any]],
    summary: str,
    tail: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """Head + checkpoint + tail, with the checkpoint's role chosen so no two roles repeat.

    The checkpoint is a ``user`` message after an assistant/tool message or an
    empty head (or when no user message would survive), otherwise an
    ``assistant`` one; if that collides with the first tail message it flips,
    and if flipping collides with the head it is merged into the first tail
    message instead.
    """
    text = f"{with_summary_prefix(summary)}\n{SUMMARY_END_MARKER}"
    head_list = [dict(m) for m in head]
    tail_list = [dict(m) for m in tail]
    last_head = _role(head_list[-1]) if head_list else ""
    first_tail = _role(tail_list[0]) if tail_list else ""
    any_user = any(_role(m) == "user" for m in (*head_list, *tail_list))
    role = "user" if last_head in ("", "assistant", "tool") or not any_user else "assistant"
    if role == first_tail:
        flipped = "assistant" if role == "user" else "user"
        if flipped != last_head:
            role = flipped
        else:
            merged = dict(tail_list[0])
            merged["content"] = f"{text}\n\n{content_text(merged.get('content'))}".rstrip()
            return repair_tool_pairs([*head_list, merged, *tail_list[1:]])
    return repair_tool_pairs([*head_list, {"role": role, "content": text}, *tail_list])


@dataclass(frozen=True)
class CompressionResult:
    """What one compression produced."""

    messages: list[dict[str, Any]]
    summary: str
    summary_source: str
    """``"model"``, ``"extractive"`` (no model configured) or ``"fallback"`` (model failed)."""
    dropped: int
    tokens_before: int
    """Estimated tokens of the transcript before (system prompt and tools excluded)."""
    tokens_after: int
    """Estimated tokens of the compressed transcript."""
    error: str = ""


class ContextCompressor:
    """Decides when to compress and turns a transcript into head + checkpoint + tail."""

    def __init__(self, settings: CompressionSettings, summarizer: Summarizer | None = None) -> None:
        self.settings = settings
        self.summarizer = summarizer
        self.previous_summary: str | None = None
        self.compression_count = 0
        self.ineffective_streak = 0

    @property
    def paused(self) -> bool:
        """True after repeated compressions that could not get under the threshold."""
        return self.ineffective_streak >= MAX_INEFFECTIVE_STREAK

    def note_context(self, tokens: int) -> None:
        """Record the context size right after a compression (pauses an ineffective one)."""
        if tokens >= self.settings.threshold_tokens:
            self.ineffective_streak += 1
        else:
            self.ineffective_streak = 0

    def should_compress(self, tokens: int) -> bool:
        """Whether a context of *tokens* calls for automatic compression."""
        return (
            self.settings.enabled and not self.paused and tokens >= self.settings.threshold_tokens
        )

    def compress(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        provider_context: str = "",
        focus: str | None = None,
        today: date | None = None,
        redact: Callable[[str], str] | None = None,
    ) -> CompressionResult | None:
        """Compress *messages*, or ``None`` when there is too little to drop.

        *redact* scrubs the turns before they reach the summariser and the
        checkpoint it returns.
        """
        scrub = redact or (lambda text: text)
        tokens_before = estimate_messages_tokens(messages)
        window = select_window(messages, self.settings)
        if window.middle_size < MIN_MIDDLE_MESSAGES:
            self.ineffective_streak += 1
            return None
        head = list(messages[: window.head_end])
        middle = list(messages[window.head_end : window.tail_start])
        tail = list(messages[window.tail_start :])

        previous = self.previous_summary
        turns: list[Mapping[str, Any]] = []
        for message in middle:
            handoff = split_handoff(content_text(message.get("content")))
            if handoff is None:
                turns.append(message)
                continue
            body, after = handoff
            previous = previous or body
            if after:
                turns.append({**message, "content": after})

        summary, source, error = self._summarize(
            turns, previous, provider_context, focus, today, scrub
        )
        compressed = assemble_compressed(head, summary, tail)
        self.previous_summary = summary
        self.compression_count += 1
        tokens_after = estimate_messages_tokens(compressed)
        return CompressionResult(
            messages=compressed,
            summary=summary,
            summary_source=source,
            dropped=len(middle),
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            error=error,
        )

    def _summarize(
        self,
        turns: Sequence[Mapping[str, Any]],
        previous: str | None,
        provider_context: str,
        focus: str | None,
        today: date | None,
        scrub: Callable[[str], str],
    ) -> tuple[str, str, str]:
        if self.summarizer is not None:
            prompt = build_summary_prompt(
                scrub(serialize_turns(turns)),
                previous_summary=previous,
                provider_context=provider_context,
                focus=focus,
                today=today,
                target_tokens=summary_target_tokens(
                    estimate_messages_tokens(turns), self.settings.max_summary_tokens
                ),
            )
            try:
                text = self.summarizer(prompt)
            except Exception as exc:  # a failing summariser must never break the turn
                logger.warning("Compression summary failed, using an extractive one: %s", exc)
                error = str(exc) or type(exc).__name__
            else:
                text = strip_reasoning(text if isinstance(text, str) else "", reply=True)
                body = split_handoff(text, anywhere=True)
                text = body[0] if body is not None else text.strip()
                limit = self.settings.max_summary_tokens * CHARS_PER_TOKEN * 2
                if len(text) > limit:  # guidance was ignored; keep the checkpoint bounded
                    text = text[: limit - 1] + "…"
                if text:
                    return scrub(text), "model", ""
                error = "the model returned an empty checkpoint"
                logger.warning("Compression summary was empty, using an extractive one")
            source = "fallback"
        else:
            source, error = "extractive", ""
        text = extractive_summary(
            turns,
            previous_summary=previous,
            provider_context=provider_context,
            max_chars=extractive_budget(turns),
        )
        return scrub(text), source, error
