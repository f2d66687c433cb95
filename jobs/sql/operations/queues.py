"""Queues with a limit (JOBS_QUEUE_LIMITS): starts that count a queue's running runs under
its lock.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobs.sql.operations.core import OperationsCore, chunks
from jobs.sql.rows import QueueRoom


class QueueOperations(OperationsCore):
    __slots__ = ()

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
