"""Keyset ("newer / older") pages of runs, newest first.

The run history grows without bound, so its pages never COUNT(*) it and never skip
OFFSET rows: a page is "the 50 runs just older (or newer) than this one", found through
the created_at index, whatever its depth. The cursor is the (created_at, id) of the
run at the page's edge; id breaks ties, since a claim creates many runs at one instant.
Runs arriving while someone reads leave the next pages where they were.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db.models import Q, QuerySet

from jobs.models import JobHistory

RUNS_PER_PAGE = 50
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True)
class Cursor:
    created_at: datetime
    id: uuid.UUID

    def __str__(self) -> str:
        # Whole microseconds, exactly: a float timestamp could round to a neighbour.
        micros = (self.created_at - _EPOCH) // _MICROSECOND
        return f"{micros}_{self.id.hex}"

    @classmethod
    def parse(cls, text: str | None) -> Cursor | None:
        """The cursor in a URL, or None for a missing or malformed one (first page)."""
        if not text:
            return None
        micros, _, hex_id = text.partition("_")
        try:
            moment = _EPOCH + int(micros) * _MICROSECOND
            return cls(created_at=moment, id=uuid.UUID(hex=hex_id))
        except (ValueError, OverflowError, OSError):
            return None

    @classmethod
    def of(cls, run: JobHistory) -> Cursor:
        return cls(created_at=run.created_at, id=run.id)


@dataclass(frozen=True)
class RunPage:
    runs: list[JobHistory]
    newer: Cursor | None  # "after" cursor for the page of newer runs, if there is one
    older: Cursor | None  # "before" cursor for the page of older runs, if there is one

    @property
    def has_other_pages(self) -> bool:
        return self.newer is not None or self.older is not None


def _older_than(cursor: Cursor) -> Q:
    # The first term is a plain range the index can seek to; the second removes the
    # runs at the same instant that come before the cursor.
    return Q(created_at__lte=cursor.created_at) & (
        Q(created_at__lt=cursor.created_at) | Q(id__lt=cursor.id)
    )


def _newer_than(cursor: Cursor) -> Q:
    return Q(created_at__gte=cursor.created_at) & (
        Q(created_at__gt=cursor.created_at) | Q(id__gt=cursor.id)
    )


def run_page(
    runs: QuerySet[JobHistory],
    *,
    before: Cursor | None = None,
    after: Cursor | None = None,
    size: int = RUNS_PER_PAGE,
) -> RunPage:
    """One page of `runs`, newest first: the first page, or the one before/after a cursor.

    One query: it fetches one run more than the page holds to learn whether another
    page follows.
    """
    if after is not None:
        rows = list(runs.filter(_newer_than(after)).order_by("created_at", "id")[: size + 1])
        more = len(rows) > size
        rows = rows[:size][::-1]
        return RunPage(
            runs=rows,
            newer=Cursor.of(rows[0]) if more else None,
            older=Cursor.of(rows[-1]) if rows else None,
        )
    if before is not None:
        runs = runs.filter(_older_than(before))
    rows = list(runs.order_by("-created_at", "-id")[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    return RunPage(
        runs=rows,
        newer=Cursor.of(rows[0]) if before is not None and rows else None,
        older=Cursor.of(rows[-1]) if more else None,
    )
