"""What the benchmark needs from each database, and nothing else at run time imports.

jobs/sql/sqlite/bench.py and jobs/sql/postgresql/bench.py define the same functions with
the same signatures; bench_support() picks the one for the current connection. Only
jobs/bench and the `benchmark` command import this.
"""

from __future__ import annotations

from types import ModuleType

from django.db import connection


def bench_support() -> ModuleType:
    """The benchmark helpers of the current connection's database."""
    if connection.vendor == "sqlite":
        from jobs.sql.sqlite import bench
    elif connection.vendor == "postgresql":
        from jobs.sql.postgresql import bench
    else:
        raise NotImplementedError(f"no benchmark for the {connection.vendor} database")
    return bench
