"""The Upcoming page: every job's schedule from one read of the job table."""

from __future__ import annotations

from jobs.sql.operations.core import OperationsCore


class TimelineOperations(OperationsCore):
    __slots__ = ()

    def timeline_jobs(self) -> list[tuple]:
        """Every job, with its schedule and next occurrence: one read of the table. The
        rows as the statement gives them, in TimelineJob's field order (ids as hex text,
        the times to be read with store.read_micros): the caller reads 10,000 of them in
        a loop and makes a TimelineJob of the few it shows."""
        return self._execute("timeline_jobs").fetchall()
