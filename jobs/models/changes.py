"""The audit trail: every change an operator makes to a job, who made it and through what.

One JobChange per change: a job created, edited, enabled or disabled, restored to an
earlier version, deleted; a run of it started now, retried or cancelled. Job.save() and
the delete signal below record the job's own changes (so every entry point does, and
inside the same transaction); the engine's actions record the run ones.

Who is acting is a context variable set by each entry point: the dashboard's and the
admin's views (jobs.web.screens), the API's views
(jobs.api.views.ActorMixin), a management command (`with acting(channel=Channel.COMMAND)`),
the sync of the schedules declared in code (channel CODE, named "syncjobs" or
"runscheduler"). With none set, a change is the system's.

Only the fields an operator can set are audited (Job's editable fields); the scheduler's
own bookkeeping (next_run_at, last_run_at, last_run_status, anchor_at, updated_at) is not,
and the engine writes it with raw SQL that never passes here anyway.
"""

from __future__ import annotations

import contextvars
import functools
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models.signals import pre_delete
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from jobs.access.masking import WRITE_ONLY_JOB_FIELDS, concealed_change
from jobs.models.choices import NAME_MAX_LENGTH


class Channel(models.TextChoices):
    DASHBOARD = "dashboard", pgettext_lazy("audit channel", "dashboard")
    ADMIN = "admin", pgettext_lazy("audit channel", "admin")
    API = "api", pgettext_lazy("audit channel", "API")
    COMMAND = "command", pgettext_lazy("audit channel", "command")
    # `manage.py syncjobs`, or runscheduler at start: the schedules declared in code.
    CODE = "code", pgettext_lazy("audit channel", "code")
    # `manage.py importschedules`: schedules brought over from celery beat, a crontab, django-q2.
    IMPORT = "import", pgettext_lazy("audit channel", "import")
    SYSTEM = "system", pgettext_lazy("audit channel", "system")


class ChangeAction(models.TextChoices):
    CREATE = "create", pgettext_lazy("audit action", "created")
    EDIT = "edit", pgettext_lazy("audit action", "edited")
    ENABLE = "enable", pgettext_lazy("audit action", "enabled")
    DISABLE = "disable", pgettext_lazy("audit action", "disabled")
    RESTORE = "restore", pgettext_lazy("audit action", "restored")
    DELETE = "delete", pgettext_lazy("audit action", "deleted")
    RUN_NOW = "run_now", pgettext_lazy("audit action", "run now")
    RETRY = "retry", pgettext_lazy("audit action", "run retried")
    CANCEL = "cancel", pgettext_lazy("audit action", "run cancelled")


# --- who is acting ---------------------------------------------------------------------


@dataclass(frozen=True)
class Actor:
    user: Any  # a user, or None
    channel: str
    # Who acts when no user does: the command syncing the code's schedules ("syncjobs").
    name: str = ""

    @property
    def username(self) -> str:
        user = self.user
        if user is None or not getattr(user, "is_authenticated", False):
            return self.name
        return user.get_username()


SYSTEM = Actor(None, Channel.SYSTEM)

_actor: contextvars.ContextVar[Actor] = contextvars.ContextVar("jobs_actor", default=SYSTEM)


def current_actor() -> Actor:
    return _actor.get()


def set_actor(user: Any, channel: str, name: str = "") -> contextvars.Token:
    """Say who acts from now on; undo with reset_actor(token)."""
    return _actor.set(Actor(user, channel, name))


def reset_actor(token: contextvars.Token) -> None:
    _actor.reset(token)


@contextmanager
def acting(user: Any = None, channel: str = Channel.COMMAND, name: str = "") -> Iterator[Actor]:
    """Changes made inside are recorded as `user`'s (or, with no user, `name`'s),
    through `channel`."""
    token = set_actor(user, channel, name)
    try:
        yield current_actor()
    finally:
        reset_actor(token)


# --- values ------------------------------------------------------------------------------


def json_value(value: Any) -> Any:
    """A field's value as JSON holds it: datetimes as ISO strings (an aware one in UTC, as
    the database gives it back: the same instant written from another zone's form is the
    same version), UUIDs as strings."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(UTC).isoformat()
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, uuid.UUID | Decimal):
        return str(value)
    if isinstance(value, timedelta):
        return value.total_seconds()
    return value


@functools.cache
def audited_fields(model: type[models.Model]) -> tuple[str, ...]:
    """The fields an operator sets: every editable field of the model but its key."""
    return tuple(
        field.name
        for field in model._meta.concrete_fields
        if field.editable and not field.primary_key
    )


def job_values(job: models.Model) -> dict[str, Any]:
    """The job's audited values, JSON-safe: to compare, in memory. What is stored is
    version() of them, without the write-only fields."""
    return {name: json_value(getattr(job, name)) for name in audited_fields(type(job))}


def version(values: Mapping[str, Any]) -> dict[str, Any]:
    """Values as a version stores them: without the write-only fields (jobs.access.masking), so
    no secret is kept in the trail and restoring a version leaves the job's secret as it
    is."""
    return {name: value for name, value in values.items() if name not in WRITE_ONLY_JOB_FIELDS}


def _concealed(changes: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """The changes with each write-only field's pair replaced by whether it was set and
    that it changed (jobs.access.masking.concealed_change)."""
    return {
        name: concealed_change(*pair) if name in WRITE_ONLY_JOB_FIELDS else pair
        for name, pair in changes.items()
    }


def _set(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values a field was given: without the blank and null ones."""
    return {name: value for name, value in values.items() if value not in (None, "")}


