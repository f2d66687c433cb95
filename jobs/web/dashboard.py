"""What the dashboard shows, computed with a fixed, small number of queries.

The costly part is counting the last day's runs by hour and status: on a busy system
that is a hundred thousand rows or more, too many to count on every poll. Completed
hours hardly change, so their counts are cached (see _completed_hours); the current
hour, where nearly all the movement is, is counted live on every request.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.core.cache import cache
from django.db.models import Count, Q
from django.utils import timezone

from jobs import conf
from jobs.models import Job, JobHistory, RunStatus
from jobs.queues import status as queue_status
from jobs.sql import store

HOURS = 24
# How long the counts of an hour that ended over an hour ago are reused (see
# _completed_hours); a run still moving that long after it was created is rare.
SETTLED_HOUR_SECONDS = 600
UPCOMING_SHOWN = 10
FAILURES_SHOWN = 10
IN_PROGRESS_SHOWN = 10
# Bottom to top in each bar of the chart.
CHART_STATUSES = (
    RunStatus.SUCCESS,
    RunStatus.FAILED,
    RunStatus.CANCELLED,
    RunStatus.SKIPPED,
    RunStatus.RUNNING,
    RunStatus.PENDING,
)
# Chart geometry. The plot's SVG has no viewBox, so nothing in it is scaled: heights are
# CSS pixels (its labels keep the stylesheet's font size on a phone), and horizontal
# positions are percentages of its width, so the bars fill the card at any width. The
# scale's numbers are a second, narrow SVG beside it (_chart.html).
CHART_HEIGHT = 220
CHART_TOP = 10
CHART_BOTTOM = 24
CHART_LABEL_EVERY = 3  # hours between labels on the time axis


@dataclass(frozen=True)
class HourCounts:
    start: datetime  # aware UTC; templates show it in the user's zone
    counts: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class Segment:
    status: str
    label: str
    count: int
    y: float
    height: float


@dataclass(frozen=True)
class Bar:
    start: datetime
    x: float  # percent of the plot's width
    width: float  # percent of the plot's width
    total: int
    show_label: bool
    segments: list[Segment]
    # A label a narrow screen leaves out (every other one): 8 would touch at 375 px.
    minor_label: bool = False

    @property
    def label_x(self) -> float:
        return self.x + self.width / 2


@dataclass(frozen=True)
class GridLine:
    y: float
    value: int


@dataclass(frozen=True)
class Chart:
    bars: list[Bar]
    grid: list[GridLine]
    height: int = CHART_HEIGHT
    baseline: int = CHART_HEIGHT - CHART_BOTTOM
    legend: list[tuple[str, str]] = field(
        default_factory=lambda: [(s.value, s.label) for s in CHART_STATUSES]
    )

    @property
    def label_y(self) -> int:
        return self.height - 6

    @property
    def empty(self) -> bool:
        """No run at all in the period: the template says so and draws no scale."""
        return not any(bar.total for bar in self.bars)


@dataclass(frozen=True)
class Summary:
    jobs_active: int
    jobs_inactive: int
    runs_24h: dict[str, int]
    pending_now: int
    running_now: int

    @property
    def success_rate(self) -> float | None:
        """Succeeded / (succeeded + failed) over the last 24 hours, in percent; None with
        no such run. Skipped and cancelled runs had no outcome of their own."""
        finished = self.runs_24h[RunStatus.SUCCESS] + self.runs_24h[RunStatus.FAILED]
        if not finished:
            return None
        return 100.0 * self.runs_24h[RunStatus.SUCCESS] / finished


def hour_floor(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def hourly_counts(now: datetime, runs: Q | None = None) -> list[HourCounts]:
    """Runs created in each of the last 24 hours (the current one included), by status;
    with `runs` (a team-scoped user's filter), of those runs only, counted afresh (the
    cache holds the site's counts)."""
    current = hour_floor(now)
    hours = [current - timedelta(hours=HOURS - 1 - i) for i in range(HOURS)]
    if runs is not None:
        counted = _count_by_hour(hours[0], None, runs)
        return [HourCounts(start=hour, counts=counted.get(hour, _zeroes())) for hour in hours]
    counts = _completed_hours(hours[:-1])
    counts[current] = _count_by_hour(current, None).get(current, _zeroes())
    return [HourCounts(start=hour, counts=counts[hour]) for hour in hours]


def _zeroes() -> dict[str, int]:
    return dict.fromkeys(RunStatus.values, 0)


def _count_by_hour(
    since: datetime, until: datetime | None, runs: Q | None = None
) -> dict[datetime, dict[str, int]]:
    by_hour: dict[datetime, dict[str, int]] = {}
    for hour, status, count in JobHistory.objects.filter(runs or Q()).hourly_status_counts(
        since, until, hour=store().hour_of("created_at")
    ):
        by_hour.setdefault(hour, _zeroes())[status] = count
    return by_hour


def _completed_hours(hours: list[datetime]) -> dict[datetime, dict[str, int]]:
    """Counts of completed hours, from the cache where it has them.

    An hour's runs keep moving (pending, running, finished) for a little while after
    it ends, then stay put; so the latest completed hour is kept for
    JOBS_DASHBOARD_CACHE_SECONDS and earlier ones for SETTLED_HOUR_SECONDS. As time
    goes on, only the hour that has just ended is counted anew.
    """
    fresh_ttl = conf.dashboard_cache_seconds()
    keys = {hour: f"jobs:dashboard:runs-per-hour:{hour:%Y%m%d%H}" for hour in hours}
    cached = cache.get_many(keys.values()) if fresh_ttl > 0 else {}
    counts = {hour: cached[key] for hour, key in keys.items() if key in cached}
    missing = [hour for hour in hours if hour not in counts]
    if not missing:
        return counts
    # One query over the span of what is missing (usually one hour, or all on a cold start).
    counted = _count_by_hour(missing[0], missing[-1] + timedelta(hours=1))
    for hour in missing:
        counts[hour] = counted.get(hour, _zeroes())
    if fresh_ttl > 0:
        latest = hours[-1]
        settled = {keys[h]: counts[h] for h in missing if h != latest}
        cache.set_many(settled, max(SETTLED_HOUR_SECONDS, fresh_ttl))
        if latest in missing:
            cache.set(keys[latest], counts[latest], fresh_ttl)
    return counts


def summary(
    hours: list[HourCounts], by_queue: list[queue_status.QueueState], jobs_q: Q | None = None
) -> Summary:
    jobs = Job.objects.filter(jobs_q or Q()).aggregate(
        total=Count("pk"), active=Count("pk", filter=Q(is_active=True))
    )
    # The queues' active runs, added up: no count of their own.
    pending = sum(queue.pending + queue.waiting_later for queue in by_queue)
    running = sum(queue.running for queue in by_queue)
    runs_24h = dict.fromkeys(RunStatus.values, 0)
    for hour in hours:
        for status, count in hour.counts.items():
            runs_24h[status] += count
    return Summary(
        jobs_active=jobs["active"],
        jobs_inactive=jobs["total"] - jobs["active"],
        runs_24h=runs_24h,
        pending_now=pending,
        running_now=running,
    )


def nice_ceiling(value: int) -> int:
    """The top of the chart's scale: the smallest round number that is at least `value`.

    Round means 1, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten, and even (or 1), so
    that the middle grid line is a whole number too.
    """
    if value <= 1:
        return 1
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 3, 4, 5, 6, 8, 10):
        top = int(step * power)
        if top >= value and (top == 1 or top % 2 == 0) and step * power == top:
            return top
    raise AssertionError("unreachable")


