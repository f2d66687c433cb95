"""Alerts by webhook (POST JSON, signed) and/or e-mail, per job: failing repeatedly,
recovered, running long.

When an alert goes out:

- *failure*: when the job's failed runs in a row reach its alert_after_failures (1 by
  default: the first failure of each streak), and not again until a success ends the
  streak. A run counts when it failed for good: its last automatic retry failed too (or
  it had none). An attempt that will be retried counts for nothing, so the retries of
  one occurrence never alert one by one, and a retry that succeeds ends no streak.
- *recovery*: the success that ends a streak which reached alert_after_failures.
- *running long*: a run still going after the job's expected_seconds (blank: three times
  the 95th percentile of its last runs), once per run (jobs/alerts/running_long.py).

How an alert travels:

1. engine.finish() and engine.reap() emit their runs_finished event inside their
   transaction (`runs_finished()` here listens to it, subscribed in jobs/apps.py). It
   costs one query per batch: the batch's jobs that have alerts turned on, with their
   count of failed runs in a row (consecutive_failures), locked until the transaction
   ends; a second statement writes the counts that changed. So the count is exact
   however many processes finish runs of the job at once, and jobs without alerts pay
   nothing but that one query. Runs count in the order they started within a batch,
   batches in the order they commit.
2. The notices are handed to the process's Dispatcher when the transaction commits
   (never for a rolled-back one). The dispatcher is a bounded queue served by a few
   daemon threads (JOBS_ALERT_THREADS), so the scheduler loop and the workers never
   wait for a network call.
3. A thread delivers each notice on each of the job's channels, trying up to
   JOBS_ALERT_ATTEMPTS times with exponential backoff (JOBS_ALERT_BACKOFF_SECONDS, then
   double, ...), and records every attempt as a NotificationAttempt on the run. Every
   try of one webhook delivery carries the same webhook-id (jobs/outbound/signing.py).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.core.mail import send_mail
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from jobs import conf, metrics
from jobs.access.masking import mask_log, mask_urls, url_origin
from jobs.alerts import events
from jobs.alerts.retries import try_delivery
from jobs.alerts.webhook import REFUSED, USER_AGENT, post_webhook
from jobs.models import (
    DeliveryChannel,
    Job,
    JobHistory,
    NotificationAttempt,
    NotificationChannel,
    NotificationKind,
    NotificationStatus,
)
from jobs.runs import RunResult
from jobs.sql.base import Operations
from jobs.sql.rows import FailureStreak, WatchedJob
from jobs.text import one_line

logger = logging.getLogger(__name__)

LOG_TAIL_CHARS = 2000
ERROR_MAX_CHARS = 500
QUEUE_SIZE = 10_000

__all__ = ["REFUSED", "USER_AGENT", "post_webhook"]  # re-exported: jobs.alerts.webhook sends


@dataclass(frozen=True, slots=True)
class Notice:
    run_key: str  # the run's id as 32 hex digits (the engine's "key")
    job_key: str
    kind: str  # NotificationKind
    # failure: the failed runs in a row that alerted; recovery: the streak it ended.
    failures_in_a_row: int = 0
    # running long: the limit the run passed, in seconds, and where it came from
    # ("expected_seconds", or "p95" for three times the 95th percentile).
    expected_seconds: float | None = None
    expected_from: str = ""


# --- 1. deciding what to send (subscribed to the engine's runs_finished) -----------------


def runs_finished(ops: Operations, finished: Sequence[RunResult]) -> None:
    """Listener of the engine's runs_finished event (subscribed in jobs/apps.py).

    Called inside the engine's transaction: counts the failed runs in a row of the jobs
    with alerts, writes the counts that changed, and queues their alerts for when the
    transaction commits. Costs one query per batch (by primary key) when no job of the
    batch has alerts.
    """
    if not finished:
        return
    job_keys = list({result.ticket.job_key for result in finished})
    watched = {job.key: job for job in ops.watched_jobs(job_keys)}
    if not watched:
        return
    streaks = {key: job.consecutive_failures for key, job in watched.items()}
    notices: list[Notice] = []
    mine = sorted((r for r in finished if r.ticket.job_key in watched), key=lambda r: r.started_at)
    for result in mine:
        job = watched[result.ticket.job_key]
        notice = _count(job, result, streaks)
        if notice is not None:
            notices.append(notice)
    changed = [
        FailureStreak(streak, key)
        for key, streak in streaks.items()
        if streak != watched[key].consecutive_failures
    ]
    if changed:
        ops.record_failure_streaks(changed)
    if notices:
        transaction.on_commit(partial(dispatch, notices))


def _count(job: WatchedJob, result: RunResult, streaks: dict[str, int]) -> Notice | None:
    """Count one outcome into the job's streak; the notice it makes, if any."""
    key, run_key = job.key, result.ticket.run_key
    streak = streaks[key]
    notice = None
    if result.succeeded:
        if streak >= job.alert_after_failures and job.notify_on_recovery:
            notice = Notice(run_key, key, NotificationKind.RECOVERY, failures_in_a_row=streak)
        streaks[key] = 0
    elif result.ticket.final_attempt:
        streaks[key] = streak = streak + 1
        if streak == job.alert_after_failures and job.notify_on_failure:
            notice = Notice(run_key, key, NotificationKind.FAILURE, failures_in_a_row=streak)
    return notice


