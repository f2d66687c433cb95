"""Failure and recovery alerts: webhook to a real local server, e-mail, retries, records."""

from __future__ import annotations

import socket
import time
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command
from django.utils import timezone

from jobs import alerts, engine
from jobs.alerts import Dispatcher, InlineDispatcher, Notice
from jobs.models import (
    JobHistory,
    NotificationAttempt,
    NotificationKind,
    RunStatus,
)
from jobs.runs import RunResult
from jobs.sql import store
from jobs.tests import factories
from jobs.tests.api_helpers import finish_run, webhook_server
from jobs.tests.factories import make_job

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def local_hooks(settings):
    """The webhook servers of these tests listen on 127.0.0.1, which the address rules
    refuse (jobs/outbound/rules.py) unless it is listed as an allowed internal receiver."""
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]


class Waits:
    """Stands in for the dispatcher's backoff sleep: records it, returns at once."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    def __call__(self, seconds: float) -> bool:
        self.seconds.append(seconds)
        return False  # not shutting down


@pytest.fixture
def waits():
    """Deliver alerts synchronously in the test's thread when the transaction commits."""
    recorder = Waits()
    previous = alerts.use_dispatcher(InlineDispatcher(wait=recorder))
    yield recorder
    alerts.use_dispatcher(previous)


def fail(job, **kwargs) -> JobHistory:
    return finish_run(job, succeeded=False, **kwargs)


def attempts(run: JobHistory) -> list[tuple[str, str, int, str, int | None]]:
    return [
        (a.kind, a.channel, a.attempt, a.status, a.response_code)
        for a in NotificationAttempt.objects.filter(run=run)
    ]


def test_a_failing_job_posts_its_webhook_to_a_real_server(
    waits, django_capture_on_commit_callbacks
):
    with webhook_server() as hook:
        job = make_job(name="nightly backup", notify_on_failure=True, webhook_url=hook.url)
        with django_capture_on_commit_callbacks(execute=True):
            run = fail(job, log="$ backup\n" + "x" * 5000 + "\ndisk full\n")

    assert len(hook.received) == 1
    payload = hook.received[0]
    assert payload["event"] == "failure"
    assert payload["job"] == {"id": str(job.pk), "name": "nightly backup", "command": job.command}
    assert payload["run"]["id"] == str(run.pk)
    assert payload["run"]["attempt"] == 1
    assert payload["status"] == "failed"
    assert payload["scheduled_for"].startswith(str(run.scheduled_for.year))
    assert payload["started_at"] and payload["finished_at"]
    assert payload["log_tail"].endswith("disk full\n")
    assert len(payload["log_tail"]) == alerts.LOG_TAIL_CHARS
    assert payload["dashboard_url"].endswith(f"/jobs/{job.pk}/")
    assert hook.headers[0]["Content-Type"] == "application/json"
    assert attempts(run) == [("failure", "webhook", 1, "sent", 200)]


def test_a_webhook_answering_500_is_retried_with_exponential_backoff(
    waits, django_capture_on_commit_callbacks, settings
):
    settings.JOBS_ALERT_ATTEMPTS = 3
    settings.JOBS_ALERT_BACKOFF_SECONDS = 1.0
    with webhook_server(answers=[500, 503]) as hook:
        job = make_job(notify_on_failure=True, webhook_url=hook.url)
        with django_capture_on_commit_callbacks(execute=True):
            run = fail(job)

    assert len(hook.received) == 3
    assert hook.received[0] == hook.received[2]
    assert attempts(run) == [
        ("failure", "webhook", 1, "failed", 500),
        ("failure", "webhook", 2, "failed", 503),
        ("failure", "webhook", 3, "sent", 200),
    ]
    assert waits.seconds == [1.0, 2.0]
    first = NotificationAttempt.objects.filter(run=run).first()
    assert "500" in first.error


def test_delivery_gives_up_after_the_last_attempt(
    waits, django_capture_on_commit_callbacks, settings
):
    settings.JOBS_ALERT_ATTEMPTS = 3
    with webhook_server(answers=[500, 500, 500, 500]) as hook:
        job = make_job(notify_on_failure=True, webhook_url=hook.url)
        with django_capture_on_commit_callbacks(execute=True):
            run = fail(job)
    assert len(hook.received) == 3
    assert [a[3] for a in attempts(run)] == ["failed", "failed", "failed"]


