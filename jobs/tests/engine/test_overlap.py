"""Overlap policies: an occurrence that comes while the job's previous run still goes.

Runs here take longer than the interval: the engine is driven one pass at a time with
the clock in the test's hand, and the last test runs the real thread pool.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from jobs import engine
from jobs.executors import Outcome
from jobs.models import Job, JobHistory, JobState, RunStatus
from jobs.runs import RunResult
from jobs.runtime.scheduler import Scheduler
from jobs.tests.factories import NOW, WORKER, ticket
from jobs.tests.processes import wait_until

EVERY = timedelta(seconds=10)


def start_one(job: Job) -> JobHistory:
    """Claim the job's due occurrence and start it, as a worker would; it keeps running."""
    tickets = engine.claim_due()
    assert len(tickets) == 1
    assert engine.start(tickets, WORKER) == tickets
    return JobHistory.objects.get(pk=tickets[0].run_id)


def finish(run: JobHistory, succeeded: bool = True) -> int:
    """Record the run's result as the worker holding it would."""
    now = timezone.now()
    return engine.finish(
        [RunResult(ticket(run), succeeded, "done", started_at=now, finished_at=now)], WORKER
    )


@pytest.mark.django_db
def test_allow_starts_the_next_occurrence_beside_the_running_one(make_job, clock):
    job = make_job(interval=10, interval_unit="second")  # overlap_policy="allow"
    clock.move_to(job.next_run_at)
    first = start_one(job)
    clock.shift(EVERY)
    second = engine.claim_due()
    assert len(second) == 1
    assert set(JobHistory.objects.values_list("status", flat=True)) == {"running", "pending"}
    assert first.status == RunStatus.RUNNING


@pytest.mark.django_db
def test_forbid_records_an_occurrence_that_comes_while_the_job_runs_as_skipped(make_job, clock):
    job = make_job(interval=10, interval_unit="second", overlap_policy="forbid")
    clock.move_to(job.next_run_at)
    first = start_one(job)
    clock.shift(EVERY)
    assert engine.claim_due() == []  # nothing to run
    skipped = JobHistory.objects.get(status=RunStatus.SKIPPED)
    assert skipped.scheduled_for == NOW + 2 * EVERY
    assert skipped.started_at is None and skipped.finished_at == timezone.now()
    assert f"its run {first.pk} is still running" in skipped.log
    assert "overlap policy: forbid" in skipped.log
    job.refresh_from_db()
    assert job.next_run_at == NOW + 3 * EVERY  # the schedule goes on
    assert job.last_run_status == RunStatus.SKIPPED
    assert job.state == JobState.RUNNING  # the first run still is

    # Two more occurrences while the run goes on: two more skips.
    clock.shift(EVERY)
    engine.claim_due()
    clock.shift(EVERY)
    engine.claim_due()
    assert JobHistory.objects.filter(status=RunStatus.SKIPPED).count() == 3

    # Once it finishes, the next occurrence runs again.
    assert finish(first) == 1
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED  # the run's outcome, not the skips
    clock.shift(EVERY)
    assert len(engine.claim_due()) == 1


@pytest.mark.django_db
def test_forbid_also_waits_for_a_run_that_is_still_pending(make_job, clock):
    job = make_job(interval=10, interval_unit="second", overlap_policy="forbid")
    clock.move_to(job.next_run_at)
    assert len(engine.claim_due()) == 1  # pending: no worker took it yet
    clock.shift(EVERY)
    assert engine.claim_due() == []
    skipped = JobHistory.objects.get(status=RunStatus.SKIPPED)
    assert "is still pending" in skipped.log
    job.refresh_from_db()
    assert job.state == JobState.SKIPPED


@pytest.mark.django_db
def test_forbid_runs_only_the_first_of_several_occurrences_claimed_at_once(
    make_job, clock, settings
):
    settings.JOBS_MISFIRE_GRACE_SECONDS = 60
    job = make_job(interval=10, interval_unit="second", overlap_policy="forbid")
    clock.move_to(job.next_run_at + 2 * EVERY)  # three occurrences due, within the grace
    tickets = engine.claim_due()
    assert [t.scheduled_for for t in tickets] == [NOW + EVERY]
    skipped = JobHistory.objects.filter(status=RunStatus.SKIPPED).order_by("scheduled_for")
    assert [r.scheduled_for for r in skipped] == [NOW + 2 * EVERY, NOW + 3 * EVERY]


