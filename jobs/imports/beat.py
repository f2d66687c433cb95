"""django-celery-beat's periodic tasks, as celery jobs (docs/migrating.md).

Read through its models when django_celery_beat is installed here (in the database
alias given), else by SQL over its tables (which its migrations name, in any database
Django can open: an alias, or the URL the command was given). Both give BeatRow, and
one translation.

Each PeriodicTask (its name is unique in beat: the key) becomes a job of the `celery`
executor: the task's name as the command, {"args": [...], "kwargs": {...}} as its
arguments, beat's queue and priority. Its schedule: a crontab in its zone, an interval
(from start_time when set), a clocked time (a one-off); a one_off task on another
schedule runs once, at its next occurrence. Solar schedules, microsecond intervals and
Celery's own clean-up task are skipped, each with the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.db import connections
from django.utils import timezone as django_timezone

from jobs import conf
from jobs.imports.entries import (
    ENABLED,
    Entry,
    Skipped,
    aware,
    json_record,
    schedule_fields,
)
from jobs.imports.tables import TableSource
from jobs.models import ExecutorKind
from jobs.models.choices import (
    DEFAULT_QUEUE,
    NAME_MAX_LENGTH,
    QUEUE_NAME_MAX_LENGTH,
    QUEUE_NAME_PATTERN,
)
from jobs.schedules import arithmetic

SOURCE = "celery-beat"
CELERY_EXECUTOR = "celery"
# Beat adds this task by itself (daily at 04:00) to delete expired results from a
# database result backend: it is Celery's housekeeping, not one of the project's jobs.
BACKEND_CLEANUP = "celery.backend_cleanup"
PERIOD_SECONDS = {"days": 86400, "hours": 3600, "minutes": 60, "seconds": 1}

_SELECT = """
SELECT t.name, t.task, t.args, t.kwargs, t.queue, t.exchange, t.routing_key, t.headers,
       t.priority, t.expires, t.expire_seconds, t.one_off, t.start_time, t.enabled,
       t.description,
       c.minute, c.hour, c.day_of_month, c.month_of_year, c.day_of_week, c.timezone,
       i.every, i.period, k.clocked_time, s.event
FROM django_celery_beat_periodictask t
LEFT JOIN django_celery_beat_crontabschedule c ON c.id = t.crontab_id
LEFT JOIN django_celery_beat_intervalschedule i ON i.id = t.interval_id
LEFT JOIN django_celery_beat_clockedschedule k ON k.id = t.clocked_id
LEFT JOIN django_celery_beat_solarschedule s ON s.id = t.solar_id
ORDER BY t.name
"""


class BeatRow(NamedTuple):
    """A PeriodicTask with its schedule's fields (None where it has no such schedule)."""

    name: str
    task: str
    args: str | None
    kwargs: str | None
    queue: str | None
    exchange: str | None
    routing_key: str | None
    headers: str | None
    priority: int | None
    expires: Any
    expire_seconds: int | None
    one_off: bool
    start_time: Any
    enabled: bool
    description: str | None
    minute: str | None
    hour: str | None
    day_of_month: str | None
    month_of_year: str | None
    day_of_week: str | None
    timezone: str | None
    every: int | None
    period: str | None
    clocked_time: Any
    solar_event: str | None


