"""Alert channels through Apprise, delivered for real: a JSON receiver and an SMTP server
on loopback; URLs refused at save and at send; the URL never shown back."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from datetime import timedelta

import pytest
from aiosmtpd.controller import Controller
from django.core.exceptions import ValidationError
from django.urls import reverse

from jobs import alerts
from jobs.alerts import InlineDispatcher
from jobs.alerts.channels import BODY_MAX_CHARS, send_test
from jobs.alerts.running_long import check_running_long
from jobs.models import NotificationChannel, RunStatus, channels_for
from jobs.tests import personas
from jobs.tests.api_helpers import finish_run, token_client
from jobs.tests.factories import NOW, make_job, make_run
from jobs.tests.observability.receivers import Receiver

pytestmark = pytest.mark.django_db

SECRET = "s3cr3t-t0ken-value"


@pytest.fixture(autouse=True)
def inline(settings):
    """Loopback allowed as an internal receiver; alerts delivered in the test's thread."""
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.JOBS_ALERT_ATTEMPTS = 1
    previous = alerts.use_dispatcher(InlineDispatcher(wait=lambda seconds: False))
    yield
    alerts.use_dispatcher(previous)


@pytest.fixture
def receiver():
    with Receiver() as server:
        yield server


def json_channel(receiver: Receiver, **fields) -> NotificationChannel:
    channel = NotificationChannel(
        name=fields.pop("name", "ops json"),
        url=f"json://user:{SECRET}@127.0.0.1:{receiver.port}/hook",
        **fields,
    )
    channel.full_clean()
    channel.save()
    return channel


def bodies(receiver: Receiver, count: int) -> list[dict]:
    return [json.loads(r.body) for r in receiver.wait_for(count)]


def test_failure_and_recovery_reach_a_json_receiver(receiver, django_capture_on_commit_callbacks):
    channel = json_channel(receiver)
    job = make_job(name="nightly backup", notify_on_failure=True, notify_on_recovery=True)
    job.channels.add(channel)
    with django_capture_on_commit_callbacks(execute=True):
        finish_run(job, succeeded=False, log="$ backup\n" + "x" * 20000 + "\ndisk full\n")
    with django_capture_on_commit_callbacks(execute=True):
        finish_run(job, succeeded=True)

    failure, recovery = bodies(receiver, 2)
    assert failure["title"] == "[scheduler] nightly backup failed"
    assert "disk full" in failure["message"]
    assert len(failure["message"]) <= BODY_MAX_CHARS
    assert recovery["title"] == "[scheduler] nightly backup recovered"
    assert receiver.requests[0].path == "/hook"


def test_running_long_reaches_the_channel(receiver, django_capture_on_commit_callbacks):
    job = make_job(name="slow report", notify_on_failure=True, expected_seconds=60)
    job.channels.add(json_channel(receiver))
    make_run(job, at=NOW, status=RunStatus.RUNNING, heartbeat_at=NOW)
    with django_capture_on_commit_callbacks(execute=True):
        assert check_running_long(NOW + timedelta(seconds=61)) == 1

    (body,) = bodies(receiver, 1)
    assert body["title"] == "[scheduler] slow report is running long"
    assert "Expected to take at most: 60 s" in body["message"]


def test_a_channel_gets_only_its_events(receiver, django_capture_on_commit_callbacks):
    job = make_job(notify_on_failure=True, notify_on_recovery=True)
    job.channels.add(json_channel(receiver, events=["recovery"]))
    with django_capture_on_commit_callbacks(execute=True):
        finish_run(job, succeeded=False)
    assert receiver.requests == []
    with django_capture_on_commit_callbacks(execute=True):
        finish_run(job, succeeded=True)
    (body,) = bodies(receiver, 1)
    assert body["title"].endswith("recovered")


class Inbox:
    def __init__(self) -> None:
        self.messages: list[bytes] = []
        self.arrived = threading.Event()

    async def handle_DATA(self, server, session, envelope):  # aiosmtpd calls it by this name
        self.messages.append(envelope.content)
        self.arrived.set()
        return "250 OK"


