"""What the engine tells the rest of the app: runs finished.

The engine does not import the code that acts on its events (alerts): that code
subscribes when the app starts (jobs/apps.py), so imports point one way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from jobs.runs import RunResult
from jobs.sql.base import Operations

# The outcomes as the engine records them (RunResult: ticket, succeeded, started_at...);
# a run failed by the reaper comes as a failed result that finished when it was reaped.
RunsFinishedListener = Callable[[Operations, Sequence[RunResult]], None]

_runs_finished: list[RunsFinishedListener] = []


def on_runs_finished(listener: RunsFinishedListener) -> None:
    """Call `listener(ops, finished)` whenever runs finish (each listener once).

    It is called inside the transaction that records the outcomes, before the jobs'
    last_run_status is updated, with that transaction's operations: a listener reads
    the jobs' previous outcome there, and what it queues with transaction.on_commit
    happens only if the outcomes are really written.
    """
    if listener not in _runs_finished:
        _runs_finished.append(listener)


def runs_finished(ops: Operations, finished: Sequence[RunResult]) -> None:
    if finished:
        for listener in _runs_finished:
            listener(ops, finished)
