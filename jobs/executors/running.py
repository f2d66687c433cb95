"""What a Python task can ask about the run it is part of: `jobs.current_run()`.

A task that runs for long should look at ``current_run().stop`` now and then (or wait
on it instead of sleeping): it is set when the run is cancelled, passes its timeout, or
its worker shuts down past the grace period, and ``stop_reason`` says which. A task that
never looks is treated as every executor's run is then: its run is failed once it has
passed its timeout by a lease (the reaper), or abandoned with its worker at shutdown.

The value is a context variable of the thread executing the run, so two runs executing
at once in two threads each see their own.
"""

from __future__ import annotations

import contextvars
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from jobs.executors.base import ExecutionContext
from jobs.runs import RunTicket


class CurrentRun:
    """The run a task is executing for: its ids, occurrence, arguments and stop signal."""

    __slots__ = ("_context", "arguments", "ticket")

    def __init__(
        self, ticket: RunTicket, context: ExecutionContext, arguments: dict[str, Any]
    ) -> None:
        self.ticket = ticket
        self._context = context
        self.arguments = arguments

    @property
    def run_id(self) -> uuid.UUID:
        return self.ticket.run_id

    @property
    def job_id(self) -> uuid.UUID:
        return self.ticket.job_id

    @property
    def job_name(self) -> str:
        return self.ticket.job_name

    @property
    def scheduled_for(self) -> datetime:
        return self.ticket.scheduled_for

    @property
    def attempt(self) -> int:
        return self.ticket.attempt

    @property
    def stop(self) -> threading.Event:
        """Set when the task should stop; ``stop.wait(seconds)`` sleeps until it is."""
        return self._context.stop

    @property
    def stop_reason(self) -> str:
        """Why it should stop: "cancelled", "timeout" or "shutdown" ("" while it need not)."""
        return self._context.reason if self._context.stop.is_set() else ""

    def should_stop(self) -> bool:
        return self._context.stop.is_set()


_current: contextvars.ContextVar[CurrentRun | None] = contextvars.ContextVar(
    "jobs_current_run", default=None
)


def current_run() -> CurrentRun | None:
    """The run the calling task executes for; None outside a run (a test, a shell)."""
    return _current.get()


@contextmanager
def running(run: CurrentRun) -> Iterator[CurrentRun]:
    """Make `run` the current run for the code inside."""
    token = _current.set(run)
    try:
        yield run
    finally:
        _current.reset(token)
