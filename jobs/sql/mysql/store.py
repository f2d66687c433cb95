"""The store for MySQL 8.0+ and MariaDB 10.6+: mysqlclient's cursor, row locks, named
locks for queues, steps where the others return rows (jobs/sql/mysql/operations.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.db import connection
from django.db.models.functions import TruncHour

from jobs.sql.base import Claimed, Operations, Store
from jobs.sql.cursor import EngineCursor
from jobs.sql.loader import Query
from jobs.sql.mysql.operations import MysqlOperations
from jobs.sql.operations.core import ROWS_PER_STATEMENT

# Naive UTC, as DATETIME(6) holds it (the session's zone is UTC: the settings' init_command).
_EPOCH = datetime(1970, 1, 1)

# The text of a multi-row statement kept under this many characters (each at most four
# bytes of UTF-8): MariaDB's max_allowed_packet is 16 MB by default, and a statement
# larger than it is refused.
_CHARACTERS_PER_STATEMENT = 2 * 1024 * 1024

# Whether this connection holds a queue's named lock (lock_queue), by connection object.
_LOCKS_HELD = "_jobs_queue_locks_held"


def _same(sql: str) -> str:
    return sql  # mysqlclient takes `%s` as it is


class MysqlCursor(EngineCursor):
    """EngineCursor, with rows as a list (mysqlclient gives a tuple)."""

    __slots__ = ()

    def fetchall(self) -> list:
        return list(self._cursor.fetchall())


class NoCheckpoints(contextlib.nullcontext):
    """The server manages its own log: nothing to start or stop."""

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


class MysqlStore(Store):
    vendor = "mysql"
    queries_file = Path(__file__).with_name("queries.sql")
    _operations = MysqlOperations

    def __init__(self) -> None:
        super().__init__()
        # The statements run in steps (their parts between `;`), each part a statement.
        self.steps = {
            name: [Query(name, part.strip(), (), query.row) for part in query.text.split(";")]
            for name, query in self.queries.items()
            if ";" in query.text
        }

    def adapt_datetime(self, value: datetime | None) -> str | None:
        """Naive UTC "YYYY-MM-DD HH:MM:SS.ffffff", as DATETIME(6) takes text."""
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given where an aware one is required")
        utc = value if value.tzinfo is UTC else value.astimezone(UTC)
        return utc.replace(tzinfo=None).isoformat(" ", "microseconds")

    def read_datetime(self, value: object) -> datetime | None:
        # mysqlclient gives DATETIME as naive datetimes; they are UTC.
        return None if value is None else value.replace(tzinfo=UTC)  # type: ignore[attr-defined]

    def read_key(self, value: object) -> str:
        # Differs because MariaDB's UUID type (Django's on 10.7+) reads with dashes,
        # MySQL's CHAR(32) as 32 hex digits.
        return value.replace("-", "") if isinstance(value, str) else value.hex  # type: ignore[attr-defined]

    def read_micros(self, value: object) -> int | None:
        return None if value is None else int(value)  # type: ignore[call-overload]

    def datetime_as_text(self, column: str) -> str:
        return column

    def writer_lock(self) -> AbstractContextManager:
        # Writers of one process meet at row locks like those of different processes.
        return contextlib.nullcontext()

    @contextmanager
    def transaction(self) -> Iterator[Operations]:
        """Store.transaction, then the queues' named locks let go (lock_queue): they
        belong to the session, not to the transaction, so they are released when the
        outermost transaction has ended (committed or rolled back)."""
        try:
            with super().transaction() as ops:
                yield ops
        finally:
            if getattr(connection, _LOCKS_HELD, False) and not connection.in_atomic_block:
                self._release_queue_locks()

    def lock_queue(self, ops: Operations, queue: str) -> None:
        setattr(connection, _LOCKS_HELD, True)
        (granted,) = ops.cursor.execute(self.queries["lock_queue"].text, [queue]).fetchone()
        if granted != 1:
            raise RuntimeError(f"could not lock the queue {queue!r} (GET_LOCK gave {granted})")

    def _release_queue_locks(self) -> None:
        setattr(connection, _LOCKS_HELD, False)
        if connection.connection is not None:
            with connection.wrap_database_errors, connection.connection.cursor() as raw:
                raw.execute("SELECT RELEASE_ALL_LOCKS()")

    @contextmanager
    def driver_cursor(self) -> Iterator[EngineCursor]:
        """mysqlclient's own cursor: Django's wrapper costs as much as the server's work
        on batches of thousands of parameters."""
        connection.ensure_connection()
        with connection.wrap_database_errors:
            raw = connection.connection.cursor()
            try:
                yield MysqlCursor(raw, _same)
            finally:
                raw.close()

    def update_rows(self, cursor: EngineCursor, name: str, rows: Sequence[tuple]) -> int:
        # A round trip away: the rows travel in one UPDATE ... JOIN (derived table) per
        # chunk, a chunk bounded in rows and in characters (max_allowed_packet).
        query = self.queries[name]
        changed = 0
        for chunk in _sized_chunks(rows):
            params = [value for row in chunk for value in row]
            changed += cursor.execute(query.expand(len(chunk)), params).rowcount
        return changed

    def claim(
        self,
        plan: Callable[[Operations], Any],
        apply: Callable[[Operations, Any, bool], set[str]],
    ) -> Claimed | None:
        """One transaction: the jobs read are locked (SKIP LOCKED) until it ends."""
        with self.transaction() as ops:
            planned = plan(ops)
            return None if planned is None else Claimed(planned, apply(ops, planned, False))

    def checkpointer(self) -> NoCheckpoints:
        return NoCheckpoints()

    def seconds_between(self, later: str, earlier: str) -> str:
        return f"(TIMESTAMPDIFF(MICROSECOND, {earlier}, {later}) / 1000000.0)"

    def hour_of(self, column: str) -> TruncHour:
        # In UTC, the connection's own zone: no CONVERT_TZ, so no zone tables needed.
        return TruncHour(column, tzinfo=UTC)


def _sized_chunks(rows: Sequence[tuple]) -> Iterator[Sequence[tuple]]:
    start, size = 0, 0
    for index, row in enumerate(rows):
        length = sum(len(value) for value in row if isinstance(value, str))
        if index > start and (
            index - start >= ROWS_PER_STATEMENT or size + length > _CHARACTERS_PER_STATEMENT
        ):
            yield rows[start:index]
            start, size = index, 0
        size += length
    if start < len(rows):
        yield rows[start:]
