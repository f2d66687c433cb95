"""Running a batch of runs as the scheduler's workers do, for the observability tests."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from jobs import engine
from jobs.executors import ExecutionContext, Executor, SimulatedExecutor
from jobs.models import Job, JobHistory
from jobs.runtime.worker import Heartbeater, run_batch
from jobs.tests.factories import WORKER


def run_now_and_execute(
    job: Job, executor: Executor | None = None, *, runs: int = 1, trigger: str = ""
) -> list[JobHistory]:
    """`runs` manual runs of `job` (or, with `trigger`, runs as that trigger makes them),
    executed by a worker to the end; the recorded runs."""
    made = [
        engine.run_now(job, now=timezone.now() + timedelta(microseconds=i)) for i in range(runs)
    ]
    if trigger:
        JobHistory.objects.filter(pk__in=[run.pk for run in made]).update(trigger=trigger)
    tickets = engine.ready_tickets(timezone.now() + timedelta(seconds=1))
    run_batch(
        tickets,
        worker=WORKER,
        executor=executor or SimulatedExecutor(min_seconds=0, max_seconds=0, failure_rate=0.0),
        heartbeater=Heartbeater(interval=60),
        context=ExecutionContext(),
        time_budget=60,
    )
    return [JobHistory.objects.get(pk=run.pk) for run in made]