def chart(hours: list[HourCounts]) -> Chart:
    """Stacked bars of runs per hour by status, laid out for the SVG template."""
    top = nice_ceiling(max((hour.total for hour in hours), default=0))
    plot_height = CHART_HEIGHT - CHART_TOP - CHART_BOTTOM
    slot = 100 / max(len(hours), 1)
    baseline = CHART_HEIGHT - CHART_BOTTOM
    labels = {s.value: s.label for s in RunStatus}
    bars = []
    for index, hour in enumerate(hours):
        y = float(baseline)
        segments = []
        for status in CHART_STATUSES:
            count = hour.counts.get(status, 0)
            if not count:
                continue
            height = plot_height * count / top
            y -= height
            segments.append(
                Segment(
                    status=status.value,
                    label=labels[status],
                    count=count,
                    y=round(y, 2),
                    height=round(height, 2),
                )
            )
        bars.append(
            Bar(
                start=hour.start,
                x=round(index * slot + slot * 0.1, 3),
                width=round(slot * 0.8, 3),
                total=hour.total,
                # Label the newest hour and every third one before it.
                show_label=(len(hours) - 1 - index) % CHART_LABEL_EVERY == 0,
                segments=segments,
                minor_label=(len(hours) - 1 - index) % (2 * CHART_LABEL_EVERY) != 0,
            )
        )
    # A scale topped by 1 has no whole middle line: 0 and 1 only (never "1 / 0 / 0").
    fractions = (0, 1) if top == 1 else (0, 0.5, 1)
    grid = [
        GridLine(y=round(baseline - plot_height * fraction, 2), value=int(top * fraction))
        for fraction in fractions
    ]
    return Chart(bars=bars, grid=grid)


def live_context(
    now: datetime | None = None, *, jobs_q: Q | None = None, runs_q: Q | None = None
) -> dict:
    """Everything the refreshing part of the dashboard shows; with `jobs_q` and `runs_q`
    (a team-scoped user's filters, jobs.models.teams), of those jobs and runs only, the
    queues card too."""
    now = now or timezone.now()
    hours = hourly_counts(now, runs_q)
    by_queue = queue_status.snapshot(now, jobs_q=jobs_q, runs_q=runs_q)
    return {
        "now": now,
        "summary": summary(hours, by_queue, jobs_q),
        "queues": by_queue,
        "chart": chart(hours),
        # .defer("log"): a run's log can be long, and these lists do not show it.
        "in_progress": list(
            JobHistory.objects.in_progress()
            .filter(runs_q or Q())
            .select_related("job")
            .defer("log")[:IN_PROGRESS_SHOWN]
        ),
        "upcoming": list(Job.objects.upcoming().filter(jobs_q or Q())[:UPCOMING_SHOWN]),
        "failures": list(
            JobHistory.objects.filter(runs_q or Q(), status=RunStatus.FAILED)
            .newest_first()
            .select_related("job")
            .defer("log")[:FAILURES_SHOWN]
        ),
    }