def dispatch(notices: Sequence[Notice]) -> None:
    get_dispatcher().submit(notices)


# --- 2. the background dispatcher --------------------------------------------------------

_STOP = object()


class Dispatcher:
    """A bounded queue of notices and a few daemon threads delivering them."""

    def __init__(self, threads: int | None = None, queue_size: int = QUEUE_SIZE) -> None:
        self.threads = threads or conf.alert_threads()
        self._queue: queue.Queue = queue.Queue(maxsize=queue_size)
        self._stop = threading.Event()
        self._idle = threading.Condition()
        self._unfinished = 0
        self._workers: list[threading.Thread] = []

    def start(self) -> Dispatcher:
        for index in range(self.threads):
            thread = threading.Thread(target=self._loop, name=f"alerts-{index + 1}", daemon=True)
            thread.start()
            self._workers.append(thread)
        return self

    def submit(self, notices: Sequence[Notice]) -> None:
        for notice in notices:
            if self._stop.is_set():
                logger.warning("alert for run %s not sent: shutting down", notice.run_key)
                continue
            with self._idle:
                self._unfinished += 1
            try:
                self._queue.put_nowait(notice)
            except queue.Full:
                self._done()
                metrics.count_alert("any", "dropped")
                logger.warning("alert queue full; dropped the alert for run %s", notice.run_key)

    def _done(self) -> None:
        with self._idle:
            self._unfinished -= 1
            if self._unfinished <= 0:
                self._idle.notify_all()

    def _loop(self) -> None:
        try:
            while True:
                notice = self._queue.get()
                if notice is _STOP:
                    return
                try:
                    close_old_connections()
                    deliver(notice, wait=self._stop.wait)
                except Exception:
                    logger.exception("delivering the alert for run %s failed", notice.run_key)
                finally:
                    self._done()
        finally:
            connection.close()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every submitted notice is delivered (True) or `timeout` passes."""
        with self._idle:
            return self._idle.wait_for(lambda: self._unfinished <= 0, timeout=timeout)

    def shutdown(self, timeout: float) -> bool:
        """Let queued alerts go out within `timeout`, then stop (cutting backoffs short)."""
        delivered = self.wait_idle(timeout)
        if not delivered:
            logger.warning("alerts still queued after %.0f s; giving up on them", timeout)
        self._stop.set()
        for _ in self._workers:
            self._queue.put(_STOP)
        for thread in self._workers:
            thread.join(timeout=5)
        self._workers.clear()
        return delivered


class InlineDispatcher:
    """Delivers in the caller's thread: for tests and one-off scripts."""

    def __init__(self, wait: Callable[[float], Any] | None = None) -> None:
        self.wait = wait

    def submit(self, notices: Sequence[Notice]) -> None:
        for notice in notices:
            deliver(notice, wait=self.wait)

    def shutdown(self, timeout: float) -> bool:
        return True


