"""Signed webhooks (Standard Webhooks): the headers, the signature checked by the five
lines of docs/alerts.md and by the specification's own library, the secrets' form,
unsigned sends."""

from __future__ import annotations

import base64
import os
import re
import time
from pathlib import Path

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from jobs import alerts
from jobs.alerts import InlineDispatcher
from jobs.alerts.webhook import post_webhook
from jobs.models import NotificationAttempt
from jobs.outbound import signing
from jobs.tests.api_helpers import finish_run, webhook_server
from jobs.tests.factories import make_job
from jobs.tests.project.test_deploy_settings import manage, production_env

pytestmark = pytest.mark.django_db

ALERTS_PAGE = Path(__file__).resolve().parents[3] / "docs" / "alerts.md"


def new_secret(size: int = 32) -> str:
    return "whsec_" + base64.b64encode(os.urandom(size)).decode()


SITE_SECRET = new_secret()


@pytest.fixture(autouse=True)
def local_hooks(settings):
    """127.0.0.1 is internal: allowed as a receiver for these tests (jobs/outbound/rules.py)."""
    settings.JOBS_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.JOBS_WEBHOOK_SECRET = SITE_SECRET
    settings.JOBS_ALERT_BACKOFF_SECONDS = 0


@pytest.fixture(autouse=True)
def inline_alerts():
    previous = alerts.use_dispatcher(InlineDispatcher(wait=lambda seconds: False))
    yield
    alerts.use_dispatcher(previous)