def diff(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> dict[str, list[Any]]:
    """{"field": [old, new]} for each field whose value differs (old None: a new job,
    each field that was given a value)."""
    if old is None:
        return {name: [None, value] for name, value in _set(new).items()}
    return {name: [old.get(name), value] for name, value in new.items() if old.get(name) != value}


# --- the record ------------------------------------------------------------------------


class JobChange(models.Model):
    # Not a foreign key: the records of a deleted job stay. Indexed by jobs_change_job_recent.
    job_id = models.UUIDField(_("job id"))
    job_name = models.CharField(_("job"), max_length=NAME_MAX_LENGTH)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # The name as it was: stays when the user is deleted or renamed.
    username = models.CharField(_("username"), max_length=150, blank=True)
    channel = models.CharField(_("channel"), max_length=16, choices=Channel.choices)
    action = models.CharField(_("action"), max_length=16, choices=ChangeAction.choices)
    created_at = models.DateTimeField(_("when"), auto_now_add=True)
    changes = models.JSONField(_("changes"), default=dict, blank=True)
    # The job's audited fields after the change: what restoring this version puts back.
    # None for the run actions, which change no field.
    snapshot = models.JSONField(_("version"), null=True, blank=True)
    run_id = models.UUIDField(_("run id"), null=True, blank=True)

    class Meta:
        verbose_name = _("job change")
        verbose_name_plural = _("job changes")
        ordering = ["-created_at", "-id"]
        indexes = [
            # A job's page and the API: its changes, newest first.
            models.Index(fields=["job_id", "created_at"], name="jobs_change_job_recent"),
            # Pruning (jobs.runtime.retention), oldest first; the admin's list, newest first.
            models.Index(fields=["created_at"], name="jobs_change_created"),
        ]

    def __str__(self) -> str:
        return f"{self.job_name}: {self.get_action_display()}"

    @property
    def restorable(self) -> bool:
        return bool(self.snapshot) and self.action != ChangeAction.DELETE

    @classmethod
    def record(
        cls,
        *,
        job_id: Any,
        job_name: str,
        action: str,
        changes: dict[str, list[Any]] | None = None,
        snapshot: dict[str, Any] | None = None,
        run_id: Any = None,
    ) -> JobChange:
        actor = current_actor()
        user = actor.user if actor.username else None
        return cls.objects.create(
            job_id=job_id,
            job_name=job_name[:NAME_MAX_LENGTH],
            user=user if user is not None and user.pk is not None else None,
            username=actor.username,
            channel=actor.channel,
            action=action,
            changes=changes or {},
            snapshot=snapshot,
            run_id=run_id,
        )


def record_save(
    job: models.Model,
    old: Mapping[str, Any] | None,
    action: str | None = None,
    fields: Iterable[str] | None = None,
    related: Mapping[str, list[Any]] | None = None,
) -> None:
    """Record a save of `job` whose audited values were `old` (None: a new job), of only
    `fields` when the save wrote only those; `related`: {name: [old, new]} of the
    many-to-many lists the save also wrote (the chains, jobs.models.chains).

    Nothing is recorded when nothing changed. Called by Job.save() inside its
    transaction.
    """
    new = job_values(job)
    if old is not None and fields is not None:
        written = set(fields)
        new = {name: new[name] if name in written else old.get(name) for name in new}
    changes = {**diff(old, new), **(related or {})}
    if old is not None and not changes:
        return
    if action is None:
        if old is None:
            action = ChangeAction.CREATE
        elif set(changes) == {"is_active"}:
            action = ChangeAction.ENABLE if job.is_active else ChangeAction.DISABLE
        else:
            action = ChangeAction.EDIT
    JobChange.record(
        job_id=job.pk,
        job_name=job.name,
        action=action,
        changes=_concealed(changes),
        snapshot=version(new),
    )


def record_run_action(job_id: Any, job_name: str, action: str, run_id: Any) -> None:
    """Record run now, retry or cancel of a run of the job (the engine's actions)."""
    JobChange.record(job_id=job_id, job_name=job_name, action=action, run_id=run_id)


def _record_delete(sender: type, instance: Any, **kwargs: Any) -> None:
    # A signal, so a queryset's delete (the admin's "delete selected") is recorded too;
    # Django sends it inside the deletion's transaction, while the row can still be read.
    last = version(job_values(instance))
    JobChange.record(
        job_id=instance.pk,
        job_name=instance.name,
        action=ChangeAction.DELETE,
        changes={name: [value, None] for name, value in _set(last).items()},
        snapshot=last,
    )


pre_delete.connect(_record_delete, sender="jobs.Job", dispatch_uid="jobs_record_delete")
