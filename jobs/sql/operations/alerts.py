"""What the alerts read and write in the engine's transaction: failure streaks, runs
running long.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobs.sql.operations.core import ROWS_PER_STATEMENT, OperationsCore, chunks
from jobs.sql.rows import FailureStreak, RunningLong, WatchedJob


class AlertOperations(OperationsCore):
    __slots__ = ()

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
