"""The scheduler process: a loop of passes plus a pool of worker threads.

Each pass claims what is due (batch after batch), feeds ready pending runs to the
workers, reaps runs of dead workers and alerts runs that are running long. Between
passes it sleeps until the earliest due time or the tick, whichever comes first, so a
job due at 12:00:00.000 starts within milliseconds rather than at the next poll.

`run_pass()` is one pass, `run_once()` is `--once`, `serve()` is the long-running loop;
tests call the first two and signal-driven shutdown calls `request_stop()`.

While the whole scheduler is paused (jobs/engine/pause.py) a pass claims nothing, and
still feeds the pending runs that exist and reaps. The loop learns the pause from the
look-up it makes before each sleep (no statement of its own), so it sees a pause within
one tick; a pass not preceded by that look-up (tests, `--once`, the Huey periodic pass)
reads the switch itself. The claim asks the switch again in its write transaction, so
a pass that has not heard yet claims nothing either.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime

from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from jobs import conf, engine, metrics
from jobs.alerts import health, running_long
from jobs.engine import leftovers
from jobs.executors import ExecutionContext, Executor, load_executor
from jobs.executors.routing import routed
from jobs.models import PauseWindow
from jobs.runtime import observed, retention
from jobs.runtime.pool import HueyHandoff, WorkerPool
from jobs.runtime.worker import Heartbeater, process_name
from jobs.sql import store

logger = logging.getLogger(__name__)

DEFAULT_WORKERS = 4
DEFAULT_TICK = 1.0
# How often the loop drops a connection that is broken or past CONN_MAX_AGE.
CONNECTION_CHECK_SECONDS = 1.0
# Back-off after a database error, so an outage gives a calm log, not a crash loop.
ERROR_BACKOFF = (0.5, 1.0, 2.0, 5.0, 10.0)


@dataclass
class PassStats:
    claimed: int = 0
    fed: int = 0
    reaped: int = 0


class Scheduler:
    """Passes of claims, feeding and reaping; the runs go to `handoff`: a WorkerPool of
    this process's threads (the default), or a HueyHandoff to `run_huey` workers.

    `queues`: the queues whose runs the WorkerPool executes (None: all). Every scheduler
    claims the due jobs of every queue, whatever it serves, so no occurrence is late
    because of where its workers are: a run of a queue not served here waits pending."""

    def __init__(
        self,
        *,
        workers: int = DEFAULT_WORKERS,
        tick: float = DEFAULT_TICK,
        executor: Executor | None = None,
        name: str | None = None,
        handoff: HueyHandoff | None = None,
        queues: Collection[str] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        if tick <= 0:
            raise ValueError("tick must be positive")
        self.workers = workers
        self.tick = tick
        self.name = name or process_name()
        self.context = ExecutionContext()  # .stop is set to interrupt runs past the grace
        self._wake = threading.Event()
        self.handoff: WorkerPool | HueyHandoff = handoff or WorkerPool(
            workers=workers,
            name=self.name,
            # Simulated runs go to `executor` (JOBS_EXECUTOR's by default), the others to
            # the executor of their kind.
            executor=routed(executor or load_executor()),
            context=self.context,
            heartbeater=Heartbeater(),
            wake=self._wake.set,
            # Claims take every queue's due jobs; only these queues' runs execute here.
            queues=queues,
        )
        # SQLite: the log is checkpointed by a thread of its own, not inside a commit
        # that holds the writer lock (jobs/sql/sqlite/wal.py).
        self.checkpointer = store().checkpointer()
        self._stopping = threading.Event()
        self._last_reap = 0.0
        self._errors = 0
        # The pause as the last look-up before a sleep saw it, for the pass after it.
        self._heard: PauseWindow | None = None
        self._paused = False  # what this process last said about the pause, in its log
        self._last_health_check = 0.0
        # Told at shutdown how many runs it waits for and for how long (runscheduler
        # prints it: the terminal is not silent for the grace period).
        self.on_stop_wait: Callable[[int, float], None] | None = None
        self._next_connection_check = 0.0

    def start_workers(self) -> None:
        self.checkpointer.start()
        self.handoff.start()
        try:
            leftovers.sweep_work_directories()
        except Exception as error:  # the database may be down at start: the reaper retries
            logger.warning("could not look for work directories left by dead runs: %s", error)
            close_old_connections()

    # --- one pass -------------------------------------------------------------------

    def run_pass(
        self, now: datetime | None = None, *, claim_until: datetime | None = None
    ) -> PassStats:
        """Claim everything due (by `claim_until`, default now), hand it out, feed ready
        pending runs, reap."""
        stats = PassStats()
        claiming = not self._paused_for_pass(now or timezone.now())
        batch = conf.claim_batch()
        if claiming:
            with observed.pass_span("jobs.claim") as span:
                self._claim(stats, batch, now, claim_until)
                if span is not None:
                    span.set_attribute("jobs.claimed", stats.claimed)
        # The heartbeat (a write, every few seconds) after the claims, not before: the
        # jobs due now are not kept waiting behind it.
        metrics.scheduler_alive(self.name, queues=self.handoff.queues)
        if not self._stopping.is_set():
            stats.fed += self.handoff.feed_ready(now, batch)
        if time.monotonic() - self._last_reap >= conf.heartbeat_interval():
            with observed.pass_span("jobs.reap") as span:
                stats.reaped = engine.reap(now)
                if span is not None:
                    span.set_attribute("jobs.reaped", stats.reaped)
            # Beside the reaper, as often: runs past their job's expected duration alert
            # once (one read of the running runs when none is).
            running_long.check_running_long(now)
            self._last_reap = time.monotonic()
        metrics.observe_pass(stats.claimed, stats.reaped)
        return stats

    def _claim(
        self, stats: PassStats, batch: int, now: datetime | None, claim_until: datetime | None
    ) -> None:
        """Claim what is due, a batch at a time, handing each batch out."""
        # A hand-off that can execute runs at once (WorkerPool.start_offer); a test's
        # stand-in need not.
        start_offer = getattr(self.handoff, "start_offer", None)
        while not self._stopping.is_set():
            # Runs the pool has room for are inserted running for it (one write each,
            # no start UPDATE after): pool.start_offer().
            claimed = engine.claim_due_starting(
                claim_until or now or timezone.now(),
                limit=batch,
                dispatched=self.handoff.dispatched,
                start=start_offer() if start_offer is not None else None,
            )
            count = len(claimed.pending) + len(claimed.started)
            stats.claimed += count
            if claimed.started:
                stats.fed += self.handoff.hand_started(claimed.started)
            stats.fed += self.handoff.hand(claimed.pending)
            if count < batch:
                break

    def _paused_for_pass(self, now: datetime) -> bool:
        """Whether this pass must not claim: the pause heard before the last sleep, or
        read now. A pause whose until has come is recorded as resumed first."""
        window, self._heard = self._heard, None
        if window is None:
            window = engine.pause_window()
        if window.expired(now):
            engine.settle_expired(now)
        self._note_pause(window, now)
        return window.active(now)

    def _note_pause(self, window: PauseWindow, now: datetime) -> None:
        """Say in the log, once per change, that this process sees a pause or a resume."""
        paused = window.active(now)
        if paused == self._paused:
            return
        self._paused = paused
        if paused:
            until = window.paused_until.isoformat() if window.paused_until else "a resume"
            logger.info("scheduler %s sees the pause: claims nothing until %s", self.name, until)
        else:
            logger.info("scheduler %s sees the resume: claims again", self.name)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until every queued and in-flight run is done (True) or `timeout` passes."""
        return self.handoff.wait_idle(timeout)

    def run_once(self) -> PassStats:
        """`--once`: claim what was due when it started, run it all to the end (with the
        retries of those runs that come due meanwhile), reap, stop the workers.

        Claims stop at the start time: jobs that come due while it runs are left for the
        next run, or `--once` would never end while jobs come due faster than it runs
        them."""
        if not isinstance(self.handoff, WorkerPool):
            raise RuntimeError("run_once executes runs in this process; use a WorkerPool")
        started = timezone.now()
        self.start_workers()
        total = PassStats()
        try:
            while True:
                stats = self.run_pass(claim_until=started)
                total.claimed += stats.claimed
                total.fed += stats.fed
                total.reaped += stats.reaped
                self.wait_idle()
                if stats.fed == 0:
                    break
            total.reaped += engine.reap()
        finally:
            self.shutdown()
        return total

    # --- the long-running loop ------------------------------------------------------

    def serve(self) -> None:
        """Run passes until request_stop(), then shut down cleanly."""
        served = self.handoff.queues
        logger.info(
            "scheduler %s started: %s, %s, tick %.3g s",
            self.name,
            f"{self.workers} workers"
            if isinstance(self.handoff, WorkerPool)
            else "runs go to Huey",
            "every queue" if served is None else "queues " + ",".join(sorted(served)),
            self.tick,
        )
        self.start_workers()
        try:
            while not self._stopping.is_set():
                try:
                    self.run_pass()
                    # Bounded history: a slice of a few ms of pruning when one is due
                    # (jobs/runtime/retention.py); it never raises, so it never stops the loop.
                    retention.prune_when_due()
                    self._watch_health()
                    self._check_connection()
                    wait = self.seconds_until_next_work()
                    self._errors = 0
                except DatabaseError:
                    # The database is down or restarting: back off calmly and carry on.
                    wait = ERROR_BACKOFF[min(self._errors, len(ERROR_BACKOFF) - 1)]
                    self._errors += 1
                    logger.exception("scheduler pass failed; retrying in %.1f s", wait)
                    connection.close()
                if wait > 0:
                    self._wake.wait(wait)
                self._wake.clear()
        finally:
            self.shutdown()
        logger.info("scheduler %s stopped", self.name)

    def _check_connection(self) -> None:
        """Drop this thread's connection if it is broken or older than CONN_MAX_AGE, about
        once a second, after a pass and before the sleep. With CONN_HEALTH_CHECKS, each
        check costs the next transaction a ping (SELECT 1) first: made here, that is not
        the claim of the job that wakes the loop, and it is one a second, not one a pass
        (a hundred a second at 100 runs/s). A pass that failed closed it already."""
        clock = time.monotonic()
        if clock < self._next_connection_check:
            return
        self._next_connection_check = clock + CONNECTION_CHECK_SECONDS
        close_old_connections()
        connection.close_if_health_check_failed()

    def seconds_until_next_work(self) -> float:
        """How long the loop may sleep: until the next due time (not while paused), the
        end of a pause, a retry's backoff, or the tick. The look-up also tells the next
        pass about the pause."""
        now = timezone.now()
        wait = self.tick
        wake = engine.wake_up(now)
        self._heard = wake.pause
        self._note_pause(wake.pause, now)
        if wake.at is not None:
            wait = min(wait, (wake.at - timezone.now()).total_seconds())
        return max(wait, 0.0)

    def _watch_health(self) -> None:
        """Every few seconds, whether the scheduler looks down from here (due work left
        unclaimed: another scheduler's claims failing, or this one's), and its
        recovery; jobs/alerts/health.py alerts once per incident. Not while paused."""
        clock = time.monotonic()
        if self._paused or clock - self._last_health_check < health.CHECK_EVERY_SECONDS:
            return
        self._last_health_check = clock
        # In a thread of its own: the loop does not wait for it (its look-ups took tens
        # of ms with a big history, the start lag of every job due meanwhile).
        health.watch_in_background()

    def request_stop(self) -> None:
        """Stop claiming; serve() then finishes in-flight runs and returns.

        Safe to call from a signal handler: it only sets flags.
        """
        self._stopping.set()
        self._wake.set()

    def shutdown(self) -> None:
        """Hand back what has not started, let in-flight runs finish within the grace
        period, interrupt what is still running after it, stop the threads."""
        self._stopping.set()
        if self.on_stop_wait is None:
            self.handoff.stop(conf.shutdown_grace())
        else:
            self.handoff.stop(conf.shutdown_grace(), announce=self.on_stop_wait)
        self.checkpointer.stop()
