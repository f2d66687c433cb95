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
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from django.db import transaction

from jobs.models import ExecutorKind
from jobs.runs import RunTicket
from jobs.sql import loader
from jobs.sql.cursor import EngineCursor
from jobs.sql.operations.alerts import AlertOperations
from jobs.sql.operations.chains import ChainOperations
from jobs.sql.operations.claims import ClaimOperations
from jobs.sql.operations.core import LIVE_LOGS_PER_STATEMENT, ROWS_PER_STATEMENT
from jobs.sql.operations.dispatch import DispatchOperations
from jobs.sql.operations.lifecycle import LifecycleOperations
from jobs.sql.operations.processes import ProcessOperations
from jobs.sql.operations.queues import QueueOperations
from jobs.sql.operations.reaping import ReapOperations
from jobs.sql.operations.retention import RetentionOperations
from jobs.sql.operations.timeline import TimelineOperations
from jobs.sql.rows import FailureStreak, FinishedRun, JobMove, JobOutcome, JobStatus


class JobsMoved(Exception):
    """A job changed between reading and claiming it; the claim is taken again."""


class Claimed(NamedTuple):
    plan: Any  # what the planner returned
    inserted: set[str]  # keys of the runs actually inserted


class Store:
    """One vendor's way to run the engine's statements (subclassed per vendor)."""

    vendor = ""
    queries_file: Path
    # The class of the operations the store's transactions and reads give (a vendor may
    # run some operations in steps of its own: jobs/sql/mysql/operations.py).
    _operations: type[Operations]

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
            yield self._operations(self, cursor)

    @contextmanager
    def writing(self) -> Iterator[None]:
        """A write transaction for ORM statements (the writer lock, then atomic)."""
        with self.writer_lock(), transaction.atomic():
            yield

    @contextmanager
    def reading(self) -> Iterator[Operations]:
        """Reads outside a write transaction."""
        with self.driver_cursor() as cursor:
            yield self._operations(self, cursor)

    def ticket(self, row: Sequence) -> RunTicket:
        """A RunTicket from the first TICKET_COLUMNS columns of a ticket statement
        (jobs/sql/operations/core.py lists them)."""
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


# The batch sizes, defined beside the operations that batch, named here too: the store's
# tests size their batches by them.
__all__ = [
    "LIVE_LOGS_PER_STATEMENT",
    "ROWS_PER_STATEMENT",
    "Claimed",
    "JobsMoved",
    "Operations",
    "Store",
    "read_json",
]


class Operations(
    ClaimOperations,
    DispatchOperations,
    LifecycleOperations,
    QueueOperations,
    ReapOperations,
    ProcessOperations,
    AlertOperations,
    RetentionOperations,
    ChainOperations,
    TimelineOperations,
):
    """The store's operations on one cursor (one transaction, or a read): every area's,
    each in its module of jobs/sql/operations/."""

    __slots__ = ()


Store._operations = Operations


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
