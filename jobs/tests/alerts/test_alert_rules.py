"""The alert rules: failing repeatedly (alert_after_failures, the streak, the recovery
notice) and running long (expected_seconds or the learned 95th percentile): each alert
once per incident, not again until recovery, also with several connections racing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext

from jobs import alerts, engine
from jobs.alerts import InlineDispatcher, Notice, running_long
from jobs.alerts.running_long import LearnedLimits, check_running_long, learned_limit, p95
from jobs.models import Job, JobHistory, NotificationAttempt, RunStatus
from jobs.runs import RunResult
from jobs.runtime.pool import HueyHandoff
from jobs.runtime.scheduler import Scheduler
from jobs.sql import store
from jobs.tests.api_helpers import Hook, webhook_server
from jobs.tests.factories import NOW, WORKER, make_job, make_run, ticket

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def local_hooks(settings):
    """127.0.0.1 is internal: allowed as a receiver for these tests (jobs/outbound/rules.py)."""
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.JOBS_ALERT_BACKOFF_SECONDS = 0


@pytest.fixture
def hook() -> Iterator[Hook]:
    """A local webhook receiver; alerts are delivered in the test's thread on commit."""
    previous = alerts.use_dispatcher(InlineDispatcher(wait=lambda seconds: False))
    try:
        with webhook_server() as receiver:
            yield receiver
    finally:
        alerts.use_dispatcher(previous)


@pytest.fixture(autouse=True)
def fresh_learned_limits():
    running_long.learned_limits.clear()
    yield
    running_long.learned_limits.clear()


def events(hook: Hook) -> list[tuple[str, int]]:
    return [(p["event"], p.get("failures_in_a_row", 0)) for p in hook.received]


def watched(hook: Hook, **fields) -> Job:
    return make_job(notify_on_failure=True, notify_on_recovery=True, webhook_url=hook.url, **fields)


class Occurrences:
    """Runs of a job taken through the engine (run now, start, finish), each attempt an
    hour after the previous one so that every retry's backoff is over."""

    def __init__(self, job: Job, capture) -> None:
        self.job = job
        self.capture = capture
        self.at = NOW

    def attempt(self, succeeded: bool) -> JobHistory:
        self.at += timedelta(hours=1)
        tickets = [t for t in engine.ready_tickets(self.at) if t.job_key == self.job.pk.hex]
        assert len(tickets) == 1, tickets
        started = engine.start(tickets, WORKER, now=self.at)
        result = RunResult(started[0], succeeded, "", self.at, self.at + timedelta(seconds=1))
        with self.capture(execute=True):
            engine.finish([result], WORKER)
        return JobHistory.objects.get(pk=started[0].run_id)

    def run(self, *outcomes: bool) -> list[JobHistory]:
        """One occurrence: a new run, then its attempts (retries) ending as `outcomes`."""
        engine.run_now(self.job, now=self.at + timedelta(minutes=30))
        return [self.attempt(succeeded) for succeeded in outcomes]

    def streak(self) -> int:
        self.job.refresh_from_db()
        return self.job.consecutive_failures


F, S = False, True


# --- failing repeatedly ---------------------------------------------------------------------


def test_by_default_the_first_failure_of_each_streak_alerts_and_a_success_ends_it(
    hook, django_capture_on_commit_callbacks
):
    runs = Occurrences(watched(hook), django_capture_on_commit_callbacks)
    for outcome in (F, F, F):
        runs.run(outcome)
    assert events(hook) == [("failure", 1)]
    assert runs.streak() == 3
    runs.run(S)
    runs.run(S)
    assert events(hook) == [("failure", 1), ("recovery", 3)]
    assert runs.streak() == 0
    runs.run(F)
    assert events(hook)[-1] == ("failure", 1)  # a new streak alerts again


def test_alert_after_three_failures_alerts_at_the_third_and_recovers_once(
    hook, django_capture_on_commit_callbacks
):
    runs = Occurrences(watched(hook, alert_after_failures=3), django_capture_on_commit_callbacks)
    for outcome in (F, F, S):  # a streak of two: no alert, and so no recovery either
        runs.run(outcome)
    assert events(hook) == []
    for outcome in (F, F, F, F, F):
        runs.run(outcome)
    assert events(hook) == [("failure", 3)]
    runs.run(S)
    assert events(hook) == [("failure", 3), ("recovery", 5)]
    assert runs.streak() == 0


