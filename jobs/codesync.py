"""Bring the database to the schedules declared in code: `manage.py syncjobs`, and
`runscheduler` at start while JOBS_SYNC_ON_START is on (docs/scheduling.md "Schedules in code").

Each declaration (jobs/pytasks/declarations.py) is one job, found by its key (Job.code_key,
unique while set). A sync, in one transaction:

1. checks every declaration: what the decorator was given (one schedule, known options,
   values JSON can hold, one declaration per key), then the job it makes with the model's
   own validation (Job.full_clean: the cron expression, the zone, the task's arguments,
   every option's value). Any problem stops the sync with every message, each naming the
   function, and nothing is changed;
2. creates the jobs not in the database, updates the others in place, writing only the
   fields that differ through Job.save() (so the audit trail records them, as done by
   "syncjobs" through the channel "code", and a new schedule moves next_run_at as an
   edit in the form does), and deactivates, never deletes, the jobs whose declaration is
   gone.

is_active stays the operator's: it is written only when the declaration itself changed
since the last sync, its description aside (Job.code_declaration keeps the values last
declared), or when the declaration is gone. A one-off whose time has passed is saved
disabled, with a note, rather than refused: a new database would otherwise never take
the code's jobs.

Any number of processes may sync at once: the existing rows are locked in key order
(PostgreSQL; SQLite's writer lock serialises the transactions), and an insert that meets
a row another process has just inserted rolls back to its savepoint and updates that row
instead, so each key stays one job.
"""

from __future__ import annotations

import copy
import json
import logging
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone as django_timezone
from django.utils.translation import gettext as _

from jobs.models import Calendar, Channel, ExecutorKind, Job, ScheduleType, acting, teams
from jobs.models import code as code_fields
from jobs.models.changes import audited_fields, json_value
from jobs.pytasks import declarations, registry, signature
from jobs.pytasks.declarations import Declaration
from jobs.schedules import arithmetic as schedules

logger = logging.getLogger("jobs.codesync")

# A key tells apart the schedules of one task: short, and plain enough for a job's name.
KEY_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,49}")

CREATE = "create"
UPDATE = "update"
DEACTIVATE = "deactivate"
UNCHANGED = "unchanged"

# How a message names the field a declaration gave as a schedule word.
_WORD_OF_FIELD = {
    "cron_expression": "cron",
    "interval": "every",
    "interval_unit": "every",
    "scheduled_at": "at",
    "command": "task",
    "name": "name (the task's name and key)",
}


class DeclarationError(Exception):
    """The declarations cannot be synced; `problems`: one message each, naming the
    function. Nothing was changed."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class Change(NamedTuple):
    """What a sync did (or, not applied, would do) to one job.

    `action`: CREATE, UPDATE, DEACTIVATE or UNCHANGED; `fields`: the job's fields it
    wrote on an update (and "code_source" when the declaration moved to another file);
    `note`: why a job was saved disabled, or "".
    """

    action: str
    code_key: str
    source: str
    fields: tuple[str, ...] = ()
    note: str = ""

    def line(self, applied: bool) -> str:
        """The change in words, as the commands print it."""
        verbs = {
            CREATE: ("created", "would create"),
            UPDATE: ("updated", "would update"),
            DEACTIVATE: ("deactivated", "would deactivate"),
            UNCHANGED: ("unchanged", "unchanged"),
        }
        verb = verbs[self.action][0 if applied else 1]
        text = f"{verb} {self.code_key} ({self.source})"
        if self.action == UPDATE:
            text += ": " + (", ".join(self.fields) or "its declaration only")
        elif self.action == DEACTIVATE:
            text += ": no longer declared in code"
        if self.note:
            text += f" (disabled: {self.note})"
        return text


class SyncReport(NamedTuple):
    """Every declared job's Change, then the deactivated ones; `applied`: written."""

    changes: tuple[Change, ...]
    applied: bool

    @property
    def differs(self) -> bool:
        """The database is not (was not) what the code declares."""
        return any(change.action != UNCHANGED for change in self.changes)

    def count(self, action: str) -> int:
        return sum(1 for change in self.changes if change.action == action)

    def lines(self) -> list[str]:
        """A line per job changed (or to change), then the counts."""
        lines = [c.line(self.applied) for c in self.changes if c.action != UNCHANGED]
        declared = len(self.changes) - self.count(DEACTIVATE)
        counts = (
            f"{self.count(CREATE)} created, {self.count(UPDATE)} updated, "
            f"{self.count(UNCHANGED)} unchanged, {self.count(DEACTIVATE)} deactivated"
        )
        prefix = "" if self.applied else "dry run, nothing changed: "
        lines.append(f"{prefix}{declared} declared in code: {counts}")
        return lines


