"""Scheduler down: noticed from the database, alerted once per incident (the database
decides), with a recovery notice; `manage.py checkhealth`'s exit codes; the settings."""

from __future__ import annotations

import io
import subprocess
import sys
from datetime import timedelta

import pytest
from django.core import mail
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.utils import timezone

from jobs import engine, metrics
from jobs.access.masking import url_origin
from jobs.alerts import health
from jobs.alerts.checks import admin_alert_url_allowed
from jobs.models import SchedulerAction, SchedulerEvent, SchedulerHealth, SchedulerHeartbeat
from jobs.runtime.scheduler import Scheduler
from jobs.tests.api_helpers import webhook_server
from jobs.tests.factories import NOW, make_job
from jobs.tests.metrics.test_metrics import scrape
from jobs.tests.project.test_deploy_settings import ROOT, production_env, settings_in

pytestmark = pytest.mark.django_db

# JOBS_MISFIRE_GRACE_SECONDS 5 + JOBS_LEASE_SECONDS 30 (the test settings' defaults).
LIMIT = timedelta(seconds=35)


@pytest.fixture(autouse=True)
def quick_alerts(settings):
    """Alerts to a receiver on 127.0.0.1 (allowed as an internal receiver), no waits."""
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.JOBS_ALERT_BACKOFF_SECONDS = 0
    settings.JOBS_ALERT_ATTEMPTS = 2
    settings.JOBS_ADMIN_ALERT_URL = ""
    settings.JOBS_ADMIN_ALERT_EMAILS = []


def beat(at=None) -> None:  # type: ignore[no-untyped-def]
    """A scheduler heartbeat at `at` (default now)."""
    at = at or timezone.now()
    SchedulerHeartbeat.objects.update_or_create(
        name="host:1", defaults={"pid": 1, "host": "host", "started_at": at, "seen_at": at}
    )


def events() -> list[str]:
    return list(SchedulerEvent.objects.order_by("id").values_list("action", flat=True))


# --- what counts as down ---------------------------------------------------------------


def test_fresh_heartbeats_and_nothing_overdue_are_ok(clock):
    beat()
    make_job()  # due at NOW + 10 s
    assert health.assess() == health.Health(health.OK, "", NOW)


def test_no_heartbeat_ever_is_down(clock):
    found = health.assess()
    assert found.status == health.DOWN
    assert found.reason == "no scheduler process has ever sent a heartbeat"


def test_a_silent_scheduler_is_down_after_the_grace_and_a_lease(clock):
    beat()
    clock.shift(LIMIT)
    assert health.assess().status == health.OK
    clock.shift(timedelta(seconds=1))
    found = health.assess()
    assert found.status == health.DOWN
    assert found.reason.startswith("no scheduler heartbeat for 36 s")


def test_due_work_left_unclaimed_is_down_though_schedulers_beat(clock):
    job = make_job(name="nightly backup")
    clock.move_to(job.next_run_at + LIMIT)
    beat()
    assert health.assess().status == health.OK
    clock.shift(timedelta(seconds=1))
    beat()
    found = health.assess()
    assert found.status == health.DOWN
    assert "“nightly backup” has been due for 36 s" in found.reason
    engine.claim_due()
    assert health.assess().status == health.OK


def test_a_paused_scheduler_is_not_down_and_its_resume_starts_the_clocks_again(clock):
    job = make_job()
    engine.pause(note="maintenance")
    clock.shift(timedelta(hours=2))  # no heartbeat, the job overdue: on purpose
    found = health.assess()
    assert found.status == health.PAUSED and found.reason.startswith("paused since")
    engine.resume()
    clock.shift(LIMIT)
    assert health.assess().status == health.OK  # the first claim may not have come yet
    clock.shift(timedelta(seconds=1))
    assert health.assess().status == health.DOWN
    assert job.next_run_at < timezone.now()


def test_a_pause_that_ended_by_its_until_counts_from_the_until(clock):
    make_job()
    engine.pause(until=NOW + timedelta(hours=1))
    clock.move_to(NOW + timedelta(hours=1, seconds=20))  # not yet settled by any scheduler
    assert health.assess().status == health.OK


# --- once per incident, and the recovery -------------------------------------------------


