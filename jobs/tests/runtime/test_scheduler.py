"""The scheduler's pass and pool, in this process."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from jobs import engine
from jobs.executors import Outcome, SimulatedExecutor
from jobs.models import Job, JobHistory, RunStatus
from jobs.runtime.scheduler import Scheduler
from jobs.tests.factories import NOW
from jobs.tests.processes import wait_until


class ExplodesFor:
    """An executor that raises for one job and succeeds for the others."""

    def __init__(self, job_name: str) -> None:
        self.job_name = job_name

    def execute(self, ticket, context):
        if ticket.job_name == self.job_name:
            raise RuntimeError("disk on fire")
        return Outcome(succeeded=True, log="fine")


@pytest.mark.django_db(transaction=True)
def test_one_pass_runs_every_due_job_to_the_end(make_job, clock, instant):
    for i in range(30):
        make_job(name=f"job {i}", interval=1, interval_unit="minute")
    clock.move_to(NOW + timedelta(minutes=1))
    scheduler = Scheduler(workers=3)
    stats = scheduler.run_once()
    assert stats.claimed == 30
    assert JobHistory.objects.filter(status=RunStatus.SUCCESS).count() == 30
    assert not JobHistory.objects.exclude(status=RunStatus.SUCCESS).exists()
    # The idle pool had room for some: the claim inserted those running for it (no start
    # UPDATE), and a worker finished them under the pool's name.
    owners = set(JobHistory.objects.values_list("worker", flat=True))
    assert scheduler.handoff.owner in owners


@pytest.mark.django_db(transaction=True)
def test_a_job_whose_executor_raises_is_recorded_as_failed_and_the_loop_goes_on(make_job, clock):
    make_job(name="broken")
    for i in range(5):
        make_job(name=f"fine {i}")
    clock.move_to(NOW + timedelta(seconds=10))
    Scheduler(workers=2, executor=ExplodesFor("broken")).run_once()
    broken = JobHistory.objects.get(job__name="broken")
    assert broken.status == RunStatus.FAILED
    assert "RuntimeError: disk on fire" in broken.log
    assert JobHistory.objects.filter(status=RunStatus.SUCCESS).count() == 5


@pytest.mark.django_db(transaction=True)
def test_a_once_job_runs_once_through_the_scheduler(make_job, clock, instant):
    job = make_job(schedule_type="once", scheduled_at=NOW + timedelta(seconds=5))
    clock.move_to(NOW + timedelta(seconds=6))
    Scheduler(workers=1).run_once()
    clock.move_to(NOW + timedelta(hours=1))
    Scheduler(workers=1).run_once()
    assert JobHistory.objects.filter(job=job).count() == 1
    job.refresh_from_db()
    assert job.is_active is False


@pytest.mark.django_db(transaction=True)
def test_the_scheduler_wakes_for_a_due_job_instead_of_waiting_for_the_tick(make_job, instant):
    # Real time: the job is due in half a second, the tick is a minute.
    due = timezone.now() + timedelta(milliseconds=500)
    job = make_job(schedule_type="once", scheduled_at=due)
    scheduler = Scheduler(workers=1, tick=60, executor=SimulatedExecutor())
    thread = threading.Thread(target=scheduler.serve)
    thread.start()
    try:
        run = wait_until(
            lambda: JobHistory.objects.filter(job=job, status=RunStatus.SUCCESS).first(),
            timeout=20,
        )
    finally:
        scheduler.request_stop()
        thread.join(timeout=30)
    assert not thread.is_alive()
    assert run.started_at - due < timedelta(seconds=10)  # far less than the 60 s tick


@pytest.mark.django_db(transaction=True)
def test_stopping_lets_in_flight_runs_finish(make_job, clock, settings):
    settings.JOBS_SIM_FAILURE_RATE = 0
    make_job(name="slow")
    clock.move_to(NOW + timedelta(seconds=10))
    started = threading.Event()

    class Slow:
        def execute(self, ticket, context):
            started.set()
            # Finishes on its own well within the grace period.
            context.stop.wait(0.3)
            return Outcome(succeeded=not context.stop.is_set(), log="done")

    scheduler = Scheduler(workers=1, executor=Slow())
    scheduler.start_workers()
    scheduler.run_pass()
    assert started.wait(10)
    scheduler.shutdown()
    assert JobHistory.objects.get().status == RunStatus.SUCCESS


@pytest.mark.django_db(transaction=True)
def test_runs_still_going_after_the_grace_period_are_interrupted_and_retried(
    make_job, clock, settings
):
    settings.JOBS_SHUTDOWN_GRACE_SECONDS = 0.2
    make_job(name="endless", max_retries=1, retry_backoff_seconds=0)
    clock.move_to(NOW + timedelta(seconds=10))
    started = threading.Event()

    class Endless:
        def execute(self, ticket, context):
            started.set()
            context.stop.wait(60)
            return Outcome(succeeded=False, log="interrupted")

    scheduler = Scheduler(workers=1, executor=Endless())
    scheduler.start_workers()
    scheduler.run_pass()
    assert started.wait(10)
    scheduler.shutdown()
    first = JobHistory.objects.get(attempt=1)
    assert first.status == RunStatus.FAILED and first.log == "interrupted"
    assert JobHistory.objects.get(attempt=2).status == RunStatus.PENDING
    assert Job.objects.get().last_run_status == RunStatus.FAILED


@pytest.mark.django_db(transaction=True)
def test_pending_runs_are_fed_to_a_pool_of_32_workers(make_job, clock, instant):
    # Runs waiting as pending rows (retries, "run now", runs another scheduler handed
    # back) are polled only while the queue has room; with 32 workers the threshold
    # once equalled the queue's whole size, so they waited forever.
    job = make_job()
    for _ in range(3):
        engine.run_now(job)
        clock.shift(timedelta(seconds=1))
    stats = Scheduler(workers=32).run_once()
    assert stats.fed == 3
    assert JobHistory.objects.filter(status=RunStatus.SUCCESS).count() == 3


class AdvancesTheClock:
    """Each run takes a second of (frozen) time: jobs keep coming due while it works."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self.runs = 0
        self.lock = threading.Lock()
        self.scheduler: Scheduler | None = None

    def execute(self, ticket, context):
        with self.lock:
            self.runs += 1
            self.clock.shift(timedelta(seconds=1))
            if self.runs == 50 and self.scheduler:
                self.scheduler.request_stop()  # a bound for a scheduler that never ends
        return Outcome(succeeded=True, log="")


