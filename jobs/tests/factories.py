"""The one way tests build jobs, runs and tickets, and the constants they share.

Plain functions taking keywords, imported where they are used:

    from jobs.tests.factories import NOW, WORKER, make_job, make_run, ticket

(conftest.py offers `make_job` and `make_run` as fixtures too: the same functions, with
the database enabled.)
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from django.utils import timezone

from jobs.access import permissions as access
from jobs.models import IntervalUnit, Job, JobHistory, RunStatus, ScheduleType
from jobs.runs import RunTicket

# Every time-driven test starts here unless it says otherwise (the `clock` fixture).
NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)

# The worker name tests start, finish and hold runs under.
WORKER = "test-host:1/w1"

_distinct = itertools.count()


def make_job(*, clean: bool = False, **fields: Any) -> Job:
    """A job saved through Job.save(), which computes next_run_at as every entry point does.

    By default: an active job named "backup" running `echo hello` every 10 seconds. The job
    is not validated unless `clean=True`, which calls full_clean() first (as the forms,
    the admin and the API do) and so raises ValidationError for a job they would refuse.
    """
    values: dict[str, Any] = {
        "name": "backup",
        "command": "echo hello",
        "schedule_type": ScheduleType.INTERVAL,
        "interval": 10,
        "interval_unit": IntervalUnit.SECOND,
    }
    values.update(fields)
    job = Job(**values)
    if clean:
        job.full_clean()
    job.save()
    return job


def make_run(
    job: Job | None = None,
    *,
    at: datetime | None = None,
    ago: timedelta = timedelta(minutes=1),
    took: timedelta = timedelta(seconds=2),
    status: str = RunStatus.SUCCESS,
    **fields: Any,
) -> JobHistory:
    """A run of `job` (a new make_job() if None) created at `at`, by default `ago` before now.

    Scheduled, due and created at `at`; unless pending it started then on WORKER, and if it
    succeeded or failed it finished `took` later. Any other JobHistory field (attempt, log,
    trigger, worker, ...) is a keyword. Without `at`, each run gets a distinct microsecond,
    which keeps (job, scheduled_for, attempt) unique.
    """
    if job is None:
        job = make_job()
    if at is None:
        at = timezone.now() - ago - timedelta(microseconds=next(_distinct))
    started = None if status == RunStatus.PENDING else at
    values: dict[str, Any] = {
        "scheduled_for": at,
        "not_before": at,
        "created_at": at,
        "status": status,
        "started_at": started,
        "finished_at": at + took if status in (RunStatus.SUCCESS, RunStatus.FAILED) else None,
        "heartbeat_at": started,
        "worker": "" if started is None else WORKER,
        "log": "",
    }
    values.update(fields)
    return JobHistory.objects.create(job=job, **values)


def ticket(run: JobHistory | None = None, **fields: Any) -> RunTicket:
    """A RunTicket by keyword: of `run` (its ids, job name and command, occurrence and
    attempt, the job's retry settings) or, without one, of a made-up job "job" running
    "cmd", scheduled for NOW. Keywords override either."""
    if run is None:
        values: dict[str, Any] = {
            "run_key": "a" * 32,
            "job_key": "b" * 32,
            "job_name": "job",
            "command": "cmd",
            "scheduled_for": NOW,
            "attempt": 1,
            "max_retries": 0,
            "retry_backoff_seconds": 0,
        }
    else:
        job = run.job
        values = {
            "run_key": run.pk.hex,
            "job_key": run.job_id.hex,
            "job_name": job.name,
            "command": job.command,
            "scheduled_for": run.scheduled_for,
            "attempt": run.attempt,
            "max_retries": job.max_retries,
            "retry_backoff_seconds": job.retry_backoff_seconds,
        }
    values.update(fields)
    return RunTicket(**values)


def group(grant: access.GroupGrant) -> Any:
    """The group as migration 0006 makes it (made again after a transactional test's
    flush has emptied the table)."""
    from django.contrib.auth.models import Group, Permission

    made, _ = Group.objects.get_or_create(name=grant.name)
    made.permissions.set(
        Permission.objects.filter(content_type__app_label="jobs", codename__in=grant.codenames)
    )
    return made


def make_user(
    username: str,
    *groups: access.GroupGrant,
    password: str = "pw-not-used",
    staff: bool = False,
    superuser: bool = False,
    permissions: tuple[str, ...] = (),
) -> Any:
    """A user in the given groups (jobs.access.permissions.JOB_VIEWERS ...) with extra permissions
    ("jobs.use_shell")."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    user = get_user_model().objects.create_user(
        username, password=password, is_staff=staff or superuser, is_superuser=superuser
    )
    user.groups.add(*(group(grant) for grant in groups))
    for name in permissions:
        app_label, codename = name.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return user


def make_token(user: Any, **fields: Any) -> str:
    """The text of a new API token of `user` (jobs.models.tokens.issue_token's choices:
    name, days, team, read_only, now); each call a new name unless one is given."""
    from jobs.models import issue_token

    fields.setdefault("name", f"token {next(_token_numbers)}")
    name = fields.pop("name")
    days = fields.pop("days", None)
    return issue_token(user, name, days, **fields).text


_token_numbers = itertools.count(1)
