"""Claiming due jobs: reading them, moving them on, inserting their runs, and what overlap
and the misfire policy decide.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobs.sql.operations.core import ROWS_PER_STATEMENT, OperationsCore, chunks
from jobs.sql.rows import ActiveRun, DueJob, JobMove, JobStatus, NewRun, Replacement, SkippedRun


class ClaimOperations(OperationsCore):
    __slots__ = ()

    def due_jobs(self, now: object, limit: int) -> list[DueJob]:
        """Active jobs whose next_run_at has come, oldest first (index jobs_job_due)."""
        read_key, read_dt = self.store.read_key, self.store.read_datetime
        # tuple.__new__ rather than DueJob(...): one Python call fewer per due job, on
        # the claim's critical path.
        make = tuple.__new__
        return [
            make(
                DueJob, (read_key(row[0]), *row[1:7], read_dt(row[7]), *row[7:24], read_dt(row[24]))
            )
            for row in self._execute("due_jobs", [now, limit]).fetchall()
        ]

    def move_jobs(self, moves: Sequence[JobMove]) -> int:
        """Move claimed jobs on; returns how many still had the next_run_at read."""
        return self.store.update_rows(self.cursor, "move_jobs", moves)

    def insert_runs(self, runs: Sequence[NewRun]) -> set[str]:
        """Insert pending runs; a run that already exists (same job, occurrence, attempt)
        is left alone. Returns the keys of the runs actually inserted."""
        read_key = self.store.read_key
        inserted: set[str] = set()
        for chunk in chunks(runs):
            rows = self._insert_returning(
                "insert_runs",
                [value for run in chunk for value in run],
                len(chunk),
                [run.key for run in chunk],
            )
            inserted.update(read_key(row[0]) for row in rows)
        return inserted

    def insert_skipped_runs(self, runs: Sequence[SkippedRun], now: object) -> None:
        """Record skipped occurrences as finished runs (a second claim adds nothing)."""
        dt = self.store.adapt_datetime
        for chunk in chunks(runs, ROWS_PER_STATEMENT // 2):
            params = []
            for run in chunk:
                at = dt(run.scheduled_for)
                params += (run.key, run.job_key, at, at, run.log, now, now, run.queue, run.priority)
            self._execute("insert_skipped_runs", params, len(chunk))

    def cancel_replaced(self, replaced: Sequence[Replacement], now: object) -> None:
        """Cancel runs that a new run replaces, if they are still pending or running."""
        self.cursor.executemany(
            self.store.queries["cancel_replaced"].text,
            [(now, row.note, row.old_key) for row in replaced],
        )

    def record_status_on_jobs(self, rows: Sequence[JobStatus]) -> None:
        if rows:
            self.cursor.executemany(self.store.queries["record_status_on_jobs"].text, rows)

    def active_runs(self, job_keys: Sequence[str]) -> dict[str, list[ActiveRun]]:
        """The pending and running runs of these jobs, by job key."""
        read_key = self.store.read_key
        active: dict[str, list[ActiveRun]] = {}
        # Two placeholders per job: well within the bound for any batch up to 900 jobs.
        for chunk in chunks(job_keys, ROWS_PER_STATEMENT // 2):
            query = self.store.queries["active_runs"]
            rows = self.cursor.execute(query.expand(len(chunk)), [*chunk, *chunk]).fetchall()
            for job_id, run_id, status in rows:
                active.setdefault(read_key(job_id), []).append(ActiveRun(read_key(run_id), status))
        return active

    def claims_paused(self, now: object) -> bool:
        """Whether the scheduler is paused at `now` (in a claim's transaction: see the
        statement)."""
        row = self._execute("claims_paused", [now]).fetchone()
        return bool(row and row[0])
