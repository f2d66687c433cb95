"""Example Python tasks, registered so that a new site has some to choose from.

JOBS_TASK_MODULES names this module by default; set JOBS_TASK_MODULES to your own
modules (or to nothing) to leave these out. Each shows one thing a task can do: take
typed arguments, write to its run's log with print() and logging, fail, and stop when
asked (jobs.current_run()).
"""

from __future__ import annotations

import enum
import logging
import time
from datetime import date
from typing import Annotated

from jobs import current_run, register
from jobs.pytasks.registry import Between

logger = logging.getLogger(__name__)


class Level(enum.Enum):
    SHORT = "short"
    FULL = "full"


@register
def say_hello(
    name: str = "world",
    # Bounded: a greeting repeated 10**30 times would hold a worker for ever.
    times: Annotated[int, Between(1, 1000)] = 1,
) -> str:
    """Print a greeting: the smallest task there is."""
    for _ in range(times):
        print(f"Hello, {name}!")
    return f"greeted {name} {times} time(s)"


@register
def daily_report(day: date, level: Level = Level.SHORT, dry_run: bool = False) -> dict:
    """Pretend to build the report of one day; logs what it does."""
    logger.info("building the %s report for %s", level.value, day.isoformat())
    if dry_run:
        logger.info("dry run: nothing is sent")
    return {"day": day.isoformat(), "level": level.value, "sent": not dry_run}


@register
def always_fails(message: str = "something went wrong") -> None:
    """Raise an exception, to see what a failed run's log looks like."""
    raise RuntimeError(message)


@register(name="jobs.example_tasks.count_slowly", description="Count up, one number a second.")
def count_slowly(to: Annotated[int, Between(0, 86_400)] = 10) -> int:
    counted = 0
    run = current_run()
    for number in range(1, to + 1):
        # A long task looks at its stop signal: cancelling, a timeout or the worker
        # shutting down sets it; wait() returns at once when it is set.
        if run is not None and run.stop.wait(1.0):
            print(f"asked to stop ({run.stop_reason}) after {counted}")
            break
        if run is None:
            time.sleep(1.0)
        print(number)
        counted = number
    return counted
