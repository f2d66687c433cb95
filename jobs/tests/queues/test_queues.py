"""Queues made visible: the per-queue snapshot (jobs/queues/status.py) and everything that shows
it: the API, /metrics, the dashboard's card, the health check; a run's queue on its page,
in the API and in the admin's filter."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from jobs import engine
from jobs.access.permissions import JOB_VIEWERS
from jobs.alerts import health
from jobs.models import JobHistory, RunStatus, SchedulerHeartbeat
from jobs.queues import status as queue_status
from jobs.tests.api_helpers import token_client
from jobs.tests.factories import NOW, make_job, make_run, make_user
from jobs.tests.metrics.test_metrics import scrape
from jobs.tests.project.test_deploy_settings import ROOT, production_env, settings_in

pytestmark = pytest.mark.django_db

PENDING, RUNNING = RunStatus.PENDING, RunStatus.RUNNING


@pytest.fixture(autouse=True)
def settings_for_queues(settings):
    settings.JOBS_QUEUE_LIMITS = {"reports": 2, "mail": 5}
    settings.JOBS_QUEUE_STALL_SECONDS = 600
    settings.JOBS_DASHBOARD_CACHE_SECONDS = 0
    settings.JOBS_ADMIN_ALERT_URL = ""
    settings.JOBS_ADMIN_ALERT_EMAILS = []
    return settings


def beat(name: str = "host:1", at=None) -> None:  # type: ignore[no-untyped-def]
    """A scheduler heartbeat row at `at` (default now)."""
    at = at or timezone.now()
    SchedulerHeartbeat.objects.update_or_create(
        name=name, defaults={"pid": 1, "host": "host", "started_at": at, "seen_at": at}
    )


@pytest.fixture
def serving(monkeypatch):
    """Says which queues each live scheduler serves, as its heartbeat row will:
    serving({"host:1": "default,mail"}) ("" for every queue). The rows themselves do not
    record it yet (see jobs/queues/status.py), so the reading is set here directly."""

    def serve(by_process: dict[str, str]) -> None:
        def live(now=None, within=None):  # type: ignore[no-untyped-def]
            return [
                queue_status.ServedBy(name, queue_status.parse_served(text))
                for name, text in sorted(by_process.items())
            ]

        monkeypatch.setattr(queue_status, "live_schedulers", live)

    return serve


def pending(queue: str, *, waited: timedelta, job=None, **fields):  # type: ignore[no-untyped-def]
    """A pending run of `queue` ready since `waited` ago."""
    job = job or make_job(name=f"job in {queue}", queue=queue)
    return make_run(job, status=PENDING, queue=queue, at=timezone.now() - waited, **fields)


def by_name() -> dict[str, queue_status.QueueState]:
    return {queue.name: queue for queue in queue_status.snapshot()}


# --- the snapshot ------------------------------------------------------------------------


def test_each_queue_counts_its_ready_later_and_running_runs_and_its_oldest_wait(clock):
    reports = make_job(name="report", queue="reports")
    beat()
    pending("reports", waited=timedelta(minutes=7), job=reports)
    pending("reports", waited=timedelta(minutes=2), job=reports)
    # A retry waiting out its backoff is pending, but not ready: not in the oldest wait.
    make_run(
        reports,
        status=PENDING,
        queue="reports",
        ago=timedelta(hours=1),
        not_before=NOW + timedelta(minutes=5),
        attempt=2,
    )
    make_run(reports, status=RUNNING, queue="reports")
    make_run(reports, status=RunStatus.SUCCESS, queue="reports")  # finished: not counted
    # A run keeps the queue it was inserted with, whatever its job says now.
    make_run(make_job(name="moved"), status=RUNNING, queue="night")

    found = by_name()

    assert found["reports"] == queue_status.QueueState(
        name="reports",
        pending=2,
        waiting_later=1,
        running=1,
        oldest_pending_seconds=420.0,
        limit=2,
        served=True,
        stalled=False,
    )
    assert (found["night"].running, found["night"].limit) == (1, None)
    # "default" has a job, "mail" only a limit: listed, with nothing in them.
    assert list(found) == ["default", "mail", "night", "reports"]
    assert found["mail"] == queue_status.QueueState("mail", 0, 0, 0, 0.0, 5, True, False)

    clock.shift(timedelta(minutes=4))  # the oldest has now waited 11 minutes
    assert by_name()["reports"].oldest_pending_seconds == 660.0
    assert by_name()["reports"].stalled


def test_a_queue_is_full_when_as_many_run_as_its_limit_allows(clock):
    job = make_job(queue="reports")
    for _ in range(2):
        make_run(job, status=RUNNING, queue="reports")
    make_run(make_job(name="night", queue="night"), status=RUNNING, queue="night")
    assert by_name()["reports"].full
    assert not by_name()["mail"].full  # 0 of 5
    assert not by_name()["night"].full  # no limit


def test_stalled_follows_the_setting_and_zero_turns_it_off(clock, settings):
    pending("reports", waited=timedelta(seconds=601))
    beat()
    assert by_name()["reports"].stalled
    settings.JOBS_QUEUE_STALL_SECONDS = 0
    assert not by_name()["reports"].stalled


def test_without_a_live_scheduler_no_queue_is_served(clock):
    make_job(queue="reports")
    beat(at=NOW - timedelta(minutes=5))  # gone
    assert {queue.served for queue in queue_status.snapshot()} == {False}
    beat()
    assert {queue.served for queue in queue_status.snapshot()} == {True}


def test_a_heartbeat_that_does_not_say_serves_every_queue(clock):
    beat()
    assert queue_status.live_schedulers() == [queue_status.ServedBy("host:1", None)]
    assert queue_status.served_queues() is None


def test_the_queues_served_are_those_some_live_scheduler_names(clock, serving):
    make_job(queue="reports")
    make_job(name="mailer", queue="mail")
    serving({"host:1": "default", "host:2": "mail, default"})
    assert queue_status.served_queues() == {"default", "mail"}
    assert {q.name: q.served for q in queue_status.snapshot()} == {"mail": True, "reports": False}
    serving({"host:1": "default", "host:3": ""})  # one serves them all
    assert queue_status.served_queues() is None


def test_a_served_list_is_read_from_its_comma_separated_text():
    assert queue_status.parse_served("reports, mail,,") == {"reports", "mail"}
    assert queue_status.parse_served("") is None
    assert queue_status.parse_served(None) is None


def test_the_snapshot_costs_three_queries_whatever_the_number_of_runs(clock):
    job = make_job(queue="reports")
    beat()

    def counted() -> int:
        with CaptureQueriesContext(connection) as captured:
            queue_status.snapshot()
        return len(captured)

    few = counted()
    JobHistory.objects.bulk_create(
        JobHistory(
            job=job,
            scheduled_for=NOW - timedelta(seconds=i),
            not_before=NOW - timedelta(seconds=i),
            status=PENDING if i % 2 else RUNNING,
            queue=f"q{i % 7}",
        )
        for i in range(500)
    )
    assert counted() == few == 3  # active runs, the jobs' queue names, the live schedulers
    assert len(queue_status.snapshot()) == 7 + 2  # q0..q6, and mail and reports (limits, a job)


def test_the_active_runs_are_read_through_their_partial_indexes():
    """Each half of the statement names only its status: the planner reads one of the
    pending runs' partial indexes (jobs_run_pending_queue, by queue first, serves the
    GROUP BY best) and the running runs' one, never the history."""
    with CaptureQueriesContext(connection) as captured:
        queue_status._active_runs(timezone.now())
    (statement,) = [q["sql"] for q in captured]
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN QUERY PLAN {statement}")
            plan = " ".join(str(row[-1]) for row in cursor.fetchall())
        assert "USING INDEX jobs_run_pending_queue" in plan
        assert "USING INDEX jobs_run_running_heartbeat" in plan
    assert "'pending'" in statement and "'running'" in statement and " IN " not in statement


