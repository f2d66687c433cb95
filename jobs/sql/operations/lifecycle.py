"""The life of a run once claimed: starting, heartbeats, the live log, finishing, its
retry, an operator's cancel.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobs.runs import RunTicket
from jobs.sql.operations.core import (
    LIVE_LOGS_PER_STATEMENT,
    ROWS_PER_STATEMENT,
    OperationsCore,
    chunks,
)
from jobs.sql.rows import CancelledRun, FinishedRun, JobOutcome, LiveLog, RetryRun


class LifecycleOperations(OperationsCore):
    __slots__ = ()

    def start_runs(self, keys: Sequence[str], worker: str, now: object) -> set[str]:
        """Pending runs that may start, moved to running for `worker`: the ones it won."""
        return self._keys("start_runs", [worker, now, now, now], keys)

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

    def insert_retry_runs(self, runs: Sequence[RetryRun]) -> None:
        """Insert the next attempts of failed runs, pending, each with its job's queue
        and priority as they are now (an attempt that exists already is left alone)."""
        for chunk in chunks(runs, ROWS_PER_STATEMENT // 2):
            self._execute(
                "insert_retry_runs", [value for run in chunk for value in run], len(chunk)
            )

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
