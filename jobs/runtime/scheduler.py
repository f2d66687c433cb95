"""The scheduler process: a loop of passes plus a pool of worker threads.

Each pass claims what is due (batch after batch), feeds ready pending runs to the
workers, and reaps runs of dead workers. Between passes it sleeps until the earliest
due time or the tick, whichever comes first, so a job due at 12:00:00.000 starts within
milliseconds rather than at the next poll.

`run_pass()` is one pass, `run_once()` is `--once`, `serve()` is the long-running loop;
tests call the first two and signal-driven shutdown calls `request_stop()`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from jobs import conf, engine, metrics
from jobs.executors import ExecutionContext, Executor, load_executor
from jobs.runs import RunTicket
from jobs.runtime import retention
from jobs.runtime.worker import Heartbeater, process_name, run_batch
from jobs.sql.sqlite.wal import Checkpointer

logger = logging.getLogger(__name__)

DEFAULT_WORKERS = 4
DEFAULT_TICK = 1.0
# The most runs a worker thread starts with one statement.
MAX_WORKER_BATCH = 256
# Runs the process keeps queued in memory; the rest wait as pending rows in the database,
# where any scheduler can take them.
QUEUE_HIGH_WATER = 4096
# Back-off after a database error, so an outage gives a calm log, not a crash loop.
ERROR_BACKOFF = (0.5, 1.0, 2.0, 5.0, 10.0)

_STOP = object()


@dataclass
class PassStats:
    claimed: int = 0
    fed: int = 0
    reaped: int = 0


class Scheduler:
    def __init__(
        self,
        *,
        workers: int = DEFAULT_WORKERS,
        tick: float = DEFAULT_TICK,
        executor: Executor | None = None,
        name: str | None = None,
        use_huey: bool | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        if tick <= 0:
            raise ValueError("tick must be positive")
        self.workers = workers
        self.tick = tick
        # With Huey, runs are handed to `run_huey` workers instead of this process's threads.
        self.use_huey = conf.uses_huey() if use_huey is None else use_huey
        self.executor = executor or load_executor()
        self.name = name or process_name()
        self.context = ExecutionContext()  # .stop is set to interrupt runs past the grace
        self.heartbeater = Heartbeater()
        # SQLite: the log is checkpointed by a thread of its own, not inside a commit
        # that holds the writer lock (jobs/wal.py).
        self.checkpointer = Checkpointer()
        self._queue: queue.Queue = queue.Queue()
        # Run ids queued here or in flight: a poll for pending runs skips them.
        self._local: set[str] = set()
        self._local_lock = threading.Lock()
        self._idle = threading.Condition(self._local_lock)
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._last_reap = 0.0
        self._errors = 0

    # --- the worker pool ------------------------------------------------------------

    def start_workers(self) -> None:
        self.checkpointer.start()
        self.heartbeater.start()
        for index in range(self.workers):
            thread = threading.Thread(
                target=self._worker_loop, args=(f"{self.name}/w{index + 1}",), daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def _worker_loop(self, worker: str) -> None:
        batch_size = 1
        try:
            while True:
                first = self._queue.get()
                if first is _STOP:
                    return
                tickets = [first]
                while len(tickets) < batch_size:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is _STOP:
                        self._queue.put(_STOP)  # leave it for this loop's next get
                        break
                    tickets.append(item)
                began = time.monotonic()
                handed_back = self._run_tickets(tickets, worker)
                # Grow batches while runs are instant, fall back to one at a time as soon
                # as one is not: a slow run never holds others hostage for long.
                fast = not handed_back and time.monotonic() - began < 0.02 * len(tickets)
                batch_size = min(MAX_WORKER_BATCH, batch_size * 2) if fast else 1
        finally:
            connection.close()

    def _run_tickets(self, tickets: list[RunTicket], worker: str) -> list[RunTicket]:
        handed_back: list[RunTicket] = []
        try:
            _, handed_back = run_batch(
                tickets,
                worker=worker,
                executor=self.executor,
                heartbeater=self.heartbeater,
                context=self.context,
            )
        except Exception:
            # The runs stay pending or running in the database: another pass (or the
            # reaper, after the lease) takes them again. The loop goes on.
            logger.exception("worker %s failed on a batch of %d runs", worker, len(tickets))
            close_old_connections()
        finally:
            with self._local_lock:
                self._local.difference_update(t.run_key for t in tickets)
                if not self._local:
                    self._idle.notify_all()
        if handed_back and not self._stopping.is_set():
            self._enqueue(handed_back)
        elif self._queue.qsize() < self.workers:
            self._wake.set()  # running low: let the loop feed more
        return handed_back

    def _enqueue(self, tickets: Sequence[RunTicket]) -> int:
        added = 0
        with self._local_lock:
            for ticket in tickets:
                if ticket.run_key in self._local:
                    continue
                self._local.add(ticket.run_key)
                self._queue.put(ticket)
                added += 1
        return added

    def _send(self, tickets: Sequence[RunTicket]) -> int:
        """Hand runs to Huey. If Redis is unreachable they stay pending, stamped as handed
        out, and go out again after JOBS_REDISPATCH_SECONDS."""
        if not tickets:
            return 0
        from jobs.tasks import send_runs

        try:
            return send_runs([t.run_key for t in tickets])
        except Exception:
            logger.exception(
                "could not hand %d runs to Huey; they will be sent again", len(tickets)
            )
            return 0

    def _room(self) -> int:
        return QUEUE_HIGH_WATER - self._queue.qsize()

    # --- one pass -------------------------------------------------------------------

    def run_pass(self, now: datetime | None = None) -> PassStats:
        """Claim everything due, feed ready pending runs to the workers, reap."""
        stats = PassStats()
        metrics.scheduler_alive(self.name)
        batch = conf.claim_batch()
        while not self._stopping.is_set():
            tickets = engine.claim_due(now or timezone.now(), limit=batch, dispatched=self.use_huey)
            stats.claimed += len(tickets)
            if self.use_huey:
                stats.fed += self._send(tickets)
            elif self._room() > 0:
                stats.fed += self._enqueue(tickets)
            if len(tickets) < batch:
                break
        if self.use_huey:
            while not self._stopping.is_set():
                ready = engine.dispatch_ready(now, limit=batch)
                stats.fed += self._send(ready)
                if len(ready) < batch:
                    break
        elif self._room() > self.workers * MAX_WORKER_BATCH // 2 and not self._stopping.is_set():
            with self._local_lock:
                local = len(self._local)
            ready = engine.ready_tickets(now, limit=min(self._room(), local + 1000))
            stats.fed += self._enqueue(ready)
        if time.monotonic() - self._last_reap >= conf.heartbeat_interval():
            stats.reaped = engine.reap(now)
            self._last_reap = time.monotonic()
        metrics.observe_pass(stats.claimed, stats.reaped)
        return stats

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until every queued and in-flight run is done (True) or `timeout` passes."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._idle:
            while self._local:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._idle.wait(remaining)
        return True

    def run_once(self) -> PassStats:
        """`--once`: claim what is due, run it all to the end, reap, stop the workers."""
        if self.use_huey:
            raise RuntimeError("run_once executes runs in this process; use use_huey=False")
        self.start_workers()
        total = PassStats()
        try:
            while True:
                stats = self.run_pass()
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
        if self.use_huey:
            logger.info("scheduler %s started: runs go to Huey, tick %.3g s", self.name, self.tick)
            self.checkpointer.start()
        else:
            logger.info(
                "scheduler %s started: %d workers, tick %.3g s", self.name, self.workers, self.tick
            )
            self.start_workers()
        try:
            while not self._stopping.is_set():
                close_old_connections()
                try:
                    self.run_pass()
                    # Bounded history: a slice of a few ms of pruning when one is due
                    # (jobs/retention.py); it never raises, so it never stops the loop.
                    retention.prune_when_due()
                    wait = self._seconds_until_next_work()
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

    def _seconds_until_next_work(self) -> float:
        now = timezone.now()
        wait = self.tick
        wake_at = engine.next_wake_at(now)
        if wake_at is not None:
            wait = min(wait, (wake_at - timezone.now()).total_seconds())
        return max(wait, 0.0)

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
        dropped: list[RunTicket] = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not _STOP:
                dropped.append(item)
        with self._local_lock:
            # Queued runs are still pending in the database: another scheduler takes them.
            self._local.difference_update(t.run_key for t in dropped)
            if not self._local:
                self._idle.notify_all()
        for _ in self._threads:
            self._queue.put(_STOP)
        grace = conf.shutdown_grace()
        if not self.wait_idle(timeout=grace):
            logger.warning("runs still in flight after %.0f s; interrupting them", grace)
            self.context.stop.set()
            self.heartbeater.wake()  # it stops each run's own context (worker.Heartbeater)
        for thread in self._threads:
            thread.join(timeout=max(grace, 10.0))
        self._threads.clear()
        self.heartbeater.stop()
        self.checkpointer.stop()
