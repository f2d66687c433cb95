"""The operations MySQL and MariaDB run in steps: those whose statement says which rows it
changed (RETURNING elsewhere).

Neither server returns the rows an UPDATE or DELETE changed (MariaDB returns them from
INSERT and DELETE only, MySQL from nothing), so each such statement of
jobs/sql/mysql/queries.sql is steps separated by `;`: a locking read of the rows the
write may change (FOR UPDATE: nobody changes them before our write, and a read that
waited for another transaction's lock reads the row as that one left it, so two
transactions racing for a run each win different ones, as PostgreSQL's UPDATE does),
then the write by primary key. An insert is followed by a read of the keys it inserted.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobs.sql.base import Operations
from jobs.sql.loader import Query
from jobs.sql.operations.core import chunks
from jobs.sql.rows import CancelledRun, LiveLog, LostRun, PruneEdge


class MysqlOperations(Operations):
    __slots__ = ()

    def _step(self, step: Query, params: Sequence, count: int = 0) -> list:
        text = step.expand(count) if count else step.text
        return self.cursor.execute(text, params).fetchall()

    def _steps(self, name: str) -> list[Query]:
        return self.store.steps[name]  # type: ignore[attr-defined]

    def _lock_then_write(
        self, name: str, lock_before: Sequence, write_before: Sequence, keys: Sequence[str]
    ) -> set[str]:
        """Lock the rows among `keys` that statement `name`'s first step finds, write
        them with its second; the keys written."""
        lock, write = self._steps(name)
        read_key = self.store.read_key
        won: set[str] = set()
        for chunk in chunks(keys):
            found = [row[0] for row in self._step(lock, [*lock_before, *chunk], len(chunk))]
            if found:
                self._step(write, [*write_before, *found], len(found))
                won.update(map(read_key, found))
        return won

    def _insert_returning(
        self, name: str, params: Sequence, count: int, keys: Sequence[str]
    ) -> list:
        insert, inserted = self._steps(name)
        self._step(insert, params, count)
        return self._step(inserted, keys, len(keys))

    def start_runs(self, keys: Sequence[str], worker: str, now: object) -> set[str]:
        return self._lock_then_write("start_runs", [now], [worker, now, now], keys)

    def stamp_dispatched(self, keys: Sequence[str], now: object, cutoff: object) -> set[str]:
        return self._lock_then_write("stamp_dispatched", [cutoff], [now], keys)

    def lost_runs(self, cutoff: object, limit: int) -> list[LostRun]:
        """The stale runs' keys read through the heartbeat index without a lock, then
        the runs (and their jobs) locked by primary key in key order, stale still; oldest
        heartbeat first, as the others return them."""
        find, lock = self._steps("lost_runs")
        keys = [row[0] for row in self._step(find, [cutoff, limit])]
        if not keys:
            return []
        lost = self._lost_runs_of(self._step(lock, [cutoff, *keys], len(keys)))
        return sorted(lost, key=lambda run: run.heartbeat_at)

    def fail_lost_runs(
        self, keys: Sequence[str], now: object, note: str, cutoff: object
    ) -> set[str]:
        return self._lock_then_write("fail_lost_runs", [cutoff], [now, note], keys)

    def fail_running_run(self, key: str, now: object, note: str) -> bool:
        return bool(self._lock_then_write("fail_running_run", [], [now, note], [key]))

    def mark_running_long(self, key: str, now: object) -> bool:
        return bool(self._lock_then_write("mark_running_long", [], [now], [key]))

    def start_limited_runs(
        self, keys: Sequence[str], worker: str, now: object, queue: str, limit: int
    ) -> set[str]:
        count, lock, write = self._steps("start_limited_runs")
        read_key = self.store.read_key
        won: set[str] = set()
        # Each chunk counts the runs the one before started.
        for chunk in chunks(keys):
            room = limit - self._step(count, [queue])[0][0]
            if room <= 0:
                break
            params = [now, *chunk, queue, room]
            found = [row[0] for row in self._step(lock, params, len(chunk))]
            if found:
                self._step(write, [worker, now, now, *found], len(found))
                won.update(map(read_key, found))
        return won

    def take_runs(self, queue: str, limit: int, most: int, worker: str, now: object) -> set[str]:
        count, lock, write = self._steps("take_runs")
        room = min(most, limit - self._step(count, [queue])[0][0])
        if room <= 0:
            return set()
        found = [row[0] for row in self._step(lock, [queue, now, room])]
        if found:
            self._step(write, [worker, now, now, *found], len(found))
        return set(map(self.store.read_key, found))

    def cancel_run(
        self, key: str, by: str, now: object, note: str, first_lines: str
    ) -> CancelledRun | None:
        lock, write = self._steps("cancel_run")
        rows = self._step(lock, [key])
        if not rows:
            return None
        self._step(write, [by, now, first_lines, note, key])
        job, started_at, scheduled_for = rows[0]
        read_dt = self.store.read_datetime
        return CancelledRun(self.store.read_key(job), read_dt(started_at), read_dt(scheduled_for))

    def append_run_log(self, key: str, note: str) -> str | None:
        lock, write = self._steps("append_run_log")
        rows = self._step(lock, [key])
        if not rows:
            return None
        self._step(write, [note, key])
        return self.store.read_key(rows[0][0])

    def delete_finished_before(self, cutoff: object, limit: int) -> int:
        return self._lock_then_delete("delete_finished_before", [cutoff, limit])

    def delete_beyond(self, job_key: str, edge: PruneEdge, limit: int) -> int:
        params = [job_key, edge.scheduled_for, edge.scheduled_for, edge.attempt, limit]
        return self._lock_then_delete("delete_beyond", params)

    def _lock_then_delete(self, name: str, params: Sequence) -> int:
        lock, delete = self._steps(name)
        found = self._step(lock, params)
        # Differs because MySQL checks a foreign key at once, not at commit: the runs
        # they started are unlinked and their alert attempts deleted first.
        deleted = self._after_deleting_runs(found)
        for chunk in chunks([row[0] for row in found]):
            self._step(delete, chunk, len(chunk))
        return deleted

    def write_live_logs(self, rows: Sequence[LiveLog]) -> int:
        # Differs because a statement must fit the server's max_allowed_packet (16 MB on
        # MariaDB): the logs travel in chunks of a bounded size, not of a hundred logs.
        return self.store.update_rows(self.cursor, "write_live_logs", rows)
