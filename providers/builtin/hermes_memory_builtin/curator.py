"""The curator: keeps ``MEMORY.md`` / ``USER.md`` small, current and free of duplicates.

It runs off the turn path (at session end under ``memory.curator: review`` or
``auto``, or by hand with ``hermes-memory memory curate``) and decides
deterministically, file by file:

1. **supersession**: of the entries that state a value of one fact (one
   :func:`~hermes_memory_builtin.similarity.slot_and_value` slot), the newest
   stays and the older ones are archived as ``superseded``; archived entries
   holding an older value are marked superseded too, so recall stops
   offering them;
2. **merge**: of near-duplicates (:func:`~hermes_memory_builtin.similarity.near_duplicates`)
   the later wording stays, the earlier is archived as ``merged``;
3. **category**: working state and episodic facts leave the prompt tier
   (:mod:`~hermes_memory_builtin.categories`);
4. **staleness**: an entry that recall never used in ``memory.curator_stale_days``
   since it was first seen is archived as ``stale`` (identity entries excepted);
5. **budget**: while the file is over ``memory.curator_target`` percent of its
   budget, the least valuable entry (:func:`~hermes_memory_builtin.overflow.value_order`)
   is archived.

With ``memory.curator_model`` on, a chat model also judges the close pairs the
rules leave open (:mod:`~hermes_memory_builtin.curator_model`), after step 2.

Nothing is deleted: every entry that leaves a file goes to the archive, and
each file's change is one row of the curation log (undoable). Curators
exclude each other through ``curator.lock``; each file is changed under its
own lock, with the archive's commit protocol (see :mod:`~hermes_memory_builtin.archive`),
so a curator killed at any point leaves each file in its old or its new state.
The running session's frozen snapshot is never touched: the change shows from
the next session on.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_memory_builtin.archive import read_raw
from hermes_memory_builtin.archive_rows import AnyArchive, PostgresArchive
from hermes_memory_builtin.archive_tier import ArchivedEntry, Moved
from hermes_memory_builtin.categories import IDENTITY, PROMPT_TIER, classify
from hermes_memory_builtin.curator_model import ModelJudge, candidate_pairs
from hermes_memory_builtin.entries import dedupe, join_entries, parse_entries, total_chars
from hermes_memory_builtin.files import FileRead, read_memory_file, replace_if_unchanged
from hermes_memory_builtin.locking import exclusive_lock
from hermes_memory_builtin.overflow import value_order
from hermes_memory_builtin.policy import CurationPolicy
from hermes_memory_builtin.similarity import different_values, near_duplicates, slot_and_value
from hermes_memory_builtin.targets import TARGETS

CURATOR_LOCK_NAME = "curator"
"""The curator's lock is ``curator.lock`` in the memory folder."""

_DAY = 86_400.0


@dataclass(frozen=True)
class TargetPlan:
    """What the curator does to one file."""

    target: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    moved: tuple[Moved, ...]
    supersedes: tuple[tuple[int, str], ...] = ()

    @property
    def changed(self) -> bool:
        """Whether the plan changes anything."""
        return bool(self.moved or self.supersedes or self.before != self.after)

    def summary(self) -> str:
        """One line: how many entries move, and why."""
        counts: dict[str, int] = {}
        for moved in self.moved:
            counts[moved.reason] = counts.get(moved.reason, 0) + 1
        parts = [f"{count} {reason}" for reason, count in sorted(counts.items())]
        if self.supersedes:
            parts.append(f"{len(self.supersedes)} archived marked superseded")
        return ", ".join(parts) or "nothing to do"

    def details(self) -> dict[str, Any]:
        """The plan as the curation log stores it."""
        return {
            "moved": [
                {"text": m.text, "reason": m.reason, "category": m.category, "related": m.related}
                for m in self.moved
            ],
            "superseded_archived": [
                {"id": archived_id, "by": by} for archived_id, by in self.supersedes
            ],
        }


