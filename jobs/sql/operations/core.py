"""What every area of the store's operations shares: the cursor, batching, the store.

Each module beside this one holds the operations of one area as a class on
`OperationsCore`; `jobs.sql.base.Operations` combines them. An area module knows its
store only through `VendorStore` (what the operations ask of it), so that nothing here
imports jobs/sql/base.py, which imports the areas.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from jobs.runs import RunTicket
from jobs.sql.cursor import EngineCursor
from jobs.sql.loader import Query

# Rows per multi-row statement: well under SQLite's 32,766 bound parameters.
ROWS_PER_STATEMENT = 900
# Live logs per statement: each may be JOBS_LOG_MAX_BYTES long.
LIVE_LOGS_PER_STATEMENT = 100

# Ticket statements select these columns first: run id, job id, name, command,
# scheduled_for, attempt, max_retries, backoff, timeout, the three simulation values,
# the job's executor, the run's arguments (the job's when the run has none), and the
# run's queue and priority.
TICKET_COLUMNS = 16


def chunks(items: Sequence, size: int = ROWS_PER_STATEMENT) -> Iterator[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class VendorStore(Protocol):
    """What the operations use of their store (jobs.sql.base.Store is one)."""

    queries: dict[str, Query]

    def adapt_datetime(self, value: Any) -> object: ...

    def read_datetime(self, value: object) -> Any: ...

    def read_key(self, value: object) -> str: ...

    def ticket(self, row: Sequence) -> RunTicket: ...

    def update_rows(self, cursor: EngineCursor, name: str, rows: Sequence[tuple]) -> int: ...

    def lock_queue(self, ops: Any, queue: str) -> None: ...


class OperationsCore:
    """The store's operations on one cursor (one transaction, or a read): the helpers
    that every area's operations call statements through."""

    __slots__ = ("cursor", "store")

    def __init__(self, store: VendorStore, cursor: EngineCursor) -> None:
        self.store = store
        self.cursor = cursor

    def _execute(self, name: str, params: Sequence = (), count: int = 0) -> EngineCursor:
        query = self.store.queries[name]
        return self.cursor.execute(query.expand(count) if count else query.text, params)

    def _insert_returning(
        self, name: str, params: Sequence, count: int, keys: Sequence[str]
    ) -> list:
        """Run an `INSERT ... RETURNING id` of `count` rows whose keys are `keys`; the
        rows of the ids inserted (a store without RETURNING reads them after)."""
        return self._execute(name, params, count).fetchall()

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
