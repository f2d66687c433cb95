"""MySQL's and MariaDB's side of the benchmark (`manage.py benchmark`, jobs/bench); it
serves only the benchmark, nothing at run time imports it. jobs/sql/postgresql/bench.py
has the same functions with the same signatures; jobs.sql.bench.bench_support() picks one.
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

# The tables whose statistics the planner's choices depend on.
_TABLES = "jobs_job, jobs_jobhistory"


def database_version() -> str:
    # Differs because MySQL is a server: its version is the server's ("10.11.6-MariaDB").
    with connection.cursor() as cursor:
        cursor.execute("SELECT VERSION()")
        return str(cursor.fetchone()[0])


def in_process_memory_mb() -> float | None:
    """Memory the database holds inside this process."""
    # Differs because the server's buffer pool is its own process's, none of ours.
    return None


def prepare_bulk_load() -> None:
    """Before a bulk insert of many rows with random keys."""
    # Differs because the buffer pool is the server's: nothing to set here.


def _analyze() -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE TABLE {_TABLES}")
        cursor.fetchall()


def settle_bulk_load() -> None:
    """After a bulk insert: leave the database as it would be a while later."""
    # Differs because InnoDB's statistics are sampled again only after a tenth of a
    # table changed, in the background: ANALYZE TABLE now, what it would soon do.
    _analyze()


def refresh_statistics() -> None:
    """After many jobs were defined, before timing queries on them."""
    _analyze()


def tidy_after_updates() -> None:
    """After many rows were updated and deleted, before timing a process on them."""
    # Differs because InnoDB purges old row versions itself; only the statistics lag.
    _analyze()


def can_keep_database_file() -> bool:
    """Whether a database can be built once and kept in a file (`--db-file`)."""
    # Differs because a MySQL database lives on the server, not in a file of ours.
    return False


@contextmanager
def throwaway_database(keep: Path | None = None) -> Iterator[str]:
    """A DATABASE_URL for a new, empty database `bench_<random>` on the server
    DATABASE_URL names (utf8mb4), dropped afterwards, whatever happened."""
    if keep is not None:
        raise ValueError("a MySQL database cannot be kept in a file")
    name = f"bench_{secrets.token_hex(6)}"
    quoted = connection.ops.quote_name(name)
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE {quoted} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
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
                cursor.execute(f"DROP DATABASE IF EXISTS {quoted}")
            return
        except DatabaseError as exc:
            if attempt == 4:
                sys.stderr.write(f"could not drop the database {quoted}: {exc}; drop it by hand\n")
                return
            time.sleep(2.0 * (attempt + 1))  # the server may be restarting
