"""Executors: what actually happens when a run runs.

An executor is any object with ``execute(ticket, context) -> Outcome``. It must not
touch the database (the engine records the outcome) and should return promptly once
``context.stop`` is set: each run has its own context, stopped when the run is
cancelled, when it passes its job's timeout, or when the worker shuts down past its
grace period (``context.reason`` says which). Heartbeats are sent for it by the worker
that runs it, so a long run needs no code of its own to stay alive. ``JOBS_EXECUTOR``
names the class.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import Protocol

from django.utils.module_loading import import_string

from jobs import conf
from jobs.runs import RunTicket


@dataclass(frozen=True, slots=True)
class Outcome:
    succeeded: bool
    log: str


# Why a run's context was stopped (ExecutionContext.reason).
STOP_SHUTDOWN = "shutdown"
STOP_TIMEOUT = "timeout"
STOP_CANCELLED = "cancelled"

_STOP_WORDS = {
    STOP_SHUTDOWN: "the worker was shutting down",
    STOP_TIMEOUT: "the run timed out",
    STOP_CANCELLED: "the run was cancelled",
}


# Guards the first use of a context's stop Event (see ExecutionContext.stop).
_event_creation = threading.Lock()


class ExecutionContext:
    """What an executor gets beside the ticket: `stop`, set when the run must stop early,
    and `reason` (one of the STOP_* values; blank when a worker's own context is stopped
    for its shutdown).

    Every run gets a context of its own. Its Event is made on first use: most runs of a
    burst never wait, and an Event costs several microseconds to make.
    """

    __slots__ = ("_stop", "reason")

    def __init__(self, stop: threading.Event | None = None) -> None:
        self._stop = stop
        self.reason = ""

    @property
    def stop(self) -> threading.Event:
        event = self._stop
        if event is None:
            with _event_creation:
                if self._stop is None:
                    self._stop = threading.Event()
                event = self._stop
        return event

    def request_stop(self, reason: str) -> None:
        """Stop the run for `reason`; the first reason given stays."""
        if not self.reason:
            self.reason = reason
        self.stop.set()

    def stop_words(self) -> str:
        """Why the run was stopped, for its log."""
        return _STOP_WORDS.get(self.reason, _STOP_WORDS[STOP_SHUTDOWN])


class Executor(Protocol):
    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome: ...


class SimulatedExecutor:
    """Pretends to run the command: waits a random time, then succeeds or fails at random.

    Duration is uniform in [JOBS_SIM_MIN_SECONDS, JOBS_SIM_MAX_SECONDS]; failure happens
    with probability JOBS_SIM_FAILURE_RATE. A job's own simulation settings (carried by
    its ticket) take the place of these where they are set. With JOBS_SIM_SEED set, each
    occurrence's outcome depends only on the seed and the run's identity (job, occurrence, attempt),
    not on which thread or process draws first, so a run is repeatable.
    """

    def __init__(
        self,
        *,
        min_seconds: float | None = None,
        max_seconds: float | None = None,
        failure_rate: float | None = None,
        seed: int | None = None,
    ) -> None:
        defaults = conf.simulation()
        self.min_seconds = defaults.min_seconds if min_seconds is None else min_seconds
        self.max_seconds = defaults.max_seconds if max_seconds is None else max_seconds
        self.failure_rate = defaults.failure_rate if failure_rate is None else failure_rate
        self.seed = defaults.seed if seed is None else seed
        if not 0 <= self.min_seconds <= self.max_seconds:
            raise ValueError("need 0 <= min_seconds <= max_seconds")
        if not 0 <= self.failure_rate <= 1:
            raise ValueError("failure_rate must be between 0 and 1")

    def _rng(self, ticket: RunTicket) -> random.Random | object:
        if self.seed is None:
            return random  # the module's generator is safe to share between threads
        identity = (
            f"{self.seed}:{ticket.job_key}:{ticket.scheduled_for.isoformat()}:{ticket.attempt}"
        )
        return random.Random(identity)

    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome:
        rng = self._rng(ticket)
        shortest, longest, failure_rate = self.min_seconds, self.max_seconds, self.failure_rate
        if ticket.sim_min_seconds is not None:
            shortest = ticket.sim_min_seconds
        if ticket.sim_max_seconds is not None:
            longest = ticket.sim_max_seconds
        if ticket.sim_failure_rate is not None:
            failure_rate = ticket.sim_failure_rate
        if longest < shortest:
            # Job.clean() orders a job's range against the defaults of the day; if they
            # changed since, the shortest wins rather than the run failing.
            longest = shortest
        duration = shortest if longest == shortest else rng.uniform(shortest, longest)
        fails = failure_rate > 0 and rng.random() < failure_rate
        if duration > 0 and context.stop.wait(duration):
            return Outcome(
                succeeded=False,
                log=f"$ {ticket.command}\ninterrupted: {context.stop_words()}\n",
            )
        if fails:
            return Outcome(
                succeeded=False,
                log=(
                    f"$ {ticket.command}\nsimulated run took {duration:.3f} s\n"
                    f"exit status 1: simulated failure (failure rate {failure_rate:g})\n"
                ),
            )
        return Outcome(
            succeeded=True,
            log=f"$ {ticket.command}\nsimulated run took {duration:.3f} s\nexit status 0\n",
        )


def load_executor() -> Executor:
    """The executor JOBS_EXECUTOR names, built with its defaults."""
    return import_string(conf.executor_path())()
