"""Chains: the jobs that runs of other jobs start, and the runs they insert."""

from __future__ import annotations

from collections.abc import Sequence

from jobs.sql.operations.core import ROWS_PER_STATEMENT, OperationsCore, chunks
from jobs.sql.rows import ChainedRun, ChainLink


class ChainOperations(OperationsCore):
    __slots__ = ()

    def any_chains(self) -> bool:
        return bool(self._execute("any_chains").fetchone()[0])

    def chaining_jobs(self, job_keys: Sequence[str]) -> set[str]:
        """Those of these jobs that have a chain."""
        read_key = self.store.read_key
        found: set[str] = set()
        for chunk in chunks(job_keys, ROWS_PER_STATEMENT // 2):
            rows = self._execute("chaining_jobs", [*chunk, *chunk], len(chunk)).fetchall()
            found.update(read_key(row[0]) for row in rows)
        return found

    def chained_jobs(self, job_keys: Sequence[str]) -> list[ChainLink]:
        """The jobs that runs of these jobs start, on success and on failure (on
        PostgreSQL locked against deletion until the transaction ends)."""
        read_key = self.store.read_key
        links = []
        for chunk in chunks(job_keys, ROWS_PER_STATEMENT // 2):
            for row in self._execute("chained_jobs", [*chunk, *chunk], len(chunk)).fetchall():
                on_status, source, key, name, active, policy, queue, priority, *rest = row
                links.append(
                    ChainLink(
                        on_status,
                        read_key(source),
                        read_key(key),
                        name,
                        bool(active),
                        policy,
                        queue,
                        priority,
                        *rest,
                    )
                )
        return links

    def insert_chained_runs(self, runs: Sequence[ChainedRun]) -> set[str]:
        """Insert runs a chain starts; returns the keys of those inserted (a row whose
        occurrence is taken is not)."""
        read_key = self.store.read_key
        inserted: set[str] = set()
        for chunk in chunks(runs):
            params = []
            for run in chunk:
                params += (
                    run.key,
                    run.job_key,
                    run.scheduled_for,
                    run.status,
                    run.not_before,
                    run.log,
                    run.created_at,
                    run.finished_at,
                    run.caused_by,
                    run.queue,
                    run.priority,
                    run.arguments,
                )
            rows = self._insert_returning(
                "insert_chained_runs", params, len(chunk), [run.key for run in chunk]
            )
            inserted.update(read_key(row[0]) for row in rows)
        return inserted