def test_retries_of_one_occurrence_count_once_and_a_retry_that_succeeds_recovers(
    hook, django_capture_on_commit_callbacks
):
    job = watched(hook, max_retries=2, retry_backoff_seconds=1)
    runs = Occurrences(job, django_capture_on_commit_callbacks)
    first = runs.run(F, F, F)
    assert [r.attempt for r in first] == [1, 2, 3]
    assert events(hook) == [("failure", 1)]  # the last attempt, not each one
    assert hook.received[0]["run"]["id"] == str(first[-1].pk)
    assert runs.streak() == 1
    runs.run(F, S)  # failed once, retried, succeeded: the occurrence did not fail
    assert events(hook) == [("failure", 1), ("recovery", 1)]
    assert runs.streak() == 0
    runs.run(F, S)
    assert len(hook.received) == 2  # attempts with retries left alert nothing
    assert not NotificationAttempt.objects.filter(run__in=first[:2]).exists()


def test_a_run_reaped_past_its_timeout_counts_as_a_failure(
    hook, django_capture_on_commit_callbacks, settings
):
    job = watched(hook, timeout_seconds=10)
    run = engine.run_now(job, now=NOW)
    engine.start(engine.ready_tickets(NOW), WORKER, now=NOW)
    with django_capture_on_commit_callbacks(execute=True):
        later = NOW + timedelta(seconds=10 + settings.JOBS_LEASE_SECONDS + 1)
        engine.heartbeat([run.pk.hex], now=later)  # its worker is alive, the run stuck
        assert engine.reap(later) == 1
    assert events(hook) == [("failure", 1)]
    job.refresh_from_db()
    assert job.consecutive_failures == 1


def test_jobs_without_alerts_are_not_counted(django_capture_on_commit_callbacks):
    job = make_job()
    runs = Occurrences(job, django_capture_on_commit_callbacks)
    runs.run(F)
    assert runs.streak() == 0


def test_a_watched_job_that_keeps_succeeding_writes_nothing_more(hook, django_assert_num_queries):
    run = make_run(watched(hook), status=RunStatus.RUNNING)
    result = RunResult(ticket(run), True, "", NOW, NOW)
    with django_assert_num_queries(1), store().reading() as ops:  # the watched-jobs read
        alerts.runs_finished(ops, [result])


def test_changing_the_rules_starts_the_count_afresh(hook, django_capture_on_commit_callbacks):
    job = watched(hook, alert_after_failures=3)
    runs = Occurrences(job, django_capture_on_commit_callbacks)
    runs.run(F)
    runs.run(F)
    assert runs.streak() == 2
    job.refresh_from_db()
    job.alert_after_failures = 2
    job.save()
    assert runs.streak() == 0
    runs.run(F)
    runs.run(F)
    assert events(hook) == [("failure", 2)]


def test_saving_a_job_loaded_earlier_keeps_the_engines_count(
    hook, django_capture_on_commit_callbacks
):
    job = watched(hook)
    loaded_before = Job.objects.get(pk=job.pk)
    runs = Occurrences(job, django_capture_on_commit_callbacks)
    runs.run(F)
    runs.run(F)
    loaded_before.description = "renamed meanwhile"
    loaded_before.save()
    assert runs.streak() == 2
    loaded_before.interval = 30  # a schedule change saves the scheduler's fields too
    loaded_before.save()
    assert runs.streak() == 2


