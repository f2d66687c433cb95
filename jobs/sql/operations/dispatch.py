"""Finding work: the pending runs that are ready, per queue, best first, handed out once;
when to wake up.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobs.runs import RunTicket
from jobs.sql.operations.core import OperationsCore, chunks
from jobs.sql.rows import WakeUp


class DispatchOperations(OperationsCore):
    __slots__ = ()

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