def test_the_alert_fires_once_per_incident_and_the_recovery_once(clock, settings):
    with webhook_server() as hook:
        settings.JOBS_ADMIN_ALERT_URL = hook.url
        job = make_job(name="report")
        clock.move_to(job.next_run_at + LIMIT + timedelta(seconds=5))
        beat()
        assert health.watch().status == health.DOWN
        # Any number of later checks, from any process: the incident row is set.
        clock.shift(timedelta(seconds=5))
        beat()
        assert health.watch().status == health.DOWN
        assert health.watch().status == health.DOWN
        assert [body["event"] for body in hook.received] == ["scheduler_down"]
        down = hook.received[0]
        assert "“report” has been due for 40 s" in down["reason"]
        assert down["dashboard_url"].endswith("/scheduler/")
        assert SchedulerHealth.objects.get().down_since == NOW + timedelta(seconds=50)

        engine.claim_due()
        assert health.watch().status == health.OK
        assert health.watch().status == health.OK
        sent = [body["event"] for body in hook.received]
        assert sent == ["scheduler_down", "scheduler_recovered"]
        recovered = hook.received[1]
        assert recovered["down_seconds"] == 5
        assert SchedulerHealth.objects.get().down_since is None

        clock.shift(timedelta(minutes=5))  # silent again: a new incident, a new alert
        assert health.watch().status == health.DOWN
        assert [body["event"] for body in hook.received][-1] == "scheduler_down"
        assert len(hook.received) == 3
    assert events() == ["down", "recovered", "down"]
    delivery = SchedulerEvent.objects.filter(action=SchedulerAction.RECOVERED).get().delivery
    assert delivery == f"webhook {url_origin(hook.url)}: sent"


def test_the_database_decides_not_the_process(clock):
    """Two processes that both saw "down" race to mark it: one conditional update wins,
    the other finds the row set and sends nothing."""
    found = health.assess()
    assert found.status == health.DOWN
    assert health._mark_down(found) is not None
    assert health._mark_down(found) is None  # the second process, with the same finding
    assert events() == ["down"]


def test_a_pause_neither_opens_nor_closes_an_incident(clock, settings):
    assert health.watch(alert=False).status == health.DOWN
    engine.pause()
    beat()
    assert health.watch(alert=False).status == health.PAUSED
    assert SchedulerHealth.objects.get().down_since == NOW  # still open: not recovered
    engine.resume()
    assert health.watch(alert=False).status == health.OK
    assert events() == ["down", "pause", "resume", "recovered"]


def test_the_alert_is_mailed_and_a_failing_webhook_is_retried_and_recorded(clock, settings):
    settings.JOBS_ADMIN_ALERT_EMAILS = ["ops@example.com", "oncall@example.com"]
    with webhook_server(answers=[500, 503]) as hook:
        settings.JOBS_ADMIN_ALERT_URL = hook.url
        health.watch()
    assert len(hook.received) == 2  # JOBS_ALERT_ATTEMPTS
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.subject == "[scheduler] the scheduler is down"
    assert message.to == ["ops@example.com", "oncall@example.com"]
    assert "no scheduler process has ever sent a heartbeat" in message.body
    delivery = SchedulerEvent.objects.get().delivery
    assert "failed: HTTP 503" in delivery and "e-mail to 2: sent" in delivery


def test_a_refused_address_is_not_retried(clock, settings):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = []
    settings.JOBS_ADMIN_ALERT_URL = "http://127.0.0.1:9/hook"
    assert health.watch().status == health.DOWN
    assert "refused: 127.0.0.1 is not a public address" in SchedulerEvent.objects.get().delivery


@pytest.mark.django_db(transaction=True)  # the alert goes out from a thread of its own
def test_a_running_scheduler_notices_due_work_left_unclaimed(clock, settings, monkeypatch):
    """The claims of some scheduler fail (here: all of them); the loop of a live one
    notices the work waiting and tells, once."""
    with webhook_server() as hook:
        settings.JOBS_ADMIN_ALERT_URL = hook.url
        make_job(name="stuck")
        monkeypatch.setattr(
            engine, "claim_due_starting", lambda *args, **kwargs: engine.ClaimedRuns([], [])
        )
        # Its own name: this process's heartbeats are written at most every 5 s per name.
        loop = Scheduler(workers=1, name="host:noticing")
        clock.move_to(NOW + timedelta(minutes=1))
        loop.run_pass()
        loop._watch_health()
        assert health.flush(timeout=10)
        loop._last_health_check = 0.0
        loop._watch_health()
        assert health.flush(timeout=10)
        loop.shutdown()
    assert [body["event"] for body in hook.received] == ["scheduler_down"]
    assert "“stuck” has been due for 50 s" in hook.received[0]["reason"]


# --- checkhealth ------------------------------------------------------------------------