class _Planned(NamedTuple):
    change: Change
    job: Job
    declaration: Declaration | None
    written: tuple[str, ...]


# --- the sync -----------------------------------------------------------------------------


def sync(*, apply: bool = True, actor: str = "syncjobs", team: str | None = None) -> SyncReport:
    """Bring the database to the declarations (or, not `apply`, only say what that would
    change). Raises DeclarationError, changing nothing, when a declaration is wrong or a
    task module could not be imported (its declarations cannot be known).

    `team`: the name of the group that becomes the team of every declared job whose
    declaration names none (`syncjobs --team`); not recorded as declared, so a sync
    without it (runscheduler's at start) leaves their team as it is."""
    default_team = _default_team(team)
    declared = checked_declarations()
    with acting(None, Channel.CODE, actor), transaction.atomic():
        # Locked in key order: processes syncing at once wait for each other here.
        stored = {
            job.code_key: job
            for job in Job.objects.select_for_update()
            # The implicit jobs of enqueued tasks (jobs.tasks_backend) are no declarations.
            .filter(code_key__isnull=False, enqueued_task=False)
            .order_by("code_key")
        }
        planned: list[_Planned] = []
        problems: list[str] = []
        for declaration in declared:
            try:
                planned.append(_plan(declaration, stored.get(declaration.code_key), default_team))
            except ValidationError as error:
                problems.extend(_model_problems(declaration, error))
        if problems:
            raise DeclarationError(problems)
        keys = {declaration.code_key for declaration in declared}
        planned.extend(
            _plan_gone(job)
            for key, job in stored.items()
            if key not in keys and job.code_declaration is not None
        )
        if not apply:
            return SyncReport(tuple(p.change for p in planned), applied=False)
        return SyncReport(tuple(_apply(p) for p in planned), applied=True)


def checked_declarations() -> list[Declaration]:
    """The declarations of the task modules, sorted by key, once each is known to be
    well formed. Raises DeclarationError with every problem found."""
    problems = [
        _("The task module %(problem)s. Its declarations cannot be read, so nothing is synced.")
        % {"problem": problem}
        for problem in registry.discovery_problems()
    ]
    declared = [d for d in declarations.declarations() if registry.get_task(d.task_name)]
    for declaration in declared:
        problems.extend(_named(declaration, text) for text in word_problems(declaration))
    by_key: dict[str, list[Declaration]] = defaultdict(list)
    for declaration in declared:
        by_key[declaration.code_key].append(declaration)
    for same in by_key.values():
        if len(same) > 1:
            problems.append(_named(same[0], _duplicate_text(same)))
    if problems:
        raise DeclarationError(problems)
    return sorted(declared, key=lambda declaration: declaration.code_key)


def _apply(planned: _Planned) -> Change:
    change, job = planned.change, planned.job
    if change.action == UNCHANGED:
        return change
    if change.action == CREATE:
        try:
            with transaction.atomic():
                job.save()
        except IntegrityError:
            # Another process inserted this key since the rows were read: update its row.
            existing = Job.objects.select_for_update().filter(code_key=change.code_key).first()
            if existing is None or planned.declaration is None:
                raise
            logger.info(
                "%s was created by another sync meanwhile: syncing that job", change.code_key
            )
            try:
                again = _plan(planned.declaration, existing, planned.job.team_id)
            except ValidationError as error:
                raise DeclarationError(_model_problems(planned.declaration, error)) from None
            return _apply(again)
        return change
    job.save(update_fields=[*planned.written, "code_source", "code_declaration", "updated_at"])
    return change