@dataclass(frozen=True)
class _Locked:
    """One document held under its lock: what was read, its exact text, how to save."""

    read: FileRead
    raw: Callable[[], str | None]
    save: Callable[[str], None]
    where: str


@dataclass
class CurationReport:
    """What one curator run did (or, in review, would do)."""

    applied: bool
    plans: list[TargetPlan] = field(default_factory=list)
    change_ids: list[int] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


class Curator:
    """Curates the memory files in *memory_dir* (budgets in *limits*) into *archive*."""

    def __init__(
        self,
        memory_dir: str | Path,
        archive: AnyArchive,
        *,
        limits: Mapping[str, int],
        policy: CurationPolicy | None = None,
        clock: Callable[[], float] = time.time,
        judge: ModelJudge | None = None,
    ) -> None:
        self.memory_dir = Path(memory_dir)
        self.judge = judge
        self.archive = archive
        self.limits = dict(limits)
        self.policy = policy or CurationPolicy()
        self._clock = clock

    def run(self, *, apply: bool = True) -> CurationReport:
        """Curate every file; *apply* False only logs proposals (``review``)."""
        report = CurationReport(applied=apply)
        with self._curator_lock():
            for target in TARGETS:
                self._run_target(target, apply, report)
        return report

    def _curator_lock(self) -> contextlib.AbstractContextManager[Any]:
        if isinstance(self.archive, PostgresArchive):
            return self.archive.documents.exclusive(CURATOR_LOCK_NAME)
        return exclusive_lock(self.memory_dir / CURATOR_LOCK_NAME)

    def _read_unlocked(self, target: str) -> FileRead:
        if isinstance(self.archive, PostgresArchive):
            return self.archive.documents.read(target)
        return read_memory_file(self.memory_dir / TARGETS[target].filename)

    @contextlib.contextmanager
    def _locked(self, target: str) -> Iterator[_Locked]:
        """*target* read under its lock (the file's lock, or the row lock), with its exact
        text and a function saving a new text while the lock is held."""
        if isinstance(self.archive, PostgresArchive):
            with self.archive.documents.locked(target) as (read, save):
                documents = self.archive.documents
                yield _Locked(read, lambda: documents.raw(target), save, self.archive.where)
            return
        path = self.memory_dir / TARGETS[target].filename
        with exclusive_lock(path):
            self.archive.settle(target)
            read = read_memory_file(path)
            yield _Locked(
                read,
                lambda: read_raw(path),
                lambda text: replace_if_unchanged(path, text, read.identity),
                str(path),
            )

    def _run_target(self, target: str, apply: bool, report: CurationReport) -> None:
        verdicts: dict[tuple[str, str], str] = {}
        if self.judge is not None:  # asked before the lock: a slow model holds up no write
            unlocked = self._read_unlocked(target)
            if unlocked.ok:
                verdicts = self._judged(target, dedupe(parse_entries(unlocked.text)))
        with self._locked(target) as locked:
            read = locked.read
            if not read.ok:
                report.skipped[target] = f"{locked.where} cannot be read ({read.error})"
                return
            entries = dedupe(parse_entries(read.text))
            plan = self.plan(target, entries, verdicts)
            if not plan.changed:
                return
            report.plans.append(plan)
            if not apply:
                report.change_ids.append(
                    self.archive.record_proposal(target, plan.summary(), plan.details())
                )
                return
            after_text = join_entries(plan.after)
            with self.archive.change(
                kind="curate",
                target=target,
                reason=plan.summary(),
                before_text=locked.raw(),
                after_text=after_text,
                moved=plan.moved,
                details=plan.details(),
                supersedes=plan.supersedes,
            ) as change_id:
                if plan.before != plan.after:
                    locked.save(after_text)
            report.change_ids.append(change_id)

    def _judged(self, target: str, entries: Sequence[str]) -> dict[tuple[str, str], str]:
        """The model's verdicts on *entries*' open pairs: recorded ones, then new ones."""
        assert self.judge is not None
        known = self.archive.judgements(target, candidate_pairs(entries))
        fresh = self.judge.judge(entries, known)
        self.archive.record_judgements(target, fresh)
        return {pair: v for pair, v in {**known, **fresh}.items() if v != "distinct"}

    # -- the decisions ---------------------------------------------------------------------

    def plan(
        self,
        target: str,
        entries: Sequence[str],
        verdicts: Mapping[tuple[str, str], str] | None = None,
    ) -> TargetPlan:
        """What curating *entries* of *target* would do (nothing is changed).

        *verdicts* are the model's ``{(older, newer): "duplicate" | "supersedes"}``,
        applied after the rules to the pairs still both in the file.
        """
        now = self._clock()
        usage = self.archive.usage(target, entries)
        keep = list(entries)
        moved: list[Moved] = []

        def move(entry: str, reason: str, related: str | None = None) -> None:
            keep.remove(entry)
            moved.append(Moved(entry, reason, classify(entry, target=target), related))

        archived = [e for e in self.archive.entries(target) if not e.superseded]
        supersedes = self._supersede(target, keep, archived, usage, move)
        for later in reversed(list(keep)):
            if later not in keep:
                continue
            for earlier in keep[: keep.index(later)]:
                if near_duplicates(earlier, later) and not different_values(earlier, later):
                    move(earlier, "merged", later)
        for (older, newer), verdict in (verdicts or {}).items():
            if older in keep and newer in keep:
                move(older, "merged" if verdict == "duplicate" else "superseded", newer)
        for entry in list(keep):
            category = classify(entry, target=target)
            if category not in PROMPT_TIER:
                move(entry, category)
        stale_after = self.policy.stale_days * _DAY
        for entry in list(keep):
            first_seen, uses = usage.get(entry, (now, 0))
            if (
                self.policy.stale_days > 0
                and uses == 0
                and now - first_seen > stale_after
                and classify(entry, target=target) != IDENTITY
            ):
                move(entry, "stale")
        budget = int(self.limits[target] * self.policy.target_percent / 100)
        use_counts = {entry: count for entry, (_, count) in usage.items()}
        for entry in value_order(target, list(keep), use_counts):
            if total_chars(keep) <= budget:
                break
            move(entry, "budget")
        return TargetPlan(target, tuple(entries), tuple(keep), tuple(moved), tuple(supersedes))

    def _supersede(
        self,
        target: str,
        keep: list[str],
        archived: Sequence[ArchivedEntry],
        usage: Mapping[str, tuple[float, int]],
        move: Callable[[str, str, str | None], None],
    ) -> list[tuple[int, str]]:
        """Archive older values of a fact held in the file; mark older archived values.

        The newest value of a slot is the one first seen last (prompt entries,
        which are registered on sight, tie-break by file position and win over
        archived ones seen at the same time).
        """
        seen = self.archive.first_seen(target, [e.text for e in archived])
        candidates: dict[str, list[tuple[tuple[float, int, int], str, int | None]]] = {}
        for position, entry in enumerate(keep):
            found = slot_and_value(entry)
            if found is not None:
                order = (usage[entry][0], 1, position)
                candidates.setdefault(found[0], []).append((order, entry, None))
        for item in archived:
            found = slot_and_value(item.text)
            if found is not None:
                order = (seen.get(item.text, item.archived_at), 0, item.id)
                candidates.setdefault(found[0], []).append((order, item.text, item.id))
        supersedes: list[tuple[int, str]] = []
        for versions in candidates.values():
            if len(versions) < 2:
                continue
            versions.sort()
            newest = versions[-1][1]
            newest_value = slot_and_value(newest)
            for _, text, archived_id in versions[:-1]:
                if slot_and_value(text) == newest_value:
                    if archived_id is None and text in keep:
                        move(text, "merged", newest)
                    continue
                if archived_id is None:
                    if text in keep:
                        move(text, "superseded", newest)
                else:
                    supersedes.append((archived_id, newest))
        return supersedes