# --- the API -----------------------------------------------------------------------------


def test_the_api_lists_the_queues(clock):
    pending("reports", waited=timedelta(minutes=3))
    beat()
    viewer = make_user("viewer", JOB_VIEWERS)
    response = token_client(viewer).get("/api/v1/queues/")
    assert response.status_code == 200
    body = response.json()
    assert body["checked_at"] == "2026-03-01T12:00:00Z"
    assert body["stall_seconds"] == 600.0
    reports = {queue["name"]: queue for queue in body["queues"]}["reports"]
    assert reports == {
        "name": "reports",
        "pending": 1,
        "waiting_later": 0,
        "running": 0,
        "oldest_pending_seconds": 180.0,
        "limit": 2,
        "served": True,
        "stalled": False,
    }


def test_the_api_needs_a_login_and_view_job():
    assert APIClient().get("/api/v1/queues/").status_code == 401
    nobody = token_client(make_user("nobody"))
    response = nobody.get("/api/v1/queues/")
    assert response.status_code == 403
    assert "jobs.view_job" in response.json()["detail"]


def test_the_api_schema_describes_the_queues():
    schema = APIClient().get("/api/schema/?format=json").json()
    answer = schema["paths"]["/api/v1/queues/"]["get"]["responses"]["200"]
    assert answer["content"]["application/json"]["schema"]["$ref"].endswith("/Queues")
    fields = schema["components"]["schemas"]["Queue"]["properties"]
    assert {"name", "pending", "running", "oldest_pending_seconds", "limit", "served"} <= set(
        fields
    )