def _default_team(name: str | None) -> int | None:
    if name is None:
        return None
    found = teams.team_named(name)
    if found is None:
        raise DeclarationError(
            [_("--team names no group: %(name)s.") % {"name": signature.short_repr(name)}]
        )
    return found


def _plan(
    declaration: Declaration, stored: Job | None, default_team: int | None = None
) -> _Planned:
    """The job `declaration` makes of `stored` (None: a new one), validated; nothing is
    written. Raises ValidationError with the model's messages. `default_team`: the team
    of a job whose declaration names none (sync's `team`), written, not recorded."""
    values = field_values(declaration)
    record = _record(values)
    if default_team is not None and TEAM_FIELD not in values:
        values[TEAM_FIELD] = default_team
    key, source = declaration.code_key, declaration.source
    if stored is None:
        job = Job(code_key=key, code_source=source, code_declaration=record, **values)
        note = _validate(job)
        return _Planned(Change(CREATE, key, source, note=note), job, declaration, ())
    audited = audited_fields(Job)
    before = {name: copy.deepcopy(getattr(stored, name)) for name in audited}
    last = stored.code_declaration
    takes_over = _takes_over(last, record)
    if takes_over:
        # An option no longer declared goes back to its default (and to the operator).
        for name in last or {}:
            if name not in values and name in audited:
                setattr(stored, name, Job._meta.get_field(name).get_default())
    for name, value in values.items():
        if name == code_fields.OPERATOR_FIELD and not takes_over:
            continue  # the operator's pause stays while the code says the same
        setattr(stored, name, value)
    moved = stored.code_source != source
    stored.code_source, stored.code_declaration = source, record
    note = _validate(stored)
    written = tuple(name for name in audited if getattr(stored, name) != before[name])
    if not written and not moved and last == record:
        return _Planned(Change(UNCHANGED, key, source), stored, declaration, ())
    shown = written + (("code_source",) if moved else ())
    return _Planned(Change(UPDATE, key, source, shown, note), stored, declaration, written)


def _takes_over(last: dict[str, Any] | None, record: dict[str, Any]) -> bool:
    """Whether the code changed what the job does since `last` (None: since it was gone),
    so that its declared is_active is written again: any declared value but the
    description (a docstring edited is no reason to enable a job an operator disabled)."""
    if last is None:
        return True
    return {k: v for k, v in last.items() if k != "description"} != {
        k: v for k, v in record.items() if k != "description"
    }


def _plan_gone(job: Job) -> _Planned:
    """A job whose declaration is gone: disabled, its fields the operator's again."""
    was_active = job.is_active
    job.is_active = False
    job.code_declaration = None
    written = ("is_active",) if was_active else ()
    change = Change(DEACTIVATE, job.code_key or "", job.code_source, written)
    return _Planned(change, job, None, written)


def _validate(job: Job) -> str:
    """Job.full_clean(), as every entry point validates a job; "" when valid as it is,
    or why it is valid only disabled (a one-off whose time has passed), and disabled.

    The key is left out: its uniqueness is the database's to decide (see _apply), and a
    check here would refuse the row a concurrent sync has just inserted."""
    try:
        job.full_clean(exclude=["code_key"])
    except ValidationError as error:
        if not job.is_active:
            raise
        job.is_active = False
        try:
            job.full_clean(exclude=["code_key"])
        except ValidationError:
            job.is_active = True
            raise error from None
        return " ".join(error.messages)
    return ""


# --- what a declaration says ------------------------------------------------------------


