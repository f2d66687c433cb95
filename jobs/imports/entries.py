"""What a reader of another scheduler's schedules gives the planner (jobs/imports/plan.py).

A reader (beat.py, crontab.py, djangoq.py) turns each entry of its source into an Entry
(the job's fields, and the entry as read) or a Skipped (why it cannot be brought over).
It never writes to this app's tables; the planner does, in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any, NamedTuple, Protocol

from django.utils import timezone as django_timezone
from django.utils.dateparse import parse_datetime

from jobs.models import ScheduleType
from jobs.models.changes import json_value

# The key of Entry.record holding whether the source runs the entry: the planner writes a
# job's is_active only when this changed since the last import (the operator's otherwise).
ENABLED = "enabled"


class SourceError(Exception):
    """The source cannot be read (missing, unreadable, not the tables expected): the
    import stops there, and nothing is changed."""


class Entry(NamedTuple):
    """One entry of the source, as a job.

    `key`: what tells it apart in its source (Job.import_key); `label`: how the report
    names it; `values`: the job's fields; `record`: the entry as read, JSON (Job.import_record:
    the next import compares it); `notes`: what is brought over differently, in words.
    """

    key: str
    label: str
    values: dict[str, Any]
    record: dict[str, Any]
    notes: tuple[str, ...] = ()

    @property
    def enabled(self) -> bool:
        return bool(self.record.get(ENABLED))


class Skipped(NamedTuple):
    """An entry that is not imported, and why (with what to do about it when there is
    something)."""

    key: str
    label: str
    reason: str


class Reading(NamedTuple):
    """A source read: `source` is what Job.import_source says of its jobs."""

    source: str
    entries: tuple[Entry, ...]
    skipped: tuple[Skipped, ...]


class Source(Protocol):
    """A scheduler's schedules, as the planner uses them."""

    def read(self) -> Reading:
        """Every entry, translated or skipped. Raises SourceError."""
        ...

    def atomic(self) -> AbstractContextManager[Any]:
        """The source's own transaction, when its tables are in another database."""
        ...

    def disable(self, keys: Iterable[str]) -> None:
        """Stop the source scheduler from running these entries (reversibly)."""
        ...

    def disabled_record(self, record: dict[str, Any]) -> dict[str, Any]:
        """`record` as the source reads after disable()."""
        ...


def json_record(values: dict[str, Any]) -> dict[str, Any]:
    """Values as Job.import_record stores them (datetimes as ISO text in UTC)."""
    return {name: json_value(value) for name, value in values.items()}


def schedule_fields(
    *,
    cron: str = "",
    timezone: str = "",
    every: tuple[int, str] | None = None,
    at: datetime | None = None,
) -> dict[str, Any]:
    """Every schedule field of a job, those of the kind not given empty (so that an entry
    moved from one kind of schedule to another keeps nothing of the old one). `every`
    with `at`: an interval whose first run is at `at`."""
    values: dict[str, Any] = {
        "scheduled_at": at,
        "interval": None,
        "interval_unit": "",
        "cron_expression": "",
        "timezone": "",
    }
    if cron:
        values.update(
            schedule_type=ScheduleType.CRON.value, cron_expression=cron, timezone=timezone
        )
    elif every is not None:
        values.update(
            schedule_type=ScheduleType.INTERVAL.value, interval=every[0], interval_unit=every[1]
        )
    else:
        values["schedule_type"] = ScheduleType.ONCE.value
    return values


def unique_keys(keys: Iterable[str]) -> Iterator[str]:
    """The keys, a repeated one numbered from its second time ("backup.sh", "backup.sh #2")."""
    seen: dict[str, int] = {}
    for key in keys:
        seen[key] = seen.get(key, 0) + 1
        yield key if seen[key] == 1 else f"{key} #{seen[key]}"


def aware(value: Any) -> datetime | None:
    """A datetime read from a table, aware: SQLite gives them naive (in UTC) or as text."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = parse_datetime(value)
        if value is None:
            return None
    if django_timezone.is_naive(value):
        return value.replace(tzinfo=UTC)
    return value