@pytest.mark.django_db(transaction=True)
def test_once_runs_what_was_due_when_it_started_and_ends_while_jobs_keep_coming_due(
    make_job, clock
):
    for i in range(5):
        make_job(name=f"every second {i}", interval=1, interval_unit="second")
    clock.move_to(NOW + timedelta(seconds=10))
    executor = AdvancesTheClock(clock)
    executor.scheduler = Scheduler(workers=2, executor=executor)
    stats = executor.scheduler.run_once()
    # One run per job (the misfire policy coalesces the missed seconds), and no more:
    # the runs moved the clock 5 s on, but what came due meanwhile is the next run's.
    assert stats.claimed == 5
    assert executor.runs == 5
    assert JobHistory.objects.count() == 5


@pytest.mark.django_db(transaction=True)
def test_runs_inserted_running_but_not_begun_go_back_to_pending_at_shutdown(make_job, clock):
    for i in range(3):
        make_job(name=f"job {i}")
    clock.move_to(NOW + timedelta(minutes=1))
    pool = Scheduler(workers=2).handoff  # its threads never started: the runs stay queued
    claimed = engine.claim_due_starting(start=engine.StartNow(pool.owner, 10))
    assert len(claimed.started) == 3
    assert pool.hand_started(claimed.started) == 3
    pool.stop(grace=0)
    runs = JobHistory.objects.all()
    assert {(run.status, run.worker, run.started_at) for run in runs} == {
        (RunStatus.PENDING, "", None)
    }
    assert [t.job_name for t in engine.ready_tickets()] != []  # any scheduler takes them
