"""Timeouts: a run past its job's timeout is stopped and fails ("timed out"), and is
retried per the job's policy; a run its worker cannot stop is failed by the reaper."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from jobs import engine
from jobs.executors import ExecutionContext, Outcome
from jobs.models import Job, JobHistory, RunStatus
from jobs.runs import RunResult
from jobs.runtime.scheduler import Scheduler
from jobs.runtime.worker import Heartbeater, execute
from jobs.tests import factories
from jobs.tests.factories import NOW, WORKER


def due_now(job: Job) -> None:
    Job.objects.filter(pk=job.pk).update(next_run_at=timezone.now())


@pytest.mark.django_db(transaction=True)
def test_a_run_past_its_timeout_is_stopped_and_fails_without_retries(make_job, settings):
    settings.JOBS_SIM_FAILURE_RATE = 0
    # The job's own simulation: a run of a minute, against a timeout of one second.
    job = make_job(timeout_seconds=1, sim_min_seconds=60, sim_max_seconds=60)
    due_now(job)
    began = time.monotonic()
    Scheduler(workers=1).run_once()
    took = time.monotonic() - began
    run = JobHistory.objects.get(job=job)
    assert run.status == RunStatus.FAILED
    assert "interrupted: the run timed out" in run.log
    assert "timed out after 1 s" in run.log
    # Stopped, not waited out: well short of the minute, with room for a loaded machine.
    assert run.duration < timedelta(seconds=30)
    assert took < 30
    assert JobHistory.objects.filter(job=job).count() == 1  # no retries asked for
    job.refresh_from_db()
    assert job.last_run_status == RunStatus.FAILED


@pytest.mark.django_db(transaction=True)
def test_a_run_that_times_out_is_retried_and_each_attempt_has_the_same_limit(make_job, settings):
    settings.JOBS_SIM_FAILURE_RATE = 0
    job = make_job(
        timeout_seconds=1,
        sim_min_seconds=60,
        sim_max_seconds=60,
        max_retries=1,
        retry_backoff_seconds=0,
    )
    due_now(job)
    Scheduler(workers=1).run_once()  # runs the retry too: it is ready at once
    attempts = list(JobHistory.objects.filter(job=job).order_by("attempt"))
    assert [(a.attempt, a.status) for a in attempts] == [(1, "failed"), (2, "failed")]
    assert all("timed out after 1 s" in a.log for a in attempts)


@pytest.mark.django_db(transaction=True)
def test_a_run_within_its_timeout_is_untouched(make_job, instant):
    job = make_job(timeout_seconds=30)
    due_now(job)
    Scheduler(workers=1).run_once()
    run = JobHistory.objects.get(job=job)
    assert run.status == RunStatus.SUCCESS
    assert "timed out" not in run.log


def test_an_executor_that_returns_late_without_being_stopped_has_still_timed_out():
    class Sleepy:
        def execute(self, ticket, context):
            time.sleep(1.2)  # ignores context.stop
            return Outcome(succeeded=True, log="all good\n")

    sleepy = factories.ticket(scheduled_for=datetime(2026, 3, 1, tzinfo=UTC), timeout_seconds=1)
    result = execute(Sleepy(), sleepy, ExecutionContext())
    assert result.succeeded is False
    assert result.log == "all good\ntimed out after 1 s: the run was stopped.\n"


@pytest.mark.django_db
def test_the_reaper_fails_a_run_its_worker_cannot_stop(make_job, clock, settings):
    settings.JOBS_LEASE_SECONDS = 30
    job = make_job(timeout_seconds=60, max_retries=1, retry_backoff_seconds=0)
    clock.move_to(job.next_run_at)
    tickets = engine.start(engine.claim_due(), WORKER)
    started_at = timezone.now()
    # The worker is alive and keeps the run's heartbeat fresh, but its executor ignores
    # the stop: a lease after the timeout, the reaper takes the run.
    for seconds in (60, 89):
        clock.move_to(started_at + timedelta(seconds=seconds))
        engine.heartbeat([tickets[0].run_key])
        assert engine.reap() == 0
    clock.move_to(started_at + timedelta(seconds=91))
    engine.heartbeat([tickets[0].run_key])
    assert engine.reap() == 1
    run = JobHistory.objects.get(pk=tickets[0].run_id)
    assert run.status == RunStatus.FAILED
    assert "timed out: still running 91 s after it started" in run.log
    assert "its worker could not stop it" in run.log
    retry = JobHistory.objects.get(job=job, attempt=2)
    assert retry.status == RunStatus.PENDING
    # When the executor finally returns, its result does not overwrite the verdict.
    now = timezone.now()
    assert engine.finish([RunResult(tickets[0], True, "late", now, now)], WORKER) == 0
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    job.refresh_from_db()
    assert job.last_run_status == RunStatus.FAILED


@pytest.mark.django_db
def test_the_reaper_leaves_running_runs_without_a_timeout_alone(make_job, clock):
    job = make_job()
    clock.move_to(job.next_run_at)
    tickets = engine.start(engine.claim_due(), WORKER)
    clock.move_to(NOW + timedelta(days=2))
    engine.heartbeat([tickets[0].run_key])
    assert engine.reap() == 0
    assert JobHistory.objects.get().status == RunStatus.RUNNING


@pytest.mark.django_db
def test_tickets_carry_the_jobs_timeout_and_simulation(make_job, clock):
    job = make_job(timeout_seconds=5, sim_failure_rate=1, sim_min_seconds=0.5, sim_max_seconds=2)
    clock.move_to(job.next_run_at)
    (claimed,) = engine.claim_due()
    (ready,) = engine.ready_tickets()
    (handed,) = engine.tickets_for([claimed.run_key])
    for ticket in (claimed, ready, handed):
        assert (
            ticket.timeout_seconds,
            ticket.sim_failure_rate,
            ticket.sim_min_seconds,
            ticket.sim_max_seconds,
        ) == (5, 1.0, 0.5, 2.0)


def test_the_heartbeat_thread_stops_a_run_at_its_deadline_and_all_runs_at_shutdown():
    heartbeater = Heartbeater(interval=60).start()
    try:
        worker_context = ExecutionContext()
        timed, other = ExecutionContext(), ExecutionContext()
        began = time.monotonic()
        heartbeater.begin("a" * 32, timed, 0.3, worker_context)
        heartbeater.begin("b" * 32, other, None, worker_context)
        assert timed.stop.wait(5)
        assert 0.25 < time.monotonic() - began < 2
        assert timed.reason == "timeout"
        assert not other.stop.is_set()  # only the run past its deadline
        worker_context.stop.set()
        heartbeater.wake()
        assert other.stop.wait(5)
        assert other.reason == "shutdown"
        assert other.stop_words() == "the worker was shutting down"
    finally:
        heartbeater.stop()
