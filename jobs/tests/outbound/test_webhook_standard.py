"""Webhooks as the Standard Webhooks specification asks: every payload has a `type`
(run.failed, run.recovered, run.running_long, run.not_stopped, scheduler.down,
scheduler.recovered) and a `timestamp` (when the event happened), checked on what the
specification's own library verifies; a whsec_ secret without its base64 padding is
accepted, as that library does."""

from __future__ import annotations

import base64
import os
from datetime import datetime, timedelta

import pytest
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from jobs import alerts, engine
from jobs.alerts import InlineDispatcher, Notice, health
from jobs.models import NotificationKind
from jobs.outbound import signing
from jobs.tests.alerts.test_health import LIMIT, beat
from jobs.tests.api_helpers import finish_run, webhook_server
from jobs.tests.factories import make_job, make_run
from jobs.tests.outbound.test_webhook_signing import documented_says_valid

pytestmark = pytest.mark.django_db


def unpadded_secret(size: int = 32) -> str:
    """A secret whose base64 ends in "=" padding, written without it."""
    assert size % 3, "a whole number of 3-byte groups has no padding to leave off"
    encoded = base64.b64encode(os.urandom(size)).decode()
    assert encoded.endswith("=")
    return "whsec_" + encoded.rstrip("=")


SITE_SECRET = unpadded_secret()


@pytest.fixture(autouse=True)
def local_hooks(settings):
    """127.0.0.1 is internal: allowed as a receiver for these tests (jobs/outbound.py)."""
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.JOBS_WEBHOOK_SECRET = SITE_SECRET
    settings.JOBS_ALERT_BACKOFF_SECONDS = 0
    settings.JOBS_ALERT_ATTEMPTS = 1
    settings.JOBS_ADMIN_ALERT_URL = ""
    settings.JOBS_ADMIN_ALERT_EMAILS = []


@pytest.fixture(autouse=True)
def inline_alerts():
    previous = alerts.use_dispatcher(InlineDispatcher(wait=lambda seconds: False))
    yield
    alerts.use_dispatcher(previous)


def verified(hook, secret: str = SITE_SECRET) -> list[dict]:
    """Each payload received, as the specification's library verifies and reads it."""
    return [
        Webhook(secret).verify(body, headers)
        for headers, body in zip(hook.headers, hook.bodies, strict=True)
    ]


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_failure_and_its_recovery_are_typed_and_stamped_with_when_the_run_ended(
    django_capture_on_commit_callbacks,
):
    with webhook_server() as hook:
        job = make_job(notify_on_failure=True, notify_on_recovery=True, webhook_url=hook.url)
        now = timezone.now().replace(microsecond=0)
        with django_capture_on_commit_callbacks(execute=True):
            failed = finish_run(job, succeeded=False, now=now)
            recovered = finish_run(job, succeeded=True, now=now + timedelta(minutes=1))
    payloads = verified(hook)
    assert [p["type"] for p in payloads] == ["run.failed", "run.recovered"]
    # The older name stays beside it, for receivers written before.
    assert [p["event"] for p in payloads] == ["failure", "recovery"]
    failed.refresh_from_db()
    recovered.refresh_from_db()
    assert [moment(p["timestamp"]) for p in payloads] == [
        failed.finished_at,
        recovered.finished_at,
    ]


def test_a_running_long_alert_is_stamped_with_when_the_run_passed_its_limit():
    run = make_run(status="running")
    notice = Notice(
        run_key=run.pk.hex,
        job_key=run.job.pk.hex,
        kind=NotificationKind.RUNNING_LONG,
        expected_seconds=90.0,
        expected_from="expected_seconds",
    )
    payload = alerts.build_payload(run, notice)
    assert payload["type"] == "run.running_long"
    assert payload["timestamp"] == run.started_at + timedelta(seconds=90)


def test_a_task_that_did_not_stop_is_stamped_with_when_it_was_noticed(clock):
    run = make_run(status="running")
    notice = Notice(run.pk.hex, run.job.pk.hex, NotificationKind.NOT_STOPPED)
    payload = alerts.build_payload(run, notice)
    assert (payload["type"], payload["timestamp"]) == ("run.not_stopped", timezone.now())


def test_the_scheduler_down_and_recovered_alerts_are_typed_and_stamped(clock, settings):
    with webhook_server() as hook:
        settings.JOBS_ADMIN_ALERT_URL = hook.url
        job = make_job(name="report")
        down_at = job.next_run_at + LIMIT + timedelta(seconds=5)
        clock.move_to(down_at)
        beat()
        assert health.watch().status == health.DOWN
        clock.shift(timedelta(seconds=7))
        engine.claim_due()
        assert health.watch().status == health.OK
    down, recovered = verified(hook)
    assert (down["type"], recovered["type"]) == ("scheduler.down", "scheduler.recovered")
    assert moment(down["timestamp"]) == down_at
    assert moment(recovered["timestamp"]) == down_at + timedelta(seconds=7)


def test_every_event_the_project_sends_has_a_dotted_type():
    from jobs.alerts import events

    sent = {*NotificationKind.values, health.DOWN_EVENT, health.RECOVERED_EVENT}
    assert set(events.EVENT_TYPES) == sent
    assert all("." in kind for kind in events.EVENT_TYPES.values())


def test_a_secret_without_its_padding_is_the_same_key_as_with_it():
    padded = "whsec_" + base64.b64encode(os.urandom(32)).decode()
    assert padded.endswith("=")
    unpadded = padded.rstrip("=")
    assert signing.parse_secret(unpadded) == signing.parse_secret(padded)
    assert signing.parse_secret(unpadded) == Webhook(unpadded)._whsecret


def test_a_jobs_own_unpadded_secret_is_accepted_and_signs_what_the_library_verifies(
    django_capture_on_commit_callbacks,
):
    own = unpadded_secret(40)
    with webhook_server() as hook:
        job = make_job(notify_on_failure=True, webhook_url=hook.url, webhook_secret=own, clean=True)
        with django_capture_on_commit_callbacks(execute=True):
            finish_run(job, succeeded=False)
    (payload,) = verified(hook, own)
    assert payload["type"] == "run.failed"
    # And docs/alerts.md's five lines check it as well.
    assert documented_says_valid(own, hook.headers[0], hook.bodies[0])


@pytest.mark.parametrize("secret", ["whsec_a", "whsec_abcde", "whsec_" + "A" * 31 + "==="])
def test_base64_that_no_padding_can_complete_is_still_refused(secret):
    with pytest.raises(signing.BadSecret) as refused:
        signing.parse_secret(secret)
    assert refused.value.code == "base64"
