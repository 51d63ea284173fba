"""The curator's optional model path: a chat model judges the pairs the rules cannot.

With ``memory.curator_model: true`` and a model configured (``model.*``), the
curator sends the pairs of entries of one file that are close but not
decided by the deterministic rules (word Jaccard from
:data:`CANDIDATE_JACCARD` up to the duplicate threshold, not two values of
one slot) to the model, and applies its verdicts after its own. The model is
asked before the file's lock is taken, so a slow answer never holds up the
agent's writes; verdicts about entries that changed meanwhile are dropped.

The contract is fixed. The request's user message is JSON::

    {"pairs": [{"pair": 1, "first": "<older entry>", "second": "<newer entry>"}, ...]}

and the answer must be JSON (a fenced block is accepted)::

    {"decisions": [{"pair": 1, "verdict": "duplicate" | "supersedes" | "distinct"}, ...]}

``duplicate``: the same fact said twice (the first is archived as merged);
``supersedes``: the second replaces the first (archived as superseded);
``distinct``: leave both. Anything else in the answer is ignored, and an
answer that is not that JSON changes nothing. Verdicts are kept in the
archive, so a pair is asked about once. Each run makes at most
``memory.curator_model_calls`` requests (default 2) of at most
:data:`PAIRS_PER_CALL` pairs and :data:`MAX_ANSWER_TOKENS` answer tokens.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from hermes_core.errors import LLMError
from hermes_memory_builtin.similarity import (
    TOKEN_JACCARD_THRESHOLD,
    content_words,
    different_values,
    jaccard,
    near_duplicates,
)

logger = logging.getLogger(__name__)

CANDIDATE_JACCARD = 0.4
PAIRS_PER_CALL = 20
MAX_ANSWER_TOKENS = 600
DEFAULT_CALLS_PER_RUN = 2
VERDICTS = ("duplicate", "supersedes", "distinct")

INSTRUCTIONS = (
    "You curate the long-term memory of an AI agent. Each pair holds two entries of one memory "
    "file; 'first' was written before 'second'. For every pair decide: 'duplicate' if both state "
    "the same fact with the same value; 'supersedes' if both are about the same fact and "
    "'second' gives its newer value, so 'first' is outdated; 'distinct' otherwise (when unsure, "
    "'distinct'). Answer with JSON only, exactly: "
    '{"decisions": [{"pair": <number>, "verdict": "duplicate" | "supersedes" | "distinct"}]}'
)
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class ChatModel(Protocol):
    """What the judge needs of :class:`hermes_core.llm.ChatClient`."""

    def chat(self, messages: Sequence[dict[str, Any]], **options: Any) -> Any: ...


def candidate_pairs(entries: Sequence[str]) -> list[tuple[str, str]]:
    """``(older, newer)`` pairs of *entries* close enough to ask about, closest first."""
    scored = []
    for i, first in enumerate(entries):
        for second in entries[i + 1 :]:
            score = jaccard(content_words(first), content_words(second))
            if not CANDIDATE_JACCARD <= score < TOKEN_JACCARD_THRESHOLD:
                continue
            if near_duplicates(first, second) or different_values(first, second):
                continue  # the rules decide these
            scored.append((-score, first, second))
    scored.sort()
    return [(first, second) for _, first, second in scored]


def parse_decisions(text: str, count: int) -> dict[int, str]:
    """``{pair number: verdict}`` from an answer; ``{}`` when it is not the contract's JSON."""
    fenced = _FENCE.match(text)
    try:
        data = json.loads(fenced.group(1) if fenced else text)
    except (json.JSONDecodeError, TypeError):
        return {}
    decisions = data.get("decisions") if isinstance(data, dict) else None
    if not isinstance(decisions, list):
        return {}
    found: dict[int, str] = {}
    for item in decisions:
        if not isinstance(item, dict):
            continue
        number, verdict = item.get("pair"), item.get("verdict")
        if (
            isinstance(number, int)
            and not isinstance(number, bool)
            and 1 <= number <= count
            and verdict in VERDICTS
        ):
            found.setdefault(number, verdict)
    return found


@dataclass
class ModelJudge:
    """Asks *client* about candidate pairs, within *max_calls* requests per run."""

    client: ChatModel
    max_calls: int = DEFAULT_CALLS_PER_RUN
    calls: int = 0
    tokens: int = 0
    failures: list[str] = field(default_factory=list)

    def judge(
        self, entries: Sequence[str], known: Collection[tuple[str, str]] = ()
    ) -> dict[tuple[str, str], str]:
        """``{(older, newer): verdict}`` for the candidate pairs of *entries* not in *known*
        (pairs already judged), ``distinct`` included."""
        pairs = [pair for pair in candidate_pairs(entries) if pair not in known]
        verdicts: dict[tuple[str, str], str] = {}
        while pairs and self.calls < self.max_calls:
            batch, pairs = pairs[:PAIRS_PER_CALL], pairs[PAIRS_PER_CALL:]
            self.calls += 1
            request = {
                "pairs": [
                    {"pair": number, "first": first, "second": second}
                    for number, (first, second) in enumerate(batch, 1)
                ]
            }
            messages = [
                {"role": "system", "content": INSTRUCTIONS},
                {"role": "user", "content": json.dumps(request, ensure_ascii=False)},
            ]
            try:
                response = self.client.chat(messages, max_tokens=MAX_ANSWER_TOKENS, temperature=0)
            except LLMError as exc:
                self.failures.append(str(exc))
                logger.warning("The curator's model call failed (%s); rules only.", exc)
                return verdicts
            usage = getattr(response, "usage", None)
            if usage is not None:
                self.tokens += int(getattr(usage, "total_tokens", 0) or 0)
            for number, verdict in parse_decisions(str(response.content), len(batch)).items():
                verdicts[batch[number - 1]] = verdict
        return verdicts


def judge_for(
    config: dict[str, Any] | None, hermes_home: Any = None, *, max_calls: int
) -> ModelJudge | None:
    """A judge on the configured model, or ``None`` when no model is configured or usable."""
    from hermes_core.errors import HermesMemoryError
    from hermes_core.llm import ChatClient

    try:
        client = ChatClient.from_config(config, hermes_home=hermes_home)
    except HermesMemoryError as exc:
        logger.warning("The curator's model is not usable (%s); rules only.", exc)
        return None
    return ModelJudge(client, max_calls=max_calls) if client is not None else None
