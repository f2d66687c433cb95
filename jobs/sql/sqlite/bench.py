"""SQLite's side of the benchmark (`manage.py benchmark`, jobs/bench); it serves only the
benchmark, nothing at run time imports it. jobs/sql/postgresql/bench.py has the same
functions with the same signatures; jobs.sql.bench.bench_support() picks one.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.db import connection

_library: Any = None


def database_version() -> str:
    # Differs because SQLite is a library: its version is the one Python's module loaded.
    return sqlite3.sqlite_version


def in_process_memory_mb() -> float | None:
    """Memory SQLite's allocator holds in this process (its page caches, mostly), from
    sqlite3_memory_used() through ctypes; None where the library cannot be read (or is
    not the one Python's sqlite3 module uses, which then reports nothing)."""
    # Differs because SQLite runs inside this process: its memory is part of our RSS.
    global _library
    try:
        if _library is None:
            import ctypes
            import ctypes.util

            _library = ctypes.CDLL(ctypes.util.find_library("sqlite3"))
            _library.sqlite3_memory_used.restype = ctypes.c_int64
        used = _library.sqlite3_memory_used()
    except (OSError, AttributeError, TypeError):
        return None
    return round(used / 2**20, 1) if used > 0 else None


def prepare_bulk_load() -> None:
    """Before a bulk insert of many rows with random keys."""
    # Differs because SQLite's page cache belongs to the connection: random UUID keys land
    # all over their index, and a big cache (for this connection only, gone when it
    # closes) keeps the load from thrashing.
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA cache_size = -1000000")


def settle_bulk_load() -> None:
    """After a bulk insert: leave the database as it would be a while later."""
    # Differs because SQLite's log holds the load: fold it into the file, as SQLite's
    # automatic checkpoints do over time.
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def refresh_statistics() -> None:
    """After many jobs were defined, before timing queries on them."""
    # Differs because a SQLite database in production is never analysed (there is no
    # autovacuum): the queries are timed with the plans it would have, without ANALYZE.


def tidy_after_updates() -> None:
    """After many rows were updated and deleted, before timing a process on them."""
    # Differs because SQLite keeps no dead rows to vacuum and is never analysed here (see
    # refresh_statistics): fold the log into the file, as the scheduler's checkpointer
    # thread would have by then.
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def can_keep_database_file() -> bool:
    """Whether a database can be built once and kept in a file (`--db-file`)."""
    # Differs because a SQLite database is a file.
    return True


@contextmanager
def throwaway_database(keep: Path | None = None) -> Iterator[str]:
    """A DATABASE_URL for a new, empty database, deleted afterwards (the file `keep` is
    kept instead, and reused if it exists)."""
    # Differs because a SQLite database is a file in a temporary folder.
    if keep is not None:
        yield f"sqlite:///{keep.resolve()}"
        return
    with tempfile.TemporaryDirectory(prefix="jobs-bench-") as folder:
        yield f"sqlite:///{Path(folder) / 'bench.sqlite3'}"