def test_a_run_says_its_queue_and_priority_in_the_api():
    run = make_run(make_job(queue="reports", priority=5), queue="reports", priority=5)
    client = token_client(make_user("viewer", JOB_VIEWERS))
    listed = client.get("/api/v1/runs/").json()["results"][0]
    one = client.get(f"/api/v1/runs/{run.pk}/").json()
    assert (listed["queue"], listed["priority"]) == ("reports", 5)
    assert (one["queue"], one["priority"]) == ("reports", 5)


# --- /metrics ----------------------------------------------------------------------------


def test_metrics_have_the_queue_gauges_labelled_by_queue(client, clock, serving):
    pending("reports", waited=timedelta(seconds=90))
    pending("reports", waited=timedelta(seconds=30))
    make_run(make_job(name="mailer", queue="mail"), status=RUNNING, queue="mail")
    serving({"host:1": "mail"})
    found = scrape(client)
    assert found["jobs_queue_pending{queue=reports}"] == 2
    assert found["jobs_queue_running{queue=reports}"] == 0
    assert found["jobs_queue_oldest_pending_seconds{queue=reports}"] == 90
    assert found["jobs_queue_pending{queue=mail}"] == 0
    assert found["jobs_queue_running{queue=mail}"] == 1
    assert found["jobs_queue_oldest_pending_seconds{queue=mail}"] == 0
    assert found["jobs_queue_limit{queue=reports}"] == 2
    assert "jobs_queue_limit{queue=default}" not in found  # no limit, no sample
    assert found["jobs_queue_served{queue=reports}"] == 0
    assert found["jobs_queue_served{queue=mail}"] == 1
    # The totals are the queues' sums (a retry waiting out its backoff included).
    assert (found["jobs_runs_pending"], found["jobs_runs_running"]) == (2, 1)


def test_the_metrics_text_names_the_queue_label(client, clock):
    pending("reports", waited=timedelta(seconds=5))
    text = client.get("/metrics").content.decode()
    assert 'jobs_queue_pending{queue="reports"} 1.0' in text
    assert 'jobs_queue_running{queue="reports"} 0.0' in text
    assert 'jobs_queue_oldest_pending_seconds{queue="reports"} 5.0' in text
    assert "# TYPE jobs_queue_pending gauge" in text


# --- the dashboard -----------------------------------------------------------------------


@pytest.fixture
def client(client):  # type: ignore[no-untyped-def]
    """Signed in as a viewer."""
    client.force_login(make_user("viewer", JOB_VIEWERS))
    return client


def dashboard(client: Client, **headers: str) -> str:
    response = client.get("/", headers=headers)
    assert response.status_code == 200
    return response.text


def row(page: str, queue: str) -> str:
    start = page.index(f'<tr data-queue="{queue}"')
    return page[start : page.index("</tr>", start)]