def test_an_unreachable_webhook_is_recorded_as_failed_attempts(
    waits, django_capture_on_commit_callbacks, settings
):
    settings.JOBS_ALERT_ATTEMPTS = 2
    # A port bound but never listening refuses every connection, and no other process (a
    # pytest-xdist worker's own webhook server) can take it while the test runs.
    with socket.socket() as refusing:
        refusing.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{refusing.getsockname()[1]}/hook"
        job = make_job(notify_on_failure=True, webhook_url=url)
        with django_capture_on_commit_callbacks(execute=True):
            run = fail(job)
    recorded = list(NotificationAttempt.objects.filter(run=run))
    assert [a.status for a in recorded] == ["failed", "failed"]
    assert all(a.response_code is None and a.error for a in recorded)


def test_a_recovery_is_announced_once_after_a_failure(waits, django_capture_on_commit_callbacks):
    with webhook_server() as hook:
        job = make_job(notify_on_recovery=True, webhook_url=hook.url)
        now = timezone.now()
        with django_capture_on_commit_callbacks(execute=True):
            finish_run(job, succeeded=True, now=now)
            failed = finish_run(job, succeeded=False, now=now + timedelta(seconds=1))
            recovered = finish_run(job, succeeded=True, now=now + timedelta(seconds=2))
            finish_run(job, succeeded=True, now=now + timedelta(seconds=3))
    assert [p["event"] for p in hook.received] == ["recovery"]
    assert hook.received[0]["run"]["id"] == str(recovered.pk)
    assert attempts(failed) == []  # notify_on_failure is off


def finished(job, run_key: str, started_at, succeeded: bool) -> RunResult:
    """An outcome as the engine reports it to its runs_finished listeners."""
    return RunResult(
        factories.ticket(run_key=run_key, job_key=job.pk.hex), succeeded, "", started_at, started_at
    )


def test_failure_and_recovery_in_one_batch_follow_the_order_of_the_runs(
    monkeypatch, django_capture_on_commit_callbacks
):
    job = make_job(notify_on_failure=True, notify_on_recovery=True, webhook_url="http://x.test/")
    now = timezone.now()
    entries = [
        finished(job, "run-2", now + timedelta(seconds=2), True),
        finished(job, "run-1", now + timedelta(seconds=1), False),
    ]
    sent: list[list[Notice]] = []
    monkeypatch.setattr(alerts, "dispatch", sent.append)
    with django_capture_on_commit_callbacks(execute=True), store().reading() as ops:
        alerts.runs_finished(ops, entries)
    assert [(n.run_key, n.kind) for n in sent[0]] == [
        ("run-1", NotificationKind.FAILURE),
        ("run-2", NotificationKind.RECOVERY),
    ]


def test_e_mail_alerts_go_through_django_mail(waits, django_capture_on_commit_callbacks):
    job = make_job(
        name="invoices", notify_on_failure=True, notify_emails="ops@example.com, cto@example.com"
    )
    with django_capture_on_commit_callbacks(execute=True):
        run = fail(job, log="$ invoices\nexit status 1\n")
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.subject == "[scheduler] invoices failed"
    assert message.to == ["ops@example.com", "cto@example.com"]
    assert "exit status 1" in message.body
    assert attempts(run) == [("failure", "email", 1, "sent", None)]


def test_a_run_of_a_dead_worker_alerts_when_reaped(
    waits, django_capture_on_commit_callbacks, settings
):
    with webhook_server() as hook:
        job = make_job(notify_on_failure=True, webhook_url=hook.url)
        run = engine.run_now(job)
        then = timezone.now()
        engine.start([t for t in engine.ready_tickets(then) if t.run_id == run.pk], "dead:1/w1")
        later = then + timedelta(seconds=settings.JOBS_LEASE_SECONDS * 2)
        with django_capture_on_commit_callbacks(execute=True):
            assert engine.reap(later) == 1
    assert [p["event"] for p in hook.received] == ["failure"]
    assert "worker lost" in hook.received[0]["log_tail"]


def test_jobs_without_alerts_cost_one_query_per_batch_and_send_nothing(
    django_assert_num_queries, django_capture_on_commit_callbacks
):
    jobs = [make_job() for _ in range(5)]
    now = timezone.now()
    entries = [finished(job, f"run-{i}", now, i % 2 == 0) for i, job in enumerate(jobs)]
    with (
        django_capture_on_commit_callbacks() as callbacks,
        django_assert_num_queries(1),
        store().reading() as ops,
    ):
        alerts.runs_finished(ops, entries)
    assert callbacks == []


