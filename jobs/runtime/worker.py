"""Executing runs: shared by the scheduler's thread pool and the Huey workers.

A worker takes tickets, starts them through the engine (a conditional update), executes
them and records the results in one batch. While it holds runs, a heartbeat thread keeps
them alive, so the reaper only takes runs from a worker that is really gone; the same
thread stops a run that was cancelled or passed its job's timeout.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime

from django.db import DatabaseError, close_old_connections, connection

from jobs import alerts, conf, engine, metrics
from jobs.engine import leftovers
from jobs.engine.logs import safe_log
from jobs.executors import (
    STOP_CANCELLED,
    STOP_SHUTDOWN,
    STOP_TIMEOUT,
    ExecutionContext,
    Executor,
    load_executor,
)
from jobs.executors.routing import routed
from jobs.models import NotificationKind
from jobs.queues import settings as queues
from jobs.runs import RunResult, RunTicket
from jobs.runtime import observed
from jobs.sql.rows import LiveLog

logger = logging.getLogger(__name__)

# A batch of started runs is executed one after another; once this much time has gone,
# the rest are handed back so that they do not wait behind a slow run.
BATCH_TIME_BUDGET = 0.05
# How often the heartbeat thread asks which of its runs were cancelled (one SELECT per
# process, only while it holds runs): a cancelled run stops within about this long.
WATCH_INTERVAL = 1.0


# A run being executed: the context its executor watches, the worker's own context
# (stopped at shutdown), when it times out (time.monotonic()), and the worker's name (the
# live log writes only runs still running for it). A tuple: cheaper than an object, and
# one is made for every run.
_Executing = tuple[ExecutionContext, ExecutionContext | None, float | None, str]


def process_name() -> str:
    """`host:pid`, the prefix of every worker name this process uses."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Heartbeater:
    """Keeps the runs this process holds alive, and stops the ones that must stop.

    One thread per process. Every lease / 3 it stamps the held runs with one UPDATE.
    Every WATCH_INTERVAL, while runs are being executed, it asks the database which of
    them are no longer running (cancelled by an operator or by the overlap policy
    "replace", reaped, deleted) and stops them. It stops a run when its timeout passes
    (it wakes for the earliest deadline), and every run when its worker's own context is
    stopped (shutdown).

    Every JOBS_LIVE_LOG_SECONDS it writes the output so far of the runs whose executor
    keeps one (context.output: shell, command, python and http runs) and that wrote
    something since, with one statement for all of them (the live log). Simulated runs
    keep none and cost nothing here.

    Workers say which run they are executing (begin / end). That is a dict entry, with no
    lock: each run has a context of its own, so stopping one whose run has just ended
    stops nothing else; the thread reads a copy of the dict (one C call under the GIL).
    """

    def __init__(
        self,
        interval: float | None = None,
        watch_interval: float = WATCH_INTERVAL,
        live_log_interval: float | None = None,
    ) -> None:
        self.interval = conf.heartbeat_interval() if interval is None else interval
        self.watch_interval = watch_interval
        self.live_log_interval = (
            conf.live_log_interval() if live_log_interval is None else live_log_interval
        )
        self._held: set[str] = set()
        self._executing: dict[str, _Executing] = {}
        # Runs whose Python task went on past the kill grace after it was asked to stop
        # (reported once), by key: when it was asked (time.monotonic()).
        self._not_stopped: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="heartbeat", daemon=True)

    def start(self) -> Heartbeater:
        self._thread.start()
        return self

    def hold(self, run_keys: Iterable[str]) -> None:
        with self._lock:
            self._held.update(run_keys)

    def drop(self, run_keys: Iterable[str]) -> None:
        with self._lock:
            self._held.difference_update(run_keys)

    def begin(
        self,
        run_key: str,
        context: ExecutionContext,
        timeout: float | None = None,
        parent: ExecutionContext | None = None,
        worker: str = "",
    ) -> None:
        """A worker is about to execute `run_key` with `context` (its own): stop it when
        it must (cancelled, `timeout` seconds passed, `parent` stopped)."""
        context.notify = self._wake.set  # its processes started: record them at once
        if timeout is None:
            self._executing[run_key] = (context, parent, None, worker)
        else:
            self._executing[run_key] = (context, parent, time.monotonic() + timeout, worker)
            self._wake.set()  # sleep until this deadline if it is the earliest

    def end(self, run_key: str) -> None:
        self._executing.pop(run_key, None)
        if self._not_stopped:
            asked = self._not_stopped.pop(run_key, None)
            if asked is not None:
                self._stubborn_ended(run_key, asked)

    def wake(self) -> None:
        """Look at the executing runs now (e.g. the worker's context was just stopped)."""
        self._wake.set()

    def beat(self) -> int:
        with self._lock:
            held = list(self._held)
        return engine.heartbeat(held) if held else 0

    def watch(self) -> int:
        """Stop the runs being executed that are no longer running in the database."""
        executing = self._executing.copy()
        if not executing:
            return 0
        running = engine.running_among(executing)
        gone = [context for key, (context, *_) in executing.items() if key not in running]
        for context in gone:
            context.request_stop(STOP_CANCELLED)
        return len(gone)

    def write_live_logs(self) -> int:
        """Write the output so far of the executing runs that wrote since the last time,
        in one statement; returns how many runs it wrote."""
        rows = []
        written = []
        for key, (context, _, _, worker) in self._executing.copy().items():
            output = context.output
            if output is None or not output.changed:
                continue
            output.changed = False  # before reading: a write from now on is seen next time
            written.append(output)
            rows.append(LiveLog(key, worker, safe_log(output.text())))
        if not rows:
            return 0
        try:
            engine.write_live_logs(rows)
        except Exception:
            for output in written:
                output.changed = True  # try again next time
            raise
        return len(rows)

    def write_processes(self) -> int:
        """Record where the processes of the executing runs that started some since the
        last time are (engine.leftovers): one statement per run, once per run."""
        written = 0
        for key, (context, _, _, worker) in self._executing.copy().items():
            if not context.processes_changed:
                continue
            context.processes_changed = False
            try:
                leftovers.record_processes(key, worker, context.processes)
            except Exception:
                context.processes_changed = True  # try again next time
                raise
            written += 1
        return written

    def report_not_stopped(self, now: float) -> list[str]:
        """Report the Python tasks (thread mode) still running a kill grace after they
        were asked to stop: a line in the run's log, a metric, an alert. Their thread,
        the worker's slot, stays busy until they return: nothing else runs in it."""
        grace = conf.kill_grace()
        reported = []
        for key, (context, *_) in self._executing.copy().items():
            asked = context.stopped_at
            if not context.cooperative or asked is None or key in self._not_stopped:
                continue
            if now - asked < grace:
                continue
            self._not_stopped[key] = asked
            reported.append(key)
            metrics.python_not_stopped()
            logger.warning(
                "run %s: its Python task did not stop within %g s after it was asked to (%s)",
                key,
                grace,
                context.stop_words(),
            )
            note = (
                f"[{datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC] the task did not stop within "
                f"{grace:g} s after it was asked to ({context.stop_words()}): it runs in the "
                "worker's thread and only its own code can end it (current_run().stop); its "
                "worker stays busy until the task returns (JOBS_PYTHON_ISOLATION=process "
                "runs tasks that can be killed)."
            )
            # In the output too: a run still running (past its timeout) has its log
            # rewritten from the output by the live log and at its finish.
            if context.output is not None:
                context.output.line(note)
            job_key = leftovers.note(key, f"\n{note}\n")
            if job_key:
                alerts.dispatch([alerts.Notice(key, job_key, NotificationKind.NOT_STOPPED)])
        return reported

    def _stubborn_ended(self, run_key: str, asked: float) -> None:
        metrics.python_not_stopped_ended()
        try:
            leftovers.note(
                run_key,
                f"[{datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC] the task returned "
                f"{time.monotonic() - asked:.0f} s after it was asked to stop; its worker "
                "is free again.\n",
            )
        except Exception as error:
            logger.warning("could not note the end of run %s: %s", run_key, error)
            close_old_connections()

    def _enforce(self, now: float) -> float | None:
        """Stop runs whose worker stopped or whose deadline passed; the next deadline
        (or the time a stopped Python task is due to be reported, if it is earlier)."""
        upcoming = None
        for key, (context, parent, deadline, _) in self._executing.copy().items():
            if context.reason:
                if context.cooperative and key not in self._not_stopped:
                    due = (context.stopped_at or now) + conf.kill_grace()
                    upcoming = due if upcoming is None else min(upcoming, due)
                continue  # already stopped
            if parent is not None and parent.stop.is_set():
                context.request_stop(STOP_SHUTDOWN)
            elif deadline is not None:
                if deadline <= now:
                    context.request_stop(STOP_TIMEOUT)
                elif upcoming is None or deadline < upcoming:
                    upcoming = deadline
        return upcoming

    def _loop(self) -> None:
        next_beat = time.monotonic() + self.interval
        next_watch = time.monotonic() + self.watch_interval
        next_log = time.monotonic() + self.live_log_interval
        try:
            while not self._stop.is_set():
                self._wake.clear()  # before looking: a wake from now on is not lost
                now = time.monotonic()
                upcoming = self._enforce(now)  # the earliest deadline still to come
                try:
                    self.write_processes()
                    self.report_not_stopped(now)
                except Exception as error:
                    logger.warning("recording or reporting the runs' processes failed: %s", error)
                    close_old_connections()
                # A database hiccup must not kill the thread: the next beat retries well
                # inside the lease, the next watch a second later.
                if now >= next_watch:
                    next_watch = now + self.watch_interval
                    try:
                        self.watch()
                    except Exception as error:
                        # Once a second during an outage: a line, not a traceback.
                        logger.warning("looking for cancelled runs failed: %s", error)
                        close_old_connections()
                if now >= next_log:
                    next_log = now + self.live_log_interval
                    try:
                        self.write_live_logs()
                    except Exception as error:
                        logger.warning("writing the live logs failed: %s", error)
                        close_old_connections()
                if now >= next_beat:
                    next_beat = now + self.interval
                    try:
                        self.beat()
                    except Exception:
                        logger.exception("heartbeat failed")
                        close_old_connections()
                wake_at = min(next_watch, next_beat, next_log)
                if upcoming is not None:
                    wake_at = min(wake_at, upcoming)
                self._wake.wait(max(wake_at - time.monotonic(), 0.0))
        finally:
            connection.close()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)