_dispatcher: Dispatcher | InlineDispatcher | None = None
_dispatcher_lock = threading.Lock()


def get_dispatcher() -> Dispatcher | InlineDispatcher:
    """The process's dispatcher, started on first use (scheduler, Huey worker, ...)."""
    global _dispatcher
    with _dispatcher_lock:
        if _dispatcher is None:
            _dispatcher = Dispatcher().start()
        return _dispatcher


def use_dispatcher(
    dispatcher: Dispatcher | InlineDispatcher | None,
) -> Dispatcher | InlineDispatcher | None:
    """Swap the process's dispatcher (tests); returns the previous one."""
    global _dispatcher
    with _dispatcher_lock:
        previous, _dispatcher = _dispatcher, dispatcher
    return previous


def shutdown(timeout: float) -> bool:
    """Flush and stop the dispatcher if this process started one."""
    dispatcher = use_dispatcher(None)
    return True if dispatcher is None else dispatcher.shutdown(timeout)


# --- 3. delivering one notice ------------------------------------------------------------


def deliver(notice: Notice, *, wait: Callable[[float], Any] | None = None) -> list[str]:
    """Send `notice` on each channel of its job, retrying with backoff; record every try.

    `wait(seconds)` sleeps between tries and returns true to give up (the dispatcher
    passes its stop event's wait). Returns the outcome per channel ("sent"/"failed").
    """
    run = JobHistory.objects.select_related("job").filter(pk=notice.run_key).first()
    if run is None:
        return []  # deleted meanwhile, with its job
    job = run.job
    # (channel, where to send, what the attempt records: no user, password, path or
    # query of a webhook URL, which often hold its credential).
    channels: list[tuple[str, str, str]] = []
    if job.webhook_url:
        channels.append((DeliveryChannel.WEBHOOK, job.webhook_url, url_origin(job.webhook_url)))
    if job.notify_email_list:
        addresses = ", ".join(job.notify_email_list)
        channels.append((DeliveryChannel.EMAIL, addresses, addresses))
    payload = build_payload(run, notice)
    # The same on every try of this delivery (a receiver drops a duplicate by it), and
    # from any process: one alert of one kind per run.
    webhook_id = f"msg_{notice.run_key}_{notice.kind}"
    outcomes = []
    for channel, target, recorded in channels:
        send = (
            partial(post_webhook, target, payload, webhook_id=webhook_id, secret=job.webhook_secret)
            if channel == DeliveryChannel.WEBHOOK
            else partial(send_email, job.notify_email_list, payload)
        )
        record = partial(_record_attempt, run, notice.kind, channel, recorded)
        delivery = try_delivery(
            channel,
            send,
            what=f"alert {notice.kind} for run {run.pk}",
            wait=wait,
            record=record,
            error_max_chars=ERROR_MAX_CHARS,
        )
        outcomes.append(NotificationStatus.SENT if delivery.sent else NotificationStatus.FAILED)
    # Apprise channels (jobs/alerts/channels.py): only when some exist, so a site without
    # the apprise extra imports none of it.
    if NotificationChannel.objects.exists():
        from jobs.alerts.channels import deliver_to_channels

        for sent in deliver_to_channels(job, payload, wait=wait):
            outcomes.append(NotificationStatus.SENT if sent else NotificationStatus.FAILED)
    return outcomes


def _record_attempt(
    run: JobHistory,
    kind: str,
    channel: str,
    target: str,
    attempt: int,
    ok: bool,
    code: int | None,
    error: str,
) -> None:
    """Keep one try at delivering an alert (shown on the run's page)."""
    NotificationAttempt.objects.create(
        run=run,
        kind=kind,
        channel=channel,
        target=target,
        attempt=attempt,
        status=NotificationStatus.SENT if ok else NotificationStatus.FAILED,
        response_code=code,
        error=error,
    )