def test_the_dashboard_card_lists_each_queue_with_a_link_to_its_jobs(client, clock):
    pending("reports", waited=timedelta(minutes=4, seconds=5))
    make_run(make_job(name="r2", queue="reports"), status=RUNNING, queue="reports")
    beat()
    page = dashboard(client)
    assert 'id="queues"' in page
    reports = row(page, "reports")
    assert '<a href="/jobs/?queue=reports">reports</a>' in reports
    assert 'data-cell="pending">1<' in reports
    assert 'data-cell="running">1<' in reports
    assert 'data-cell="limit">2<' in reports
    assert "4 min 05 s" in reports
    assert "table-danger" not in reports and "table-warning" not in reports
    # The live fragment htmx polls has the card too.
    assert 'data-queue="reports"' in dashboard(client, **{"HX-Request": "true"})
    # The card's totals and the summary's are one reading.
    assert 'id="count-running">1<' in page


def test_the_dashboard_marks_a_queue_nobody_serves_and_one_waiting_long(client, clock, serving):
    pending("reports", waited=timedelta(minutes=1))
    pending("mail", waited=timedelta(minutes=11))
    serving({"host:1": "mail,default"})
    page = dashboard(client)
    reports, mail = row(page, "reports"), row(page, "mail")
    assert 'class="table-danger"' in reports and "no running scheduler serves it" in reports
    assert 'class="table-warning"' in mail and "waiting long" in mail
    assert "no running scheduler serves it" not in mail


def test_the_dashboard_says_when_there_is_no_queue(client, settings):
    settings.JOBS_QUEUE_LIMITS = {}
    assert "No queue has jobs or runs yet." in dashboard(client)


# --- the health check --------------------------------------------------------------------


def test_health_names_a_queue_whose_runs_wait_and_that_no_scheduler_serves(clock, serving):
    beat()
    serving({"host:1": "default"})
    for waited in (timedelta(minutes=7), timedelta(minutes=1), timedelta(seconds=1)):
        pending("reports", waited=waited, job=make_job(name=f"r{waited}", queue="reports"))
    found = health.assess()
    assert found == health.Health(
        health.DOWN,
        "queue reports has 3 runs waiting, the oldest for 7 minutes, and no running "
        "scheduler serves it",
        NOW,
    )


def test_health_stays_ok_when_the_queue_is_served_or_empty_or_its_runs_are_fresh(clock, serving):
    beat()
    make_job(queue="reports")  # nobody serves it, but nothing waits in it
    serving({"host:1": "default"})
    assert health.assess().status == health.OK
    # Waiting, but not longer than the grace and a lease (35 s here): a process may be
    # about to start it.
    pending("reports", waited=timedelta(seconds=30))
    assert health.assess().status == health.OK
    clock.shift(timedelta(seconds=6))
    assert health.assess().status == health.DOWN
    serving({"host:1": "default,reports"})
    assert health.assess().status == health.OK
    serving({"host:1": ""})  # every queue
    assert health.assess().status == health.OK


def test_health_reports_a_served_queue_that_waits_longer_than_the_stall(clock, settings):
    beat()
    pending("reports", waited=timedelta(seconds=601))
    assert health.assess().reason == (
        "queue reports has 1 run waiting, the oldest for 10 minutes "
        "(longer than JOBS_QUEUE_STALL_SECONDS, 600 s)"
    )
    settings.JOBS_QUEUE_STALL_SECONDS = 0
    assert health.assess().status == health.OK


def test_after_a_resume_the_queues_get_the_time_to_come_back(clock, serving):
    # The processes of "reports" were stopped for the maintenance; the others go on.
    serving({"host:1": "default"})
    pending("reports", waited=timedelta(hours=1), job=make_job(queue="reports", is_active=False))
    engine.pause(None, "maintenance")
    clock.shift(timedelta(minutes=1))
    assert health.assess().status == health.PAUSED
    engine.resume()
    clock.shift(timedelta(seconds=30))
    beat()
    assert health.assess().status == health.OK
    clock.shift(timedelta(seconds=6))
    beat()
    found = health.assess()
    assert found.status == health.DOWN and "no running scheduler serves it" in found.reason