def execute(executor: Executor, ticket: RunTicket, context: ExecutionContext) -> RunResult:
    """Execute one started run; an exception from the executor is a failed run, not a crash."""
    # datetime.now(UTC) rather than timezone.now(): the same value without a settings
    # lookup, which shows at tens of thousands of runs a second.
    started_at = datetime.now(UTC)
    logging_runs = logger.isEnabledFor(logging.INFO)
    if logging_runs:
        logger.info(
            "run started: job=%r run=%s attempt=%d scheduled_for=%s",
            ticket.job_name,
            ticket.run_key,
            ticket.attempt,
            ticket.scheduled_for.isoformat(),
        )
    try:
        outcome = executor.execute(ticket, context)
        succeeded, log, result = outcome.succeeded, outcome.log, outcome.result
        ran_on = outcome.ran_on
    except Exception:
        logger.exception("executor raised for run %s of job %r", ticket.run_key, ticket.job_name)
        succeeded, result, ran_on = False, None, ""
        log = f"$ {ticket.command}\nthe executor raised an exception:\n{traceback.format_exc()}"
    finished_at = datetime.now(UTC)
    timeout = ticket.timeout_seconds
    if timeout is not None and (
        context.reason == STOP_TIMEOUT or (finished_at - started_at).total_seconds() > timeout
    ):
        # Past the job's timeout: a failure (retried per policy), whatever the executor said.
        succeeded = False
        separator = "" if not log or log.endswith("\n") else "\n"
        log = f"{log}{separator}timed out after {timeout} s: the run was stopped.\n"
    if logging_runs:
        logger.info(
            "run finished: job=%r run=%s status=%s duration=%.3fs",
            ticket.job_name,
            ticket.run_key,
            "success" if succeeded else "failed",
            (finished_at - started_at).total_seconds(),
        )
    return RunResult(
        ticket=ticket,
        succeeded=succeeded,
        log=log,
        started_at=started_at,
        finished_at=finished_at,
        result=result,
        ran_on=ran_on,
    )


