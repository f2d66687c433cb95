"""Cancelling a run: pending ones never start, running ones stop promptly, and the run
says who cancelled it; from the engine, the dashboard and the admin."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from jobs import engine
from jobs.access.permissions import JOB_ADMINS, JOB_VIEWERS
from jobs.executors import Outcome
from jobs.models import Job, JobHistory, JobState, RunStatus
from jobs.runs import RunResult
from jobs.runtime.scheduler import Scheduler
from jobs.tests.factories import NOW, WORKER, make_user

# --- the engine -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_cancelled_pending_run_never_starts_and_is_not_retried(make_job, clock):
    job = make_job(max_retries=3)
    clock.move_to(job.next_run_at)
    tickets = engine.claim_due()
    run = JobHistory.objects.get()
    clock.shift(timedelta(seconds=1))
    engine.cancel_run(run, by="alice")
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert run.cancelled_by == "alice"
    assert run.finished_at == timezone.now()
    assert run.log.endswith("UTC] cancelled by alice.\n")
    assert engine.start(tickets, WORKER) == []
    assert engine.ready_tickets() == []
    assert JobHistory.objects.count() == 1
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED


@pytest.mark.django_db
def test_a_cancelled_running_run_keeps_its_status_when_its_worker_reports(make_job, clock):
    job = make_job()
    clock.move_to(job.next_run_at)
    (ticket,) = engine.start(engine.claim_due(), WORKER)
    engine.cancel_run(JobHistory.objects.get(), by="bob")
    now = timezone.now()
    assert engine.finish([RunResult(ticket, False, "interrupted", now, now)], WORKER) == 0
    run = JobHistory.objects.get()
    assert run.status == RunStatus.CANCELLED and run.cancelled_by == "bob"
    assert run.started_at is not None  # it had started
    assert not JobHistory.objects.filter(attempt=2).exists()


@pytest.mark.django_db
def test_a_finished_run_cannot_be_cancelled(make_job, clock):
    job = make_job()
    clock.move_to(job.next_run_at)
    (ticket,) = engine.start(engine.claim_due(), WORKER)
    now = timezone.now()
    engine.finish([RunResult(ticket, True, "ok", now, now)], WORKER)
    with pytest.raises(engine.CancelRefused, match="already finished"):
        engine.cancel_run(JobHistory.objects.get(), by="alice")
    assert JobHistory.objects.get().status == RunStatus.SUCCESS


@pytest.mark.django_db
def test_cancelling_an_old_pending_retry_leaves_a_newer_outcome_on_the_job(make_job, clock):
    job = make_job()
    clock.move_to(job.next_run_at)
    old = engine.claim_due()
    clock.shift(timedelta(seconds=10))
    newer = engine.start(engine.claim_due(), WORKER)
    now = timezone.now()
    engine.finish([RunResult(newer[0], True, "ok", now, now)], WORKER)
    engine.cancel_run(JobHistory.objects.get(pk=old[0].run_id), by="alice")
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED


# --- a running run stops promptly -------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_running_run_stops_within_seconds_of_being_cancelled(make_job):
    began = threading.Event()
    stopped = threading.Event()
    seen: list[str] = []

    class Slow:
        def execute(self, ticket, context):
            began.set()
            context.stop.wait(60)
            seen.append(context.reason)
            stopped.set()
            return Outcome(succeeded=False, log="interrupted\n")

    job = make_job(name="slow", interval=1, interval_unit="hour")
    Job.objects.filter(pk=job.pk).update(next_run_at=timezone.now())
    scheduler = Scheduler(workers=1, executor=Slow())
    scheduler.start_workers()
    try:
        scheduler.run_pass()
        assert began.wait(10)
        run = JobHistory.objects.get(job=job)
        cancelled_at = time.monotonic()
        engine.cancel_run(run, by="alice")
        assert stopped.wait(30)
        # The watch looks every second; the bound leaves a loaded machine room and is
        # still far short of the run's minute.
        assert time.monotonic() - cancelled_at < 15
        assert seen == ["cancelled"]
        assert scheduler.wait_idle(timeout=10)
    finally:
        scheduler.shutdown()
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert run.cancelled_by == "alice"
    assert "cancelled by alice" in run.log
    assert "interrupted" not in run.log  # the worker's result was not recorded


@pytest.mark.django_db(transaction=True)
def test_a_run_cancelled_before_its_worker_gets_to_it_is_not_executed(make_job, instant):
    executed: list[str] = []

    class Recording:
        def execute(self, ticket, context):
            executed.append(ticket.run_key)
            return Outcome(succeeded=True, log="ok\n")

    job = make_job()
    Job.objects.filter(pk=job.pk).update(next_run_at=timezone.now())
    tickets = engine.claim_due()
    engine.cancel_run(JobHistory.objects.get(), by="alice")
    scheduler = Scheduler(workers=1, executor=Recording())
    scheduler.start_workers()
    try:
        scheduler.handoff.hand(tickets)
        assert scheduler.wait_idle(timeout=10)
    finally:
        scheduler.shutdown()
    assert executed == []
    assert JobHistory.objects.get().status == RunStatus.CANCELLED


# --- the dashboard --------------------------------------------------------------------------


@pytest.fixture
def alice(db):
    return make_user("alice", JOB_ADMINS, password="x" * 12, staff=True)


@pytest.fixture
def signed_in(client: Client, alice) -> Client:
    client.force_login(alice)
    return client


@pytest.fixture
def pending_run(make_job, clock) -> JobHistory:
    job = make_job(name="nightly")
    clock.move_to(job.next_run_at)
    engine.claim_due()
    return JobHistory.objects.get()


def test_the_run_page_cancels_a_pending_run_and_says_who(signed_in: Client, pending_run):
    url = reverse("jobs:run_detail", args=[pending_run.pk])
    page = signed_in.get(url).content.decode()
    assert 'id="cancel-run"' in page
    cancel_url = reverse("jobs:run_cancel", args=[pending_run.pk])
    # The page's button asks first: a page with the form that confirms, nothing changed.
    asked = signed_in.post(cancel_url)
    assert asked.status_code == 200 and 'id="confirm-cancel"' in asked.text
    assert 'name="confirm"' in asked.text and "csrfmiddlewaretoken" in asked.text
    assert "It has not started yet" in asked.text
    pending_run.refresh_from_db()
    assert pending_run.status == RunStatus.PENDING
    response = signed_in.post(cancel_url, {"confirm": "1"})
    assert response.status_code == 302 and response.url == url
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "The run of “nightly” is cancelled."
    ]
    pending_run.refresh_from_db()
    assert pending_run.status == RunStatus.CANCELLED
    assert pending_run.cancelled_by == "alice"
    page = signed_in.get(url).content.decode()
    assert 'id="cancel-run"' not in page
    assert 'id="cancelled-by">alice<' in page
    assert 'data-status="cancelled"' in page


def test_the_job_page_offers_cancel_for_its_pending_and_running_runs(
    signed_in: Client, pending_run
):
    job_url = reverse("jobs:job_detail", args=[pending_run.job_id])
    cancel_url = reverse("jobs:run_cancel", args=[pending_run.pk])
    assert f'action="{cancel_url}"' in signed_in.get(job_url).content.decode()
    asked = signed_in.post(cancel_url, {"next": job_url})
    # The page that asks keeps where to go back to, for both of its answers.
    assert f'name="next" value="{job_url}"' in asked.text and f'href="{job_url}"' in asked.text
    response = signed_in.post(cancel_url, {"next": job_url, "confirm": "1"})
    assert response.url == job_url
    assert f'action="{cancel_url}"' not in signed_in.get(job_url).content.decode()


def test_cancelling_a_finished_run_says_why_and_changes_nothing(signed_in: Client, pending_run):
    JobHistory.objects.filter(pk=pending_run.pk).update(status=RunStatus.SUCCESS)
    asked = signed_in.post(reverse("jobs:run_cancel", args=[pending_run.pk]))
    assert "This run has already finished" in asked.text and "confirm-cancel" not in asked.text
    response = signed_in.post(reverse("jobs:run_cancel", args=[pending_run.pk]), {"confirm": "1"})
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "This run has already finished: only a pending or running run can be cancelled."
    ]
    assert JobHistory.objects.get().status == RunStatus.SUCCESS


def test_cancel_is_post_only_and_needs_the_csrf_token(alice, pending_run):
    url = reverse("jobs:run_cancel", args=[pending_run.pk])
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(alice)
    assert strict.get(url).status_code == 405
    assert strict.post(url).status_code == 403
    assert strict.post(url, {"confirm": "1"}).status_code == 403
    assert JobHistory.objects.get().status == RunStatus.PENDING


def test_cancel_needs_a_login(client: Client, pending_run):
    response = client.post(reverse("jobs:run_cancel", args=[pending_run.pk]))
    assert response.status_code == 302 and "/accounts/login/" in response.url
    assert JobHistory.objects.get().status == RunStatus.PENDING


# --- the admin ------------------------------------------------------------------------------


def test_the_admin_cancels_the_selected_runs_and_reports_the_rest(admin_client, make_job, clock):
    job = make_job()
    clock.move_to(job.next_run_at)
    engine.claim_due()
    clock.shift(timedelta(seconds=10))
    engine.start(engine.claim_due(), WORKER)
    done = JobHistory.objects.create(
        job=job, scheduled_for=NOW, not_before=NOW, status=RunStatus.SUCCESS
    )
    response = admin_client.post(
        reverse("admin:jobs_jobhistory_changelist"),
        {"action": "cancel", "_selected_action": [str(r.pk) for r in JobHistory.objects.all()]},
        follow=True,
    )
    messages = [str(m) for m in response.context["messages"]]
    assert messages == [
        "Cancelled 2 runs; running ones stop within a few seconds.",
        "1 run not cancelled: This run has already finished: only a pending or running "
        "run can be cancelled.",
    ]
    cancelled = JobHistory.objects.filter(status=RunStatus.CANCELLED)
    assert cancelled.count() == 2
    assert set(cancelled.values_list("cancelled_by", flat=True)) == {"admin"}
    assert JobHistory.objects.get(pk=done.pk).status == RunStatus.SUCCESS


def test_the_admin_run_page_shows_who_cancelled(admin_client, pending_run):
    engine.cancel_run(pending_run, by="alice")
    page = admin_client.get(
        reverse("admin:jobs_jobhistory_change", args=[pending_run.pk])
    ).content.decode()
    assert "alice" in page
    assert "jobs-run-cancelled" in page


def test_staff_without_the_run_right_get_no_cancel_action(client: Client, pending_run):
    viewer = make_user("viewer", JOB_VIEWERS, staff=True)
    client.force_login(viewer)
    response = client.get(reverse("admin:jobs_jobhistory_changelist"))
    form = response.context["action_form"]
    actions = [] if form is None else [name for name, _ in form.fields["action"].choices]
    assert "cancel" not in actions
    client.post(
        reverse("admin:jobs_jobhistory_changelist"),
        {"action": "cancel", "_selected_action": [str(pending_run.pk)]},
    )
    assert JobHistory.objects.get().status == RunStatus.PENDING
