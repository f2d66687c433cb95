"""Executors: what actually happens when a run runs.

An executor is any object with ``execute(ticket, context) -> Outcome``. It must not
touch the database (the engine records the outcome) and should return promptly once
``context.stop`` is set. Heartbeats are sent for it by the worker that runs it, so a
long run needs no code of its own to stay alive. ``JOBS_EXECUTOR`` names the class.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from typing import Protocol

from django.utils.module_loading import import_string

from jobs import conf
from jobs.engine import RunTicket


@dataclass(frozen=True, slots=True)
class Outcome:
    succeeded: bool
    log: str


@dataclass(slots=True)
class ExecutionContext:
    # Set when the run must stop early (shutdown past its grace period).
    stop: threading.Event = field(default_factory=threading.Event)


class Executor(Protocol):
    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome: ...


class SimulatedExecutor:
    """Pretends to run the command: waits a random time, then succeeds or fails at random.

    Duration is uniform in [JOBS_SIM_MIN_SECONDS, JOBS_SIM_MAX_SECONDS]; failure happens
    with probability JOBS_SIM_FAILURE_RATE. With JOBS_SIM_SEED set, each occurrence's
    outcome depends only on the seed and the run's identity (job, occurrence, attempt),
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
        duration = (
            self.min_seconds
            if self.max_seconds == self.min_seconds
            else rng.uniform(self.min_seconds, self.max_seconds)
        )
        fails = self.failure_rate > 0 and rng.random() < self.failure_rate
        if duration > 0 and context.stop.wait(duration):
            return Outcome(
                succeeded=False,
                log=f"$ {ticket.command}\ninterrupted: the worker was shutting down\n",
            )
        if fails:
            return Outcome(
                succeeded=False,
                log=(
                    f"$ {ticket.command}\nsimulated run took {duration:.3f} s\n"
                    "exit status 1: simulated failure\n"
                ),
            )
        return Outcome(
            succeeded=True,
            log=f"$ {ticket.command}\nsimulated run took {duration:.3f} s\nexit status 0\n",
        )


def load_executor() -> Executor:
    """The executor JOBS_EXECUTOR names, built with its defaults."""
    return import_string(conf.executor_path())()
