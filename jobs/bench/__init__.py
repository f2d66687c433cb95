"""Benchmark scenarios, run by `manage.py benchmark` inside a throwaway database.

Nothing at run time imports this package: only the `benchmark` command, benchmarks/
and the tests. Each scenario builds its data with raw batched inserts (data.py,
history.py), drives the real scheduler code, and returns a dict of figures: scalars,
plus a list of rows for a sub-table (report.py prints them).

- burst.run: N jobs due at the same instant, one scheduler pass with instant simulation;
- steady.run: jobs whose intervals add up to a rate of runs per second, the real
  Scheduler.serve() loop in a thread for a set time: lag, CPU and memory;
- scale.run: 100,000 and 1,000,000 defined jobs, some due: the time of one pass;
- pages.run: server time of the screens and the admin with a million runs (the same
  data builder serves anyone who needs a big history: history.build_history), and
  pruning it.

machine.py describes the machine and samples memory and CPU; lag.py holds the lag
statistics; what differs between databases is in jobs/sql/*/bench.py.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# The data builders others use, importable from here too. Loaded on first use, so that
# importing one module of the package (report.py, for the command) loads no other.
_EXPORTS = {
    "insert_interval_jobs": "jobs.bench.data",
    "build_history": "jobs.bench.history",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
