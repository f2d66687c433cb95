"""Checkpoint SQLite's write-ahead log in a thread of its own, outside the writer lock.

SQLite's automatic checkpoint runs inside the COMMIT that pushes the log past
`wal_autocheckpoint` pages: the committing thread copies the log into the database file
and fsyncs it while it still holds this process's writer lock (SqliteStore.writer_lock), so
every claim, start and finish of the process waits behind it. Measured on a steady 100
runs/s, that was the whole tail of the start lag: p99 88 ms with automatic checkpoints,
10 ms without (docs/benchmarks.md).

So a scheduler process turns the automatic checkpoint off for its own connections and
checkpoints here instead, every `every` seconds, PASSIVE: it copies what no reader still
needs and never waits for a reader or a writer, so writes go on while it works.
`prunehistory` does the same for its deletes. Other processes (the web server) keep the
automatic checkpoint; a process stopped or killed leaves nothing behind, since the
setting lives on its own connections only.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time

from django.db import DatabaseError, close_old_connections, connection
from django.db.backends.signals import connection_created

logger = logging.getLogger(__name__)

CHECKPOINT_EVERY = 1.0
# A log this many pages (4 KiB each) behind after a checkpoint means a reader holds an
# old snapshot for long: worth a warning, at most once a minute.
BEHIND_WARNING_PAGES = 50_000

_active_lock = threading.Lock()
_active = 0  # checkpointers running in this process


def _turn_off_autocheckpoint(sender, connection, **kwargs) -> None:  # type: ignore[no-untyped-def]
    if connection.vendor == "sqlite":
        connection.connection.execute("PRAGMA wal_autocheckpoint=0")


def _in_wal_mode() -> bool:
    if connection.vendor != "sqlite":
        return False
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        return str(cursor.fetchone()[0]).lower() == "wal"


class Checkpointer:
    """The checkpoint thread of a scheduler process (start() does nothing off SQLite)."""

    def __init__(self, every: float = CHECKPOINT_EVERY) -> None:
        self.every = every
        self.checkpoints = 0
        self.last: tuple[int, int, int] | None = None  # (busy, log pages, checkpointed)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._restore_pages: int | None = None
        self._warned_at = float("-inf")

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> bool:
        """Take over checkpointing for this process's connections; False when there is
        nothing to take over (PostgreSQL, or SQLite not in WAL mode)."""
        if self._thread is not None or not _in_wal_mode():
            return False
        global _active
        with _active_lock:
            _active += 1
            if _active == 1:
                connection_created.connect(_turn_off_autocheckpoint, dispatch_uid=__name__)
        # This thread's connection is open already: the signal will not see it.
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_autocheckpoint")
            self._restore_pages = int(cursor.fetchone()[0])
            cursor.execute("PRAGMA wal_autocheckpoint=0")
        self._thread = threading.Thread(target=self._loop, name="wal-checkpoint", daemon=True)
        self._thread.start()
        return True

    def __enter__(self) -> Checkpointer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Checkpoint once more, stop the thread, give the automatic checkpoint back."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join(timeout=30)
        self._thread = None
        global _active
        with _active_lock:
            _active -= 1
            if _active == 0:
                connection_created.disconnect(dispatch_uid=__name__)
        if self._restore_pages is not None and connection.connection is not None:
            # Closed or broken meanwhile: a new connection gets the default anyway.
            with contextlib.suppress(Exception):
                connection.connection.execute(f"PRAGMA wal_autocheckpoint={self._restore_pages}")

    def checkpoint(self) -> tuple[int, int, int] | None:
        """One PASSIVE checkpoint: (busy, pages in the log, pages checkpointed), or None
        when the database could not be reached (the next one tries again)."""
        try:
            with connection.cursor() as cursor:
                cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
                busy, log, done = (int(value) for value in cursor.fetchone())
        except DatabaseError as error:
            logger.warning("WAL checkpoint failed: %s", error)
            close_old_connections()
            return None
        self.checkpoints += 1
        self.last = (busy, log, done)
        now = time.monotonic()
        if log - done > BEHIND_WARNING_PAGES and now - self._warned_at > 60:
            self._warned_at = now
            logger.warning(
                "the SQLite log is %d pages behind after a checkpoint: a long read keeps "
                "it from being copied into the database",
                log - done,
            )
        return self.last

    def _loop(self) -> None:
        try:
            while not self._stop.wait(self.every):
                self.checkpoint()
            self.checkpoint()
        finally:
            connection.close()