def documented_verifier() -> str:
    """The receiver's check as docs/alerts.md shows it (section "Signed webhooks")."""
    section = ALERTS_PAGE.read_text().split("## Signed webhooks", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    lines = [line for line in code.splitlines() if line.strip()]
    assert lines[0].startswith("import ") and len(lines) == 6, code  # five after the import
    return code


def documented_says_valid(secret: str, headers: dict[str, str], body: bytes) -> bool:
    scope = {"secret": secret, "headers": CaseInsensitive(headers), "body": body}
    exec(documented_verifier(), scope)  # the page's own lines, as a receiver runs them
    return scope["valid"]


class CaseInsensitive(dict):
    """Header names as a receiver's framework gives them (Django's request.headers)."""

    def __init__(self, headers: dict[str, str]) -> None:
        super().__init__({name.lower(): value for name, value in headers.items()})

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(name.lower())


def failed_delivery(django_capture_on_commit_callbacks, **job_fields):
    """A job's failure alert, delivered to a real local server: (hook, run)."""
    with webhook_server(answers=job_fields.pop("answers", [])) as hook:
        job = make_job(notify_on_failure=True, webhook_url=hook.url, **job_fields)
        with django_capture_on_commit_callbacks(execute=True):
            run = finish_run(job, succeeded=False)
    return hook, run


def test_a_delivered_alert_verifies_with_the_documented_lines_and_not_with_another_secret(
    django_capture_on_commit_callbacks,
):
    hook, _ = failed_delivery(django_capture_on_commit_callbacks)
    headers, body = hook.headers[0], hook.bodies[0]
    assert documented_says_valid(SITE_SECRET, headers, body)
    assert not documented_says_valid(new_secret(), headers, body)
    # A body changed on the way fails too.
    assert not documented_says_valid(SITE_SECRET, headers, body.replace(b"failed", b"success"))


def test_the_specifications_own_library_verifies_it_too(django_capture_on_commit_callbacks):
    hook, _ = failed_delivery(django_capture_on_commit_callbacks)
    headers, body = hook.headers[0], hook.bodies[0]
    assert Webhook(SITE_SECRET).verify(body, headers)["event"] == "failure"
    with pytest.raises(WebhookVerificationError):
        Webhook(new_secret()).verify(body, headers)


def test_every_webhook_carries_the_three_headers(django_capture_on_commit_callbacks):
    began = int(time.time())
    hook, run = failed_delivery(django_capture_on_commit_callbacks)
    headers = {name.lower(): value for name, value in hook.headers[0].items()}
    assert headers["webhook-id"] == f"msg_{run.pk.hex}_failure"
    assert began <= int(headers["webhook-timestamp"]) <= int(time.time())
    assert re.fullmatch(r"v1,[A-Za-z0-9+/]{43}=", headers["webhook-signature"])
    assert headers["content-type"] == "application/json"


def test_the_webhook_id_stays_the_same_on_every_retry_and_each_try_is_signed(
    django_capture_on_commit_callbacks, settings
):
    settings.JOBS_ALERT_ATTEMPTS = 3
    hook, run = failed_delivery(django_capture_on_commit_callbacks, answers=[500, 503])
    assert len(hook.headers) == 3
    ids = {headers["webhook-id"] for headers in hook.headers}
    assert ids == {f"msg_{run.pk.hex}_failure"}
    for headers, body in zip(hook.headers, hook.bodies, strict=True):
        Webhook(SITE_SECRET).verify(body, headers)
    assert [a.status for a in NotificationAttempt.objects.filter(run=run)] == [
        "failed",
        "failed",
        "sent",
    ]


def test_a_jobs_own_secret_signs_in_place_of_the_sites(django_capture_on_commit_callbacks):
    own = new_secret(64)
    hook, _ = failed_delivery(django_capture_on_commit_callbacks, webhook_secret=own)
    headers, body = hook.headers[0], hook.bodies[0]
    assert documented_says_valid(own, headers, body)
    assert not documented_says_valid(SITE_SECRET, headers, body)


def test_without_any_secret_the_webhook_goes_unsigned_with_its_id_and_time(
    django_capture_on_commit_callbacks, settings
):
    settings.JOBS_WEBHOOK_SECRET = ""
    hook, run = failed_delivery(django_capture_on_commit_callbacks)
    headers = {name.lower(): value for name, value in hook.headers[0].items()}
    assert "webhook-signature" not in headers
    assert headers["webhook-id"] == f"msg_{run.pk.hex}_failure"
    assert headers["webhook-timestamp"].isdigit()


def test_post_webhook_signs_any_callers_payload_with_the_site_secret():
    """The site's own alerts call post_webhook directly: signed the same way, with a new
    id per delivery unless the caller gives one for its retries."""
    with webhook_server() as hook:
        assert post_webhook(hook.url, {"event": "scheduler_down"})[0]
        assert post_webhook(hook.url, {"event": "scheduler_down"}, webhook_id="msg_same")[0]
    first, second = hook.headers
    assert first["webhook-id"].startswith("msg_") and first["webhook-id"] != "msg_same"
    assert second["webhook-id"] == "msg_same"
    for headers, body in zip(hook.headers, hook.bodies, strict=True):
        Webhook(SITE_SECRET).verify(body, headers)


def test_a_malformed_stored_secret_refuses_the_delivery_without_sending(settings):
    with webhook_server() as hook:
        ok, code, error = post_webhook(hook.url, {}, secret="whsec_not base64!")
    assert (ok, code, hook.received) == (False, None, [])
    assert error.startswith("refused: ") and "not base64" not in error


def test_signing_follows_the_specifications_example():
    """The example of the Standard Webhooks libraries' own tests: key, id, time, body."""
    key = signing.parse_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    body = b'{"test": 2432232314}'
    assert (
        signing.sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)
        == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    )


@pytest.mark.parametrize(
    ("secret", "code"),
    [
        ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "prefix"),
        ("whsec_not base64!", "base64"),
        ("whsec_" + base64.b64encode(b"x" * 23).decode(), "length"),
        ("whsec_" + base64.b64encode(b"x" * 65).decode(), "length"),
    ],
)
def test_secrets_not_in_the_specifications_form_are_refused(secret, code):
    with pytest.raises(signing.BadSecret) as refused:
        signing.parse_secret(secret)
    assert refused.value.code == code
    assert secret.removeprefix("whsec_") not in str(refused.value)


def test_a_webhook_id_with_a_full_stop_is_refused():
    with pytest.raises(ValueError):
        signing.signature_headers("msg.1", 1, b"{}", b"k" * 24)


def test_a_malformed_site_secret_stops_the_process_at_start_up():
    done = manage("check", env=production_env(JOBS_WEBHOOK_SECRET="whsec_c2hvcnQ="))
    assert done.returncode != 0
    assert "JOBS_WEBHOOK_SECRET must hold 24 to 64 bytes once decoded" in done.stderr
    assert "c2hvcnQ" not in done.stderr
    ok = manage("check", env=production_env(JOBS_WEBHOOK_SECRET=new_secret()))
    assert ok.returncode == 0, ok.stderr