def test_mailto_reaches_a_real_smtp_server(django_capture_on_commit_callbacks):
    inbox = Inbox()
    with socket.socket() as probe:  # a free port: aiosmtpd's start() needs a known one
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        channel = NotificationChannel(
            name="mail",
            url=(
                f"mailto://example.com:{port}?smtp=127.0.0.1&mode=insecure"
                "&from=scheduler@example.com&to=oncall@example.com"
            ),
        )
        channel.full_clean()
        channel.save()
        job = make_job(name="mailed job", notify_on_failure=True)
        job.channels.add(channel)
        with django_capture_on_commit_callbacks(execute=True):
            finish_run(job, succeeded=False)
        assert inbox.arrived.wait(20)
    finally:
        controller.stop()
    text = inbox.messages[0].decode()
    assert "mailed job failed" in text
    assert "oncall@example.com" in text


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("json://", "Apprise cannot read this URL"),
        ("nosuch://host/path", "not supported"),
        ("json://10.0.0.5/hook", "not a public address"),
        ("json://localhost:8080/hook", "local name"),
        (
            "mailto://example.com?smtp=169.254.169.254&from=a@example.com&to=b@example.com",
            "not a public address",
        ),
    ],
)
def test_bad_or_forbidden_urls_are_refused_and_nothing_is_saved(url, why, settings):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = []
    client = personas.signed_in(personas.superuser())
    response = client.post(
        reverse("admin:jobs_notificationchannel_add"),
        {"name": "bad", "url": url, "events": '["failure"]', "is_active": "on"},
    )
    assert response.status_code == 200
    assert why in response.content.decode()
    assert not NotificationChannel.objects.exists()
    with pytest.raises(ValidationError):
        NotificationChannel(name="bad", url=url).full_clean()


def test_the_address_rules_are_applied_again_before_sending(
    receiver, settings, django_capture_on_commit_callbacks, caplog
):
    job = make_job(notify_on_failure=True)
    job.channels.add(json_channel(receiver))
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = []  # no longer allowed by the time it sends
    with django_capture_on_commit_callbacks(execute=True):
        run = finish_run(job, succeeded=False)
    assert receiver.requests == []
    assert run.status == RunStatus.FAILED  # the run is not the worse for it
    assert "not a public address" in caplog.text
    assert SECRET not in caplog.text


def test_the_url_is_never_shown_back(receiver):
    channel = json_channel(receiver)
    job = make_job(name="shown job")
    job.channels.add(channel)
    client = personas.signed_in(personas.superuser())
    pages = [
        client.get(reverse("admin:jobs_notificationchannel_changelist")),
        client.get(reverse("admin:jobs_notificationchannel_change", args=[channel.pk])),
        client.get(reverse("admin:jobs_job_change", args=[job.pk])),
    ]
    for page in pages:
        assert page.status_code == 200
        assert SECRET not in page.content.decode()
    assert "json://…" in pages[0].content.decode()
    api = token_client(personas.superuser("api-root")).get(f"/api/v1/jobs/{job.pk}/")
    assert api.status_code == 200
    assert api.json()["channels"] == [channel.pk]
    assert SECRET not in api.content.decode()


def test_a_blank_url_in_the_admin_keeps_the_stored_one(receiver):
    channel = json_channel(receiver)
    stored = channel.url
    client = personas.signed_in(personas.superuser())
    response = client.post(
        reverse("admin:jobs_notificationchannel_change", args=[channel.pk]),
        {"name": "renamed", "url": "", "events": '["failure"]', "is_active": "on"},
    )
    assert response.status_code == 302
    channel.refresh_from_db()
    assert (channel.name, channel.url, channel.events) == ("renamed", stored, ["failure"])


def test_the_admin_action_sends_a_test(receiver):
    channel = json_channel(receiver, name="test me")
    client = personas.signed_in(personas.superuser())
    response = client.post(
        reverse("admin:jobs_notificationchannel_changelist"),
        {"action": "send_test_message", "_selected_action": [channel.pk]},
        follow=True,
    )
    assert "Test message sent" in response.content.decode()
    (body,) = bodies(receiver, 1)
    assert body["title"] == "[scheduler] test me test message"


def test_the_api_sets_a_jobs_channels(receiver):
    channel = json_channel(receiver)
    job = make_job()
    client = token_client(personas.superuser("api-root"))
    response = client.patch(f"/api/v1/jobs/{job.pk}/", {"channels": [channel.pk]}, format="json")
    assert response.status_code == 200, response.content
    assert list(job.channels.all()) == [channel]
    response = client.patch(f"/api/v1/jobs/{job.pk}/", {"channels": [999999]}, format="json")
    assert response.status_code == 400
    assert list(job.channels.all()) == [channel]


def test_a_job_without_channels_of_its_own_uses_its_teams_defaults(receiver):
    from django.contrib.auth.models import Group

    team = Group.objects.create(name="payments")
    default = json_channel(receiver, name="team default", team=team, is_team_default=True)
    json_channel(receiver, name="other", team=team)
    job = make_job()
    assert channels_for(job) == []  # no team (yet): none
    job.team_id = team.pk  # what Job.team will hold
    assert channels_for(job) == [default]
    own = json_channel(receiver, name="own")
    job.channels.add(own)
    assert channels_for(job) == [own]


# --- the dashboard's screens -------------------------------------------------------------


