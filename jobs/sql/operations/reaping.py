"""Reaping: runs whose worker died (stale heartbeat) and runs long past their timeout."""

from __future__ import annotations

from collections.abc import Sequence

from jobs.sql.operations.core import TICKET_COLUMNS, OperationsCore
from jobs.sql.rows import LostRun, RunningRun


class ReapOperations(OperationsCore):
    __slots__ = ()

    def lost_runs(self, cutoff: object, limit: int) -> list[LostRun]:
        """Running runs whose heartbeat is older than `cutoff`, locked."""
        return self._lost_runs_of(self._execute("lost_runs", [cutoff, limit]).fetchall())

    def _lost_runs_of(self, rows: Sequence) -> list[LostRun]:
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
            for row in rows
        ]

    def fail_lost_runs(
        self, keys: Sequence[str], now: object, note: str, cutoff: object
    ) -> set[str]:
        return self._keys("fail_lost_runs", [now, note, cutoff], keys)

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
