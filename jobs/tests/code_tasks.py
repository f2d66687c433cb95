"""Schedules declared in code for the process tests (jobs/tests/test_codesync_processes.py),
made only in the processes they start, which name this module in JOBS_TASK_MODULES and
set CODE_TASKS_START_FILE: the test process imports it for DECLARED alone.

Importing it there waits (at most a minute) until that file exists, so that the
processes a test starts begin their sync at the same moment, however long each took to
start.
"""

from __future__ import annotations

import os
import time
from datetime import timedelta
from pathlib import Path

from jobs import register

DECLARED = 40


def tick(n: int = 0) -> int:
    """Count one tick."""
    return n


def _declare_when_started(start: Path) -> None:
    deadline = time.monotonic() + 60
    while not start.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    for index in range(DECLARED):
        register(
            name="codetasks.tick",
            every=timedelta(minutes=index + 1),
            key=f"k{index:02d}",
            arguments={"n": index},
        )(tick)


if os.environ.get("CODE_TASKS_START_FILE"):
    _declare_when_started(Path(os.environ["CODE_TASKS_START_FILE"]))