def _finish_patiently(results: list[RunResult], worker: str) -> None:
    """Record results, riding out a database restart for up to half the lease.

    The runs stay held (heartbeats keep trying) meanwhile; if the database is gone for
    longer, the reaper fails and retries them once it is back.
    """
    deadline = time.monotonic() + conf.heartbeat_interval() * 1.5
    delay = 0.2
    while True:
        try:
            engine.finish(results, worker)
            return
        except DatabaseError:
            if time.monotonic() + delay > deadline:
                raise
            logger.warning("recording %d results failed; retrying in %.1f s", len(results), delay)
            close_old_connections()
            time.sleep(delay)
            delay = min(delay * 2, 5.0)


def run_batch(
    tickets: Sequence[RunTicket],
    *,
    worker: str,
    executor: Executor,
    heartbeater: Heartbeater,
    context: ExecutionContext,
    time_budget: float = BATCH_TIME_BUDGET,
) -> tuple[list[RunTicket], list[RunTicket]]:
    """Start, execute and record a batch of runs.

    Returns (executed, handed_back): runs executed and recorded, and runs started but
    handed back to pending because the batch ran out of time (or the worker is stopping).
    Runs another worker won, and runs of a queue at its limit, are in neither list.
    """
    started = engine.start(tickets, worker)
    if not started:
        return [], []
    return run_started(
        started,
        worker=worker,
        executor=executor,
        heartbeater=heartbeater,
        context=context,
        time_budget=time_budget,
    )


