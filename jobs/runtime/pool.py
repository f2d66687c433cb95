"""The scheduler process's own worker threads, fed through an in-memory queue."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime

from django.db import close_old_connections, connection

from jobs import engine
from jobs.executors import ExecutionContext, Executor
from jobs.runs import RunTicket
from jobs.runtime.worker import Heartbeater, run_batch

logger = logging.getLogger("jobs.runtime.scheduler")

# The most runs a worker thread starts with one statement.
MAX_WORKER_BATCH = 256
# Runs the process keeps queued in memory; the rest wait as pending rows in the database,
# where any scheduler can take them.
QUEUE_HIGH_WATER = 4096
# Ready pending runs are polled only while the queue has at least this much room (or
# room for half a round of full batches, when that is less): under load the queue is
# fed by the claims, and the poll would only find the runs queued already.
FEED_ROOM = QUEUE_HIGH_WATER // 2

_STOP = object()
_SHELL = "shell"  # jobs.models.ExecutorKind.SHELL


class WorkerPool:
    """Worker threads executing the runs this process claims or finds ready."""

    dispatched = False  # claimed runs are executed here, not handed out

    def __init__(
        self,
        *,
        workers: int,
        name: str,
        executor: Executor,
        context: ExecutionContext,
        heartbeater: Heartbeater,
        wake: Callable[[], None],
    ) -> None:
        self.workers = workers
        self.name = name
        self.executor = executor
        self.context = context  # .stop is set to interrupt runs past the grace
        self.heartbeater = heartbeater
        self._wake = wake
        self._queue: queue.Queue = queue.Queue()
        # Run ids queued here or in flight: a poll for pending runs skips them.
        self._local: set[str] = set()
        self._local_lock = threading.Lock()
        self._idle = threading.Condition(self._local_lock)
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        self.heartbeater.start()
        for index in range(self.workers):
            thread = threading.Thread(
                target=self._worker_loop, args=(f"{self.name}/w{index + 1}",), daemon=True
            )
            thread.start()
            self._threads.append(thread)

    # --- what the scheduler's passes call ------------------------------------------

    def hand(self, tickets: Sequence[RunTicket]) -> int:
        """Queue claimed runs, while there is room (the rest stay pending)."""
        return self._enqueue(tickets) if self._room() > 0 else 0

    def feed_ready(self, now: datetime | None, batch: int) -> int:
        """Queue pending runs that may start now (retries, run now, handed back)."""
        room = self._room()
        if room < min(FEED_ROOM, self.workers * MAX_WORKER_BATCH // 2):
            return 0
        with self._local_lock:
            local = len(self._local)
        return self._enqueue(engine.ready_tickets(now, limit=min(room, local + 1000)))

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

    def stop(self, grace: float) -> None:
        """Drop what has not started (it is still pending in the database: another
        scheduler takes it), let in-flight runs finish within `grace`, interrupt what is
        still running after it, stop the threads."""
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
            self._local.difference_update(t.run_key for t in dropped)
            if not self._local:
                self._idle.notify_all()
        for _ in self._threads:
            self._queue.put(_STOP)
        if not self.wait_idle(timeout=grace):
            logger.warning("runs still in flight after %.0f s; interrupting them", grace)
            self.context.stop.set()
            self.heartbeater.wake()  # it stops each run's own context (worker.Heartbeater)
        for thread in self._threads:
            thread.join(timeout=max(grace, 10.0))
        self._threads.clear()
        self.heartbeater.stop()

    # --- the threads ----------------------------------------------------------------

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
            self._wake()  # running low: let the loop feed more
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

    def _room(self) -> int:
        return QUEUE_HIGH_WATER - self._queue.qsize()


class HueyHandoff:
    """Runs go to `run_huey` workers through `send` (jobs.tasks.send_runs): the scheduler
    receives it from whoever starts it, so the runtime never imports the Huey tasks."""

    dispatched = True  # claimed runs are stamped as handed out

    def __init__(
        self,
        send: Callable[[list[str]], int],
        send_shell: Callable[[list[str]], int] | None = None,
    ) -> None:
        self.send = send
        # Shell runs go to workers of their own when set (JOBS_SHELL_HUEY_QUEUE).
        self.send_shell = send_shell

    def start(self) -> None:
        pass

    def hand(self, tickets: Sequence[RunTicket]) -> int:
        """Hand runs to Huey. If Redis is unreachable they stay pending, stamped as handed
        out, and go out again after JOBS_REDISPATCH_SECONDS."""
        if not tickets:
            return 0
        try:
            if self.send_shell is not None:
                shell = [t.run_key for t in tickets if t.executor == _SHELL]
                if shell:
                    others = [t.run_key for t in tickets if t.executor != _SHELL]
                    return self.send_shell(shell) + (self.send(others) if others else 0)
            return self.send([t.run_key for t in tickets])
        except Exception:
            logger.exception(
                "could not hand %d runs to Huey; they will be sent again", len(tickets)
            )
            return 0

    def feed_ready(self, now: datetime | None, batch: int) -> int:
        """Hand out ready runs never handed out, or lost on the way (redispatch)."""
        fed = 0
        while True:
            ready = engine.dispatch_ready(now, limit=batch)
            fed += self.hand(ready)
            if len(ready) < batch:
                return fed

    def wait_idle(self, timeout: float | None = None) -> bool:
        return True

    def stop(self, grace: float) -> None:
        pass