def dashboard_url(job: Job) -> str:
    """The job's page: absolute with JOBS_BASE_URL set, else the path."""
    return f"{conf.base_url()}{job.get_absolute_url()}"


def build_payload(run: JobHistory, notice: Notice) -> dict[str, Any]:
    job = run.job
    kind = notice.kind
    facts: dict[str, Any] = {}
    if kind in (NotificationKind.FAILURE, NotificationKind.RECOVERY):
        facts["failures_in_a_row"] = notice.failures_in_a_row
    elif kind == NotificationKind.RUNNING_LONG:
        facts["expected_seconds"] = notice.expected_seconds
        facts["expected_from"] = notice.expected_from
    return {
        **events.envelope(str(kind), _happened_at(run, notice)),
        # Alerts go to addresses and services outside the site's permissions: secrets
        # masked as for users who may not change the job (jobs.access.masking).
        "job": {"id": str(job.pk), "name": job.name, "command": mask_urls(job.command)},
        "run": {
            "id": str(run.pk),
            "attempt": run.attempt,
            "max_retries": job.max_retries,
            "trigger": run.trigger,
            "worker": run.worker,
        },
        "status": run.status,
        "scheduled_for": run.scheduled_for,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "log_tail": mask_log(run.log, run.arguments, job.command)[-LOG_TAIL_CHARS:],
        "dashboard_url": dashboard_url(job),
        **facts,
    }


def _happened_at(run: JobHistory, notice: Notice) -> datetime:
    """When the alert's event happened: the run ended (failed, or succeeded after
    failures), it passed the time it was expected to take, or (a task that did not stop)
    its worker noticed, just before it dispatched the alert."""
    if notice.kind == NotificationKind.NOT_STOPPED:
        return timezone.now()
    if notice.kind == NotificationKind.RUNNING_LONG and run.started_at is not None:
        return run.started_at + timedelta(seconds=notice.expected_seconds or 0)
    return run.finished_at or run.started_at or run.created_at


# What an e-mail's subject says happened, by kind.
SUBJECT_VERBS = {
    NotificationKind.FAILURE: "failed",
    NotificationKind.RECOVERY: "recovered",
    NotificationKind.RUNNING_LONG: "is running long",
    NotificationKind.NOT_STOPPED: "did not stop when asked",
}


def send_email(recipients: list[str], payload: dict[str, Any]) -> tuple[bool, int | None, str]:
    """Send the alert through Django's mail settings (EMAIL_*)."""
    job, run = payload["job"], payload["run"]
    verb = SUBJECT_VERBS.get(payload["event"], payload["event"])
    in_a_row = payload.get("failures_in_a_row") or 0
    if payload["event"] == NotificationKind.FAILURE and in_a_row > 1:
        verb = f"failed {in_a_row} times in a row"
    # One line whatever the name holds (a header cannot be split by it).
    subject = one_line(f"[scheduler] {job['name']} {verb}")
    lines = [
        f"Job: {job['name']} ({job['id']})",
        f"Command: {job['command']}",
        f"Status: {payload['status']} (attempt {run['attempt']}, retries {run['max_retries']})",
    ]
    if payload["event"] == NotificationKind.RUNNING_LONG:
        lines.append(f"Expected to take at most: {payload['expected_seconds']:.0f} s")
    lines += [
        f"Scheduled for: {payload['scheduled_for']}",
        f"Started: {payload['started_at']}",
        f"Finished: {payload['finished_at']}",
        f"Details: {payload['dashboard_url']}",
        "",
        "Log (last lines):",
        payload["log_tail"],
    ]
    try:
        send_mail(subject, "\n".join(lines), None, recipients)
    except Exception as exc:
        # smtplib's errors, socket errors, a backend's own: all are a failed attempt.
        return False, None, f"{type(exc).__name__}: {exc}"
    return True, None, ""