def test_no_alert_is_sent_for_a_transaction_that_rolls_back(django_capture_on_commit_callbacks):
    job = make_job(notify_on_failure=True, webhook_url="http://x.test/")
    with django_capture_on_commit_callbacks() as callbacks:
        fail(job)
    assert len(callbacks) == 1  # sent only when (if) the engine's transaction commits


def test_a_deleted_run_sends_nothing(waits):
    assert alerts.deliver(Notice(run_key=JobHistory().pk.hex, job_key="", kind="failure")) == []


@pytest.mark.django_db(transaction=True)
def test_the_background_dispatcher_never_holds_up_the_engine(settings):
    """The webhook server holds each request until released: finish() must not wait."""
    settings.JOBS_ALERT_BACKOFF_SECONDS = 0.01
    dispatcher = Dispatcher(threads=1).start()
    previous = alerts.use_dispatcher(dispatcher)
    try:
        with webhook_server(answers=[500], hold=True) as hook:
            job = make_job(notify_on_failure=True, webhook_url=hook.url)
            began = time.monotonic()
            run = fail(job)
            assert time.monotonic() - began < 2.0
            assert hook.got_one.wait(timeout=10)  # the server has the request, unanswered
            assert run.status == RunStatus.FAILED
            hook.release.set()
            assert dispatcher.wait_idle(timeout=10)
        assert [a[3] for a in attempts(run)] == ["failed", "sent"]
    finally:
        alerts.use_dispatcher(previous)
        dispatcher.shutdown(timeout=5)


@pytest.mark.django_db(transaction=True)
def test_runscheduler_sends_the_alert_of_its_last_run_before_it_exits(settings):
    settings.JOBS_SIM_MIN_SECONDS = settings.JOBS_SIM_MAX_SECONDS = 0
    settings.JOBS_SIM_FAILURE_RATE = 1.0
    with webhook_server() as hook:
        job = make_job(notify_on_failure=True, webhook_url=hook.url)
        type(job).objects.filter(pk=job.pk).update(next_run_at=timezone.now())
        call_command("runscheduler", "--once", "--workers", "1", stdout=StringIO())
        # No waiting here: --once flushes the alert queue before it returns.
        assert [p["event"] for p in hook.received] == ["failure"]
    run = JobHistory.objects.get(job=job)
    assert attempts(run) == [("failure", "webhook", 1, "sent", 200)]


def test_the_admin_edits_alert_settings_and_shows_every_attempt_on_the_run(client):
    admin_user = get_user_model().objects.create_superuser("root", "", "pw")
    client.force_login(admin_user)
    job = make_job(name="reports")
    page = client.get(f"/admin/jobs/job/{job.pk}/change/")
    assert page.status_code == 200
    assert b'name="webhook_url"' in page.content

    form = {
        "name": "reports",
        "description": "",
        "command": job.command,
        "is_active": "on",
        "schedule_type": "interval",
        "interval": "10",
        "interval_unit": "minute",
        "misfire_policy": "coalesce",
        "overlap_policy": "allow",
        "max_retries": "0",
        "retry_backoff_seconds": "10",
        "queue": "default",
        "priority": "0",
        "notify_on_failure": "on",
        "webhook_url": "",
        "notify_emails": "",
        "runs-TOTAL_FORMS": "0",
        "runs-INITIAL_FORMS": "0",
    }
    refused = client.post(f"/admin/jobs/job/{job.pk}/change/", form)
    assert refused.status_code == 200  # the form again, with the message at the field
    assert "Give a webhook URL or e-mail addresses" in refused.content.decode()
    saved = client.post(
        f"/admin/jobs/job/{job.pk}/change/", {**form, "notify_emails": "ops@example.com"}
    )
    assert saved.status_code == 302, saved.content.decode()[:2000]
    job.refresh_from_db()
    assert job.notify_on_failure and job.notify_email_list == ["ops@example.com"]

    run = fail(job)
    NotificationAttempt.objects.create(
        run=run,
        kind="failure",
        channel="email",
        target="ops@example.com",
        attempt=1,
        status="failed",
        error="SMTPConnectError: no server",
    )
    run_page = client.get(f"/admin/jobs/jobhistory/{run.pk}/change/")
    assert run_page.status_code == 200
    assert "SMTPConnectError: no server" in run_page.content.decode()