@pytest.mark.django_db
def test_replace_cancels_the_running_run_and_starts_the_new_one(make_job, clock):
    job = make_job(interval=10, interval_unit="second", overlap_policy="replace")
    clock.move_to(job.next_run_at)
    first = start_one(job)
    clock.shift(EVERY)
    tickets = engine.claim_due()
    assert [t.scheduled_for for t in tickets] == [NOW + 2 * EVERY]
    first.refresh_from_db()
    assert first.status == RunStatus.CANCELLED
    assert first.finished_at == timezone.now()
    assert first.cancelled_by == ""
    assert f"replaced by the run for {NOW + 2 * EVERY:%Y-%m-%d %H:%M:%S} UTC" in first.log
    # The worker that held it learns and stops; its result does not undo the cancel.
    assert finish(first) == 0
    first.refresh_from_db()
    assert first.status == RunStatus.CANCELLED
    assert not JobHistory.objects.filter(job=job, attempt=2).exists()  # not retried
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED  # until the new run starts
    engine.start(tickets, WORKER)
    assert job.state == JobState.RUNNING


@pytest.mark.django_db
def test_replace_also_cancels_a_pending_run(make_job, clock):
    job = make_job(interval=10, interval_unit="second", overlap_policy="replace")
    clock.move_to(job.next_run_at)
    old = engine.claim_due()
    clock.shift(EVERY)
    new = engine.claim_due()
    assert JobHistory.objects.get(pk=old[0].run_id).status == RunStatus.CANCELLED
    assert JobHistory.objects.get(pk=new[0].run_id).status == RunStatus.PENDING
    assert engine.start(old, WORKER) == []  # a cancelled run never starts


@pytest.mark.django_db
def test_a_batch_of_jobs_that_allow_overlap_costs_no_extra_query(make_job, clock):
    for i in range(5):
        make_job(name=f"allow {i}")
    clock.move_to(NOW + EVERY)
    with CaptureQueriesContext(connection) as allow_only:
        assert len(engine.claim_due()) == 5
    assert not any("INDEXED BY" in q["sql"] for q in allow_only.captured_queries)

    forbid = [make_job(name=f"forbid {i}", overlap_policy="forbid") for i in range(5)]
    clock.move_to(NOW + 2 * EVERY)
    with CaptureQueriesContext(connection) as mixed:
        assert len(engine.claim_due()) == 10
    active_run_reads = [q["sql"] for q in mixed.captured_queries if "UNION ALL" in q["sql"]]
    assert len(active_run_reads) == 1  # one read for the batch, of its forbid jobs only
    assert all(job.pk.hex in active_run_reads[0] for job in forbid)
    assert not any(
        job.pk.hex in active_run_reads[0]
        for job in Job.objects.exclude(pk__in=[j.pk for j in forbid])
    )
    # Nothing to skip or cancel here (the allow jobs' runs are theirs): no other writes.
    assert len(mixed.captured_queries) == len(allow_only.captured_queries) + 1


@pytest.mark.django_db(transaction=True)
def test_replace_stops_the_run_a_worker_thread_is_executing(make_job, settings):
    settings.JOBS_SIM_FAILURE_RATE = 0
    began = threading.Event()
    stopped: list[tuple[str, float]] = []

    class Long:
        """Runs until stopped (a minute at most), and says when it saw the stop."""

        def execute(self, ticket, context):
            began.set()
            context.stop.wait(60)
            stopped.append((context.reason, time.monotonic()))
            return Outcome(succeeded=True, log="stopped early\n")

    job = make_job(name="long", interval=1, interval_unit="hour", overlap_policy="replace")
    Job.objects.filter(pk=job.pk).update(next_run_at=timezone.now())
    scheduler = Scheduler(workers=2, executor=Long())
    scheduler.start_workers()
    try:
        scheduler.run_pass()
        assert began.wait(10)
        first = JobHistory.objects.get(job=job)
        assert first.status == RunStatus.RUNNING
        # The next occurrence comes while it runs.
        began.clear()
        Job.objects.filter(pk=job.pk).update(next_run_at=timezone.now())
        replaced_at = time.monotonic()
        scheduler.run_pass()
        wait_until(lambda: stopped, timeout=10)
        reason, when = stopped[0]
        assert reason == "cancelled"
        assert when - replaced_at < 3  # the heartbeat thread looks every second
        assert began.wait(10)  # the new run started
        first.refresh_from_db()
        assert first.status == RunStatus.CANCELLED
        assert "replaced by the run for" in first.log
        assert "stopped early" not in first.log  # the worker's result was not recorded
        second = JobHistory.objects.exclude(pk=first.pk).get(job=job)
        assert second.status == RunStatus.RUNNING
    finally:
        scheduler.context.stop.set()
        scheduler.handoff.heartbeater.wake()
        scheduler.shutdown()
