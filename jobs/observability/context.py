"""The run a thread is executing, for the lines it logs meanwhile (JSON logs).

A context variable, set by the worker's hook (jobs.observability.watching) only while
something reads it: a JsonFormatter in use, or a span or a check-in per run.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

from jobs.runs import RunTicket

current_ticket: contextvars.ContextVar[RunTicket | None] = contextvars.ContextVar(
    "jobs_observed_run", default=None
)

# Set by JsonFormatter when logging configures one: from then on the worker marks each run.
_log_fields_wanted = False
_listeners: list[Callable[[], object]] = []


def want_log_fields() -> None:
    global _log_fields_wanted
    if not _log_fields_wanted:
        _log_fields_wanted = True
        for listener in _listeners:
            listener()


def on_wanted(listener: Callable[[], object]) -> None:
    """Call `listener` when a JsonFormatter is configured (the hook decides again)."""
    _listeners.append(listener)


def log_fields_wanted() -> bool:
    return _log_fields_wanted


def run_fields() -> dict[str, Any]:
    """The fields a log line written during a run carries (none outside a run)."""
    ticket = current_ticket.get()
    if ticket is None:
        return {}
    return {
        "job_id": ticket.job_key,
        "job_name": ticket.job_name,
        "run_id": ticket.run_key,
        "attempt": ticket.attempt,
        "queue": ticket.queue,
    }