class BeatSource(TableSource):
    """The periodic tasks in database `alias`: by beat's models when `use_models` (the
    app is installed here), else by SQL over its tables."""

    source = SOURCE
    app = "django_celery_beat"
    tables = "the django_celery_beat tables"
    select = _SELECT
    row_type = BeatRow

    def translate(self, row: BeatRow) -> Entry | Skipped:
        return translate(row, django_timezone.now())

    def disable(self, keys: Iterable[str]) -> None:
        """enabled=False on these tasks, and beat's change marker moved, so a running
        beat reloads its schedule (it polls PeriodicTasks.last_update)."""
        names = list(keys)
        if not names:
            return
        moment = django_timezone.now()
        if self.use_models:
            from django_celery_beat.models import PeriodicTask, PeriodicTasks

            PeriodicTask.objects.using(self.alias).filter(name__in=names).update(enabled=False)
            PeriodicTasks.objects.using(self.alias).update_or_create(
                ident=1, defaults={"last_update": moment}
            )
            return
        with connections[self.alias].cursor() as cursor:
            marks = ", ".join(["%s"] * len(names))
            # Only placeholders are formatted in; the names travel as parameters.
            statement = "UPDATE django_celery_beat_periodictask SET enabled = %s WHERE name IN "
            cursor.execute(statement + f"({marks})", [False, *names])
            cursor.execute(
                "UPDATE django_celery_beat_periodictasks SET last_update = %s WHERE ident = 1",
                [moment],
            )
            if cursor.rowcount == 0:
                cursor.execute(
                    "INSERT INTO django_celery_beat_periodictasks (ident, last_update) "
                    "VALUES (1, %s)",
                    [moment],
                )

    def disabled_record(self, record: dict[str, Any]) -> dict[str, Any]:
        return {**record, ENABLED: False}

    def model_rows(self) -> list[BeatRow]:
        from django_celery_beat.models import PeriodicTask

        tasks = (
            PeriodicTask.objects.using(self.alias)
            .select_related("crontab", "interval", "clocked", "solar")
            .order_by("name")
        )
        return [_row_of_model(task) for task in tasks]


def _row_of_model(task: Any) -> BeatRow:
    crontab, interval, clocked, solar = task.crontab, task.interval, task.clocked, task.solar
    return BeatRow(
        task.name,
        task.task,
        task.args,
        task.kwargs,
        task.queue,
        task.exchange,
        task.routing_key,
        task.headers,
        task.priority,
        task.expires,
        task.expire_seconds,
        task.one_off,
        task.start_time,
        task.enabled,
        task.description,
        *(
            (c.minute, c.hour, c.day_of_month, c.month_of_year, c.day_of_week, str(c.timezone))
            if (c := crontab) is not None
            else (None,) * 6
        ),
        interval.every if interval is not None else None,
        interval.period if interval is not None else None,
        clocked.clocked_time if clocked is not None else None,
        solar.event if solar is not None else None,
    )


def translate(row: BeatRow, now: datetime) -> Entry | Skipped:
    """The job `row` makes, or why it makes none."""
    row = _normalised(row)
    if row.task == BACKEND_CLEANUP:
        return Skipped(
            row.name,
            row.name,
            "Celery's own clean-up of expired results, which beat adds by itself: not "
            "imported. If your result backend is a database and beat is retired, set "
            "result_expires or make a celery job of it on the dashboard.",
        )
    if row.solar_event is not None:
        return Skipped(
            row.name,
            row.name,
            f"a solar schedule ({row.solar_event}) has no equivalent here: "
            "give it a cron schedule at the times it should run",
        )
    if CELERY_EXECUTOR not in ExecutorKind.values:
        return Skipped(row.name, row.name, "this site has no celery executor to run it")
    try:
        arguments = _arguments(row)
        schedule, notes = _schedule(row, now)
    except ValueError as error:
        return Skipped(row.name, row.name, str(error))
    enabled = row.enabled
    queue = _queue(row.queue, notes)
    notes.extend(_option_notes(row, now))
    if row.expires is not None and row.expires <= now:
        enabled = False
        notes.append(f"expired at {row.expires.isoformat()}: imported disabled")
    values = {
        "name": row.name[:NAME_MAX_LENGTH],
        "description": row.description or "",
        "executor": CELERY_EXECUTOR,
        "command": row.task,
        "arguments": arguments,
        "queue": queue,
        "priority": row.priority or 0,
        **schedule,
    }
    # "enabled" as imported: an expired task's is False, as beat would have it by now.
    record = json_record({**row._asdict(), ENABLED: enabled})
    return Entry(row.name, row.name, values, record, tuple(notes))


def _normalised(row: BeatRow) -> BeatRow:
    """Datetimes aware (SQLite gives them naive, in UTC, or as text), flags as bools."""
    return row._replace(
        expires=aware(row.expires),
        start_time=aware(row.start_time),
        clocked_time=aware(row.clocked_time),
        one_off=bool(row.one_off),
        enabled=bool(row.enabled),
    )


