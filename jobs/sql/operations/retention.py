"""Bounded history: paging through jobs, counting and deleting finished runs beyond the limits."""

from __future__ import annotations

from collections.abc import Sequence

from jobs.sql.operations.core import OperationsCore
from jobs.sql.rows import JobPageRow, PruneEdge


class RetentionOperations(OperationsCore):
    __slots__ = ()

    def job_page(self, after: str | None, limit: int) -> list[JobPageRow]:
        """Jobs in id order after `after` (from the start when None)."""
        read_key, read_dt = self.store.read_key, self.store.read_datetime
        if after is None:
            rows = self._execute("job_page_first", [limit]).fetchall()
        else:
            rows = self._execute("job_page_after", [after, limit]).fetchall()
        return [JobPageRow(read_key(key), read_dt(last)) for key, last in rows]

    def prune_edge(self, job_key: str, keep: int) -> PruneEdge | None:
        row = self._execute("prune_edge", [job_key, keep]).fetchone()
        return None if row is None else PruneEdge(*row)

    def count_finished_before(self, cutoff: object) -> int:
        return int(self._execute("count_finished_before", [cutoff]).fetchone()[0])

    def delete_finished_before(self, cutoff: object, limit: int) -> int:
        deleted = self._execute("delete_finished_before", [cutoff, limit]).fetchall()
        return self._after_deleting_runs(deleted)

    def count_beyond(self, job_key: str, edge: PruneEdge, since: object | None) -> int:
        """Finished runs of the job at or before `edge` (created since `since`)."""
        head = [job_key, edge.scheduled_for, edge.scheduled_for, edge.attempt]
        if since is None:
            return int(self._execute("count_beyond", head).fetchone()[0])
        return int(self._execute("count_beyond_since", [*head, since]).fetchone()[0])

    def delete_beyond(self, job_key: str, edge: PruneEdge, limit: int) -> int:
        params = [job_key, edge.scheduled_for, edge.scheduled_for, edge.attempt, limit]
        return self._after_deleting_runs(self._execute("delete_beyond", params).fetchall())

    def _after_deleting_runs(self, deleted: Sequence[Sequence]) -> int:
        """After a DELETE ... RETURNING id, in its transaction (the foreign keys are
        checked at commit): the runs those deleted runs had started stay, linked to
        nothing; their alert attempts go with them. Returns how many were deleted."""
        keys = [row[0] for row in deleted]
        if keys:
            self._count("unlink_chained_runs", [], keys)
            self._count("delete_run_notifications", [], keys)
        return len(keys)
