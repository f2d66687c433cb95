"""PostgreSQL's side of the benchmark (`manage.py benchmark`, jobs/bench); it serves only
the benchmark, nothing at run time imports it. jobs/sql/sqlite/bench.py has the same
functions with the same signatures; jobs.sql.bench.bench_support() picks one.
"""

from __future__ import annotations

import secrets
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.db import DatabaseError, connection


def database_version() -> str:
    # Differs because PostgreSQL is a server: its version is the server's, not a library's.
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        return str(cursor.fetchone()[0])


def in_process_memory_mb() -> float | None:
    """Memory the database holds inside this process."""
    # Differs because PostgreSQL's memory is the server's processes', none of ours.
    return None


def prepare_bulk_load() -> None:
    """Before a bulk insert of many rows with random keys."""
    # Differs because PostgreSQL's shared buffers are the server's: nothing to set here.


def settle_bulk_load() -> None:
    """After a bulk insert: leave the database as it would be a while later."""
    # Differs because PostgreSQL needs fresh statistics for its plans: ANALYZE, what
    # autovacuum would soon do.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def refresh_statistics() -> None:
    """After many jobs were defined, before timing queries on them."""
    # Differs because PostgreSQL's planner goes by statistics, which autovacuum would
    # soon bring up to date: ANALYZE now.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def tidy_after_updates() -> None:
    """After many rows were updated and deleted, before timing a process on them."""
    # Differs because PostgreSQL leaves dead rows behind updates and deletes, and plans by
    # statistics: VACUUM ANALYZE, what autovacuum would soon do (outside a transaction).
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def can_keep_database_file() -> bool:
    """Whether a database can be built once and kept in a file (`--db-file`)."""
    # Differs because a PostgreSQL database lives on the server, not in a file of ours.
    return False


@contextmanager
def throwaway_database(keep: Path | None = None) -> Iterator[str]:
    """A DATABASE_URL for a new, empty database `bench_<random>` on the server
    DATABASE_URL names, dropped afterwards, whatever happened."""
    # Differs because a PostgreSQL database is made and dropped on the server, and is
    # no file to keep.
    if keep is not None:
        raise ValueError("a PostgreSQL database cannot be kept in a file")
    name = f"bench_{secrets.token_hex(6)}"
    quoted = connection.ops.quote_name(name)
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE {quoted}")
    try:
        # Only the standalone site has it (manage.py benchmark refuses to run without).
        parts = urlsplit(getattr(settings, "DATABASE_URL", ""))
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        _drop_database(quoted)


def _drop_database(quoted: str) -> None:
    for attempt in range(5):
        connection.close()  # a connection broken meanwhile must not stop the drop
        try:
            with connection.cursor() as cursor:
                # FORCE ends what a failed child left connected (PostgreSQL 13 and later).
                cursor.execute(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)")
            return
        except DatabaseError as exc:
            if attempt == 4:
                sys.stderr.write(f"could not drop the database {quoted}: {exc}; drop it by hand\n")
                return
            time.sleep(2.0 * (attempt + 1))  # the server may be restarting
