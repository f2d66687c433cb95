"""The upcoming scenario: server time of the Upcoming page and of the schedule preview
(the job form's and the API's) with 10,000 jobs of mixed schedules, some every second.

The jobs: 35 % interval jobs from every second to every day (one job in twenty runs
every second), 45 % cron jobs over 32 expressions-and-zones, 20 % one-off jobs within the
week; a tenth of each kind disabled. Inserted raw (jobs/bench/data.py), with next_run_at computed by
the scheduler's own functions as saving would.
"""

from __future__ import annotations

import random
import statistics
import time
import warnings
from collections.abc import Iterator
from datetime import datetime, timedelta
from functools import lru_cache
from urllib.parse import urlencode

from django.db import connection
from django.utils import timezone

from jobs.bench.data import JOB_COLUMNS, JOB_TABLE, insert_rows
from jobs.bench.pages import QueryCounter, logged_in_client, measure_page
from jobs.bench.progress import Progress
from jobs.bench.report import Result
from jobs.forecasts import upcoming
from jobs.models import Job
from jobs.runs import new_key
from jobs.schedules import arithmetic as schedules
from jobs.schedules import density
from jobs.sql import store

ZONES = ("UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo")
EXPRESSIONS = (
    "* * * * *",
    "*/5 * * * *",
    "*/15 * * * *",
    "0 * * * *",
    "30 * * * *",
    "0 */2 * * *",
    "30 2 * * *",
    "0 9 * * 1-5",
)
# Seconds between runs of the other interval jobs.
EVERY = (5, 10, 30, 60, 300, 600, 900, 3600, 21600, 86400)
COLUMNS = (*JOB_COLUMNS, "cron_expression", "timezone")
_HTMX = {"HTTP_HX_REQUEST": "true"}


def run(jobs: int, progress: Progress | None = None, *, repeat: int = 20) -> Result:
    """Build `jobs` jobs, then request the Upcoming page and the previews `repeat` times
    each through Django's test Client (the whole middleware stack, a logged-in
    superuser), after a warm-up."""
    progress = progress or Progress(silent=True)
    warnings.filterwarnings("ignore", message="No directory at")
    now = timezone.now()
    progress(f"upcoming: inserting {jobs:,} jobs", jobs)
    insert_rows(JOB_TABLE, COLUMNS, _rows(jobs, now), on_chunk=progress.update)
    progress.end()
    client = logged_in_client()
    listing = _listing()
    rows: list[Result] = []
    progress("upcoming: requesting", len(listing) + 1)
    for done, (label, url, headers) in enumerate(listing):
        rows.append({"page": label, **measure_page(client, url, headers, repeat)})
        progress.update(done + 1)
    rows.append({"page": "upcoming 24 h, first in a process", **_cold(client, repeat)})
    progress.end()
    by_label = {row["page"]: row for row in rows}
    result: Result = {
        "jobs": Job.objects.count(),
        "every_second_jobs": Job.objects.filter(
            schedule_type="interval", interval=1, interval_unit="second", is_active=True
        ).count(),
        "cron_expressions": len(EXPRESSIONS) * len(ZONES),
        "repeat": repeat,
        "upcoming_median_ms": by_label["upcoming 24 h"]["median_ms"],
        "upcoming_p90_ms": by_label["upcoming 24 h"]["p90_ms"],
        "upcoming_7d_median_ms": by_label["upcoming 7 days"]["median_ms"],
        "preview_median_ms": by_label["preview (form): cron, Berlin"]["median_ms"],
        "api_preview_median_ms": by_label["preview (API): cron, Berlin, 100"]["median_ms"],
        "slowest_page": max(rows, key=lambda row: row["median_ms"])["page"],
        "slowest_median_ms": max(row["median_ms"] for row in rows),
        **_where_the_time_goes(repeat),
        "pages": rows,
    }
    return result


