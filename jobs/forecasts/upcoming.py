"""The Upcoming page's timeline: each job's occurrences over the next hours, as counts
per bucket of time, busiest job first.

One statement reads every job (the vendor layer's timeline_jobs: a few columns, no
model instances). A job's count over the window is arithmetic for an interval job and a
bisection of a shared, cached walk for a cron job (jobs/schedules/density.py), so ordering 10,000
jobs expands none of them, and a job every second costs what a daily one does. Only the
rows of the page shown are counted bucket by bucket.

The counts start from each job's stored next_run_at, the scheduler's own next
occurrence: a job that is behind (the scheduler was down) shows what is still to come
in the window, not what it missed. Disabled jobs are listed after the active ones, with
no occurrences.
"""

from __future__ import annotations

import math
import uuid
from bisect import bisect_left
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from itertools import pairwise
from typing import Any, NamedTuple
from zoneinfo import ZoneInfo

from django.utils.formats import date_format
from django.utils.html import escape
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext

from jobs import conf
from jobs.calendars import planning, words
from jobs.models import Job, PlanningRules, ScheduleType
from jobs.models.scheduler import PauseWindow
from jobs.schedules import density
from jobs.sql import store
from jobs.sql.rows import TimelineJob

_INTERVAL = ScheduleType.INTERVAL.value
_CRON = ScheduleType.CRON.value
_ONCE = ScheduleType.ONCE.value
# Shades of a bucket in the density strip, besides "none" (level 0).
LEVELS = 4
# A row says what the calendar and the windows do to at most this many of its runs, and
# looks for them among its first NOTES_WALK slots of the span: a job every minute does
# not walk a day of slots for the page (a window later than that goes unsaid on its row).
NOTES_SHOWN = 3
NOTES_WALK = 200


class Span(NamedTuple):
    """A choice of the page: how far ahead it looks, in buckets of what width, and how
    often the time axis is labelled."""

    key: str
    length: timedelta
    bucket: timedelta
    label_every: timedelta
    label: str


SPANS = (
    Span("6h", timedelta(hours=6), timedelta(minutes=15), timedelta(hours=1), _("6 hours")),
    Span("24h", timedelta(hours=24), timedelta(hours=1), timedelta(hours=3), _("24 hours")),
    Span("7d", timedelta(days=7), timedelta(hours=6), timedelta(days=1), _("7 days")),
)
SPAN_BY_KEY = {span.key: span for span in SPANS}
DEFAULT_SPAN = SPAN_BY_KEY["24h"]


class Bucket(NamedTuple):
    start: datetime  # aware, in the viewer's zone
    end: datetime
    weight: float  # its share of a whole bucket: the first and last may be cut by the window
    label: str  # shown on the time axis ("" for most buckets)
    title: str  # its time range in words, for the tooltip


class Entry(NamedTuple):
    """A job in the page's order, its fields in sorting order. Timeline.entries holds
    plain tuples of this shape (10,000 of them: no constructor call each); Entry(*item)
    names them."""

    disabled: int  # 1 for a disabled job: after every active one
    minus_total: int  # busiest first
    name: str
    key: str
    row: tuple  # the job as timeline_jobs read it (TimelineJob's fields)

    @property
    def total(self) -> int | None:
        """Occurrences in the window; None for a disabled job."""
        return None if self.disabled else -self.minus_total


class Row(NamedTuple):
    """A job as the page shows it."""

    job: Job  # unsaved, built from the row: for its name, link and schedule in words
    total: int | None
    counts: list[int]  # per bucket (empty for a disabled job)
    # What its calendar and the blackout windows do to its runs in the span, in words
    # (at most NOTES_SHOWN), and when its next run starts once jittered (None: no jitter).
    notes: tuple[str, ...] = ()
    starts: datetime | None = None