def declarable_options() -> list[str]:
    """The job fields a declaration may give by name (besides its schedule words)."""
    return [
        name
        for name in audited_fields(Job)
        if name not in code_fields.NOT_DECLARABLE and name not in declarations.SCHEDULE_WORDS
    ]


def field_values(declaration: Declaration) -> dict[str, Any]:
    """The job's fields as `declaration` sets them: the task's name (with the key) and
    description, the task and its arguments, the schedule, then the options."""
    task = registry.get_task(declaration.task_name)
    options = {
        _OPTION_ALIASES.get(name, name): signature.json_value(value)
        for name, value in declaration.options.items()
    }
    if "calendar" in options:
        # By name: the calendar's id differs from one database to another.
        options["calendar_id"] = _calendar_id(options.pop("calendar"))
    if "team" in options:  # by name too: a group's
        options[TEAM_FIELD] = teams.team_named(options.pop("team"))
    values: dict[str, Any] = {
        "name": declaration.code_key,
        "description": task.description if task is not None else "",
        "executor": ExecutorKind.PYTHON.value,
        "command": declaration.task_name,
        "arguments": options.pop("arguments", {}),
        **_schedule_values(declaration),
        code_fields.OPERATOR_FIELD: options.pop(code_fields.OPERATOR_FIELD, True),
    }
    values.update(options)
    return values


# The job's team, as team= (a group's name) sets it.
TEAM_FIELD = "team_id"

# Words of @register(...) that are a field under another name: jitter= is jitter_seconds.
_OPTION_ALIASES = {"jitter": "jitter_seconds"}


def _calendar_id(name: Any) -> int | None:
    if name is None or name == "":
        return None
    return Calendar.objects.filter(name=name).values_list("pk", flat=True).first()


def _schedule_values(declaration: Declaration) -> dict[str, Any]:
    # Every schedule field, so that a job moved from one kind of schedule to another
    # keeps nothing of the old one.
    values: dict[str, Any] = {
        "scheduled_at": None,
        "interval": None,
        "interval_unit": "",
        "cron_expression": "",
        "timezone": "",
    }
    if declaration.cron is not None:
        values["schedule_type"] = ScheduleType.CRON.value
        values["cron_expression"] = declaration.cron
        values["timezone"] = declaration.timezone or ""
    elif declaration.every is not None:
        values["schedule_type"] = ScheduleType.INTERVAL.value
        values["interval"], values["interval_unit"] = schedules.largest_unit(
            int(declaration.every.total_seconds())
        )
    else:
        values["schedule_type"] = ScheduleType.ONCE.value
        values["scheduled_at"] = declaration.at
    return values


def _record(values: dict[str, Any]) -> dict[str, Any]:
    """The values as Job.code_declaration stores them (JSON), to tell at the next sync
    whether the code changed this job."""
    return json.loads(json.dumps({name: json_value(value) for name, value in values.items()}))


def word_problems(declaration: Declaration) -> list[str]:
    """What is wrong with what the decorator was given, before any job is made of it."""
    problems: list[str] = []
    key = declaration.key
    if not isinstance(key, str) or (key and not KEY_PATTERN.fullmatch(key)):
        problems.append(
            _("key= must be a short word of letters, digits, “_”, “.” and “-”, not %(key)s.")
            % {"key": signature.short_repr(key)}
        )
    given = [word for word in ("cron", "every", "at") if getattr(declaration, word) is not None]
    if not given:
        problems.append(_("No schedule: give one of cron=, every= and at=."))
    elif len(given) > 1:
        problems.append(
            _(
                "Two schedules (%(words)s): give one of cron=, every= and at=, and stack "
                "the decorator, each with its own key=, for more."
            )
            % {"words": " and ".join(f"{word}=" for word in given)}
        )
    problems.extend(_schedule_problems(declaration))
    allowed = declarable_options()
    for name, value in declaration.options.items():
        if name == "calendar":
            if value is not None and (not isinstance(value, str) or _calendar_id(value) is None):
                problems.append(
                    _("calendar= names no business calendar: %(name)s.")
                    % {"name": signature.short_repr(value)}
                )
            continue
        if name == "team":
            if value is not None and teams.team_named(value) is None:
                problems.append(
                    _("team= names no group: %(name)s.") % {"name": signature.short_repr(value)}
                )
            continue
        problems.extend(_option_problems(_OPTION_ALIASES.get(name, name), value, allowed))
    return problems


