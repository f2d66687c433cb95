"""The live log: what running runs have written so far, stored while they run."""

from __future__ import annotations

from collections.abc import Sequence

from jobs.sql import store
from jobs.sql.rows import LiveLog


def write_live_logs(rows: Sequence[LiveLog]) -> int:
    """Store the output so far of running runs (one statement per hundred runs), each
    only while it is still running for the worker named; returns how many were written.
    The logs must be safe to store already (jobs.engine.logs.safe_log)."""
    if not rows:
        return 0
    with store().transaction() as ops:
        return ops.write_live_logs(rows)
