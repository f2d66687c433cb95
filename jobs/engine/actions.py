"""What operators do to runs from the screens, the admin and the API: run now, retry,
cancel. Single rows, so written with the ORM (except cancel, whose conditional update
returns what the job's outcome needs), each in a write transaction of the store, which
records the action in the job's audit trail too (jobs.models.changes)."""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext

from jobs.executors.command_line import command_line
from jobs.models import (
    ChangeAction,
    ExecutorKind,
    Job,
    JobHistory,
    RunStatus,
    Trigger,
    gate,
    quotas,
)
from jobs.models.changes import record_run_action
from jobs.observability import traceparent
from jobs.runs import as_key
from jobs.sql import store
from jobs.sql.rows import JobStatus

logger = logging.getLogger("jobs.engine")


def run_now(
    job: Job,
    now: datetime | None = None,
    *,
    arguments: dict[str, Any] | None = None,
    user: object = None,
) -> JobHistory:
    """Create a pending run of `job` that may start at once (the "Run now" button).

    The run keeps the arguments it will run with: `arguments` when given (validated by
    the caller: jobs.models.job_rules.run_arguments_errors), else the job's own; a
    simulated job's run keeps none unless given some. Raises
    gate.ShellPermissionRequired when `user` may not run it with those arguments, and
    quotas.ManualRunsExceeded when the job has JOBS_MAX_PENDING_MANUAL_RUNS pending
    runs started by hand already (nothing is created then).
    """
    gate.check_run(user, job, arguments)
    now = now or timezone.now()
    if arguments is None and job.executor != ExecutorKind.SIMULATED:
        arguments = job.arguments
    for _ in range(5):
        try:
            with store().writing():
                quotas.check_manual_runs(job)
                run = JobHistory.objects.create(
                    job=job,
                    scheduled_for=now,
                    not_before=now,
                    attempt=1,
                    trigger=Trigger.MANUAL,
                    created_at=now,
                    arguments=arguments,
                    # The job's pool and its place there, as for a scheduled run.
                    queue=job.queue,
                    priority=job.priority,
                    # A traced request's span becomes the run's parent (JOBS_OTEL).
                    traceparent=traceparent.traceparent_for_new_run(),
                )
                record_run_action(job.pk, job.name, ChangeAction.RUN_NOW, run.pk)
                return run
        except IntegrityError:
            # Two presses in the same microsecond: the occurrence is taken, use the next.
            now += timedelta(microseconds=1)
    raise RuntimeError("could not create a manual run")


def _job_name(job_id: object) -> str:
    return Job.objects.filter(pk=job_id).values_list("name", flat=True).first() or ""


class RetryRefused(Exception):
    """retry_run() declined; the message says why, in words fit for the user."""


def retry_run(run: JobHistory, now: datetime | None = None, *, user: object = None) -> JobHistory:
    """Create the next attempt of a failed run, to start at once (the admin's "retry").

    Only a failed run that has no later attempt yet can be retried, so a double click,
    two operators, or the scheduler's own automatic retry never add a second next
    attempt: the unique (job, scheduled_for, attempt) constraint settles any race.
    An operator's retry is allowed beyond the job's max_retries, like "run now".
    Raises RetryRefused otherwise, and gate.ShellPermissionRequired when the run had
    other arguments than the job has now and `user` may not run it with those.
    """
    now = now or timezone.now()
    attempts = JobHistory.objects.filter(job_id=run.job_id, scheduled_for=run.scheduled_for)
    with store().writing():
        # Read the status again: the caller's copy may be older than the run.
        status, arguments = attempts.filter(pk=run.pk).values_list(
            "status", "arguments"
        ).first() or (None, None)
        if status != RunStatus.FAILED:
            raise RetryRefused(gettext("Only a failed run can be retried."))
        # At least run.attempt, unless the run was deleted since the read above.
        highest = attempts.aggregate(highest=Max("attempt"))["highest"] or run.attempt
        if highest > run.attempt:
            raise RetryRefused(gettext("This run has already been retried."))
        # The next attempt goes to the job's queue as it is now, as automatic retries do.
        job = (
            Job.objects.filter(pk=run.job_id)
            .only("queue", "priority", "executor", "command", "arguments")
            .first()
        )
        queue, priority = (job.queue, job.priority) if job else (run.queue, run.priority)
        if job is not None:
            # The next attempt runs with the failed one's arguments: if they are not the
            # job's own, the rule of run now with arguments applies.
            gate.check_run(user, job, arguments)
        try:
            with transaction.atomic():
                retry = JobHistory.objects.create(
                    job_id=run.job_id,
                    scheduled_for=run.scheduled_for,
                    attempt=highest + 1,
                    status=RunStatus.PENDING,
                    trigger=Trigger.RETRY,
                    not_before=now,
                    created_at=now,
                    # The next attempt runs with what the failed one ran with.
                    arguments=arguments,
                    queue=queue,
                    priority=priority,
                )
        except IntegrityError:
            # Someone (an operator or the scheduler) created that attempt just now.
            raise RetryRefused(gettext("This run has already been retried.")) from None
        record_run_action(run.job_id, _job_name(run.job_id), ChangeAction.RETRY, retry.pk)
        return retry


def cancel_note(now: datetime, by: str) -> str:
    """The log line a cancel adds. Stamped in UTC, as the scheduler's other notes are
    (jobs.engine.overlap); the run page shows such stamps in the viewer's zone."""
    stamp = f"[{timezone.localtime(now, UTC):%Y-%m-%d %H:%M:%S} UTC]"
    return f"{stamp} cancelled by {by}.\n" if by else f"{stamp} cancelled.\n"


class CancelRefused(Exception):
    """cancel_run() declined; the message says why, in words fit for the user."""


def cancel_run(run: JobHistory, by: str, now: datetime | None = None) -> None:
    """Cancel a pending or running run (the dashboard's and the admin's "cancel").

    The run is marked cancelled at once, with who did it, and is not retried. A pending
    run never starts (start() takes only pending runs). A running run's worker learns
    within about a second (the worker's Heartbeater watches the runs it holds) and stops
    it; finish() then leaves the run as it is, since it is no longer running. Raises
    CancelRefused if the run has already finished.
    """
    now = now or timezone.now()
    s = store()
    note = cancel_note(now, by)
    with s.transaction() as ops:
        # A run cancelled before it wrote anything (a pending one, or a running one
        # whose live log is not written yet) still says what it would have run.
        executor, command = Job.objects.filter(pk=run.job_id).values_list(
            "executor", "command"
        ).first() or ("", "")
        first_line = command_line(executor, command, run.arguments)
        cancelled = ops.cancel_run(
            as_key(run.pk), by, s.adapt_datetime(now), f"\n{note}", f"{first_line}\n{note}"
        )
        if cancelled is None:
            raise CancelRefused(
                gettext(
                    "This run has already finished: only a pending or running run can be cancelled."
                )
            )
        # Its place in the job's timeline: when it started, or was due if it never did.
        when = cancelled.started_at or cancelled.scheduled_for
        ops.record_status_on_jobs(
            [JobStatus(RunStatus.CANCELLED.value, cancelled.job_key, s.adapt_datetime(when))]
        )
        job_id = uuid.UUID(cancelled.job_key)
        record_run_action(job_id, _job_name(job_id), ChangeAction.CANCEL, run.pk)
    logger.info("run %s cancelled by %s", run.pk, by or "the scheduler")
