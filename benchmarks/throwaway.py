"""A throwaway database for a benchmark script: a temporary SQLite file, or a database of
its own on the PostgreSQL server (BENCH_PG, default the local one), dropped afterwards.
Django is set up inside it, with DATABASE_URL pointing there."""

from __future__ import annotations

import os
import random
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

SERVER_URL = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432/postgres")


def admin(sql: str) -> None:
    """One statement on the PostgreSQL server's maintenance database (CREATE/DROP DATABASE)."""
    import psycopg

    with psycopg.connect(SERVER_URL.replace("postgres://", "postgresql://"), autocommit=True) as c:
        c.execute(sql)


@contextmanager
def throwaway_database(vendor: str, prefix: str) -> Iterator[None]:
    with tempfile.TemporaryDirectory() as folder:
        name = f"{prefix}_{random.randrange(10**8)}"
        if vendor == "sqlite":
            os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
        else:
            admin(f'CREATE DATABASE "{name}"')
            os.environ["DATABASE_URL"] = SERVER_URL.rsplit("/", 1)[0] + "/" + name
        try:
            import django

            django.setup()
            yield
        finally:
            if vendor == "postgresql":
                from django.db import connections

                connections.close_all()
                admin(f'DROP DATABASE IF EXISTS "{name}"')