@pytest.mark.django_db(transaction=True)
def test_the_count_is_exact_with_two_connections_finishing_runs_at_once(monkeypatch):
    """Two threads, each with its own database connection, finish failed runs of one job
    at the same moments: every failure is counted and the streak alerts once."""
    job = make_job(notify_on_failure=True, webhook_url="http://hooks.example.com/x")
    per_thread = 10
    runs = [engine.run_now(job, now=NOW + timedelta(seconds=i)) for i in range(2 * per_thread)]
    tickets = {t.run_key: t for t in engine.ready_tickets(NOW + timedelta(hours=1), limit=100)}
    started = engine.start(list(tickets.values()), WORKER, now=NOW + timedelta(hours=1))
    assert len(started) == len(runs)
    sent: list[Notice] = []
    lock = threading.Lock()

    def collect(notices) -> None:
        with lock:
            sent.extend(notices)

    monkeypatch.setattr(alerts, "dispatch", collect)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def finish(mine) -> None:
        try:
            for ticket in mine:
                barrier.wait(timeout=10)
                at = NOW + timedelta(hours=2)
                engine.finish([RunResult(ticket, False, "", at, at)], WORKER)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
            barrier.abort()
        finally:
            connection.close()

    threads = [threading.Thread(target=finish, args=(started[i::2],)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    job.refresh_from_db()
    assert job.consecutive_failures == 2 * per_thread
    assert [n.failures_in_a_row for n in sent] == [1]


# --- running long ---------------------------------------------------------------------------


def running(job: Job, started_at, heartbeat_at=None) -> JobHistory:
    return make_run(
        job, at=started_at, status=RunStatus.RUNNING, heartbeat_at=heartbeat_at or started_at
    )


def test_a_run_past_expected_seconds_alerts_once_across_passes(
    hook, django_capture_on_commit_callbacks
):
    job = watched(hook, expected_seconds=60)
    run = running(job, NOW)
    with django_capture_on_commit_callbacks(execute=True):
        assert check_running_long(NOW + timedelta(seconds=59)) == 0
        assert check_running_long(NOW + timedelta(seconds=61)) == 1
        assert check_running_long(NOW + timedelta(seconds=120)) == 0
        assert check_running_long(NOW + timedelta(days=1)) == 0
    assert events(hook) == [("running_long", 0)]
    payload = hook.received[0]
    assert payload["run"]["id"] == str(run.pk)
    assert payload["status"] == "running"
    assert (payload["expected_seconds"], payload["expected_from"]) == (60, "expected_seconds")
    run.refresh_from_db()
    assert run.running_long_at == NOW + timedelta(seconds=61)
    assert [a.kind for a in NotificationAttempt.objects.filter(run=run)] == ["running_long"]


def test_two_scheduler_passes_alert_a_run_running_long_once(
    hook, django_capture_on_commit_callbacks, clock
):
    job = watched(hook, expected_seconds=30)
    later = NOW + timedelta(minutes=5)
    running(job, NOW, heartbeat_at=later)  # its worker is alive: the reaper leaves it
    clock.move_to(later)
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(2):  # two schedulers, one pass each (each checks on its first pass)
            Scheduler(handoff=HueyHandoff(lambda keys: len(keys))).run_pass()
    assert events(hook) == [("running_long", 0)]


@pytest.mark.django_db(transaction=True)
def test_two_connections_checking_at_once_alert_a_run_once(monkeypatch):
    job = make_job(
        notify_on_failure=True, webhook_url="http://hooks.example.com/x", expected_seconds=10
    )
    runs = [running(job, NOW + timedelta(microseconds=i)) for i in range(5)]
    sent: list[Notice] = []
    lock = threading.Lock()

    def collect(notices) -> None:
        with lock:
            sent.extend(notices)

    monkeypatch.setattr(running_long, "dispatch", collect)
    barrier = threading.Barrier(2)
    marked: list[int] = []
    errors: list[BaseException] = []

    def check() -> None:
        try:
            barrier.wait(timeout=10)
            marked.append(check_running_long(NOW + timedelta(minutes=1)))
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=check) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert sum(marked) == len(runs)
    assert sorted(n.run_key for n in sent) == sorted(r.pk.hex for r in runs)


def test_blank_expected_seconds_learns_three_times_the_95th_percentile(
    hook, django_capture_on_commit_callbacks
):
    job = watched(hook)
    for seconds in range(1, 26):  # 25 runs taking 1 s ... 25 s: the p95 is 24 s
        make_run(job, ago=timedelta(hours=2), took=timedelta(seconds=seconds))
    run = running(job, NOW)
    with django_capture_on_commit_callbacks(execute=True):
        assert check_running_long(NOW + timedelta(seconds=71.9)) == 0
        assert check_running_long(NOW + timedelta(seconds=72.1)) == 1
    assert hook.received[0]["expected_seconds"] == 72
    assert hook.received[0]["expected_from"] == "p95"
    assert hook.received[0]["run"]["id"] == str(run.pk)


def test_with_fewer_than_20_runs_nothing_is_learned_and_nothing_alerts(hook):
    job = watched(hook)
    for _ in range(19):
        make_run(job, ago=timedelta(hours=2), took=timedelta(seconds=1))
    running(job, NOW)
    assert check_running_long(NOW + timedelta(days=3)) == 0


def test_the_learned_limit_is_read_once_per_hour_per_job(hook):
    job = watched(hook)
    for _ in range(20):
        make_run(job, ago=timedelta(hours=2), took=timedelta(seconds=10))
    running(job, NOW)
    running(job, NOW + timedelta(seconds=1))  # two runs of the job: one read still
    ticks = [0.0]
    limits = LearnedLimits(ttl=3600, clock=lambda: ticks[0])
    with CaptureQueriesContext(connection) as first:
        check_running_long(NOW + timedelta(seconds=5), limits=limits)
    with CaptureQueriesContext(connection) as second:
        check_running_long(NOW + timedelta(seconds=6), limits=limits)
    ticks[0] = 3601.0
    with CaptureQueriesContext(connection) as after_an_hour:
        check_running_long(NOW + timedelta(seconds=7), limits=limits)
    assert (len(first), len(second), len(after_an_hour)) == (2, 1, 2)


def test_jobs_without_alerts_cost_the_one_read_of_running_runs(django_assert_num_queries):
    running(make_job(expected_seconds=1), NOW)  # alerts off
    for _ in range(20):
        make_run(make_job(), ago=timedelta(hours=2))
    with django_assert_num_queries(1):
        assert check_running_long(NOW + timedelta(days=1)) == 0
    assert JobHistory.objects.filter(running_long_at__isnull=False).count() == 0


def test_a_run_that_ended_is_not_alerted(hook, django_capture_on_commit_callbacks):
    job = watched(hook, expected_seconds=10)
    run = running(job, NOW)
    JobHistory.objects.filter(pk=run.pk).update(status=RunStatus.SUCCESS, finished_at=NOW)
    assert check_running_long(NOW + timedelta(minutes=1)) == 0
    assert hook.received == []


def test_the_running_long_e_mail_says_so(django_capture_on_commit_callbacks):
    previous = alerts.use_dispatcher(InlineDispatcher(wait=lambda seconds: False))
    try:
        job = make_job(
            name="nightly",
            notify_on_failure=True,
            notify_emails="ops@example.com",
            expected_seconds=60,
        )
        running(job, NOW)
        with django_capture_on_commit_callbacks(execute=True):
            assert check_running_long(NOW + timedelta(minutes=2)) == 1
    finally:
        alerts.use_dispatcher(previous)
    assert mail.outbox[0].subject == "[scheduler] nightly is running long"
    assert "Expected to take at most: 60 s" in mail.outbox[0].body


def test_the_recent_durations_walk_the_unique_index_without_sorting(hook):
    if connection.vendor != "sqlite":
        pytest.skip("reads SQLite's query plan")
    job = watched(hook)
    make_run(job)
    with CaptureQueriesContext(connection) as queries, store().reading() as ops:
        ops.recent_durations(job.pk.hex, 1000)
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {queries.captured_queries[0]['sql']}")
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    # The unique (job, scheduled_for, attempt) constraint's index (SQLite names it
    # sqlite_autoindex_*), in its own order: no sort of the job's runs.
    assert "USING INDEX sqlite_autoindex" in plan and "(job_id=?)" in plan, plan
    assert "TEMP B-TREE" not in plan, plan


def test_p95_is_by_nearest_rank_and_the_learned_limit_has_a_floor():
    assert p95(list(range(1, 101))) == 95
    assert p95([5.0]) == 5.0
    assert learned_limit([2.0] * 19) is None
    assert learned_limit([2.0] * 20) == 6.0
    assert learned_limit([0.001] * 20) == running_long.LEARNED_FLOOR_SECONDS
