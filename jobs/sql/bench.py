"""What the benchmark needs from each database, and nothing else at run time imports.

jobs/sql/sqlite/bench.py and jobs/sql/postgresql/bench.py define the same functions with
the same signatures; bench_support() picks the one for the current connection, from the
vendor table of jobs/sql/__init__.py. Only
jobs/bench and the `benchmark` command import this.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from django.db import connection

from jobs.sql import vendor_package


def bench_support() -> ModuleType:
    """The benchmark helpers of the current connection's database."""
    return import_module(f"{vendor_package(connection.vendor)}.bench")
