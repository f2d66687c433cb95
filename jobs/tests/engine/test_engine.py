"""The life of a run, one engine call at a time, with the clock in the test's hand."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from jobs import engine
from jobs.engine import claim
from jobs.engine.logs import safe_log
from jobs.models import Job, JobHistory, RunStatus, Trigger
from jobs.runs import RunResult
from jobs.tests.factories import NOW, WORKER

pytestmark = pytest.mark.django_db


def run_to_end(tickets, *, succeeded=True, worker=WORKER, took=timedelta(0), log="ok"):
    """Start and finish tickets as a worker would; returns the started ones."""
    started = engine.start(tickets, worker)
    now = timezone.now()
    engine.finish(
        [
            RunResult(
                ticket=t, succeeded=succeeded, log=log, started_at=now, finished_at=now + took
            )
            for t in started
        ],
        worker,
    )
    return started


def test_a_due_job_gets_one_pending_run_and_moves_to_its_next_occurrence(make_job, clock):
    job = make_job(interval=10, interval_unit="second")
    clock.move_to(job.next_run_at)
    tickets = engine.claim_due()
    assert [t.scheduled_for for t in tickets] == [NOW + timedelta(seconds=10)]
    run = JobHistory.objects.get()
    assert run.status == RunStatus.PENDING
    assert run.attempt == 1 and run.trigger == Trigger.SCHEDULE
    job.refresh_from_db()
    assert job.next_run_at == NOW + timedelta(seconds=20)


def test_a_job_not_yet_due_is_not_claimed(make_job, clock):
    make_job(interval=10, interval_unit="second")
    assert engine.claim_due() == []
    assert JobHistory.objects.count() == 0


def test_an_inactive_job_is_never_claimed(make_job, clock):
    make_job(is_active=False)
    clock.move_to(NOW + timedelta(days=1))
    assert engine.claim_due() == []


def test_claiming_the_same_moment_twice_creates_nothing_the_second_time(make_job, clock):
    job = make_job()
    clock.move_to(job.next_run_at)
    assert len(engine.claim_due()) == 1
    assert engine.claim_due() == []
    assert JobHistory.objects.count() == 1


def test_a_stale_next_run_cannot_create_a_second_first_attempt(make_job, clock):
    job = make_job()
    due = job.next_run_at
    clock.move_to(due)
    engine.claim_due()
    # Something (a restored backup, a buggy script) puts next_run_at back.
    Job.objects.filter(pk=job.pk).update(next_run_at=due)
    assert engine.claim_due() == []
    assert JobHistory.objects.filter(job=job, scheduled_for=due, attempt=1).count() == 1
    job.refresh_from_db()
    assert job.next_run_at == due + timedelta(seconds=10)


def test_a_once_job_runs_once_and_is_deactivated(make_job, clock):
    when = NOW + timedelta(minutes=5)
    job = make_job(schedule_type="once", scheduled_at=when)
    clock.move_to(when + timedelta(seconds=1))
    assert len(engine.claim_due()) == 1
    job.refresh_from_db()
    assert job.is_active is False and job.next_run_at is None
    clock.move_to(when + timedelta(days=1))
    assert engine.claim_due() == []
    assert JobHistory.objects.filter(job=job).count() == 1


def test_after_downtime_coalesce_runs_once_for_the_missed_occurrences(make_job, clock):
    job = make_job(interval=1, interval_unit="minute")
    clock.move_to(NOW + timedelta(hours=1, seconds=30))
    tickets = engine.claim_due()
    assert [t.scheduled_for for t in tickets] == [NOW + timedelta(hours=1)]
    job.refresh_from_db()
    assert job.next_run_at == NOW + timedelta(hours=1, minutes=1)


def test_after_downtime_skip_runs_nothing_and_waits_for_the_next_slot(make_job, clock):
    job = make_job(interval=1, interval_unit="minute", misfire_policy="skip")
    clock.move_to(NOW + timedelta(hours=1, seconds=30))
    assert engine.claim_due() == []
    job.refresh_from_db()
    assert job.next_run_at == NOW + timedelta(hours=1, minutes=1)


def test_claims_take_the_oldest_due_jobs_first_in_bounded_batches(make_job, clock):
    jobs = [make_job(name=f"j{i}", scheduled_at=NOW + timedelta(seconds=i)) for i in range(5)]
    clock.move_to(NOW + timedelta(seconds=10))
    first = engine.claim_due(limit=2)
    assert [t.job_id for t in first] == [jobs[0].id, jobs[1].id]
    assert len(engine.claim_due(limit=10)) == 3


def test_no_drift_over_100_occurrences_with_slow_runs_and_late_ticks(make_job, clock):
    step = timedelta(seconds=10)
    job = make_job(interval=10, interval_unit="second")
    anchor = job.anchor_at
    for k in range(100):
        # Each pass comes 0-4 s late and each run takes 9 s: neither moves the grid.
        clock.move_to(anchor + k * step + timedelta(seconds=k % 5))
        tickets = engine.claim_due()
        assert len(tickets) == 1
        run_to_end(tickets, took=timedelta(seconds=9))
    scheduled = list(
        JobHistory.objects.filter(job=job)
        .order_by("scheduled_for")
        .values_list("scheduled_for", flat=True)
    )
    assert scheduled == [anchor + k * step for k in range(100)]


def test_start_is_won_by_exactly_one_worker(make_job, clock):
    job = make_job()
    clock.move_to(job.next_run_at)
    tickets = engine.claim_due()
    assert engine.start(tickets, "a") == tickets
    assert engine.start(tickets, "b") == []
    assert JobHistory.objects.get().worker == "a"


def test_finish_records_the_outcome_on_the_run_and_the_job(make_job, clock):
    job = make_job()
    clock.move_to(job.next_run_at)
    started = run_to_end(engine.claim_due(), succeeded=False)
    run = JobHistory.objects.get(pk=started[0].run_id)
    assert run.status == RunStatus.FAILED and run.finished_at is not None and run.log == "ok"
    job.refresh_from_db()
    assert job.last_run_at == run.started_at and job.last_run_status == RunStatus.FAILED


def test_a_log_with_nul_bytes_and_lone_surrogates_is_stored_cleaned_with_its_batch(make_job, clock):
    # PostgreSQL's text columns refuse NUL, and a lone surrogate is not UTF-8: either
    # once failed the whole batch of results, and the runs stayed running until reaped.
    jobs = [make_job(name=f"job {i}") for i in range(3)]
    clock.move_to(jobs[0].next_run_at)
    started = run_to_end(engine.claim_due(), log="a\x00b \ud800 c \U0001f600 d")
    assert len(started) == 3
    runs = JobHistory.objects.filter(pk__in=[t.run_id for t in started])
    assert {run.status for run in runs} == {RunStatus.SUCCESS}
    assert {run.log for run in runs} == {"ab \ufffd c \U0001f600 d"}


def test_safe_log_keeps_clean_text_and_decodes_bytes():
    assert safe_log("plain\nlines\t") == "plain\nlines\t"
    assert safe_log("caf\u00e9") == "caf\u00e9"
    assert safe_log(b"bad \xff utf-8\x00") == "bad \ufffd utf-8"


def test_a_failed_run_with_retries_left_gets_a_next_attempt_after_a_backoff(make_job, clock):
    job = make_job(max_retries=2, retry_backoff_seconds=60)
    clock.move_to(job.next_run_at)
    first = run_to_end(engine.claim_due(), succeeded=False)[0]
    retry = JobHistory.objects.get(attempt=2)
    assert retry.status == RunStatus.PENDING and retry.trigger == Trigger.RETRY
    assert retry.scheduled_for == first.scheduled_for
    assert timedelta(seconds=30) <= retry.not_before - timezone.now() <= timedelta(seconds=60)
    # Not before its backoff is over...
    assert engine.ready_tickets() == []
    clock.move_to(retry.not_before)
    second = engine.ready_tickets()
    assert [t.attempt for t in second] == [2]
    run_to_end(second, succeeded=False)
    third = JobHistory.objects.get(attempt=3)
    assert timedelta(seconds=60) <= third.not_before - timezone.now() <= timedelta(seconds=120)
    clock.move_to(third.not_before)
    run_to_end(engine.ready_tickets(), succeeded=False)
    # ... and no fourth attempt: two retries were allowed.
    assert JobHistory.objects.filter(job=job).count() == 3


def test_a_failed_run_without_retries_is_final(make_job, clock):
    job = make_job()
    clock.move_to(job.next_run_at)
    run_to_end(engine.claim_due(), succeeded=False)
    assert JobHistory.objects.count() == 1


def test_the_reaper_fails_a_run_whose_worker_stopped_heartbeating_and_retries_it(
    make_job, clock, settings
):
    settings.JOBS_LEASE_SECONDS = 30
    job = make_job(max_retries=1, retry_backoff_seconds=0)
    clock.move_to(job.next_run_at)
    engine.start(engine.claim_due(), "dead-worker")
    clock.shift(timedelta(seconds=29))
    assert engine.reap() == 0  # still within the lease
    clock.shift(timedelta(seconds=2))
    assert engine.reap() == 1
    lost = JobHistory.objects.get(attempt=1)
    assert lost.status == RunStatus.FAILED and "worker lost" in lost.log
    retry = JobHistory.objects.get(attempt=2)
    assert retry.status == RunStatus.PENDING


def test_heartbeats_keep_a_long_run_from_being_reaped(make_job, clock, settings):
    settings.JOBS_LEASE_SECONDS = 30
    job = make_job()
    clock.move_to(job.next_run_at)
    tickets = engine.start(engine.claim_due(), "alive")
    for _ in range(10):
        clock.shift(timedelta(seconds=20))
        assert engine.heartbeat([t.run_key for t in tickets]) == 1
        assert engine.reap() == 0
    assert JobHistory.objects.get().status == RunStatus.RUNNING


def test_a_worker_that_comes_back_after_being_reaped_cannot_overwrite_the_verdict(
    make_job, clock, settings
):
    settings.JOBS_LEASE_SECONDS = 30
    job = make_job(max_retries=1, retry_backoff_seconds=0)
    clock.move_to(job.next_run_at)
    tickets = engine.start(engine.claim_due(), "slow")
    clock.shift(timedelta(minutes=5))
    engine.reap()
    now = timezone.now()
    recorded = engine.finish(
        [RunResult(ticket=tickets[0], succeeded=True, log="late", started_at=now, finished_at=now)],
        "slow",
    )
    assert recorded == 0
    assert JobHistory.objects.get(attempt=1).status == RunStatus.FAILED
    # The retry exists once: the late finish did not add another.
    assert JobHistory.objects.filter(attempt=2).count() == 1


def test_run_now_creates_a_run_that_may_start_at_once(make_job, clock):
    job = make_job()
    run = engine.run_now(job)
    assert run.trigger == Trigger.MANUAL and run.status == RunStatus.PENDING
    assert [t.run_id for t in engine.ready_tickets()] == [run.id]
    # Pressing twice in the same instant makes two runs, not an error.
    assert engine.run_now(job).id != run.id


def test_release_hands_a_started_run_back_to_pending(make_job, clock):
    job = make_job()
    clock.move_to(job.next_run_at)
    tickets = engine.start(engine.claim_due(), "w")
    assert engine.release(tickets, "w") == 1
    run = JobHistory.objects.get()
    assert run.status == RunStatus.PENDING and run.started_at is None and run.worker == ""


def test_next_wake_is_the_earliest_due_job_or_retry(make_job, clock):
    job = make_job(interval=1, interval_unit="hour")
    assert engine.next_wake_at(NOW) == job.next_run_at
    JobHistory.objects.create(
        job=job, scheduled_for=NOW, attempt=2, not_before=NOW + timedelta(minutes=5)
    )
    assert engine.next_wake_at(NOW) == NOW + timedelta(minutes=5)


@pytest.mark.skipif(
    "sqlite" not in __import__("django").conf.settings.DATABASES["default"]["ENGINE"],
    reason="the optimistic claim is SQLite's path",
)
def test_a_job_claimed_by_another_scheduler_after_it_was_read_is_not_claimed_twice(
    make_job, clock, monkeypatch
):
    job = make_job()
    due = job.next_run_at
    clock.move_to(due)
    plan_claims = claim._plan

    def plan_while_another_scheduler_claims(*args):
        plan = plan_claims(*args)
        # Between our read and our write, another scheduler claims the occurrence.
        JobHistory.objects.create(job=job, scheduled_for=due, not_before=due)
        Job.objects.filter(pk=job.pk).update(next_run_at=due + timedelta(seconds=10))
        return plan

    monkeypatch.setattr(claim, "_plan", plan_while_another_scheduler_claims)
    assert engine.claim_due() == []
    assert JobHistory.objects.count() == 1
    job.refresh_from_db()
    assert job.next_run_at == due + timedelta(seconds=10)


def test_a_claim_inserts_the_runs_its_pool_has_room_for_running_and_the_rest_pending(
    make_job, clock
):
    jobs = [make_job(name=f"j{i}") for i in range(4)]
    reports = make_job(name="reports", queue="reports")
    clock.move_to(jobs[0].next_run_at)
    offer = engine.StartNow("host:1/claim", 2, skip=frozenset({"reports"}))
    claimed = engine.claim_due_starting(start=offer)
    assert len(claimed.started) == 2 and len(claimed.pending) == 3
    assert reports.name in {t.job_name for t in claimed.pending}  # a limited queue: never
    started = JobHistory.objects.filter(status=RunStatus.RUNNING)
    assert {run.pk for run in started} == {t.run_id for t in claimed.started}
    for run in started:
        assert run.worker == "host:1/claim"
        assert run.started_at == run.heartbeat_at == timezone.now()
    assert set(
        JobHistory.objects.filter(status=RunStatus.PENDING).values_list("worker", flat=True)
    ) == {""}
    # Started already: another worker cannot start them again, their owner finishes them.
    assert engine.start(claimed.started, WORKER) == []
    now = timezone.now()
    results = [RunResult(t, True, "ok", now, now) for t in claimed.started]
    assert engine.finish(results, "host:1/claim") == 2
    # A second claim of the same moment inserts nothing, running or pending.
    assert engine.claim_due_starting(timezone.now(), start=offer) == ([], [])
    assert JobHistory.objects.count() == 5


def test_a_claim_that_starts_runs_inserts_nothing_while_paused(make_job, clock):
    job = make_job()
    clock.move_to(job.next_run_at)
    engine.pause(note="maintenance")
    claimed = engine.claim_due_starting(start=engine.StartNow("host:1/claim", 10))
    assert claimed == ([], []) and not JobHistory.objects.exists()


def test_runs_inserted_running_whose_process_died_are_reaped_and_retried(make_job, clock, settings):
    job = make_job(max_retries=1)
    clock.move_to(job.next_run_at)
    claimed = engine.claim_due_starting(start=engine.StartNow("dead:1/claim", 10))
    assert len(claimed.started) == 1
    clock.shift(timedelta(seconds=settings.JOBS_LEASE_SECONDS + 1))
    assert engine.reap() == 1
    first, retry = JobHistory.objects.order_by("attempt")
    assert first.status == RunStatus.FAILED and first.attempt == 1
    assert retry.status == RunStatus.PENDING and retry.attempt == 2