def _arguments(row: BeatRow) -> dict[str, Any]:
    """Beat's args and kwargs (JSON text) as the celery executor takes them."""
    try:
        args = json.loads(row.args or "[]")
        kwargs = json.loads(row.kwargs or "{}")
    except ValueError as error:
        raise ValueError(f"its args or kwargs are not JSON: {error}") from None
    if not isinstance(args, list):
        raise ValueError("its args are not a JSON list")
    if not isinstance(kwargs, dict):
        raise ValueError("its kwargs are not a JSON object")
    return {"args": args, "kwargs": kwargs}


def _schedule(row: BeatRow, now: datetime) -> tuple[dict[str, Any], list[str]]:
    notes: list[str] = []
    if row.clocked_time is not None:
        return schedule_fields(at=row.clocked_time), notes
    if row.minute is not None:
        fields = (row.minute, row.hour, row.day_of_month, row.month_of_year, row.day_of_week)
        expression = " ".join(field or "*" for field in fields)
        zone = row.timezone or "UTC"
        if row.one_off:
            return {**schedule_fields(at=_next_cron(expression, zone, row, now))}, [
                "one_off: a single run at its next occurrence"
            ]
        if row.start_time is not None and row.start_time > now:
            notes.append(
                f"start_time {row.start_time.isoformat()} is not carried for a crontab: "
                "it runs from its next occurrence"
            )
        return schedule_fields(cron=expression, timezone=zone), notes
    if row.every is not None:
        if row.period not in PERIOD_SECONDS:
            raise ValueError(f"an interval in {row.period} has no equivalent here")
        seconds = row.every * PERIOD_SECONDS[row.period]
        if row.one_off:
            first = row.start_time or now + timedelta(seconds=seconds)
            return schedule_fields(at=first), ["one_off: a single run, one interval from now"]
        return schedule_fields(every=arithmetic.largest_unit(seconds), at=row.start_time), notes
    raise ValueError("it has no schedule")


def _next_cron(expression: str, zone: str, row: BeatRow, now: datetime) -> datetime:
    after = max(now, row.start_time) if row.start_time is not None else now
    try:
        moment = arithmetic.CronSchedule(expression, zone).next_after(after)
    except arithmetic.ScheduleError as error:
        raise ValueError(f"its crontab {expression!r} in {zone}: {error}") from None
    if moment is None:
        raise ValueError(f"its crontab {expression!r} never occurs again")
    return moment


def _queue(celery_queue: str | None, notes: list[str]) -> str:
    """The job queue whose runs go to `celery_queue`: the one JOBS_CELERY_QUEUES renames to
    it, else its own name when it is one here (else a name made of it, with a note)."""
    if not celery_queue:
        return DEFAULT_QUEUE  # the celery executor sends it to the app's default queue
    renamed = {theirs: ours for ours, theirs in conf.celery_queues().items()}
    if celery_queue in renamed:
        return renamed[celery_queue]
    if (
        re.fullmatch(QUEUE_NAME_PATTERN, celery_queue)
        and len(celery_queue) <= QUEUE_NAME_MAX_LENGTH
    ):
        return celery_queue
    ours = re.sub(r"[^A-Za-z0-9_-]+", "-", celery_queue)[:QUEUE_NAME_MAX_LENGTH].strip("-") or "q"
    notes.append(
        f"the Celery queue {celery_queue!r} is not a queue name here: its job's queue is "
        f"{ours!r}; add {ours}={celery_queue} to JOBS_CELERY_QUEUES"
    )
    return ours


def _option_notes(row: BeatRow, now: datetime) -> list[str]:
    notes = []
    if row.expires is not None and row.expires > now:
        notes.append(
            f"beat would stop it at {row.expires.isoformat()}; a job here has no end: "
            "disable it then"
        )
    if row.expire_seconds:
        notes.append(f"expire_seconds ({row.expire_seconds}) is not carried")
    for name in ("exchange", "routing_key"):
        if getattr(row, name):
            notes.append(f"{name} {getattr(row, name)!r} is not carried: the queue routes it")
    if row.headers and row.headers.strip() not in ("{}", ""):
        notes.append("its headers are not carried")
    return notes
