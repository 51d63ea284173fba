"""``memory.overflow: archive``: an add over the budget succeeds and the least valuable
entries move to the archive.

:func:`value_order` ranks the entries of a file from least to most valuable,
the one rule the overflow path and the curator share: working state first,
then episodic facts, plain facts, identity and preferences last; within a
category, entries used less often by recall first, and older before newer.
:class:`OverflowArchiver` is the hook :class:`~hermes_memory_builtin.store.MemoryStore`
calls, under the file's lock, when an add does not fit.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory_builtin.archive_rows import AnyArchive
from hermes_memory_builtin.archive_tier import Moved
from hermes_memory_builtin.categories import EPISODIC, FACT, IDENTITY, WORKING, classify
from hermes_memory_builtin.entries import join_entries, total_chars

_CATEGORY_VALUE = {WORKING: 0, EPISODIC: 1, FACT: 2, IDENTITY: 3}
_WHEN_FULL = re.compile(r"WHEN FULL:.*?\n", re.DOTALL)
WHEN_FULL_ARCHIVE = (
    "WHEN FULL: an add still succeeds; the least valuable older entries move to the memory "
    "archive (recalled when relevant, searchable with memory_search) and the result lists "
    "them in archived_entries. No need to make room yourself.\n"
)


def archive_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The ``memory`` tool *schema* with its "WHEN FULL" advice for ``overflow: archive``."""
    described = dict(schema)
    described["description"] = _WHEN_FULL.sub(WHEN_FULL_ARCHIVE, str(schema["description"]), 1)
    return described


def value_order(
    target: str, entries: Sequence[str], uses: Mapping[str, int] | None = None
) -> list[str]:
    """*entries* from least to most valuable (see the module docstring)."""
    uses = uses or {}
    ranked = sorted(
        enumerate(entries),
        key=lambda item: (
            _CATEGORY_VALUE[classify(item[1], target=target)],
            uses.get(item[1], 0),
            item[0],
        ),
    )
    return [entry for _, entry in ranked]


@dataclass(frozen=True)
class RoomPlan:
    """What an over-budget add does: the entries it archives and the file after it."""

    moved: tuple[Moved, ...]
    after: tuple[str, ...]

    @property
    def moved_texts(self) -> list[str]:
        return [m.text for m in self.moved]


class OverflowArchiver:
    """Makes room for an add by archiving the least valuable entries of the file."""

    def __init__(self, archive: AnyArchive) -> None:
        self.archive = archive

    def make_room(
        self, target: str, entries: Sequence[str], new_entry: str, limit: int
    ) -> RoomPlan | None:
        """The plan that fits *new_entry* within *limit*, or ``None`` when nothing can
        (the entry alone is longer than the budget)."""
        if len(new_entry) > limit:
            return None
        self.archive.settle(target)
        uses = {entry: count for entry, (_, count) in self.archive.usage(target, entries).items()}
        keep = list(entries)
        moved: list[Moved] = []
        for entry in value_order(target, entries, uses):
            if total_chars([*keep, new_entry]) <= limit:
                break
            keep.remove(entry)
            moved.append(Moved(entry, "overflow", classify(entry, target=target)))
        return RoomPlan(tuple(moved), (*keep, new_entry))

    @contextlib.contextmanager
    def moving(self, target: str, before_text: str | None, plan: RoomPlan) -> Iterator[int]:
        """Record *plan* in the archive around the block that replaces the document (whose
        exact text is *before_text* now; ``None``: no file yet)."""
        with self.archive.change(
            kind="overflow",
            target=target,
            reason=f"an add did not fit; {len(plan.moved)} entr"
            f"{'y' if len(plan.moved) == 1 else 'ies'} archived to make room",
            before_text=before_text,
            after_text=join_entries(plan.after),
            moved=plan.moved,
        ) as change_id:
            yield change_id
