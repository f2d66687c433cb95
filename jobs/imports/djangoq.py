"""django-q2's schedules, as python jobs (docs/migrating.md "Coming from django-q2").

Read through its model when django_q is installed here, else by SQL over its table
(django_q_schedule) in the database given. Each schedule (its id is the key) becomes a
job of the `python` executor when its function is a task registered with this app
(jobs/pytasks: `@register`, under its dotted path, which is what django-q2's `func`
holds); any other is skipped, with that fix. Its args and kwargs are Python literal text:
read with ast.literal_eval, never evaluated; positional args are bound to the task's
parameters in order (a python job's arguments are by name).

Schedules: once at next_run; every `minutes` minutes, hourly, and biweekly as intervals
from next_run; daily, weekly, monthly, bimonthly, quarterly and yearly as cron at
next_run's wall time in the site's zone (django-q2 keeps those on the local clock across
daylight saving changes too); cron as written, in the site's zone (django-q2 reads it in
its TIME_ZONE). `repeats` 0 is a schedule django-q2 no longer runs: imported disabled;
a count left is not carried (a job here repeats until disabled).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from datetime import datetime
from typing import Any, NamedTuple

from django.conf import settings
from django.db import connections
from django.utils import timezone as django_timezone

from jobs.imports.entries import (
    ENABLED,
    Entry,
    Skipped,
    aware,
    json_record,
    schedule_fields,
)
from jobs.imports.tables import TableSource
from jobs.models.choices import DEFAULT_QUEUE, NAME_MAX_LENGTH
from jobs.pytasks import registry
from jobs.schedules import arithmetic

SOURCE = "django-q2"
_SELECT = (
    "SELECT id, name, func, hook, args, kwargs, schedule_type, minutes, repeats, next_run, "
    "cron, cluster, intended_date_kwarg FROM django_q_schedule ORDER BY id"
)
# Every N of a unit, from next_run (hourly: the same on the wall clock and in UTC).
INTERVALS = {"H": (1, arithmetic.HOUR), "BW": (14, arithmetic.DAY)}
# Months between runs of the schedules kept on the wall clock at a day of the month.
MONTH_STEPS = {"M": 1, "BM": 2, "Q": 3, "Y": 12}


class QRow(NamedTuple):
    id: int
    name: str | None
    func: str
    hook: str | None
    args: str | None
    kwargs: str | None
    schedule_type: str
    minutes: int | None
    repeats: int
    next_run: Any
    cron: str | None
    cluster: str | None
    intended_date_kwarg: str | None


class DjangoQSource(TableSource):
    """The schedules in database `alias`: by django-q2's model when `use_models`, else SQL."""

    source = SOURCE
    app = "django_q"
    tables = "the django_q_schedule table"
    select = _SELECT
    row_type = QRow

    def translate(self, row: QRow) -> Entry | Skipped:
        return translate(row._replace(next_run=aware(row.next_run)))

    def disable(self, keys: Iterable[str]) -> None:
        """repeats=0: django-q2's scheduler passes over such a schedule and keeps it (set
        repeats back to -1 to hand it back), where deleting it could not be undone."""
        ids = [int(key) for key in keys]
        if not ids:
            return
        if self.use_models:
            from django_q.models import Schedule

            Schedule.objects.using(self.alias).filter(id__in=ids).update(repeats=0)
            return
        marks = ", ".join(["%s"] * len(ids))
        with connections[self.alias].cursor() as cursor:
            # Only placeholders are formatted in; the ids travel as parameters.
            statement = "UPDATE django_q_schedule SET repeats = 0 WHERE id IN "
            cursor.execute(statement + f"({marks})", ids)

    def disabled_record(self, record: dict[str, Any]) -> dict[str, Any]:
        return {**record, "repeats": 0, ENABLED: False}

    def model_rows(self) -> list[QRow]:
        from django_q.models import Schedule

        rows = Schedule.objects.using(self.alias).order_by("id").values_list(*QRow._fields)
        return [QRow(*values) for values in rows]


