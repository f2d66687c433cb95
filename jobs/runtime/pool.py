"""The scheduler process's own worker threads, fed through an in-memory queue.

A process serves some queues (`runscheduler --queues`; all by default). Runs of queues
it does not serve are never held here: they wait pending in the database for a process
that serves them. Runs of a served queue with a limit (JOBS_QUEUE_LIMITS) are not held
here either: an idle worker takes the best waiting one from the database when its queue
has room (jobs.engine.take), so a run over the limit blocks nothing in this process and
any process's free worker may start it when a slot frees.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Any

from django.db import close_old_connections, connection

from jobs import engine
from jobs.executors import ExecutionContext, Executor
from jobs.queues import settings as queue_settings
from jobs.runs import RunTicket
from jobs.runtime.worker import Heartbeater, run_batch, run_started

logger = logging.getLogger("jobs.runtime.scheduler")

# The most runs a worker thread starts with one statement.
MAX_WORKER_BATCH = 256
# How much a worker's batch grows after a batch of instant runs (1, 4, 16, 64, 256: a
# burst reaches full batches after four, where doubling took eight small transactions
# per worker); a slow run still brings it back to one at once.
GROWTH = 4
# Runs the process keeps queued in memory; the rest wait as pending rows in the database,
# where any scheduler can take them.
QUEUE_HIGH_WATER = 4096
# Ready pending runs are polled only while the queue has at least this much room (or
# room for half a round of full batches, when that is less): under load the queue is
# fed by the claims, and the poll would only find the runs queued already.
FEED_ROOM = QUEUE_HIGH_WATER // 2

_SHELL = "shell"  # jobs.models.ExecutorKind.SHELL


class _Marker:
    """An item of the in-memory queue that is not a run: stop, or take from a limited
    queue. Ordered among the runs by its priority, as they are."""

    __slots__ = ("key", "priority")

    def __init__(self, priority: int, key: str = "") -> None:
        self.priority = priority
        self.key = key


class _Started:
    """An item of the in-memory queue: runs the claim inserted running for this pool
    (engine.StartNow), executed together by one worker. Ordered by the best priority
    among them."""

    __slots__ = ("priority", "tickets")

    def __init__(self, tickets: list[RunTicket]) -> None:
        self.tickets = tickets
        self.priority = max(t.priority for t in tickets)


# After every run (the queue is drained before it is put).
_STOP = _Marker(-(1 << 30))
_take_numbers = itertools.count()


class _Lanes(queue.Queue):
    """queue.Queue in priority order: a FIFO per priority, the highest served first.

    The runs of one priority (the usual case: all 0) cost what a plain deque costs; a
    run of a higher priority, claimed or fed later, still starts before them."""

    def _init(self, maxsize: int) -> None:
        self._lanes: dict[int, deque] = {}
        self._order: list[int] = []  # the priorities that have a lane, negated, ascending
        self._size = 0

    def _qsize(self) -> int:
        return self._size

    def _put(self, item: Any) -> None:
        priority = item.priority
        lane = self._lanes.get(priority)
        if lane is None:
            lane = self._lanes[priority] = deque()
            bisect.insort(self._order, -priority)
        lane.append(item)
        self._size += 1

    def _get(self) -> Any:
        priority = -self._order[0]
        lane = self._lanes[priority]
        item = lane.popleft()
        self._size -= 1
        if not lane:
            del self._lanes[priority]
            del self._order[0]
        return item


class WorkerPool:
    """Worker threads executing the runs this process claims or finds ready, of the
    queues it serves (`queues`; None: every queue)."""

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
        queues: Collection[str] | None = None,
    ) -> None:
        self.workers = workers
        self.name = name
        self.executor = executor
        self.context = context  # .stop is set to interrupt runs past the grace
        self.heartbeater = heartbeater
        self._wake = wake
        self.queues = None if queues is None else frozenset(queues)
        self.limits = queue_settings.limits()
        # The served queues with a limit: their runs are taken, never queued here.
        self.limited = frozenset(q for q in self.limits if self.serves(q))
        self._queue: _Lanes = _Lanes()
        # Run ids queued here or in flight, and the keys of take markers queued or being
        # taken: a poll for pending runs skips the runs, wait_idle waits for both.
        self._local: set[str] = set()
        self._local_lock = threading.Lock()
        self._idle = threading.Condition(self._local_lock)
        self._takes = 0  # take markers queued or being taken
        # Limited queues that may have a run waiting and room for it: what a take tries.
        self._ready_limited: set[str] = set()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        # The worker name of the runs a claim inserts running for this pool (StartNow):
        # any of its threads executes them, and finishes them under this name.
        self.owner = f"{name}/claim"
        # Each worker thread's batch size now (1 after a slow run, up to MAX_WORKER_BATCH
        # while runs are instant): how many runs the pool would start at once.
        self._batch_sizes: dict[str, int] = {}

    def serves(self, queue_name: str) -> bool:
        return self.queues is None or queue_name in self.queues

    def start(self) -> None:
        self.heartbeater.start()
        for index in range(self.workers):
            worker = f"{self.name}/w{index + 1}"
            self._batch_sizes[worker] = 1
            thread = threading.Thread(target=self._worker_loop, args=(worker,), daemon=True)
            thread.start()
            self._threads.append(thread)

    # --- what the scheduler's passes call ------------------------------------------

    def hand(self, tickets: Sequence[RunTicket]) -> int:
        """Queue claimed runs of the queues served here, while there is room (the rest
        stay pending); runs of a limited queue are taken by idle workers instead."""
        if self.queues is not None or self.limits:
            limited = {t.queue for t in tickets if t.queue in self.limited}
            tickets = [t for t in tickets if self.serves(t.queue) and t.queue not in self.limits]
            # Counted as fed: `--once` looks again after these takes, not only after
            # queued runs (a take that meets a full queue leaves its runs pending).
            offered = self._offer_takes(limited, self.workers) if limited else 0
            return offered + (self._enqueue(tickets) if tickets and self._room() > 0 else 0)
        return self._enqueue(tickets) if tickets and self._room() > 0 else 0

    def start_offer(self) -> engine.StartNow | None:
        """How many of the runs a claim makes this pool would start at once: what its
        workers take in one batch each (MAX_WORKER_BATCH each while runs are instant, one
        after a slow run) less the runs already queued or in flight. The claim inserts
        that many running for this pool (one write instead of an insert and a start);
        None when there is no room. Never runs of a queue with a limit, or of a queue not
        served here."""
        if self._stopping.is_set() or not self._threads:
            return None
        with self._local_lock:
            room = sum(self._batch_sizes.values()) - len(self._local)
        if room <= 0:
            return None
        served = None if self.queues is None else self.queues - self.limits.keys()
        return engine.StartNow(self.owner, room, served, frozenset(self.limits))

    def hand_started(self, tickets: Sequence[RunTicket]) -> int:
        """Queue runs the claim inserted running for this pool (start_offer), shared out
        among the workers; they are kept alive by the heartbeat from now on."""
        if not tickets:
            return 0
        keys = [t.run_key for t in tickets]
        self.heartbeater.hold(keys)
        if self._stopping.is_set():
            self._release_started(list(tickets))
            return 0
        # In pieces as big as the biggest batch a worker takes now, while that is more
        # than a share each: fewer, bigger transactions while runs are instant (a piece
        # is one finish). After slow runs the offer was one run per free worker, so the
        # pieces are of one run.
        share = -(-len(tickets) // self.workers)
        size = min(MAX_WORKER_BATCH, max(share, max(self._batch_sizes.values(), default=1)))
        with self._local_lock:
            self._local.update(keys)
            for index in range(0, len(tickets), size):
                self._queue.put(_Started(list(tickets[index : index + size])))
        return len(tickets)

    def _release_started(self, tickets: list[RunTicket]) -> None:
        """Runs inserted running for this pool that will not execute here (stopping):
        back to pending for any scheduler (if the database is down, the reaper fails and
        retries them after the lease)."""
        try:
            engine.release(tickets, self.owner)
        except Exception:
            logger.exception("could not hand %d started runs back", len(tickets))
            close_old_connections()
        finally:
            self.heartbeater.drop([t.run_key for t in tickets])

    def feed_ready(self, now: datetime | None, batch: int) -> int:
        """Queue pending runs that may start now (retries, run now, handed back, claimed
        while the queue was full), of the queues served here; offer the idle workers
        takes from the limited queues that have room."""
        fed = self._feed_limited(now) if self.limited else 0
        room = self._room()
        if room < min(FEED_ROOM, self.workers * MAX_WORKER_BATCH // 2):
            return fed
        with self._local_lock:
            local = len(self._local)
        unlimited = None if self.queues is None else self.queues - self.limits.keys()
        if unlimited is not None and not unlimited:
            return fed
        ready = engine.ready_tickets(
            now, limit=min(room, local + 1000), queues=unlimited, skip=self.limits.keys()
        )
        return fed + self._enqueue(ready)

    def _feed_limited(self, now: datetime | None) -> int:
        """Offer takes for the limited queues served here that have room and a run
        waiting: one read per queue, and no more takes than idle workers."""
        with self._local_lock:
            idle = self.workers - len(self._local)  # queued and in flight, takes too
        if idle <= 0:
            return 0
        ready = {}
        for name in sorted(self.limited):
            free = engine.free_slots(name, self.limits[name], cap=idle, now=now)
            if free:
                ready[name] = free
        if not ready:
            return 0
        return self._offer_takes(set(ready), min(idle, sum(ready.values())))

    def _offer_takes(self, names: set[str], most: int) -> int:
        """Queue up to `most` take markers (never more than one per worker in all) for
        the limited queues `names`; returns how many were queued."""
        with self._local_lock:
            return self._offer_takes_locked(names, most)

    def _offer_takes_locked(self, names: set[str], most: int) -> int:
        """_offer_takes, with _local_lock held."""
        offered = 0
        self._ready_limited |= names
        if self._stopping.is_set():
            return 0
        while offered < most and self._takes < self.workers:
            marker = _Marker(0, f"take:{next(_take_numbers)}")
            self._local.add(marker.key)
            self._takes += 1
            self._queue.put(marker)
            offered += 1
        return offered

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

    def stop(self, grace: float, announce: Callable[[int, float], None] | None = None) -> None:
        """Drop what has not started (it is still pending in the database: another
        scheduler takes it), let in-flight runs finish within `grace`, interrupt what is
        still running after it, stop the threads. `announce(runs, grace)` is told first
        how many runs it waits for, when there are any."""
        self._stopping.set()
        dropped: list[Any] = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not _STOP:
                dropped.append(item)
        started = [t for item in dropped if isinstance(item, _Started) for t in item.tickets]
        if started:
            self._release_started(started)
        with self._local_lock:
            for item in dropped:
                if isinstance(item, _Marker):
                    self._local.discard(item.key)
                    self._takes -= 1
                elif isinstance(item, _Started):
                    self._local.difference_update(t.run_key for t in item.tickets)
                else:
                    self._local.discard(item.run_key)
            if not self._local:
                self._idle.notify_all()
            # In flight now: the runs being executed, and those a take marker holds (the
            # markers' own keys are not runs).
            in_flight = len(self._local) - self._takes
        if announce is not None and in_flight > 0:
            announce(in_flight, grace)
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
        take_size = 1  # runs taken at once from a limited queue, grown like batch_size
        try:
            while True:
                first = self._queue.get()
                if first is _STOP:
                    return
                if isinstance(first, _Marker):
                    take_size = self._take(first, worker, take_size)
                    continue
                if isinstance(first, _Started):
                    batch_size = self._run_started(first, worker, batch_size)
                    continue
                tickets = [first]
                marker = None
                while len(tickets) < batch_size:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is _STOP:
                        self._queue.put(_STOP)  # leave it for this loop's next get
                        break
                    if isinstance(item, _Marker | _Started):
                        marker = item  # taken or run after this batch
                        break
                    tickets.append(item)
                began = time.monotonic()
                handed_back = self._run_tickets(tickets, worker)
                # Grow batches while runs are instant, fall back to one at a time as soon
                # as one is not: a slow run never holds others hostage for long.
                fast = not handed_back and time.monotonic() - began < 0.02 * len(tickets)
                batch_size = min(MAX_WORKER_BATCH, batch_size * GROWTH) if fast else 1
                self._batch_sizes[worker] = batch_size
                if isinstance(marker, _Marker):
                    take_size = self._take(marker, worker, take_size)
                elif marker is not None:
                    batch_size = self._run_started(marker, worker, batch_size)
        finally:
            connection.close()

    def _run_started(self, item: _Started, worker: str, batch_size: int) -> int:
        """Execute runs the claim inserted running for this pool (as its owner name);
        returns the worker's next batch size, grown or reset as after any batch."""
        began = time.monotonic()
        handed_back = self._run_tickets(item.tickets, self.owner, started=True)
        fast = not handed_back and time.monotonic() - began < 0.02 * len(item.tickets)
        batch_size = min(MAX_WORKER_BATCH, batch_size * GROWTH) if fast else 1
        self._batch_sizes[worker] = batch_size
        return batch_size

    def _take(self, marker: _Marker, worker: str, most: int) -> int:
        """Take the best waiting runs of a limited queue with room (at most `most`), and
        execute them; then, while some are taken, queue another take behind the runs
        already queued (a freed slot is reused at once, and the other queues get their
        turn). Returns how many to take next time: twice as many while runs are instant,
        one as soon as one is not (the runs taken hold their slots until they end, and a
        batch that runs out of time hands the rest back to pending)."""
        taken: list[RunTicket] = []
        handed_back: list[RunTicket] = []
        began = time.monotonic()
        try:
            if self._stopping.is_set():
                return most
            with self._local_lock:
                names = sorted(self._ready_limited)
            for name in names:
                try:
                    taken = engine.take(name, worker, most=most)
                except Exception:
                    logger.exception("worker %s could not take a run of queue %r", worker, name)
                    close_old_connections()
                    return 1
                if taken:
                    break
                with self._local_lock:
                    self._ready_limited.discard(name)  # full, or nothing waits: ask later
            if not taken:
                return most
            with self._local_lock:
                self._local.update(t.run_key for t in taken)
            handed_back = self._run_tickets(taken, worker, started=True)
        finally:
            with self._local_lock:
                self._local.discard(marker.key)
                self._takes -= 1
                if taken:
                    # This worker's slots are free again: its queue may have more waiting.
                    # Offered before this take counts as done, under the same lock, so
                    # that wait_idle (`--once`) never sees the pool idle between the two
                    # and stops with runs still waiting.
                    self._offer_takes_locked({t.queue for t in taken}, 1)
                if not self._local:
                    self._idle.notify_all()
        fast = not handed_back and time.monotonic() - began < 0.02 * max(len(taken), 1)
        return min(MAX_WORKER_BATCH, most * 2) if fast else 1

    def _run_tickets(
        self, tickets: list[RunTicket], worker: str, *, started: bool = False
    ) -> list[RunTicket]:
        handed_back: list[RunTicket] = []
        try:
            run = run_started if started else run_batch
            _, handed_back = run(
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
        limits = self.limits
        with self._local_lock:
            for ticket in tickets:
                if ticket.run_key in self._local:
                    continue
                if limits and ticket.queue in limits:
                    # Handed back, or found ready: a limited queue's run is taken, not held.
                    self._ready_limited.add(ticket.queue)
                    continue
                self._local.add(ticket.run_key)
                self._queue.put(ticket)
                added += 1
        return added

    def _room(self) -> int:
        return QUEUE_HIGH_WATER - self._queue.qsize()


Sender = Callable[[list[str]], int]


class HueyHandoff:
    """Runs go to `run_huey` workers through `send` (jobs.huey.tasks.send_runs): the scheduler
    receives it from whoever starts it, so the runtime never imports the Huey tasks.

    Where each run goes: shell runs to `send_shell` when set (JOBS_SHELL_HUEY_QUEUE, the
    workers of another OS user, whatever the run's queue); the others to `route(queue)`,
    the sender of their queue's own Huey queue (JOBS_HUEY_QUEUES), or `send` when it
    gives None. With `queues`, only the runs of those queues are handed out here."""

    def __init__(
        self,
        send: Sender,
        send_shell: Sender | None = None,
        *,
        route: Callable[[str], Sender | None] | None = None,
        queues: Collection[str] | None = None,
    ) -> None:
        self.send = send
        self.send_shell = send_shell
        self.route = route
        self.queues = None if queues is None else frozenset(queues)
        # Claimed runs are stamped as handed out and sent at once, unless this process
        # hands out only some queues: then its passes hand out the ready runs of those
        # (feed_ready), and the others stay for the processes that serve them.
        self.dispatched = self.queues is None

    def start(self) -> None:
        pass

    def start_offer(self) -> None:
        """Runs go to Huey's workers: a claim starts none here."""
        return None

    def hand_started(self, tickets: Sequence[RunTicket]) -> int:
        raise RuntimeError("a claim starts no run for Huey (start_offer is None)")

    def hand(self, tickets: Sequence[RunTicket]) -> int:
        """Hand claimed runs to Huey (unless this process hands out only some queues)."""
        return self.send_tickets(tickets) if self.dispatched else 0

    def send_tickets(self, tickets: Sequence[RunTicket]) -> int:
        """Send runs to their Huey queues. If Redis is unreachable they stay pending,
        stamped as handed out, and go out again after JOBS_REDISPATCH_SECONDS."""
        if not tickets:
            return 0
        try:
            if self.send_shell is None and self.route is None:
                return self.send([t.run_key for t in tickets])
            by_sender: dict[Sender, list[str]] = {}
            for ticket in tickets:
                by_sender.setdefault(self._sender(ticket), []).append(ticket.run_key)
            return sum(send(keys) for send, keys in by_sender.items())
        except Exception:
            logger.exception(
                "could not hand %d runs to Huey; they will be sent again", len(tickets)
            )
            return 0

    def _sender(self, ticket: RunTicket) -> Sender:
        if self.send_shell is not None and ticket.executor == _SHELL:
            return self.send_shell
        if self.route is not None:
            return self.route(ticket.queue) or self.send
        return self.send

    def feed_ready(self, now: datetime | None, batch: int) -> int:
        """Hand out ready runs never handed out, or lost on the way (redispatch)."""
        fed = 0
        while True:
            ready = engine.dispatch_ready(now, limit=batch, queues=self.queues)
            fed += self.send_tickets(ready)
            if len(ready) < batch:
                return fed

    def wait_idle(self, timeout: float | None = None) -> bool:
        return True

    def stop(self, grace: float, announce: Callable[[int, float], None] | None = None) -> None:
        pass  # the runs are the Huey workers': nothing in flight here
