"""Executors: what actually happens when a run runs.

An executor is any object with ``execute(ticket, context) -> Outcome``. It must not
touch the database (the engine records the outcome) and should return promptly once
``context.stop`` is set: each run has its own context, stopped when the run is
cancelled, when it passes its job's timeout, or when the worker shuts down past its
grace period (``context.reason`` says which). Heartbeats are sent for it by the worker
that runs it, so a long run needs no code of its own to stay alive.

Each kind of job has a module of its own here (simulated, python, command, shell,
http); ``JOBS_EXECUTOR`` names the class that runs the simulated jobs.
"""

from jobs.executors.base import (
    STOP_CANCELLED,
    STOP_SHUTDOWN,
    STOP_TIMEOUT,
    ExecutionContext,
    Executor,
    Outcome,
    load_executor,
)
from jobs.executors.simulated import SimulatedExecutor

__all__ = [
    "STOP_CANCELLED",
    "STOP_SHUTDOWN",
    "STOP_TIMEOUT",
    "ExecutionContext",
    "Executor",
    "Outcome",
    "SimulatedExecutor",
    "load_executor",
]