def run_started(
    started: Sequence[RunTicket],
    *,
    worker: str,
    executor: Executor,
    heartbeater: Heartbeater,
    context: ExecutionContext,
    time_budget: float = BATCH_TIME_BUDGET,
) -> tuple[list[RunTicket], list[RunTicket]]:
    """Execute and record runs already started for `worker` (run_batch's second half;
    also the runs a worker takes from a limited queue, jobs.engine.take)."""
    heartbeater.hold([t.run_key for t in started])
    # The logs', traces' and Sentry's view of the runs (None: nothing watches them).
    watch = observed.watcher()
    if watch is not None:
        watch.batch(started)
    results: list[RunResult] = []
    handed_back: list[RunTicket] = []
    began = time.monotonic()
    try:
        for index, ticket in enumerate(started):
            if index and (context.stop.is_set() or time.monotonic() - began > time_budget):
                rest = list(started[index:])
                engine.release(rest, worker)
                handed_back += rest
                break
            # The run's own context, so that it can be stopped alone (cancelled, past its
            # timeout); the heartbeater stops it too when `context` (the worker's) is.
            run_context = ExecutionContext()
            heartbeater.begin(ticket.run_key, run_context, ticket.timeout_seconds, context, worker)
            try:
                if watch is None:
                    result = execute(executor, ticket, run_context)
                else:
                    result = watch.run(execute, executor, ticket, run_context)
            finally:
                heartbeater.end(ticket.run_key)
            if run_context.hand_back:
                handed_back.append(ticket)
                engine.release([ticket], worker)
            else:
                results.append(result)
        _finish_patiently(results, worker)
        metrics.observe_results(results)
    finally:
        heartbeater.drop([t.run_key for t in started])
    return [r.ticket for r in results], handed_back


# --- Huey workers ------------------------------------------------------------------------

_process_lock = threading.Lock()
_process_resources: tuple[Executor, Heartbeater] | None = None


def _resources() -> tuple[Executor, Heartbeater]:
    """The executor and heartbeat thread of this worker process, made on first use."""
    global _process_resources
    with _process_lock:
        if _process_resources is None:
            _process_resources = (routed(load_executor()), Heartbeater().start())
        return _process_resources


def execute_handed_out(run_keys: Sequence[str], resend: Callable[[list[RunTicket]], object]) -> int:
    """Execute runs a scheduler handed to Huey; returns how many this worker executed.

    Runs no longer pending (a duplicate message, another worker was faster) are skipped
    by the conditional start. Runs of a queue at its limit stay pending and are marked as
    not handed out, so that the next scheduler pass hands them out again when there is
    room. Runs started but handed back because the batch ran out of time go out again
    through `resend` (to the Huey queue of their own queue), so one slow run does not
    hold the rest.
    """
    executor, heartbeater = _resources()
    tickets = engine.tickets_for(run_keys)
    worker = f"{process_name()}/huey-{threading.current_thread().name}"
    executed, handed_back = run_batch(
        tickets,
        worker=worker,
        executor=executor,
        heartbeater=heartbeater,
        context=ExecutionContext(),
    )
    if tickets and len(executed) + len(handed_back) < len(tickets):
        limits = queues.limits()
        done = {t.run_key for t in executed} | {t.run_key for t in handed_back}
        # Only pending runs change: a duplicate message's run, started elsewhere, stays.
        engine.undispatch(
            [t.run_key for t in tickets if t.queue in limits and t.run_key not in done]
        )
    if handed_back:
        engine.mark_dispatched([t.run_key for t in handed_back])
        resend(handed_back)
    return len(executed)
