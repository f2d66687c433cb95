"""The store for SQLite: the process's writer lock, text datetimes, the optimistic claim."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.db import connection
from django.db.models.functions import Substr

from jobs.sql.base import Claimed, JobsMoved, Operations, Store
from jobs.sql.cursor import EngineCursor
from jobs.sql.sqlite.wal import Checkpointer

# What Django's SQLite backend stores, by aware datetime: a claim adapts the same few
# values again and again (now, each job's occurrence), and isoformat is the cost.
_datetime_text: dict[datetime, str] = {}
_DATETIME_CACHE_SIZE = 20_000

# Naive UTC, as the stored text reads.
_NAIVE_EPOCH = datetime(1970, 1, 1)
_MICROSECOND = timedelta(microseconds=1)

# SQLite has one writer at a time. Threads of one process that collide on its lock fall
# into SQLite's busy handler, which sleeps for milliseconds at a time; measured, that
# halved a burst's throughput. So the threads of a process take turns here first (a
# hand-over costs microseconds) and only processes meet at SQLite's lock.
_writer = threading.Lock()


@lru_cache(maxsize=256)
def _qmarks(sql: str) -> str:
    # The statements hold no literal "%" (statuses and names are plain words).
    return sql.replace("%s", "?")


class SqliteStore(Store):
    vendor = "sqlite"
    queries_file = Path(__file__).with_name("queries.sql")

    def adapt_datetime(self, value: datetime | None) -> str | None:
        """Naive UTC "YYYY-MM-DD HH:MM:SS[.ffffff]", as Django's SQLite backend stores it."""
        if value is None:
            return None
        text = _datetime_text.get(value)
        if text is None:
            if value.tzinfo is None:
                raise ValueError("naive datetime given where an aware one is required")
            utc = value if value.tzinfo is UTC else value.astimezone(UTC)
            text = utc.isoformat(" ")[:-6]  # drop "+00:00"
            if len(_datetime_text) > _DATETIME_CACHE_SIZE:
                _datetime_text.clear()
            _datetime_text[value] = text
        return text

    def adapt_moment(self, value: datetime) -> str | None:
        if value.tzinfo is UTC:  # datetime.now(UTC), as the workers take it
            return value.isoformat(" ")[:-6]
        return self.adapt_datetime(value)

    def read_datetime(self, value: object) -> datetime | None:
        return None if value is None else datetime.fromisoformat(value).replace(tzinfo=UTC)  # type: ignore[arg-type]

    def read_key(self, value: object) -> str:
        return value  # type: ignore[return-value]  # Django stores UUIDs as 32 hex digits

    def read_micros(self, value: object) -> int | None:
        # Exact: timedelta // timedelta is integer arithmetic in microseconds.
        if value is None:
            return None
        return (datetime.fromisoformat(value) - _NAIVE_EPOCH) // _MICROSECOND  # type: ignore[arg-type]

    def datetime_as_text(self, column: str) -> str:
        return f"CAST({column} AS TEXT)"

    def writer_lock(self) -> AbstractContextManager:
        return _writer

    @contextmanager
    def driver_cursor(self) -> Iterator[EngineCursor]:
        """The sqlite3 cursor: Django's wrapper rewrites every statement with a regex and
        wraps every call, as much as the database's own work on our batches."""
        connection.ensure_connection()
        with connection.wrap_database_errors:
            raw = connection.connection.cursor()
            try:
                yield EngineCursor(raw, _qmarks)
            finally:
                raw.close()

    def update_rows(self, cursor: EngineCursor, name: str, rows: Sequence[tuple]) -> int:
        # In process: a prepared statement executed per row is the cheapest. The rows go
        # in as exact tuples: sqlite3 binds a tuple subclass (a NamedTuple) through the
        # generic sequence protocol, measured 38-44 ms instead of 32 ms for 10,000 rows,
        # inside the writer lock; the copy costs about 1 ms.
        if not rows:
            return 0
        cursor.executemany(self.queries[name].text, list(map(tuple, rows)))
        return cursor.rowcount

    def claim(
        self,
        plan: Callable[[Operations], Any],
        apply: Callable[[Operations, Any, bool], set[str]],
    ) -> Claimed | None:
        """Read and plan before taking the writer lock, so that planning overlaps other
        threads' writes; apply the plan only if no job moved meanwhile (`apply` raises
        JobsMoved), otherwise claim again under the lock."""
        with self.reading() as ops:
            planned = plan(ops)
        if planned is None:
            return None
        try:
            with self.transaction() as ops:
                return Claimed(planned, apply(ops, planned, True))
        except JobsMoved:
            pass
        with self.transaction() as ops:
            planned = plan(ops)
            return None if planned is None else Claimed(planned, apply(ops, planned, False))

    def lock_queue(self, ops: Operations, queue: str) -> None:
        # Nothing to run: a write transaction holds SQLite's one write lock from its start
        # (BEGIN IMMEDIATE), so no other start counts the queue's runs meanwhile.
        pass

    def checkpointer(self) -> Checkpointer:
        # The log is checkpointed by a thread of its own, not inside a commit that holds
        # the writer lock (jobs/sql/sqlite/wal.py).
        return Checkpointer()

    def seconds_between(self, later: str, earlier: str) -> str:
        return f"((julianday({later}) - julianday({earlier})) * 86400.0)"

    def hour_of(self, column: str) -> Substr:
        # The stored text is naive UTC "YYYY-MM-DD HH:MM:SS.ffffff": the hour is its
        # first 13 characters. TruncHour would call a Python function for every row.
        return Substr(column, 1, 13)
