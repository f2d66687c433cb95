"""Chains in the engine: which outcomes start which jobs, with what run, and what the
started job's overlap policy, pruning and deletion do to it.

Runs are driven one engine call at a time with the clock in the test's hand; the last
tests run real scheduler passes (threads, and the Huey path in this process).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from jobs import engine
from jobs.executors import SimulatedExecutor
from jobs.models import Job, JobHistory, RunStatus, Trigger
from jobs.runs import RunResult
from jobs.runtime.pool import HueyHandoff
from jobs.runtime.retention import Policy, prune
from jobs.runtime.scheduler import Scheduler
from jobs.tests.factories import NOW, WORKER, make_job, make_run, ticket

pytestmark = pytest.mark.django_db

MICROSECOND = timedelta(microseconds=1)


def chain(job: Job, *, on_success: list[Job] = (), on_failure: list[Job] = ()) -> Job:  # type: ignore[assignment]
    job.set_chains(on_success=on_success, on_failure=on_failure)
    job.full_clean()
    job.save()
    return job


def running(job: Job, **fields) -> JobHistory:  # type: ignore[no-untyped-def]
    """A run of `job` in progress on WORKER."""
    return make_run(job, status=RunStatus.RUNNING, **fields)


def finish(*outcomes: tuple[JobHistory, bool], at: datetime | None = None) -> int:
    """Record the outcomes of running runs in one batch, as their worker would, each
    finishing at `at` (default now)."""
    at = at or timezone.now()
    return engine.finish(
        [RunResult(ticket(run), ok, "done", started_at=at, finished_at=at) for run, ok in outcomes],
        WORKER,
    )


def chained() -> list[JobHistory]:
    return list(JobHistory.objects.filter(trigger=Trigger.CHAIN).order_by("scheduled_for"))


@pytest.fixture
def jobs(clock) -> dict[str, Job]:
    """A job "backup" starting "report" and "index" when it succeeds and "page" when it
    fails for good; all four allow overlap (the default)."""
    made = {name: make_job(name=name) for name in ("report", "index", "page")}
    made["backup"] = chain(
        make_job(name="backup", max_retries=1),
        on_success=[made["report"], made["index"]],
        on_failure=[made["page"]],
    )
    return made


# --- which outcome starts which jobs -------------------------------------------------------


def test_a_success_starts_the_on_success_jobs_each_linked_to_its_cause(jobs):
    cause = running(jobs["backup"])
    finished_at = timezone.now() + timedelta(seconds=3)
    assert finish((cause, True), at=finished_at) == 1
    runs = chained()
    assert {run.job.name for run in runs} == {"report", "index"}
    for run in runs:
        assert run.status == RunStatus.PENDING
        assert run.caused_by_id == cause.pk
        assert run.attempt == 1
        # Scheduled for the moment its cause finished, and ready then.
        assert run.scheduled_for == run.not_before == finished_at
    # The scheduler's ready() query hands them to the workers like any pending run.
    assert set(JobHistory.objects.ready(finished_at)) == set(runs)
    assert list(cause.chained_runs.order_by("job__name")) == sorted(runs, key=lambda r: r.job.name)


def test_a_failure_starts_the_on_failure_jobs_only_after_the_last_retry(jobs, clock):
    first = running(jobs["backup"])  # max_retries=1: one retry is left
    finish((first, False))
    assert chained() == []
    retry = JobHistory.objects.get(job=jobs["backup"], attempt=2)
    assert retry.status == RunStatus.PENDING and retry.trigger == Trigger.RETRY

    clock.move_to(retry.not_before)
    assert engine.start(engine.ready_tickets(), WORKER)
    retry.refresh_from_db()
    finish((retry, False))
    (paged,) = chained()
    assert paged.job == jobs["page"]
    assert paged.caused_by_id == retry.pk
    # No third attempt: the failure is for good.
    assert not JobHistory.objects.filter(job=jobs["backup"], attempt=3).exists()


def test_a_run_the_reaper_fails_as_lost_starts_the_on_failure_jobs(jobs, clock, settings):
    settings.JOBS_LEASE_SECONDS = 30
    lost = running(jobs["backup"], attempt=2)  # the last attempt
    JobHistory.objects.filter(pk=lost.pk).update(heartbeat_at=NOW - timedelta(seconds=31))
    assert engine.reap() == 1
    (paged,) = chained()
    assert (paged.job, paged.caused_by_id, paged.scheduled_for) == (jobs["page"], lost.pk, NOW)


def test_a_run_the_reaper_fails_past_its_timeout_starts_the_on_failure_jobs(jobs, clock, settings):
    settings.JOBS_LEASE_SECONDS = 30
    Job.objects.filter(pk=jobs["backup"].pk).update(timeout_seconds=5, max_retries=0)
    jobs["backup"].refresh_from_db()
    stuck = running(jobs["backup"], ago=timedelta(seconds=40))
    JobHistory.objects.filter(pk=stuck.pk).update(heartbeat_at=NOW)  # its worker lives
    assert engine.reap() == 1
    (paged,) = chained()
    assert (paged.job, paged.caused_by_id) == (jobs["page"], stuck.pk)


def test_a_lost_run_with_a_retry_left_starts_nothing(jobs, clock):
    lost = running(jobs["backup"])  # attempt 1 of 2
    JobHistory.objects.filter(pk=lost.pk).update(heartbeat_at=NOW - timedelta(hours=1))
    assert engine.reap() == 1
    assert chained() == []


def test_a_cancelled_run_starts_nothing(jobs):
    run = running(jobs["backup"], attempt=2)
    engine.cancel_run(run, by="olivia")
    # Its worker's result comes too late: the run is no longer its own.
    assert finish((run, True)) == 0
    assert chained() == []


def test_a_disabled_job_is_not_started_and_the_log_says_so(jobs, caplog):
    Job.objects.filter(pk=jobs["report"].pk).update(is_active=False)
    with caplog.at_level(logging.INFO, logger="jobs.engine"):
        finish((running(jobs["backup"]), True))
    assert [run.job.name for run in chained()] == ["index"]
    assert "job 'report' is disabled" in caplog.text


def test_chained_runs_chain_on_when_they_finish(jobs):
    chain(jobs["report"], on_failure=[jobs["page"]])
    finish((running(jobs["backup"]), True))
    report = JobHistory.objects.get(job=jobs["report"])
    JobHistory.objects.filter(pk=report.pk).update(
        status=RunStatus.RUNNING, worker=WORKER, started_at=NOW, heartbeat_at=NOW
    )
    finish((report, False))
    assert JobHistory.objects.get(job=jobs["page"]).caused_by_id == report.pk


# --- the same instant ----------------------------------------------------------------------


def test_two_causes_finishing_in_the_same_batch_and_instant_both_start_their_run(jobs):
    other = chain(make_job(name="mirror"), on_success=[jobs["report"]])
    first, second = running(jobs["backup"]), running(other)
    finish((first, True), (second, True), at=NOW)
    reports = list(JobHistory.objects.filter(job=jobs["report"]).order_by("scheduled_for"))
    assert [run.scheduled_for for run in reports] == [NOW, NOW + MICROSECOND]
    assert {run.caused_by_id for run in reports} == {first.pk, second.pk}


def test_two_causes_finishing_at_the_same_instant_in_two_transactions_both_start_theirs(jobs):
    other = chain(make_job(name="mirror"), on_success=[jobs["report"]])
    first, second = running(jobs["backup"]), running(other)
    finish((first, True), at=NOW)
    # The second transaction finds the occurrence taken and moves on a microsecond.
    finish((second, True), at=NOW)
    reports = list(JobHistory.objects.filter(job=jobs["report"]).order_by("scheduled_for"))
    assert [(r.scheduled_for, r.caused_by_id) for r in reports] == [
        (NOW, first.pk),
        (NOW + MICROSECOND, second.pk),
    ]


def test_a_chained_run_landing_on_another_run_of_its_job_moves_on_and_leaves_that_one(jobs):
    manual = engine.run_now(jobs["report"], now=NOW)
    finish((running(jobs["backup"]), True), at=NOW)
    report = JobHistory.objects.get(job=jobs["report"], trigger=Trigger.CHAIN)
    assert report.scheduled_for == NOW + MICROSECOND
    manual.refresh_from_db()
    assert (manual.trigger, manual.scheduled_for, manual.status) == ("manual", NOW, "pending")


# --- the started job's overlap policy ------------------------------------------------------


def test_allow_starts_the_chained_run_beside_the_jobs_running_one(jobs):
    busy = running(jobs["report"])
    finish((running(jobs["backup"]), True))
    report = JobHistory.objects.get(job=jobs["report"], trigger=Trigger.CHAIN)
    assert report.status == RunStatus.PENDING
    busy.refresh_from_db()
    assert busy.status == RunStatus.RUNNING


def test_forbid_records_the_chained_run_as_skipped_while_the_job_runs(jobs):
    Job.objects.filter(pk=jobs["report"].pk).update(overlap_policy="forbid")
    busy = running(jobs["report"])
    cause = running(jobs["backup"])
    finish((cause, True))
    skipped = JobHistory.objects.get(job=jobs["report"], trigger=Trigger.CHAIN)
    assert skipped.status == RunStatus.SKIPPED
    assert skipped.caused_by_id == cause.pk
    assert f"its run {busy.pk} is still running" in skipped.log
    assert "overlap policy: forbid" in skipped.log
    assert skipped.finished_at == timezone.now() and skipped.started_at is None
    assert Job.objects.get(pk=jobs["report"].pk).last_run_status == RunStatus.SKIPPED
    # The other chained job allows overlap: it runs.
    assert JobHistory.objects.get(job=jobs["index"]).status == RunStatus.PENDING


def test_forbid_runs_the_first_of_two_chained_runs_of_one_batch_and_skips_the_second(jobs):
    Job.objects.filter(pk=jobs["report"].pk).update(overlap_policy="forbid")
    other = chain(make_job(name="mirror"), on_success=[jobs["report"]])
    first, second = running(jobs["backup"]), running(other)
    engine.finish(
        [
            RunResult(ticket(first), True, "", NOW, NOW),
            RunResult(ticket(second), True, "", NOW, NOW + timedelta(seconds=1)),
        ],
        WORKER,
    )
    reports = list(JobHistory.objects.filter(job=jobs["report"]).order_by("scheduled_for"))
    assert [(r.status, r.caused_by_id) for r in reports] == [
        (RunStatus.PENDING, first.pk),
        (RunStatus.SKIPPED, second.pk),
    ]


def test_replace_cancels_the_jobs_running_run_for_the_chained_one(jobs):
    Job.objects.filter(pk=jobs["report"].pk).update(overlap_policy="replace")
    busy = running(jobs["report"])
    finish((running(jobs["backup"]), True))
    report = JobHistory.objects.get(job=jobs["report"], trigger=Trigger.CHAIN)
    assert report.status == RunStatus.PENDING
    busy.refresh_from_db()
    assert busy.status == RunStatus.CANCELLED
    assert "overlap policy: replace" in busy.log


# --- what outlives what --------------------------------------------------------------------


def test_pruning_the_cause_keeps_the_chained_run(jobs, clock):
    cause = make_run(jobs["backup"], at=NOW - timedelta(days=10), status=RunStatus.RUNNING)
    finish((cause, True))
    report = JobHistory.objects.get(job=jobs["report"])
    # By age: the cause is 10 days old, the chained run new.
    assert prune(NOW, policy=Policy(max_age=timedelta(days=5))).deleted == 1
    report.refresh_from_db()
    assert report.caused_by_id is None
    assert not JobHistory.objects.filter(pk=cause.pk).exists()


def test_pruning_a_cause_beyond_the_runs_its_job_keeps_keeps_the_chained_run(jobs, clock):
    cause = make_run(jobs["backup"], at=NOW - timedelta(hours=2), status=RunStatus.RUNNING)
    finish((cause, True))
    make_run(jobs["backup"], ago=timedelta(hours=1))
    assert prune(NOW, policy=Policy(keep_per_job=1)).deleted == 1
    assert JobHistory.objects.get(job=jobs["report"]).caused_by_id is None


def test_deleting_the_causes_job_keeps_the_chained_run(jobs):
    cause = running(jobs["backup"])
    finish((cause, True))
    jobs["backup"].delete()
    report = JobHistory.objects.get(job=jobs["report"])
    assert report.caused_by_id is None


# --- what jobs without chains pay ----------------------------------------------------------


def chain_statements(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries if "_on_success" in q["sql"] or "caused_by_id" in q["sql"]]


def test_a_batch_finished_where_no_job_has_chains_costs_one_small_read(clock):
    runs = [running(make_job(name=f"plain {i}")) for i in range(5)]
    with CaptureQueriesContext(connection) as queries:
        finish(*((run, True) for run in runs))
    (only,) = chain_statements(queries)
    assert "EXISTS" in only and "IN (" not in only
    assert chained() == []


def test_a_batch_of_jobs_without_chains_reads_which_have_some_and_writes_nothing(jobs):
    runs = [running(make_job(name=f"plain {i}")) for i in range(5)]
    with CaptureQueriesContext(connection) as queries:
        finish(*((run, True) for run in runs))
    exists, which = chain_statements(queries)
    assert "EXISTS" in exists and "IN (" in which and "JOIN" not in which
    assert chained() == []


def test_a_job_deleted_between_the_read_and_the_write_is_not_started(jobs, monkeypatch):
    from jobs.engine import chains

    read = chains.lookup

    def then_deleted(*args):  # type: ignore[no-untyped-def]
        found = read(*args)
        jobs["report"].delete()  # as another process might, right after the read
        return found

    monkeypatch.setattr(chains, "lookup", then_deleted)
    cause = running(jobs["backup"])
    assert finish((cause, True)) == 1
    assert [run.job.name for run in chained()] == ["index"]
    cause.refresh_from_db()
    assert cause.status == RunStatus.SUCCESS


def test_failures_with_retries_left_read_no_chains_at_all(clock):
    runs = [running(make_job(name=f"plain {i}", max_retries=2)) for i in range(3)]
    with CaptureQueriesContext(connection) as queries:
        finish(*((run, False) for run in runs))
    assert not [q for q in queries if "_on_success" in q["sql"]]


# --- real passes ---------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_scheduler_pass_runs_the_chain_to_its_end(make_job, clock, instant):
    last = make_job(name="last", interval_unit="day")
    middle = chain(make_job(name="middle", interval_unit="day"), on_success=[last])
    first = chain(make_job(name="first"), on_success=[middle])
    clock.move_to(first.next_run_at)
    Scheduler(workers=2, executor=SimulatedExecutor(min_seconds=0, max_seconds=0)).run_once()
    by_job = {run.job.name: run for run in JobHistory.objects.select_related("job")}
    assert by_job.keys() == {"first", "middle", "last"}
    assert all(run.status == RunStatus.SUCCESS for run in by_job.values())
    assert by_job["middle"].caused_by_id == by_job["first"].pk
    assert by_job["last"].caused_by_id == by_job["middle"].pk


@pytest.mark.django_db(transaction=True)
def test_chained_runs_go_through_huey_too(make_job, clock, instant):
    from huey.contrib.djhuey import HUEY

    from jobs.huey.tasks import send_runs

    was, HUEY.immediate = HUEY.immediate, True
    try:
        report = make_job(name="report", interval_unit="day")
        backup = chain(make_job(name="backup"), on_success=[report])
        clock.move_to(backup.next_run_at)
        # The pass hands the backup to Huey (which executes it at once) and its run
        # chains the report; the same pass then hands that out as any ready pending run.
        stats = Scheduler(handoff=HueyHandoff(send_runs)).run_pass()
        assert (stats.claimed, stats.fed) == (1, 2)
    finally:
        HUEY.immediate = was
    run = JobHistory.objects.get(job=report)
    assert (run.status, run.trigger) == (RunStatus.SUCCESS, Trigger.CHAIN)
    assert run.dispatched_at is not None


def test_a_chained_run_keeps_the_arguments_of_its_job_as_a_scheduled_run_does(clock):
    report = make_job(
        name="report",
        executor="python",
        command="jobs.example_tasks.say_hello",
        arguments={"name": "Ada", "times": 2},
    )
    simulated = make_job(name="simulated")
    backup = chain(make_job(name="backup"), on_success=[report, simulated])
    finish((running(backup), True))
    runs = {run.job.name: run for run in chained()}
    assert runs["report"].arguments == {"name": "Ada", "times": 2}
    assert runs["simulated"].arguments is None  # as a simulated job's scheduled runs
