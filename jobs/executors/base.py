"""What every executor shares: the protocol, the outcome, the run's stop context.

An executor is any object with ``execute(ticket, context) -> Outcome``. It must not
touch the database (the engine records the outcome) and should return promptly once
``context.stop`` is set: each run has its own context, stopped when the run is
cancelled, when it passes its job's timeout, or when the worker shuts down past its
grace period (``context.reason`` says which). Heartbeats are sent for it by the worker
that runs it, so a long run needs no code of its own to stay alive. ``JOBS_EXECUTOR``
names the class of the simulated jobs.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from django.utils.module_loading import import_string

from jobs import conf
from jobs.runs import ProcessGroup, RunTicket


@dataclass(frozen=True, slots=True)
class Outcome:
    succeeded: bool
    log: str
    # What the run returned or raised, as JSON, for the runs that keep it (enqueued
    # Django tasks: jobs.pytasks.framework.stored_outcome); None for every other run.
    result: Any = None
    # Where the work ran when not in this process: the Celery worker that took the task
    # (its name, e.g. celery@web-3), "" otherwise. The run's worker then names it.
    ran_on: str = ""


# Why a run's context was stopped (ExecutionContext.reason).
STOP_SHUTDOWN = "shutdown"
STOP_TIMEOUT = "timeout"
STOP_CANCELLED = "cancelled"

# Past a child's own deadline (jobs/executors/processes.py): a timeout in words.
STOP_DEADLINE = "deadline"

_STOP_WORDS = {
    STOP_SHUTDOWN: "the worker was shutting down",
    STOP_TIMEOUT: "the run timed out",
    STOP_DEADLINE: "the run timed out",
    STOP_CANCELLED: "the run was cancelled",
}


def stop_words(reason: str | None) -> str:
    """Why a run was stopped, in words for its log (an unknown reason: a shutdown)."""
    return _STOP_WORDS.get(reason or STOP_SHUTDOWN, _STOP_WORDS[STOP_SHUTDOWN])


# Guards the first use of a context's stop Event (see ExecutionContext.stop).
_event_creation = threading.Lock()


class ExecutionContext:
    """What an executor gets beside the ticket: `stop`, set when the run must stop early,
    `reason` (one of the STOP_* values; blank when a worker's own context is stopped
    for its shutdown), and `output`, where an executor may put the run's output so far.

    Every run gets a context of its own. Its Event is made on first use: most runs of a
    burst never wait, and an Event costs several microseconds to make.
    """

    __slots__ = (
        "_stop",
        "cooperative",
        "hand_back",
        "notify",
        "output",
        "processes",
        "processes_changed",
        "reason",
        "stopped_at",
    )

    def __init__(self, stop: threading.Event | None = None) -> None:
        self._stop = stop
        self.reason = ""
        # time.monotonic() when the run was asked to stop (None: it was not).
        self.stopped_at: float | None = None
        # True when only the run's own code can end it (a Python task in a worker
        # thread): the worker reports it if it goes on past the kill grace.
        self.cooperative = False
        # Set by an executor whose work goes on elsewhere when the run is stopped for a
        # shutdown (a Celery task): the run is handed back to pending as it is, for the
        # next worker to follow the same work, rather than finished.
        self.hand_back = False
        # The run's process group (a jobs.runs.ProcessGroup) once it started one, to be
        # recorded on the run; `notify()` (set by the worker) asks for it to be written.
        self.processes: Any = None
        self.processes_changed = False
        self.notify: Any = None
        # The run's output so far (a jobs.executors.output.RunOutput), set by executors
        # that do real work: the worker writes it to the run's row while it runs (the
        # live log). None for simulated runs, which write their log at the end only.
        self.output: Any = None

    @property
    def stop(self) -> threading.Event:
        event = self._stop
        if event is None:
            with _event_creation:
                if self._stop is None:
                    self._stop = threading.Event()
                event = self._stop
        return event

    @property
    def stop_requested(self) -> bool:
        """Whether the run was asked to stop: `stop.is_set()`, without making the Event
        of a run nobody stopped."""
        event = self._stop
        return event is not None and event.is_set()

    def request_stop(self, reason: str) -> None:
        """Stop the run for `reason`; the first reason given stays."""
        if not self.reason:
            self.reason = reason
            self.stopped_at = time.monotonic()
        self.stop.set()

    def set_processes(self, processes: ProcessGroup) -> None:
        """The run's processes were started (shell, command, isolated python runs)."""
        self.processes = processes
        self.processes_changed = True
        if self.notify is not None:
            self.notify()

    def stop_words(self) -> str:
        """Why the run was stopped, for its log."""
        return stop_words(self.reason)


class Executor(Protocol):
    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome: ...


def load_executor() -> Executor:
    """The executor JOBS_EXECUTOR names, built with its defaults (it runs the simulated
    jobs; jobs.executors.routing.RoutingExecutor puts the others beside it)."""
    return import_string(conf.executor_path())()
