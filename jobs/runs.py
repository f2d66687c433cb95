"""The vocabulary every layer shares: a run to execute (RunTicket), its outcome
(RunResult), and run keys (ids as 32 hex digits).

Nothing here touches the database: executors, workers, alerts and metrics import these
types without importing the engine.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple


class ProcessGroup(NamedTuple):
    """Where a run's processes are: the host they run on and their process group (the
    pid of the supervisor that leads it, jobs/executors/supervisor.py)."""

    host: str
    group: int


def as_key(value: uuid.UUID | str) -> str:
    """An id as a key: 32 hex digits (a UUID's .hex, or the key itself)."""
    return value.hex if isinstance(value, uuid.UUID) else value


def new_key() -> str:
    """A random (version 4) UUID as 32 hex digits, without building a UUID object."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return raw.hex()


@dataclass(slots=True)
class RunTicket:
    """Everything a worker needs to execute one run, without reading the database again."""

    run_key: str  # the run's id, 32 hex digits
    job_key: str  # the job's id, 32 hex digits
    job_name: str
    command: str
    scheduled_for: datetime
    attempt: int
    max_retries: int
    retry_backoff_seconds: int
    # The job's limits and simulation settings (None: no timeout / the JOBS_SIM_* default).
    timeout_seconds: int | None = None
    sim_failure_rate: float | None = None
    sim_min_seconds: float | None = None
    sim_max_seconds: float | None = None
    # What runs it (Job.executor) and the arguments this run runs with (a JSON object;
    # None for a simulated run, which reads none).
    executor: str = "simulated"
    arguments: dict | None = None
    # The run's queue (the worker pool that may execute it) and its priority there, as
    # copied from its job when the run was inserted: the pool and the Huey hand-off route
    # by them (jobs/runtime/pool.py).
    queue: str = "default"
    priority: int = 0

    @property
    def final_attempt(self) -> bool:
        """Whether this attempt's failure is for good: no automatic retry follows it (an
        operator's retry beyond max_retries is a final attempt too)."""
        return self.attempt > self.max_retries

    @property
    def run_id(self) -> uuid.UUID:
        return uuid.UUID(hex=self.run_key)

    @property
    def job_id(self) -> uuid.UUID:
        return uuid.UUID(hex=self.job_key)


@dataclass(slots=True)
class RunResult:
    ticket: RunTicket
    succeeded: bool
    log: str
    started_at: datetime
    finished_at: datetime
    # The executor's Outcome.result (JSON; None for the runs that keep none).
    result: object = None
    # Outcome.ran_on: the Celery worker that ran it, "" for the runs this process ran.
    ran_on: str = ""
    # The W3C traceparent of the run's span when tracing is on (the parent of the runs
    # its outcome starts, jobs/engine/chains.py), else "".
    traceparent: str = ""


# The variable (command and shell runs) and the header (http runs) that carry the time a
# run was meant for; python tasks get it as the parameter scheduled_for
# (jobs.pytasks.signature.scheduled_for_keywords).
SCHEDULED_FOR_VARIABLE = "JOBS_SCHEDULED_FOR"
SCHEDULED_FOR_HEADER = "Jobs-Scheduled-For"


def scheduled_for_text(scheduled_for: datetime) -> str:
    """The time a run was meant for as ISO 8601 in UTC ("2027-01-04T00:00:00+00:00")."""
    return scheduled_for.astimezone(UTC).isoformat()