def checkhealth(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("checkhealth", *args, stdout=out)
    except SystemExit as stopped:
        return int(stopped.code), out.getvalue()
    return 0, out.getvalue()


def test_checkhealth_exits_1_with_the_reason_and_0_with_ok(clock, settings):
    with webhook_server() as hook:
        settings.JOBS_ADMIN_ALERT_URL = hook.url
        assert checkhealth() == (1, "down: no scheduler process has ever sent a heartbeat\n")
        assert checkhealth() == (1, "down: no scheduler process has ever sent a heartbeat\n")
        beat()
        assert checkhealth() == (0, "ok\n")
        assert checkhealth("--quiet") == (0, "")
    assert [body["event"] for body in hook.received] == ["scheduler_down", "scheduler_recovered"]


def test_checkhealth_says_ok_while_paused(clock):
    engine.pause(until=NOW + timedelta(hours=1))
    code, out = checkhealth()
    assert code == 0
    until = (NOW + timedelta(hours=1)).isoformat()
    assert out == f"ok: paused since {NOW.isoformat()} until {until}\n"


def test_checkhealth_no_alerts_only_reports(clock):
    assert checkhealth("--no-alerts")[0] == 1
    assert not SchedulerHealth.objects.exists()
    assert not SchedulerEvent.objects.exists()


def test_checkhealth_in_its_own_process_exits_1_when_the_database_is_gone(tmp_path):
    env = production_env(DATABASE_URL=f"sqlite:///{tmp_path / 'missing' / 'db.sqlite3'}")
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "checkhealth"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith("down: the database did not answer")
    assert len(done.stdout.splitlines()) == 1


def test_healthz_stays_about_the_web_process_and_its_database(client, clock):
    assert health.assess().status == health.DOWN
    assert client.get("/healthz").json() == {"status": "ok"}


# --- the settings ------------------------------------------------------------------------


def test_the_admin_alert_settings_are_read_from_the_environment():
    env = production_env(
        JOBS_ADMIN_ALERT_URL="https://alerts.example.com/hook",
        JOBS_ADMIN_ALERT_EMAILS="ops@example.com, oncall@example.com",
    )
    found = settings_in(env, "JOBS_ADMIN_ALERT_URL", "JOBS_ADMIN_ALERT_EMAILS")
    assert found == {
        "JOBS_ADMIN_ALERT_URL": "https://alerts.example.com/hook",
        "JOBS_ADMIN_ALERT_EMAILS": ["ops@example.com", "oncall@example.com"],
    }


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("JOBS_ADMIN_ALERT_URL", "ftp://alerts.example.com/", "must be an http:// or https://"),
        ("JOBS_ADMIN_ALERT_URL", "https://", "must be an http:// or https://"),
        ("JOBS_ADMIN_ALERT_EMAILS", "ops@example.com,not an address", "'not an address'"),
    ],
)
def test_bad_admin_alert_settings_stop_the_process(name, value, message):
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "check"],
        cwd=ROOT,
        env=production_env(**{name: value}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert name in done.stderr and message in done.stderr


def test_the_admin_alert_url_follows_the_address_rules_of_job_webhooks(settings):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = []
    for url in ("http://127.0.0.1:8080/", "http://localhost/", "https://169.254.169.254/"):
        settings.JOBS_ADMIN_ALERT_URL = url
        assert [error.id for error in admin_alert_url_allowed()] == ["jobs.E011"], url
    settings.JOBS_ADMIN_ALERT_URL = "https://93.184.215.14/hook"  # a literal address: no DNS
    assert admin_alert_url_allowed() == []
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.JOBS_ADMIN_ALERT_URL = "http://127.0.0.1:8080/"
    assert admin_alert_url_allowed() == []
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = []
    with pytest.raises(SystemCheckError):
        call_command("check")


# --- /metrics -----------------------------------------------------------------------------


def test_metrics_have_a_paused_gauge(client):
    assert scrape(client)["jobs_scheduler_paused"] == 0
    engine.pause()
    assert scrape(client)["jobs_scheduler_paused"] == 1
    engine.resume()
    assert scrape(client)["jobs_scheduler_paused"] == 0
    assert metrics.alive_within() >= timedelta(seconds=15)


def test_the_huey_periodic_pass_gets_a_minute_more(settings, clock):
    beat()
    settings.JOBS_HUEY_PERIODIC_PASS = True
    clock.shift(LIMIT + timedelta(seconds=30))  # between two periodic passes
    assert health.assess().status == health.OK
    clock.shift(timedelta(seconds=31))
    assert health.assess().status == health.DOWN
