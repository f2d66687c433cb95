"""Choosing the executor of each run by its job's kind (RunTicket.executor).

Simulated runs go to the executor JOBS_EXECUTOR names (or the one a Scheduler was given);
the others to the executor of their kind, made on first use. A kind this process does
not know, or one switched off since the job was saved, fails the run with a line saying
why: the scheduler goes on with the other runs.

Each kind's class is named by its row in jobs/kinds.py, which also says how to
add a kind.
"""

from __future__ import annotations

import threading

from django.utils.module_loading import import_string

from jobs.executors.base import ExecutionContext, Executor, Outcome
from jobs.kinds import KINDS, SIMULATED
from jobs.runs import RunTicket

EXECUTOR_CLASSES = {kind.value: kind.executor for kind in KINDS if kind.executor}


class RoutingExecutor:
    """Runs each ticket with the executor of its job's kind."""

    def __init__(self, simulated: Executor) -> None:
        self.simulated = simulated
        self._executors: dict[str, Executor] = {}
        self._lock = threading.Lock()

    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome:
        kind = ticket.executor
        if kind == SIMULATED:
            return self.simulated.execute(ticket, context)
        executor = self._executors.get(kind) or self._make(kind)
        if executor is None:
            return Outcome(
                succeeded=False,
                log=f"$ {ticket.command}\nnot run: this scheduler has no executor {kind!r}.\n",
            )
        return executor.execute(ticket, context)

    def _make(self, kind: str) -> Executor | None:
        path = EXECUTOR_CLASSES.get(kind)
        if path is None:
            return None
        with self._lock:
            if kind not in self._executors:
                self._executors[kind] = import_string(path)()
            return self._executors[kind]


def routed(executor: Executor) -> Executor:
    """`executor` for the simulated runs, the kinds' own for the others."""
    return executor if isinstance(executor, RoutingExecutor) else RoutingExecutor(executor)