def _schedule_problems(declaration: Declaration) -> Iterable[str]:
    cron, zone = declaration.cron, declaration.timezone
    every, at = declaration.every, declaration.at
    if cron is not None and not isinstance(cron, str):
        yield _("cron= takes the expression as text, like “0 9 * * 1-5”.")
    if zone is not None:
        if cron is None:
            yield _(
                "timezone= goes with cron= only: every= is a duration, and at= carries "
                "its own zone."
            )
        elif not isinstance(zone, str):
            yield _("timezone= takes an IANA name as text, like “Asia/Tokyo”.")
    if every is not None:
        if not isinstance(every, timedelta):
            yield _("every= takes a timedelta, like timedelta(minutes=10).")
        elif every < timedelta(seconds=1) or every.microseconds:
            yield _("every= must be a whole number of seconds, at least one.")
    if at is not None:
        if not isinstance(at, datetime):
            yield _(
                "at= takes a datetime with its time zone, like datetime(2026, 12, 1, 9, 0, "
                "tzinfo=UTC)."
            )
        elif django_timezone.is_naive(at):
            yield _(
                "at= must be an aware datetime (with tzinfo): a time without a zone names "
                "no one moment."
            )


def _option_problems(name: str, value: Any, allowed: Sequence[str]) -> Iterable[str]:
    reason = code_fields.NOT_DECLARABLE.get(name)
    if reason == "run":
        yield _("%(name)s= cannot be given: a job declared in code runs its function.") % {
            "name": name
        }
    elif reason == "schedule":
        yield _("%(name)s= cannot be given: the schedule is cron=, every= or at=.") % {"name": name}
    elif reason == "secret":
        yield _(
            "webhook_secret= cannot be given: keep secrets out of the code, and set it on "
            "the dashboard (or JOBS_WEBHOOK_SECRET for the whole site)."
        )
    elif reason is not None or name not in allowed:
        yield _("“%(name)s” is not a job option. The options are: %(options)s.") % {
            "name": name,
            "options": ", ".join(allowed),
        }
    else:
        try:
            json.dumps(signature.json_value(value), allow_nan=False)
        except (TypeError, ValueError):
            yield _(
                "%(name)s=%(value)s cannot be stored: an option holds text, a number, "
                "true or false, None, or JSON."
            ) % {"name": name, "value": signature.short_repr(value)}


def _duplicate_text(same: list[Declaration]) -> str:
    key = same[0].key
    if not key:
        return _("%(count)d schedules of the task %(task)s have no key=: give each its own.") % {
            "count": len(same),
            "task": same[0].task_name,
        }
    return _(
        "%(count)d schedules of the task %(task)s have the key “%(key)s”: give each its own."
    ) % {"count": len(same), "task": same[0].task_name, "key": key}


def _model_problems(declaration: Declaration, error: ValidationError) -> list[str]:
    """The model's messages, each naming the function and the word it is about."""
    if not hasattr(error, "error_dict"):
        return [_named(declaration, message) for message in error.messages]
    problems = []
    for field, messages in error.message_dict.items():
        word = "" if field == NON_FIELD_ERRORS else _WORD_OF_FIELD.get(field, field)
        for message in messages:
            problems.append(_named(declaration, f"{word}: {message}" if word else message))
    return problems


def _named(declaration: Declaration, text: str) -> str:
    where = declaration.source
    if declaration.key and isinstance(declaration.key, str):
        where += f", key “{declaration.key}”"
    return f"{declaration.function_path} ({where}): {text}"
