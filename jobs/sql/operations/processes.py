"""A run's processes: where a worker started them, and notes in the run's log about what
was left of them (jobs/engine/leftovers.py)."""

from __future__ import annotations

from jobs.sql.operations.core import OperationsCore


class ProcessOperations(OperationsCore):
    __slots__ = ()

    def record_processes(self, key: str, worker: str, host: str, group: int) -> bool:
        return self._execute("record_processes", [host, group, key, worker]).rowcount == 1

    def append_run_log(self, key: str, note: str) -> str | None:
        """Add `note` to a run's log; the key of its job (None: no such run)."""
        rows = self._execute("append_run_log", [note, key]).fetchall()
        return self.store.read_key(rows[0][0]) if rows else None
