"""Executing runs: shared by the scheduler's thread pool and the Huey workers.

A worker takes tickets, starts them through the engine (a conditional update), executes
them and records the results in one batch. While it holds runs, a heartbeat thread keeps
them alive, so the reaper only takes runs from a worker that is really gone.
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

from jobs import conf, engine, metrics
from jobs.engine import RunResult, RunTicket
from jobs.executors import ExecutionContext, Executor

logger = logging.getLogger(__name__)

# A batch of started runs is executed one after another; once this much time has gone,
# the rest are handed back so that they do not wait behind a slow run.
BATCH_TIME_BUDGET = 0.05


def process_name() -> str:
    """`host:pid`, the prefix of every worker name this process uses."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Heartbeater:
    """Keeps the runs this process holds alive with one UPDATE every lease / 3."""

    def __init__(self, interval: float | None = None) -> None:
        self.interval = conf.heartbeat_interval() if interval is None else interval
        self._held: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
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

    def beat(self) -> int:
        with self._lock:
            held = list(self._held)
        return engine.heartbeat(held) if held else 0

    def _loop(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    self.beat()
                except Exception:
                    # A database hiccup must not kill the heartbeat; the next beat retries
                    # well inside the lease.
                    logger.exception("heartbeat failed")
        finally:
            connection.close()

    def stop(self) -> None:
        self._stop.set()
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
        succeeded, log = outcome.succeeded, outcome.log
    except Exception:
        logger.exception("executor raised for run %s of job %r", ticket.run_key, ticket.job_name)
        succeeded = False
        log = f"$ {ticket.command}\nthe executor raised an exception:\n{traceback.format_exc()}"
    finished_at = datetime.now(UTC)
    if logging_runs:
        logger.info(
            "run finished: job=%r run=%s status=%s duration=%.3fs",
            ticket.job_name,
            ticket.run_key,
            "success" if succeeded else "failed",
            (finished_at - started_at).total_seconds(),
        )
    return RunResult(
        ticket=ticket, succeeded=succeeded, log=log, started_at=started_at, finished_at=finished_at
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
    Runs another worker won are in neither list.
    """
    started = engine.start(tickets, worker)
    if not started:
        return [], []
    heartbeater.hold([t.run_key for t in started])
    results: list[RunResult] = []
    handed_back: list[RunTicket] = []
    began = time.monotonic()
    try:
        for index, ticket in enumerate(started):
            if index and (context.stop.is_set() or time.monotonic() - began > time_budget):
                handed_back = list(started[index:])
                engine.release(handed_back, worker)
                break
            results.append(execute(executor, ticket, context))
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
            from jobs.executors import load_executor

            _process_resources = (load_executor(), Heartbeater().start())
        return _process_resources


def execute_handed_out(run_keys: Sequence[str], resend: Callable[[list[str]], None]) -> int:
    """Execute runs a scheduler handed to Huey; returns how many this worker executed.

    Runs no longer pending (a duplicate message, another worker was faster) are skipped
    by the conditional start. Runs started but handed back because the batch ran out of
    time go out again through `resend`, so one slow run does not hold the rest.
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
    if handed_back:
        keys = [t.run_key for t in handed_back]
        engine.mark_dispatched(keys)
        resend(keys)
    return len(executed)