def test_the_dashboard_lists_and_edits_channels_without_showing_the_url(receiver):
    channel = json_channel(receiver, name="ops")
    client = personas.signed_in(personas.superuser())
    listing = client.get(reverse("jobs:channel_list"))
    page = client.get(reverse("jobs:channel_edit", args=[channel.pk]))
    for response in (listing, page):
        assert response.status_code == 200
        assert SECRET not in response.content.decode()
    assert "json://…" in listing.content.decode()
    response = client.post(
        reverse("jobs:channel_edit", args=[channel.pk]),
        {"name": "ops team", "url": "", "events": ["failure", "recovery"], "is_active": "on"},
    )
    assert response.status_code == 302
    channel.refresh_from_db()
    assert (channel.name, channel.events, SECRET in channel.url) == (
        "ops team",
        ["failure", "recovery"],
        True,
    )


def test_the_dashboard_refuses_a_forbidden_host_and_saves_nothing(settings):
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = []
    client = personas.signed_in(personas.superuser())
    response = client.post(
        reverse("jobs:channel_create"),
        {"name": "internal", "url": "json://127.0.0.1:9/x", "events": ["failure"]},
    )
    assert response.status_code == 400
    assert "127.0.0.1 is not a public address" in response.content.decode()
    assert not NotificationChannel.objects.exists()


def test_send_a_test_from_the_dashboard_delivers_and_needs_the_change_permission(receiver):
    channel = json_channel(receiver, name="pager")
    viewer = personas.signed_in(personas.viewer())
    assert viewer.post(reverse("jobs:channel_test", args=[channel.pk])).status_code == 403
    assert receiver.requests == []
    client = personas.signed_in(personas.superuser())
    response = client.post(reverse("jobs:channel_test", args=[channel.pk]), follow=True)
    assert "Test message sent" in response.content.decode()
    (body,) = bodies(receiver, 1)
    assert body["title"] == "[scheduler] pager test message"


def test_the_job_form_chooses_channels(receiver):
    channel = json_channel(receiver, name="chosen")
    client = personas.signed_in(personas.superuser())
    html = client.get(reverse("jobs:job_create")).content.decode()
    assert f'name="channels" value="{channel.pk}"' in html
    assert "chosen" in html
    assert SECRET not in html


# --- the API ---------------------------------------------------------------------------------


def test_the_api_keeps_channels_with_the_url_write_only(receiver, settings):
    client = token_client(personas.superuser("api-root"))
    url = f"json://user:{SECRET}@127.0.0.1:{receiver.port}/hook"
    created = client.post("/api/v1/channels/", {"name": "api", "url": url}, format="json")
    assert created.status_code == 201, created.content
    assert SECRET not in created.content.decode()
    assert created.json()["service"] == "json://…"
    assert created.json()["events"] == ["failure", "recovery", "running_long"]
    channel_id = created.json()["id"]
    listed = client.get("/api/v1/channels/")
    assert SECRET not in listed.content.decode()
    changed = client.patch(f"/api/v1/channels/{channel_id}/", {"name": "api 2"}, format="json")
    assert changed.status_code == 200
    assert NotificationChannel.objects.get().url == url  # left out: kept
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = []
    refused = client.patch(
        f"/api/v1/channels/{channel_id}/", {"url": "json://10.1.2.3/x"}, format="json"
    )
    assert refused.status_code == 400
    assert "not a public address" in refused.json()["url"][0]
    assert NotificationChannel.objects.get().url == url
    viewer = token_client(personas.viewer("api-viewer"))
    assert viewer.get("/api/v1/channels/").status_code == 200
    assert viewer.delete(f"/api/v1/channels/{channel_id}/").status_code == 403
    assert NotificationChannel.objects.exists()


# --- without the [apprise] extra -------------------------------------------------------------


def run_checks_ids() -> list[str]:
    from django.core import checks

    return [message.id for message in checks.run_checks()]


def test_a_site_without_apprise_is_told_which_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "apprise", None)  # what `import apprise` finds missing
    assert "jobs.E015" not in run_checks_ids()  # no channel: nothing to say
    NotificationChannel.objects.create(name="saved before", url="json://127.0.0.1:9/x")
    from django.core import checks

    (error,) = [m for m in checks.run_checks() if m.id == "jobs.E015"]
    assert "[apprise]" in error.hint
    ok, why = send_test(NotificationChannel.objects.get())
    assert (ok, why) == (False, "refused: apprise is not installed")


def test_loading_the_site_imports_no_apprise():
    code = (
        "import sys, django; django.setup(); "
        "import jobs.admin, jobs.alerts, jobs.alerts.channels, jobs.api.urls, jobs.web.urls; "
        "print('apprise' in sys.modules)"
    )
    answer = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "scheduler_site.settings"},
        check=True,
    )
    assert answer.stdout.strip().splitlines()[-1] == "False"
