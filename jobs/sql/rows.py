"""The rows the stores read and write: NamedTuples, in the column order of their statements.

Rows going into the database carry values already adapted by the store
(`store.adapt_datetime`; keys as 32 hex digits), so a batch adapts each distinct value
once. Rows coming out carry Python values (aware datetimes, keys).
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from jobs.runs import RunTicket


class DueJob(NamedTuple):
    """An active job whose next_run_at has come (statement due_jobs)."""

    key: str
    name: str
    command: str
    schedule_type: str
    interval: int | None
    interval_unit: str
    misfire_policy: str
    next_run_at: datetime
    read_next_run_at: object  # next_run_at as the database gave it, for move_jobs
    max_retries: int
    retry_backoff_seconds: int
    cron_expression: str
    timezone: str
    overlap_policy: str
    timeout_seconds: int | None
    sim_failure_rate: float | None
    sim_min_seconds: float | None
    sim_max_seconds: float | None
    executor: str
    arguments: object  # the job's arguments as the database gave them (JSON text)
    queue: str  # copied onto its runs, with the priority
    priority: int
    calendar_id: int | None  # its business calendar (jobs.calendars), with the policy
    calendar_policy: str
    jitter_seconds: int
    anchor_at: datetime | None  # an interval job's grid origin


class JobMove(NamedTuple):
    """A claimed job's new next_run_at; applied only if it still has the one read."""

    next_run_at: object
    is_active: bool
    job_key: str
    read_next_run_at: object


class NewRun(NamedTuple):
    """A run to insert (statement insert_runs): pending, or running when the claiming
    process's pool starts it at once (`worker`, `started_at` and `heartbeat_at` set)."""

    key: str
    job_key: str
    scheduled_for: object
    attempt: int
    status: str
    trigger: str
    not_before: object
    log: str
    worker: str
    created_at: object
    dispatched_at: object
    arguments: object  # JSON text (store.adapt_json); NULL for simulated runs
    queue: str  # the job's, as the claim read it
    priority: int
    started_at: object  # None while pending
    heartbeat_at: object


class RetryRun(NamedTuple):
    """A failed run's next attempt (statement insert_retry_runs), pending; it takes its
    job's queue and priority as they are when it is inserted."""

    key: str
    job_key: str
    scheduled_for: object
    attempt: int
    not_before: object
    created_at: object
    arguments: object  # JSON text; NULL for simulated runs


class SkippedRun(NamedTuple):
    """An occurrence an overlap policy records as skipped."""

    key: str
    job_key: str
    scheduled_for: datetime
    log: str
    queue: str  # the job's
    priority: int


class Replacement(NamedTuple):
    """A pending or running run to cancel because `new_key` replaces it."""

    old_key: str
    job_key: str
    note: str
    new_key: str


class JobStatus(NamedTuple):
    """A skipped or cancelled run shown as its job's latest outcome, unless a run that
    started after `at` has finished."""

    status: str
    job_key: str
    at: object


class JobOutcome(NamedTuple):
    """A run's start and outcome copied onto its job (never moving last_run_at back)."""

    started_at: object
    status: str
    job_key: str
    started_again: object  # started_at once more: the statement compares with it


class FinishedRun(NamedTuple):
    status: str
    started_at: object
    finished_at: object
    log: str
    # What the run returned or raised (JSON text, JobHistory.result); None for most runs.
    result: str | None
    # Where the run ran when elsewhere (a Celery worker, "celery@host via <ours>"): the
    # run's worker then says so; None keeps the worker that started it.
    worker: str | None
    key: str


class LiveLog(NamedTuple):
    """A running run's output so far, written only while `worker` still runs it."""

    key: str
    worker: str
    log: str


class ActiveRun(NamedTuple):
    key: str
    status: str


class LostRun(NamedTuple):
    """A running run whose heartbeat is older than the lease."""

    ticket: RunTicket
    worker: str
    heartbeat_at: datetime | None
    started_at: datetime | None
    # Where its processes are ("" and None: it started none, or before they were known).
    process_host: str = ""
    process_group: int | None = None


class RunningRun(NamedTuple):
    """A running run of a job that has a timeout."""

    ticket: RunTicket
    started_at: datetime


class CancelledRun(NamedTuple):
    job_key: str
    started_at: datetime | None
    scheduled_for: datetime


class PruneEdge(NamedTuple):
    """The newest run of a job beyond the ones kept."""

    scheduled_for: object
    attempt: int


class JobPageRow(NamedTuple):
    key: str
    last_run_at: datetime | None


class WatchedJob(NamedTuple):
    """A job with failure or recovery alerts, and its failed runs in a row before this
    batch."""

    key: str
    notify_on_failure: bool
    notify_on_recovery: bool
    alert_after_failures: int
    consecutive_failures: int


class FailureStreak(NamedTuple):
    """A watched job's failed runs in a row after a batch (statement
    record_failure_streaks)."""

    consecutive_failures: int
    job_key: str


class RunningLong(NamedTuple):
    """A running run of a job that alerts on failure, not yet found running long."""

    run_key: str
    job_key: str
    started_at: datetime
    expected_seconds: int | None


class TimelineJob(NamedTuple):
    """A job as the Upcoming page counts its occurrences (jobs/forecasts/upcoming.py), its times in
    whole microseconds since the epoch."""

    key: str
    name: str
    schedule_type: str
    interval: int | None
    interval_unit: str
    cron_expression: str
    timezone: str
    is_active: bool
    next_run_us: int | None
    scheduled_at_us: int | None
    # What its calendar, the blackout windows and its jitter do to it (the rows shown).
    calendar_id: int | None = None
    calendar_policy: str = "skip"
    jitter_seconds: int = 0
    queue: str = "default"
    anchor_us: int | None = None


class ChainLink(NamedTuple):
    """A job that runs of another job start (statement chained_jobs)."""

    on_status: str  # the outcome that starts it: success, or failed (for good)
    from_key: str  # the job whose run finished
    key: str  # the job to run
    name: str
    is_active: bool
    overlap_policy: str
    queue: str  # copied onto the run it starts, with the priority
    priority: int
    executor: str
    arguments: object  # the job's arguments as the database gave them (JSON text)


class ChainedRun(NamedTuple):
    """A run a chain starts (statement insert_chained_runs), values adapted."""

    key: str
    job_key: str
    scheduled_for: object
    status: str  # pending, or skipped by the job's overlap policy
    not_before: object
    log: str
    created_at: object
    finished_at: object  # None while pending
    caused_by: str  # the key of the run that started it
    queue: str  # the started job's
    priority: int
    arguments: object  # JSON text; NULL for simulated and skipped runs


class QueueRoom(NamedTuple):
    """A queue with a limit, as a start would find it (statement queue_room)."""

    running: int  # its runs running now, in every process
    waiting: int  # its pending runs that may start now (counted up to the asked cap)


class WakeUp(NamedTuple):
    """What an idle scheduler loop needs before it sleeps (statement next_wake_at)."""

    next_due_at: datetime | None  # the earliest active job's next_run_at
    next_retry_at: datetime | None  # the earliest pending run not ready yet
    paused_at: datetime | None  # the pause switch (jobs.models.PauseWindow)
    paused_until: datetime | None
