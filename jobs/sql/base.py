"""What every vendor's store shares: the driver cursor, transactions, and the operations.

A store is the only code that knows which database it talks to. The engine, the
retention and the alerts call its operations by name (`ops.start_runs(...)`) inside
`store.transaction()` (writes) or `store.reading()` (reads), and never see SQL. Each
vendor has a file of named statements (`queries.sql`, the same names in both) and a
subclass of `Store` that says how values are adapted, how a batch of row updates is
sent, and how a claim is taken.

Statuses are written into the SQL, never passed as parameters. SQLite plans a statement
whose WHERE compares a column of a partial index's condition with a bound parameter
again on every execution (the value decides whether the index applies): measured, 75 µs
instead of 12 µs for the poll of ready runs. PostgreSQL's plan cache likewise cannot
match a generic plan's `status = $1` to a partial index.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from django.db import connection, transaction

from jobs.models import ExecutorKind
from jobs.runs import RunTicket
from jobs.sql import loader
from jobs.sql.rows import (
    ActiveRun,
    CancelledRun,
    ChainedRun,
    ChainLink,
    DueJob,
    FailureStreak,
    FinishedRun,
    JobMove,
    JobOutcome,
    JobPageRow,
    JobStatus,
    LiveLog,
    LostRun,
    NewRun,
    PruneEdge,
    QueueRoom,
    Replacement,
    RetryRun,
    RunningLong,
    RunningRun,
    SkippedRun,
    WakeUp,
    WatchedJob,
)

logger = logging.getLogger("django.db.backends")

# Rows per multi-row statement: well under SQLite's 32,766 bound parameters.
ROWS_PER_STATEMENT = 900
# Live logs per statement: each may be JOBS_LOG_MAX_BYTES long.
LIVE_LOGS_PER_STATEMENT = 100


def chunks(items: Sequence, size: int = ROWS_PER_STATEMENT) -> Iterator[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class JobsMoved(Exception):
    """A job changed between reading and claiming it; the claim is taken again."""


class Claimed(NamedTuple):
    plan: Any  # what the planner returned
    inserted: set[str]  # keys of the runs actually inserted


class EngineCursor:
    """A driver cursor behind the stores' `%s` placeholders.

    Django's cursors cost as much as the database's own work on our batch statements of
    thousands of parameters (on SQLite inside the writer lock), so the stores use the
    driver's cursor. What Django's debug cursor gives is kept: when Django logs queries
    (DEBUG, or a test's CaptureQueriesContext / django_assert_num_queries), each
    statement is timed, logged and appended to connection.queries_log, so query counts
    include the engine's statements. Nothing of that is done when logging is off.
    """

    __slots__ = ("_convert", "_cursor", "_logged")

    def __init__(self, cursor: Any, convert: Callable[[str], str]) -> None:
        self._cursor = cursor
        self._convert = convert
        self._logged = connection.queries_logged

    def execute(self, sql: str, params: Sequence = ()) -> EngineCursor:
        if self._logged:
            return self._log(sql, params, self._cursor.execute, params)
        self._cursor.execute(self._convert(sql), params)
        return self

    def executemany(self, sql: str, rows: Sequence[Sequence]) -> EngineCursor:
        if self._logged:
            return self._log(sql, f"{len(rows)} rows", self._cursor.executemany, rows)
        self._cursor.executemany(self._convert(sql), rows)
        return self

    def _log(self, sql: str, shown: object, call: Callable, params: object) -> EngineCursor:
        began = time.monotonic()
        try:
            call(self._convert(sql), params)
        finally:
            duration = time.monotonic() - began
            if isinstance(shown, Sequence) and not isinstance(shown, str):
                sql = _with_values(sql, shown)
            connection.queries_log.append({"sql": sql, "time": f"{duration:.3f}"})
            logger.debug(
                "(%.3f) %s; args=%s; alias=%s",
                duration,
                sql,
                shown,
                connection.alias,
                extra={"duration": duration, "sql": sql, "params": shown, "alias": "default"},
            )
        return self

    def fetchone(self) -> Any:
        return self._cursor.fetchone()

    def fetchall(self) -> list:
        return self._cursor.fetchall()

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount


def _with_values(sql: str, params: Sequence) -> str:
    """The statement with its parameters written in, as Django's query log shows them
    (for reading, and EXPLAIN in tests; never executed)."""

    def literal(value: object) -> str:
        if value is None:
            return "NULL"
        if isinstance(value, bool | int | float):
            return str(int(value) if isinstance(value, bool) else value)
        return "'" + str(value).replace("'", "''") + "'"

    parts = sql.split("%s")
    if len(parts) != len(params) + 1:
        return sql
    return (
        "".join(part + literal(value) for part, value in zip(parts, params, strict=False))
        + parts[-1]
    )


class Store:
    """One vendor's way to run the engine's statements (subclassed per vendor)."""

    vendor = ""
    queries_file: Path

    def __init__(self) -> None:
        self.queries = loader.load(self.queries_file)
        check_params(self.queries, ROW_STATEMENTS)

    # --- what each vendor says ------------------------------------------------------

    def adapt_datetime(self, value: datetime | None) -> object:
        """An aware datetime as a statement parameter."""
        raise NotImplementedError

    def adapt_moment(self, value: datetime) -> object:
        """An aware datetime seen once (a run's start or finish) as a statement
        parameter: adapt_datetime without its cache, which such values only fill."""
        return self.adapt_datetime(value)

    def read_datetime(self, value: object) -> datetime | None:
        """A datetime as a statement returned it (aware)."""
        raise NotImplementedError

    def read_key(self, value: object) -> str:
        """An id as a statement returned it, as a key (32 hex digits)."""
        raise NotImplementedError

    def read_micros(self, value: object) -> int | None:
        """A time as timeline_jobs returns it, as whole microseconds since the epoch."""
        raise NotImplementedError

    def datetime_as_text(self, column: str) -> str:
        """SQL selecting a datetime column the way read_datetime reads it fastest."""
        raise NotImplementedError

    def writer_lock(self) -> AbstractContextManager:
        """Held around every write transaction of this process."""
        raise NotImplementedError

    def driver_cursor(self) -> AbstractContextManager[EngineCursor]:
        raise NotImplementedError

    def update_rows(self, cursor: EngineCursor, name: str, rows: Sequence[tuple]) -> int:
        """Run statement `name` once per row; returns the rows it changed."""
        raise NotImplementedError

    def claim(
        self,
        plan: Callable[[Operations], Any],
        apply: Callable[[Operations, Any, bool], set[str]],
    ) -> Claimed | None:
        """Plan a claim (`plan` reads the due jobs; None: nothing is due) and apply it
        (`apply(ops, plan, all_or_nothing)` returns the keys of the runs inserted; with
        all_or_nothing it raises JobsMoved if a job moved since it was read)."""
        raise NotImplementedError

    def lock_queue(self, ops: Operations, queue: str) -> None:
        """Hold a queue until the transaction ends (statement lock_queue), so that a start
        counts its running runs alone."""
        ops.cursor.execute(self.queries["lock_queue"].text, [queue])

    def checkpointer(self) -> AbstractContextManager:
        """What keeps the database's log in check beside a long-running process."""
        raise NotImplementedError

    def seconds_between(self, later: str, earlier: str) -> str:
        """SQL for `later - earlier` in seconds, computed by the database itself."""
        raise NotImplementedError

    def hour_of(self, column: str) -> Any:
        """A Django expression grouping a datetime column by its UTC hour."""
        raise NotImplementedError

    # --- transactions ---------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[Operations]:
        """A write transaction. Every write goes through it, even a single UPDATE: on
        SQLite that is BEGIN IMMEDIATE, which waits for the lock (busy timeout) instead
        of failing at once when another process wrote between our read and our write."""
        with self.writer_lock(), transaction.atomic(), self.driver_cursor() as cursor:
            yield Operations(self, cursor)

    @contextmanager
    def writing(self) -> Iterator[None]:
        """A write transaction for ORM statements (the writer lock, then atomic)."""
        with self.writer_lock(), transaction.atomic():
            yield

    @contextmanager
    def reading(self) -> Iterator[Operations]:
        """Reads outside a write transaction."""
        with self.driver_cursor() as cursor:
            yield Operations(self, cursor)

    def ticket(self, row: Sequence) -> RunTicket:
        """A RunTicket from the first TICKET_COLUMNS columns of a ticket statement."""
        read_key = self.read_key
        executor = row[12]
        return RunTicket(
            read_key(row[0]),
            read_key(row[1]),
            row[2],
            row[3],
            self.read_datetime(row[4]),
            *row[5:12],
            executor,
            # A simulated run reads no arguments: not decoded on the hot path.
            None if executor == SIMULATED else read_json(row[13]),
            row[14],
            row[15],
        )

    def adapt_json(self, value: object) -> str | None:
        """A JSON value as a statement parameter (JSON text; None stays NULL)."""
        return None if value is None else json.dumps(value)


def read_json(value: object) -> Any:
    """A JSON column as a statement returned it (text, or already decoded)."""
    if isinstance(value, str | bytes | bytearray):
        return json.loads(value)
    return value


SIMULATED = ExecutorKind.SIMULATED.value

# Ticket statements select these columns first: run id, job id, name, command,
# scheduled_for, attempt, max_retries, backoff, timeout, the three simulation values,
# the job's executor, the run's arguments (the job's when the run has none), and the
# run's queue and priority.
TICKET_COLUMNS = 16


class Operations:
    """The store's operations on one cursor (one transaction, or a read)."""

    __slots__ = ("cursor", "store")

    def __init__(self, store: Store, cursor: EngineCursor) -> None:
        self.store = store
        self.cursor = cursor

    def _execute(self, name: str, params: Sequence = (), count: int = 0) -> EngineCursor:
        query = self.store.queries[name]
        return self.cursor.execute(query.expand(count) if count else query.text, params)

    def _keys(self, name: str, before: Sequence, keys: Sequence[str]) -> set[str]:
        """Run a `... id IN ({keys}) RETURNING id` statement in chunks; the ids returned."""
        read_key = self.store.read_key
        returned: set[str] = set()
        for chunk in chunks(keys):
            rows = self._execute(name, [*before, *chunk], len(chunk)).fetchall()
            returned.update(read_key(row[0]) for row in rows)
        return returned

    def _count(self, name: str, before: Sequence, keys: Sequence[str]) -> int:
        changed = 0
        for chunk in chunks(keys):
            changed += self._execute(name, [*before, *chunk], len(chunk)).rowcount
        return changed

    def _tickets(self, name: str, params: Sequence, count: int = 0) -> list[RunTicket]:
        ticket = self.store.ticket
        return [ticket(row) for row in self._execute(name, params, count).fetchall()]

    # --- claiming -------------------------------------------------------------------

    def due_jobs(self, now: object, limit: int) -> list[DueJob]:
        """Active jobs whose next_run_at has come, oldest first (index jobs_job_due)."""
        read_key, read_dt = self.store.read_key, self.store.read_datetime
        # tuple.__new__ rather than DueJob(...): one Python call fewer per due job, on
        # the claim's critical path.
        make = tuple.__new__
        return [
            make(DueJob, (read_key(row[0]), *row[1:7], read_dt(row[7]), *row[7:]))
            for row in self._execute("due_jobs", [now, limit]).fetchall()
        ]

    def move_jobs(self, moves: Sequence[JobMove]) -> int:
        """Move claimed jobs on; returns how many still had the next_run_at read."""
        return self.store.update_rows(self.cursor, "move_jobs", moves)

    def insert_runs(self, runs: Sequence[NewRun]) -> set[str]:
        """Insert pending runs; a run that already exists (same job, occurrence, attempt)
        is left alone. Returns the keys of the runs actually inserted."""
        read_key = self.store.read_key
        inserted: set[str] = set()
        for chunk in chunks(runs):
            rows = self._execute(
                "insert_runs", [value for run in chunk for value in run], len(chunk)
            ).fetchall()
            inserted.update(read_key(row[0]) for row in rows)
        return inserted

    def insert_retry_runs(self, runs: Sequence[RetryRun]) -> None:
        """Insert the next attempts of failed runs, pending, each with its job's queue
        and priority as they are now (an attempt that exists already is left alone)."""
        for chunk in chunks(runs, ROWS_PER_STATEMENT // 2):
            self._execute(
                "insert_retry_runs", [value for run in chunk for value in run], len(chunk)
            )

    def insert_skipped_runs(self, runs: Sequence[SkippedRun], now: object) -> None:
        """Record skipped occurrences as finished runs (a second claim adds nothing)."""
        dt = self.store.adapt_datetime
        for chunk in chunks(runs, ROWS_PER_STATEMENT // 2):
            params = []
            for run in chunk:
                at = dt(run.scheduled_for)
                params += (run.key, run.job_key, at, at, run.log, now, now, run.queue, run.priority)
            self._execute("insert_skipped_runs", params, len(chunk))

    def cancel_replaced(self, replaced: Sequence[Replacement], now: object) -> None:
        """Cancel runs that a new run replaces, if they are still pending or running."""
        self.cursor.executemany(
            self.store.queries["cancel_replaced"].text,
            [(now, row.note, row.old_key) for row in replaced],
        )

    def record_status_on_jobs(self, rows: Sequence[JobStatus]) -> None:
        if rows:
            self.cursor.executemany(self.store.queries["record_status_on_jobs"].text, rows)

    def active_runs(self, job_keys: Sequence[str]) -> dict[str, list[ActiveRun]]:
        """The pending and running runs of these jobs, by job key."""
        read_key = self.store.read_key
        active: dict[str, list[ActiveRun]] = {}
        # Two placeholders per job: well within the bound for any batch up to 900 jobs.
        for chunk in chunks(job_keys, ROWS_PER_STATEMENT // 2):
            query = self.store.queries["active_runs"]
            rows = self.cursor.execute(query.expand(len(chunk)), [*chunk, *chunk]).fetchall()
            for job_id, run_id, status in rows:
                active.setdefault(read_key(job_id), []).append(ActiveRun(read_key(run_id), status))
        return active

    # --- the life of a run ----------------------------------------------------------

    def start_runs(self, keys: Sequence[str], worker: str, now: object) -> set[str]:
        """Pending runs that may start, moved to running for `worker`: the ones it won."""
        return self._keys("start_runs", [worker, now, now, now], keys)

    # --- queues with a limit (JOBS_QUEUE_LIMITS) ----------------------------------------

    def lock_queue(self, queue: str) -> None:
        """Hold `queue` until the transaction ends, so that no other transaction counts
        its running runs meanwhile (by vendor: a lock, or the write lock already held)."""
        self.store.lock_queue(self, queue)

    def start_limited_runs(
        self, keys: Sequence[str], worker: str, now: object, queue: str, limit: int
    ) -> set[str]:
        """Of these pending runs of `queue`, the best ones that fit under its `limit`,
        moved to running for `worker` (after lock_queue): the ones it won."""
        read_key = self.store.read_key
        won: set[str] = set()
        # Each chunk counts the runs the one before started.
        for chunk in chunks(keys):
            rows = self._execute(
                "start_limited_runs",
                [worker, now, now, now, *chunk, queue, limit, queue],
                len(chunk),
            ).fetchall()
            won.update(read_key(row[0]) for row in rows)
        return won

    def take_runs(self, queue: str, limit: int, most: int, worker: str, now: object) -> set[str]:
        """Start the best pending runs of `queue` that may start now, at most `most` and
        as many as fit under its `limit` (after lock_queue); their keys."""
        read_key = self.store.read_key
        rows = self._execute(
            "take_runs", [worker, now, now, queue, now, most, limit, queue]
        ).fetchall()
        return {read_key(row[0]) for row in rows}

    def queue_room(self, queue: str, now: object, cap: int) -> QueueRoom:
        running, waiting = self._execute("queue_room", [queue, queue, now, cap]).fetchone()
        return QueueRoom(int(running), int(waiting))

    def started_tickets(self, keys: Sequence[str]) -> list[RunTicket]:
        tickets: list[RunTicket] = []
        for chunk in chunks(keys):
            tickets += self._tickets("started_tickets", list(chunk), len(chunk))
        return tickets

    def release_runs(self, keys: Sequence[str], worker: str) -> int:
        return self._count("release_runs", [worker], keys)

    def heartbeat_runs(self, keys: Sequence[str], now: object) -> int:
        return self._count("heartbeat_runs", [now], keys)

    def write_live_logs(self, rows: Sequence[LiveLog]) -> int:
        """The output so far of running runs, each only while its worker still runs it:
        one statement per chunk of runs (the logs are large; a hundred per statement)."""
        written = 0
        for chunk in chunks(rows, LIVE_LOGS_PER_STATEMENT):
            params = [value for row in chunk for value in row]
            written += self._execute("write_live_logs", params, len(chunk)).rowcount
        return written

    def owned_runs(self, keys: Sequence[str], worker: str) -> set[str]:
        """Which of these runs `worker` still runs, locked until the transaction ends."""
        return self._keys("owned_runs", [worker], keys)

    def finish_runs(self, rows: Sequence[FinishedRun]) -> int:
        return self.store.update_rows(self.cursor, "finish_runs", rows)

    def record_on_jobs(self, rows: Sequence[JobOutcome]) -> int:
        return self.store.update_rows(self.cursor, "record_on_jobs", rows)

    def watched_jobs(self, job_keys: Sequence[str]) -> list[WatchedJob]:
        """Those of these jobs that send failure or recovery alerts, with their failed
        runs in a row; locked until the transaction ends (a row lock or the write lock,
        by vendor), so that the count written back is exact."""
        read_key = self.store.read_key
        watched = []
        # Each statement locks in key order; several chunks go in key order too, so row
        # locks are always taken in one order.
        size = ROWS_PER_STATEMENT // 2
        ordered = sorted(job_keys) if len(job_keys) > size else job_keys
        for chunk in chunks(ordered, size):
            for key, on_failure, on_recovery, after, streak in self._execute(
                "watched_jobs", chunk, len(chunk)
            ).fetchall():
                watched.append(
                    WatchedJob(read_key(key), bool(on_failure), bool(on_recovery), after, streak)
                )
        return watched

    def record_failure_streaks(self, rows: Sequence[FailureStreak]) -> int:
        return self.store.update_rows(self.cursor, "record_failure_streaks", rows)

    # --- running long ---------------------------------------------------------------

    def running_long_candidates(self, limit: int) -> list[RunningLong]:
        """Running runs of jobs that alert on failure, not yet found running long."""
        read_key, read_dt = self.store.read_key, self.store.read_datetime
        return [
            RunningLong(read_key(run), read_key(job), read_dt(started), expected)
            for run, job, started, expected in self._execute(
                "running_long_candidates", [limit]
            ).fetchall()
        ]

    def mark_running_long(self, key: str, now: object) -> bool:
        """Mark a running run as found running long: True for the one caller that did."""
        return bool(self._execute("mark_running_long", [now, key]).fetchall())

    def recent_durations(self, job_key: str, limit: int) -> list[float]:
        """Seconds taken by the job's newest `limit` runs that ran to an outcome."""
        rows = self._execute("recent_durations", [job_key, limit]).fetchall()
        return [float(seconds) for (seconds,) in rows if seconds is not None]

    # --- reaping --------------------------------------------------------------------

    def lost_runs(self, cutoff: object, limit: int) -> list[LostRun]:
        """Running runs whose heartbeat is older than `cutoff`, locked."""
        ticket, read_dt = self.store.ticket, self.store.read_datetime
        return [
            LostRun(
                ticket(row),
                row[TICKET_COLUMNS],
                read_dt(row[TICKET_COLUMNS + 1]),
                read_dt(row[TICKET_COLUMNS + 2]),
                row[TICKET_COLUMNS + 3] or "",
                row[TICKET_COLUMNS + 4],
            )
            for row in self._execute("lost_runs", [cutoff, limit]).fetchall()
        ]

    def fail_lost_runs(
        self, keys: Sequence[str], now: object, note: str, cutoff: object
    ) -> set[str]:
        return self._keys("fail_lost_runs", [now, note, cutoff], keys)

    def record_processes(self, key: str, worker: str, host: str, group: int) -> bool:
        return self._execute("record_processes", [host, group, key, worker]).rowcount == 1

    def append_run_log(self, key: str, note: str) -> str | None:
        """Add `note` to a run's log; the key of its job (None: no such run)."""
        rows = self._execute("append_run_log", [note, key]).fetchall()
        return self.store.read_key(rows[0][0]) if rows else None

    def timed_runs(self, limit: int) -> list[RunningRun]:
        """Running runs of jobs that have a timeout, oldest start first."""
        ticket, read_dt = self.store.ticket, self.store.read_datetime
        return [
            RunningRun(ticket(row), read_dt(row[TICKET_COLUMNS]))
            for row in self._execute("timed_runs", [limit]).fetchall()
        ]

    def fail_running_run(self, key: str, now: object, note: str) -> bool:
        return bool(self._execute("fail_running_run", [now, note, key]).fetchall())

    def running_among(self, keys: Sequence[str]) -> set[str]:
        return self._keys("running_among", [], keys)

    # --- finding work ---------------------------------------------------------------

    def pending_queues(self) -> list[str]:
        """The queues that have pending runs, in name order."""
        return [row[0] for row in self._execute("pending_queues").fetchall()]

    def ready_runs(self, queue: str, now: object, limit: int) -> list[RunTicket]:
        """Pending runs of `queue` that may start now, best first (priority, then the
        earliest start)."""
        return self._tickets("ready_runs", [queue, now, limit])

    def undispatched_runs(
        self, queue: str, now: object, cutoff: object, limit: int
    ) -> list[RunTicket]:
        """Ready runs of `queue` never handed out, or handed out before `cutoff`, best
        first."""
        return self._tickets("undispatched_runs", [queue, now, cutoff, limit])

    def stamp_dispatched(self, keys: Sequence[str], now: object, cutoff: object) -> set[str]:
        """Stamp these runs as handed out now, unless someone else just did."""
        return self._keys("stamp_dispatched", [now, cutoff], keys)

    def mark_dispatched(self, keys: Sequence[str], now: object) -> None:
        self._count("mark_dispatched", [now], keys)

    def undispatch_runs(self, keys: Sequence[str]) -> None:
        self._count("undispatch_runs", [], keys)

    def tickets_for(self, keys: Sequence[str], now: object) -> list[RunTicket]:
        tickets: list[RunTicket] = []
        for chunk in chunks(keys):
            tickets += self._tickets("tickets_for", [now, *chunk], len(chunk))
        return tickets

    def wake_up(self, now: object) -> WakeUp:
        """When the next job comes due and the next backoff ends, and the pause."""
        read_dt = self.store.read_datetime
        return WakeUp(
            *(read_dt(value) for value in self._execute("next_wake_at", [now]).fetchone())
        )

    def claims_paused(self, now: object) -> bool:
        """Whether the scheduler is paused at `now` (in a claim's transaction: see the
        statement)."""
        row = self._execute("claims_paused", [now]).fetchone()
        return bool(row and row[0])

    def cancel_run(
        self, key: str, by: str, now: object, note: str, first_lines: str
    ) -> CancelledRun | None:
        """Mark a pending or running run cancelled, adding `note` to its log, or
        `first_lines` in place of a log that is still empty."""
        row = self._execute("cancel_run", [by, now, first_lines, note, key]).fetchone()
        if row is None:
            return None
        read_dt = self.store.read_datetime
        return CancelledRun(self.store.read_key(row[0]), read_dt(row[1]), read_dt(row[2]))

    # --- retention ------------------------------------------------------------------

    def job_page(self, after: str | None, limit: int) -> list[JobPageRow]:
        """Jobs in id order after `after` (from the start when None)."""
        read_key, read_dt = self.store.read_key, self.store.read_datetime
        if after is None:
            rows = self._execute("job_page_first", [limit]).fetchall()
        else:
            rows = self._execute("job_page_after", [after, limit]).fetchall()
        return [JobPageRow(read_key(key), read_dt(last)) for key, last in rows]

    def prune_edge(self, job_key: str, keep: int) -> PruneEdge | None:
        row = self._execute("prune_edge", [job_key, keep]).fetchone()
        return None if row is None else PruneEdge(*row)

    def count_finished_before(self, cutoff: object) -> int:
        return int(self._execute("count_finished_before", [cutoff]).fetchone()[0])

    def delete_finished_before(self, cutoff: object, limit: int) -> int:
        deleted = self._execute("delete_finished_before", [cutoff, limit]).fetchall()
        return self._after_deleting_runs(deleted)

    def count_beyond(self, job_key: str, edge: PruneEdge, since: object | None) -> int:
        """Finished runs of the job at or before `edge` (created since `since`)."""
        head = [job_key, edge.scheduled_for, edge.scheduled_for, edge.attempt]
        if since is None:
            return int(self._execute("count_beyond", head).fetchone()[0])
        return int(self._execute("count_beyond_since", [*head, since]).fetchone()[0])

    def delete_beyond(self, job_key: str, edge: PruneEdge, limit: int) -> int:
        params = [job_key, edge.scheduled_for, edge.scheduled_for, edge.attempt, limit]
        return self._after_deleting_runs(self._execute("delete_beyond", params).fetchall())

    def _after_deleting_runs(self, deleted: Sequence[Sequence]) -> int:
        """After a DELETE ... RETURNING id, in its transaction (the foreign keys are
        checked at commit): the runs those deleted runs had started stay, linked to
        nothing; their alert attempts go with them. Returns how many were deleted."""
        keys = [row[0] for row in deleted]
        if keys:
            self._count("unlink_chained_runs", [], keys)
            self._count("delete_run_notifications", [], keys)
        return len(keys)

    # --- chains ---------------------------------------------------------------------

    def any_chains(self) -> bool:
        return bool(self._execute("any_chains").fetchone()[0])

    def chaining_jobs(self, job_keys: Sequence[str]) -> set[str]:
        """Those of these jobs that have a chain."""
        read_key = self.store.read_key
        found: set[str] = set()
        for chunk in chunks(job_keys, ROWS_PER_STATEMENT // 2):
            rows = self._execute("chaining_jobs", [*chunk, *chunk], len(chunk)).fetchall()
            found.update(read_key(row[0]) for row in rows)
        return found

    def chained_jobs(self, job_keys: Sequence[str]) -> list[ChainLink]:
        """The jobs that runs of these jobs start, on success and on failure (on
        PostgreSQL locked against deletion until the transaction ends)."""
        read_key = self.store.read_key
        links = []
        for chunk in chunks(job_keys, ROWS_PER_STATEMENT // 2):
            for row in self._execute("chained_jobs", [*chunk, *chunk], len(chunk)).fetchall():
                on_status, source, key, name, active, policy, queue, priority, *rest = row
                links.append(
                    ChainLink(
                        on_status,
                        read_key(source),
                        read_key(key),
                        name,
                        bool(active),
                        policy,
                        queue,
                        priority,
                        *rest,
                    )
                )
        return links

    def insert_chained_runs(self, runs: Sequence[ChainedRun]) -> set[str]:
        """Insert runs a chain starts; returns the keys of those inserted (a row whose
        occurrence is taken is not)."""
        read_key = self.store.read_key
        inserted: set[str] = set()
        for chunk in chunks(runs):
            params = []
            for run in chunk:
                params += (
                    run.key,
                    run.job_key,
                    run.scheduled_for,
                    run.status,
                    run.not_before,
                    run.log,
                    run.created_at,
                    run.finished_at,
                    run.caused_by,
                    run.queue,
                    run.priority,
                    run.arguments,
                )
            rows = self._execute("insert_chained_runs", params, len(chunk)).fetchall()
            inserted.update(read_key(row[0]) for row in rows)
        return inserted

    # --- the Upcoming page ------------------------------------------------------------

    def timeline_jobs(self) -> list[tuple]:
        """Every job, with its schedule and next occurrence: one read of the table. The
        rows as the statement gives them, in TimelineJob's field order (ids as hex text,
        the times to be read with store.read_micros): the caller reads 10,000 of them in
        a loop and makes a TimelineJob of the few it shows."""
        return self._execute("timeline_jobs").fetchall()


def check_params(queries: dict[str, loader.Query], rows: dict[str, type]) -> None:
    """Fail at start-up if a statement's parameters and its row type drift apart."""
    for name, row_type in rows.items():
        if queries[name].params != row_type._fields:
            raise AssertionError(f"{name}: parameters {queries[name].params} != {row_type._fields}")


# Statements fed whole rows: their `-- params:` must list the row's fields in order.
ROW_STATEMENTS: dict[str, type] = {
    "move_jobs": JobMove,
    "finish_runs": FinishedRun,
    "record_on_jobs": JobOutcome,
    "record_status_on_jobs": JobStatus,
    "record_failure_streaks": FailureStreak,
}