def test_with_no_live_scheduler_every_waiting_queue_is_unserved(clock, serving):
    serving({})
    pending("reports", waited=timedelta(minutes=1))
    found = queue_status.stuck_queue(NOW, unserved_after=timedelta(seconds=35), within=timedelta(0))
    assert found == queue_status.StuckQueue("reports", 1, 60.0, served=False)


def test_checkhealth_prints_the_queue_problem(clock, serving, capsys):
    beat()
    serving({"host:1": "default"})
    pending("reports", waited=timedelta(minutes=3))
    with pytest.raises(SystemExit) as exited:
        call_command("checkhealth", "--no-alerts")
    assert exited.value.code == 1
    assert capsys.readouterr().out == (
        "down: queue reports has 1 run waiting, the oldest for 3 minutes, and no running "
        "scheduler serves it\n"
    )


def test_the_health_look_up_reads_no_run_while_nothing_waits_long(clock):
    beat()
    for _ in range(50):
        pending("reports", waited=timedelta(seconds=1), job=make_job(queue="reports"))
    with CaptureQueriesContext(connection) as captured:
        queue_status.stuck_queue(
            NOW,
            unserved_after=timedelta(seconds=35),
            within=timedelta(seconds=35),
            stalled_after=timedelta(seconds=600),
        )
    # The live schedulers, then one look-up for the oldest long wait (LIMIT 1); no count.
    assert len(captured) == 2
    assert "LIMIT 1" in captured[-1]["sql"] and "COUNT" not in captured[-1]["sql"]


# --- a run's queue on the screens ------------------------------------------------------------


def test_the_run_page_shows_the_queue_and_priority(client):
    run = make_run(make_job(queue="reports", priority=-5), queue="reports", priority=-5)
    page = client.get(f"/runs/{run.pk}/").text
    assert '<a href="/jobs/?queue=reports">reports</a>, priority -5' in page


def test_the_admin_run_list_filters_by_queue(client, settings):
    settings.JOBS_QUEUE_LIMITS = {"bulk": 1}
    make_run(make_job(name="report", queue="reports"), queue="reports")
    make_run(make_job(name="other"))
    client.force_login(make_user("root", staff=True, superuser=True))
    response = client.get("/admin/jobs/jobhistory/", {"queue": "reports"})
    assert [run.queue for run in response.context["cl"].result_list] == ["reports"]
    (queue_filter,) = [f for f in response.context["cl"].filter_specs if f.title == "queue"]
    offered = [choice["display"] for choice in queue_filter.choices(response.context["cl"])]
    assert offered == ["All", "bulk", "default", "reports"]


# --- the setting ---------------------------------------------------------------------------


def test_the_stall_is_read_from_the_environment_with_a_default():
    found = settings_in(production_env(), "JOBS_QUEUE_STALL_SECONDS")
    assert found == {"JOBS_QUEUE_STALL_SECONDS": 600.0}
    found = settings_in(production_env(JOBS_QUEUE_STALL_SECONDS="120"), "JOBS_QUEUE_STALL_SECONDS")
    assert found == {"JOBS_QUEUE_STALL_SECONDS": 120.0}


def test_a_bad_stall_stops_the_process():
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "check"],
        cwd=ROOT,
        env=production_env(JOBS_QUEUE_STALL_SECONDS="-5"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "JOBS_QUEUE_STALL_SECONDS must be at least 0.0" in done.stderr


def test_a_schedulers_heartbeat_says_which_queues_it_serves():
    from jobs import metrics
    from jobs.runtime.pool import WorkerPool
    from jobs.runtime.scheduler import Scheduler

    scheduler = Scheduler(name="host:1", workers=1, queues=["reports", "mail"])
    assert isinstance(scheduler.handoff, WorkerPool)
    metrics._beats.clear()  # other tests may have beaten under this name
    scheduler.run_pass()
    assert SchedulerHeartbeat.objects.get(name="host:1").queues == "mail,reports"
    assert queue_status.live_schedulers() == [
        queue_status.ServedBy("host:1", frozenset({"mail", "reports"}))
    ]
    assert queue_status.served_queues() == frozenset({"mail", "reports"})