@dataclass(frozen=True)
class Timeline:
    span: Span
    start: datetime
    end: datetime
    buckets: list[Bucket]
    edges: list[int]  # bucket boundaries, microseconds since the epoch (len(buckets) + 1)
    entries: list[tuple]  # Entry-shaped: every job, busiest first, disabled ones last
    disabled: int  # how many of them are disabled
    # While the scheduler is paused: when it resumes (the window's end for a pause with
    # no end). Nothing runs on its schedule before then, so nothing is counted there.
    resumes_at: datetime | None = None

    def rows(self, entries: Sequence[tuple]) -> list[Row]:
        """The page's rows (items of `entries`), counted bucket by bucket, with what
        their calendars and the windows do (read in one or two queries for them all)."""
        read_micros = store().read_micros
        edges = self.counted_edges
        timeline_jobs = []
        for item in entries:
            raw = Entry(*item).row
            timeline_jobs.append(
                TimelineJob(
                    *raw[:8],
                    read_micros(raw[8]),
                    read_micros(raw[9]),
                    *raw[10:14],
                    read_micros(raw[14]),
                )
            )
        rules = PlanningRules.load(job.calendar_id for job in timeline_jobs)
        rows = []
        for item, job in zip(entries, timeline_jobs, strict=True):
            model = _job(job)
            notes = self._notes(model, rules) if job.is_active else ()
            rows.append(Row(model, Entry(*item).total, _counts(job, edges), notes, _starts(model)))
        return rows

    def _notes(self, job: Job, rules: PlanningRules) -> tuple[str, ...]:
        """What the calendar and the windows do to the job's slots in the span (from when
        the scheduler resumes), looking at most at NOTES_WALK of them."""
        schedule = job.planned_schedule(rules)
        if schedule is None:
            return ()
        zone = self.buckets[0].start.tzinfo
        since = max(self.start, self.resumes_at or self.start)
        notes: list[str] = []
        for slot in schedule.slots(since, self.end, NOTES_WALK):
            note = words.slot_note(slot, schedule.rules.days, schedule.rules.zone, zone)
            if note:
                notes.append(note)
                if len(notes) == NOTES_SHOWN:
                    break
        return tuple(notes)

    @cached_property
    def counted_edges(self) -> list[int]:
        """The bucket boundaries, none before the scheduler resumes: the buckets of the
        pause are empty, and the one it ends in counts from the resumption only."""
        if self.resumes_at is None:
            return self.edges
        since = density.micros(self.resumes_at)
        return [edge if edge > since else since for edge in self.edges]

    @cached_property
    def escaped_titles(self) -> list[str]:
        """The buckets' titles, HTML-escaped once for the page's strips."""
        return [escape(bucket.title) for bucket in self.buckets]

    @cached_property
    def columns(self) -> str:
        """The strips' CSS grid columns: each bucket as wide as the time it covers."""
        return " ".join(f"{bucket.weight:.4g}fr" for bucket in self.buckets)


def timeline(
    now: datetime,
    span: Span,
    zone: ZoneInfo,
    *,
    paused: PauseWindow | None = None,
    only: Collection[Any] | None = None,
) -> Timeline:
    """Every job's occurrences in [now, now + span.length), in order, the buckets in the
    viewer's zone `zone`. While the scheduler is `paused`, only those from when it
    resumes (none for a pause with no end). With `only`, of the jobs with those ids (a
    team-scoped viewer's)."""
    buckets = _buckets(now, span, zone)
    edges = [density.micros(bucket.start) for bucket in buckets]
    edges.append(density.micros(buckets[-1].end))
    resumes_at = None
    if paused is not None:
        resumes_at = min(paused.paused_until or buckets[-1].end, buckets[-1].end)
    low, high = edges[0], edges[-1]
    if resumes_at is not None:
        low = max(low, density.micros(resumes_at))
    with store().reading() as ops:
        jobs = ops.timeline_jobs()
        read_micros = ops.store.read_micros
    # The loop runs once per job (10,000 and more): plain locals and integer arithmetic,
    # no function call for an interval job.
    units, default_zone = density.UNIT_US, conf.time_zone()
    cron_ends: dict[tuple[str, str], tuple] = {}  # (expression, zone): (walk, its end)
    ranked: list[tuple] = []
    disabled = 0
    for job in jobs:
        key, name, kind, interval, unit, expression, zone, active, first = job[:9]
        if only is not None and uuid.UUID(hex=str(key)) not in only:
            continue
        if not active:
            disabled += 1
            ranked.append((1, 0, name, key, job))
            continue
        total = 0
        if first is not None:
            first = read_micros(first)
            if kind == _INTERVAL:
                step = units.get(unit, 0) * (interval or 0)
                since = low if low > first else first
                if step > 0 and high > since:
                    total = (first - since) // step - (first - high) // step
            elif kind == _CRON:
                where = (expression, zone or default_zone)
                if where not in cron_ends:
                    times = density.cron_times(where[0], where[1], low, high)
                    cron_ends[where] = (times, bisect_left(times, high) if times else 0)
                times, end = cron_ends[where]
                if times:
                    total = end - bisect_left(times, low if low > first else first)
            elif kind == _ONCE:
                total = 1 if low <= first < high else 0
        ranked.append((0, -total, name, key, job))
    ranked.sort()
    return Timeline(
        span=span,
        start=now,
        end=now + span.length,
        buckets=buckets,
        edges=edges,
        entries=ranked,
        disabled=disabled,
        resumes_at=resumes_at,
    )