def _listing() -> list[tuple[str, str, dict]]:
    cron = {"schedule_type": "cron", "cron_expression": "30 2 * * *", "timezone": "Europe/Berlin"}
    every_second = {"schedule_type": "interval", "interval": 1, "interval_unit": "second"}
    edited = Job.objects.filter(schedule_type="interval", is_active=True).order_by("name").first()
    edit = {"schedule_type": "interval", "interval": edited.interval, "job": edited.pk}
    edit["interval_unit"] = edited.interval_unit
    last_page = max(1, (Job.objects.count() + 49) // 50)
    return [
        ("upcoming 24 h", "/upcoming/", {}),
        ("upcoming 6 h", "/upcoming/?span=6h", {}),
        ("upcoming 7 days", "/upcoming/?span=7d", {}),
        (f"upcoming 24 h, page {last_page}", f"/upcoming/?page={last_page}", {}),
        ("preview (form): cron, Berlin", f"/jobs/schedule-preview/?{urlencode(cron)}", _HTMX),
        (
            "preview (form): every second",
            f"/jobs/schedule-preview/?{urlencode(every_second)}",
            _HTMX,
        ),
        ("preview (form): editing a job", f"/jobs/schedule-preview/?{urlencode(edit)}", _HTMX),
        (
            "preview (API): cron, Berlin, 100",
            f"/api/v1/schedule-preview/?{urlencode({**cron, 'count': 100})}",
            {},
        ),
        (
            "preview (API): every second, 100",
            f"/api/v1/schedule-preview/?{urlencode({**every_second, 'count': 100})}",
            {},
        ),
    ]


def _cold(client, repeat: int) -> Result:  # type: ignore[no-untyped-def]
    """The page when no cron walk is kept: the first request of a new process."""
    times = []
    for _ in range(repeat):
        density.forget_cron_walks()
        began = time.perf_counter()
        client.get("/upcoming/")
        times.append((time.perf_counter() - began) * 1000)
    queries = QueryCounter()
    with connection.execute_wrapper(queries):
        client.get("/upcoming/")
    return {
        "median_ms": round(statistics.median(times), 1),
        "p90_ms": round(sorted(times)[int(0.9 * (len(times) - 1))], 1),
        "cpu_ms": None,
        "queries": queries.count,
    }


def _where_the_time_goes(repeat: int) -> Result:
    """The Upcoming page's server time in parts: reading the jobs, counting and ordering
    them, and the rest (a page of rows, the template, the middleware)."""
    read, whole = [], []
    zone = timezone.get_default_timezone()
    for _ in range(repeat):
        began = time.perf_counter()
        with store().reading() as ops:
            ops.timeline_jobs()
        read.append((time.perf_counter() - began) * 1000)
        began = time.perf_counter()
        upcoming.timeline(timezone.now(), upcoming.DEFAULT_SPAN, zone)
        whole.append((time.perf_counter() - began) * 1000)
    return {
        "read_jobs_ms": round(statistics.median(read), 1),
        "count_and_order_ms": round(statistics.median(whole) - statistics.median(read), 1),
    }


def _rows(count: int, now: datetime) -> Iterator[tuple]:
    rng = random.Random(7)
    adapt = store().adapt_datetime
    db_now = adapt(now)
    for index in range(count):
        share = index % 20
        name = f"upcoming-{index:05d}"
        active = index % 10 != 9
        cron_expression, zone, interval, unit, scheduled_at = "", "", None, "", None
        if share < 7:  # 35 % interval jobs, of which every 20th job runs every second
            kind = "interval"
            seconds = 1 if share == 0 else rng.choice(EVERY)
            interval, unit = seconds, "second"
            anchor = now + timedelta(seconds=rng.uniform(0, seconds))
            following = anchor
        elif share < 16:  # 45 % cron jobs
            kind = "cron"
            cron_expression = EXPRESSIONS[index % len(EXPRESSIONS)]
            zone = ZONES[(index // len(EXPRESSIONS)) % len(ZONES)]
            anchor = None
            following = _next_cron(cron_expression, zone, now)
        else:  # 20 % one-off jobs
            kind = "once"
            scheduled_at = now + timedelta(seconds=rng.uniform(60, 7 * 86400))
            anchor, following = None, scheduled_at
        yield (
            new_key(),
            name,
            "",
            f"echo {name}",
            kind,
            adapt(scheduled_at),
            interval,
            unit,
            "coalesce",
            0,
            10,
            active,
            adapt(anchor),
            None,
            "",
            adapt(following) if active else None,
            db_now,
            db_now,
            cron_expression,
            zone,
        )


@lru_cache(maxsize=64)
def _next_cron(expression: str, zone: str, now: datetime) -> datetime | None:
    return schedules.CronSchedule(expression, zone).next_after(now)