def translate(row: QRow) -> Entry | Skipped:
    key, label = str(row.id), row.name or f"{row.func} (schedule {row.id})"
    task = registry.get_task(row.func)
    if task is None:
        return Skipped(
            key,
            label,
            f"{row.func} is not a task registered with this app: decorate it with "
            "@register (from jobs import register) in a task module, then import again",
        )
    notes: list[str] = []
    try:
        arguments = _arguments(row, [parameter.name for parameter in task.parameters], notes)
        schedule = _schedule(row)
    except ValueError as error:
        return Skipped(key, label, str(error))
    if row.hook:
        notes.append(f"its hook {row.hook} is not carried: chain a job on the dashboard")
    if row.intended_date_kwarg:
        notes.append("intended_date_kwarg is not carried: read the run's SCHEDULED_FOR")
    if row.schedule_type in MONTH_STEPS and int(schedule["cron_expression"].split()[2]) > 28:
        notes.append(
            "django-q2 moves a day past a month's end to its last day; cron skips that month"
        )
    if row.repeats > 0:
        notes.append(f"{row.repeats} repeats left in django-q2; here it runs until disabled")
    values = {
        "name": label[:NAME_MAX_LENGTH],
        "description": task.description,
        "executor": "python",
        "command": row.func,
        "arguments": arguments,
        "queue": row.cluster or DEFAULT_QUEUE,
        **schedule,
    }
    fields = row._asdict()
    if row.schedule_type != "O":
        # django-q2 moves next_run at every run: only a once schedule's is its definition.
        del fields["next_run"]
    record = json_record({**fields, ENABLED: row.repeats != 0})
    return Entry(key, label, values, record, tuple(notes))


def _literal(text: str | None, what: str) -> Any:
    try:
        return ast.literal_eval(text) if text and text.strip() else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise ValueError(f"its {what} are not Python literals: {text[:80]!r}") from None


def _kwargs(text: str | None) -> dict[str, Any]:
    """A dict literal, or keyword syntax ("a=1, b='x'") as django-q2 also reads it."""
    try:
        value = _literal(text, "kwargs")
    except ValueError:
        try:
            call = ast.parse(f"f({text})", mode="eval").body
            if not isinstance(call, ast.Call) or call.args:
                raise ValueError
            return {word.arg: ast.literal_eval(word.value) for word in call.keywords if word.arg}
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise ValueError(f"its kwargs are not Python literals: {text!r:.80}") from None
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(name, str) for name in value):
        raise ValueError("its kwargs are not a dict of names")
    return value


def _arguments(row: QRow, parameters: list[str], notes: list[str]) -> dict[str, Any]:
    kwargs = _kwargs(row.kwargs)
    if kwargs.pop("q_options", None) is not None:
        notes.append("q_options are not carried")
    args = _literal(row.args, "args")
    if args is None:
        args = ()
    elif not isinstance(args, tuple | list):
        args = (args,)
    if len(args) > len(parameters):
        raise ValueError(f"it gives {len(args)} positional args; the task takes {len(parameters)}")
    for name, value in zip(parameters, args, strict=False):
        if name in kwargs:
            raise ValueError(f"it gives {name} twice, by position and by name")
        kwargs[name] = value
    return kwargs


def _schedule(row: QRow) -> dict[str, Any]:
    kind, start = row.schedule_type, row.next_run
    if kind == "O":
        if start is None:
            raise ValueError("a once schedule without a next run")
        return schedule_fields(at=start)
    if kind == "C":
        if not row.cron:
            raise ValueError("a cron schedule without an expression")
        return schedule_fields(cron=row.cron, timezone=settings.TIME_ZONE)
    if kind == "I":
        return schedule_fields(every=arithmetic.largest_unit((row.minutes or 1) * 60), at=start)
    if kind in INTERVALS:
        return schedule_fields(every=INTERVALS[kind], at=start)
    if start is None:
        raise ValueError(f"a schedule of type {kind} without a next run")
    wall = django_timezone.localtime(start, arithmetic.time_zone(settings.TIME_ZONE))
    return schedule_fields(cron=_wall_cron(kind, wall), timezone=settings.TIME_ZONE)


def _wall_cron(kind: str, wall: datetime) -> str:
    at = f"{wall.minute} {wall.hour}"
    if kind == "D":
        return f"{at} * * *"
    if kind == "W":
        return f"{at} * * {(wall.weekday() + 1) % 7}"
    if kind not in MONTH_STEPS:
        raise ValueError(f"the schedule type {kind!r} is not one django-q2 has")
    step = MONTH_STEPS[kind]
    if step == 1:
        return f"{at} {wall.day} * *"
    months = sorted({(wall.month - 1 + step * n) % 12 + 1 for n in range(12 // step)})
    return f"{at} {wall.day} {','.join(map(str, months))} *"