def _buckets(now: datetime, span: Span, zone: ZoneInfo) -> list[Bucket]:
    """Buckets on the viewer's clock (whole hours, quarters, 6-hour blocks), the first
    starting now and the last ending `span` later."""
    local = now.astimezone(zone)
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    # A wall-clock difference (same tzinfo): the buckets follow the clock on the wall.
    origin = now - (local - midnight) % span.bucket
    end = now + span.length
    bounds = [now]
    edge = origin + span.bucket
    while edge < end:
        bounds.append(edge)
        edge += span.bucket
    bounds.append(end)
    buckets = []
    for first, last in pairwise(bounds):
        start, stop = first.astimezone(zone), last.astimezone(zone)
        buckets.append(
            Bucket(
                start=start,
                end=stop,
                weight=(last - first) / span.bucket,
                label=_label(start, span) if first > now or first == origin else "",
                title=_title(start, stop, span),
            )
        )
    return buckets


def _label(start: datetime, span: Span) -> str:
    since_midnight = start - start.replace(hour=0, minute=0, second=0, microsecond=0)
    if since_midnight % span.label_every:
        return ""
    if span.label_every >= timedelta(days=1):
        return date_format(start, pgettext("upcoming axis day", "D j"))
    return start.strftime("%H:%M")


def _title(start: datetime, stop: datetime, span: Span) -> str:
    if span.length > timedelta(days=1):
        day = date_format(start, pgettext("upcoming bucket day", "D j M"))
        return f"{day} {start:%H:%M}\N{EN DASH}{stop:%H:%M}"
    return f"{start:%H:%M}\N{EN DASH}{stop:%H:%M}"


# --- counting ----------------------------------------------------------------------------


def _zone_name(job: TimelineJob) -> str:
    return job.timezone or conf.time_zone()


def _step(job: TimelineJob) -> int | None:
    unit = density.UNIT_US.get(job.interval_unit)
    if unit is None or not job.interval or job.interval < 1:
        return None  # invalid: the database's constraints refuse it
    return job.interval * unit


def _counts(job: TimelineJob, edges: list[int]) -> list[int]:
    if not job.is_active:
        return []
    empty = [0] * (len(edges) - 1)
    first = job.next_run_us
    if first is None:
        return empty
    kind = job.schedule_type
    if kind == _INTERVAL:
        step = _step(job)
        return empty if step is None else density.grid_counts(first, step, edges)
    if kind == _CRON:
        times = density.cron_times(job.cron_expression, _zone_name(job), edges[0], edges[-1])
        return empty if times is None else density.sorted_counts(times, edges, since=first)
    if kind == _ONCE:
        return [1 if low <= first < high else 0 for low, high in pairwise(edges)]
    return empty


def peak(rows: Sequence[Row]) -> int:
    """The largest bucket count among `rows` (0 when there is none)."""
    return max((max(row.counts, default=0) for row in rows), default=0)


def level(count: int, peak: int) -> int:
    """A bucket's shade, 0 (nothing) to LEVELS (the busiest bucket on the page), on a
    log scale: a bucket with one run stays visible beside one with thousands."""
    if count <= 0:
        return 0
    if peak <= 1 or count >= peak:
        return LEVELS
    return 1 + round((LEVELS - 1) * math.log(count) / math.log(peak))


def _starts(job: Job) -> datetime | None:
    """When the job's next run starts once jittered; None without a jitter."""
    if not job.jitter_seconds or job.next_run_at is None or not job.is_active:
        return None
    delay = planning.jitter_delay(job.pk.hex, job.next_run_at, job.jitter_seconds)
    return job.next_run_at + delay


def _job(row: TimelineJob) -> Job:
    return Job(
        id=uuid.UUID(hex=row.key),
        name=row.name,
        schedule_type=row.schedule_type,
        interval=row.interval,
        interval_unit=row.interval_unit,
        cron_expression=row.cron_expression,
        timezone=row.timezone,
        is_active=row.is_active,
        next_run_at=None if row.next_run_us is None else density.moment(row.next_run_us),
        scheduled_at=None if row.scheduled_at_us is None else density.moment(row.scheduled_at_us),
        calendar_id=row.calendar_id,
        calendar_policy=row.calendar_policy,
        jitter_seconds=row.jitter_seconds,
        queue=row.queue,
        anchor_at=None if row.anchor_us is None else density.moment(row.anchor_us),
    )
