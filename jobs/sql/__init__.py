"""The vendor layer: the only code that knows which database the scheduler talks to.

`store()` is the store of the default connection's vendor: jobs/sql/sqlite/,
jobs/sql/postgresql/ or jobs/sql/mysql/ (MySQL and MariaDB), each a module of Python
(jobs/sql/base.py says what a store must do) and a file of named statements, the same
names in each. To support another database, add a package beside them and a line to
VENDORS: its store class; its benchmark helpers are the package's `bench` module
(jobs/sql/bench.py).
"""

from __future__ import annotations

from functools import cache

from django.db import connection
from django.utils.module_loading import import_string

from jobs.sql.base import Store

# Django's connection.vendor -> the vendor's package and its store class, in that package.
VENDORS = {
    "sqlite": ("jobs.sql.sqlite", "store.SqliteStore"),
    "postgresql": ("jobs.sql.postgresql", "store.PostgresqlStore"),
    # MySQL 8.0+ and MariaDB 10.6+: Django names both "mysql".
    "mysql": ("jobs.sql.mysql", "store.MysqlStore"),
}


def vendor_package(vendor: str) -> str:
    """The package of `vendor`'s statements and code."""
    try:
        return VENDORS[vendor][0]
    except KeyError:
        raise RuntimeError(f"no store for the {vendor} database") from None


def store() -> Store:
    """The store for the database in use."""
    return _store(connection.vendor)


@cache
def _store(vendor: str) -> Store:
    package = vendor_package(vendor)
    return import_string(f"{package}.{VENDORS[vendor][1]}")()


__all__ = ["VENDORS", "Store", "store", "vendor_package"]
