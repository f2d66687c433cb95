"""Logins cannot be guessed: lockouts by user name and by address on the login pages and
for API tokens, the API's throttles, and the password-reset pages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.core import mail
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, RequestFactory, override_settings
from rest_framework.test import APIClient

from jobs.access.permissions import JOB_ADMINS, JOB_VIEWERS
from jobs.tests.api_helpers import token_client
from jobs.tests.factories import make_token, make_user
from scheduler_site.env import env_rate

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
LOGIN = "/accounts/login/"
ADMIN_LOGIN = "/admin/login/"
LOCKED = "Too many failed logins: try again in 15 minutes."
COOL_OFF = timedelta(minutes=15, seconds=1)


@pytest.fixture
def alice(db):  # type: ignore[no-untyped-def]
    alice = make_user("alice", JOB_ADMINS, password=PASSWORD, staff=True)
    alice.email = "alice@example.com"
    alice.save()
    return alice


@pytest.fixture
def bob(db):  # type: ignore[no-untyped-def]
    bob = make_user("bob", JOB_VIEWERS, password=PASSWORD)
    bob.email = "bob@example.com"
    bob.save()
    return bob


def _log_in(client: Client, username: str, password: str, url: str = LOGIN, **extra: str):  # type: ignore[no-untyped-def]
    return client.post(url, {"username": username, "password": password}, **extra)


def _logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def _fail(client: Client, times: int, username: str = "alice", url: str = LOGIN, **extra: str):  # type: ignore[no-untyped-def]
    responses = [_log_in(client, username, "wrong", url, **extra) for _ in range(times)]
    return responses[-1]


# --- The login pages -------------------------------------------------------------------


@pytest.mark.parametrize("url", [LOGIN, ADMIN_LOGIN])
def test_five_wrong_passwords_lock_the_user_name_for_15_minutes(client, clock, alice, url):  # type: ignore[no-untyped-def]
    fourth = _fail(client, 4, url=url)
    assert fourth.status_code == 200  # the form again, with its usual error
    assert LOCKED not in fourth.content.decode()

    fifth = _fail(client, 1, url=url)
    assert fifth.status_code == 429
    assert LOCKED in fifth.content.decode()
    assert fifth["Retry-After"] == "900"

    # The right password is refused while locked.
    refused = _log_in(client, "alice", PASSWORD, url)
    assert refused.status_code == 429
    assert LOCKED in refused.content.decode()
    assert not _logged_in(client)

    clock.shift(timedelta(minutes=14))
    assert _log_in(client, "alice", PASSWORD, url).status_code == 429

    # Each refused attempt starts the 15 minutes again; after them, the password works.
    clock.shift(COOL_OFF)
    assert _log_in(client, "alice", PASSWORD, url).status_code == 302
    assert _logged_in(client)


def test_the_lockout_page_is_a_page_of_the_site_in_the_users_language(client, alice):  # type: ignore[no-untyped-def]
    response = _fail(client, 5, HTTP_ACCEPT_LANGUAGE="ja")
    assert response.status_code == 429
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "ログインの失敗が多すぎます。15分後にもう一度お試しください。" in page
    assert '<html lang="ja">' in page


def test_wrong_passwords_lock_the_user_name_from_that_address_only(client, alice):  # type: ignore[no-untyped-def]
    # Anyone who knows the name "alice" may fail for it; that must not keep her out.
    attacker = {"REMOTE_ADDR": "198.51.100.1"}
    assert _fail(client, 5, **attacker).status_code == 429
    assert _log_in(client, "alice", PASSWORD, **attacker).status_code == 429
    elsewhere = {"REMOTE_ADDR": "198.51.100.2"}
    assert _log_in(Client(), "alice", PASSWORD, **elsewhere).status_code == 302
    assert _log_in(Client(), "alice", PASSWORD, ADMIN_LOGIN, **elsewhere).status_code == 302
    # The pair stays locked however often alice logs in from elsewhere.
    assert _log_in(Client(), "alice", PASSWORD, **attacker).status_code == 429
    # Other users are not locked out by alice's lockout (from another address).
    assert _log_in(client, "bob", "wrong", REMOTE_ADDR="198.51.100.3").status_code == 200


def test_the_limit_and_cool_off_come_from_the_settings(client, clock, alice, settings):  # type: ignore[no-untyped-def]
    settings.AXES_FAILURE_LIMIT = 2
    settings.AXES_COOLOFF_TIME = timedelta(minutes=1)
    assert _fail(client, 1).status_code == 200
    response = _fail(client, 1)
    assert response.status_code == 429
    assert "Too many failed logins: try again in 1 minute." in response.content.decode()
    clock.shift(timedelta(minutes=1, seconds=1))
    assert _log_in(client, "alice", PASSWORD).status_code == 302


def test_a_successful_login_forgets_the_users_own_failures(client, alice):  # type: ignore[no-untyped-def]
    _fail(client, 4)
    assert _log_in(client, "alice", PASSWORD).status_code == 302
    client.logout()
    # Four more typos do not lock: the earlier four are forgotten.
    assert _fail(client, 4).status_code == 200
    assert _log_in(client, "alice", PASSWORD).status_code == 302


def test_logging_in_does_not_clear_an_addresss_failures_for_other_names(client, bob):  # type: ignore[no-untyped-def]
    for name in ("carol", "dave", "erin", "frank"):
        _fail(client, 1, username=name)
    # bob logs in from the same address: the four failures for other names stay.
    assert _log_in(client, "bob", PASSWORD).status_code == 302
    client.logout()
    assert _fail(client, 1, username="grace").status_code == 429


def test_the_test_clients_login_still_works(client, alice) -> None:  # type: ignore[no-untyped-def]
    # Django's client.login() authenticates without a request (test settings' backend).
    assert client.login(username="alice", password=PASSWORD)
    assert client.get("/").status_code == 200
    assert not Client().login(username="alice", password="wrong")


# --- Locking an address ---------------------------------------------------------------


def test_five_wrong_passwords_for_different_names_lock_the_address(client, alice):  # type: ignore[no-untyped-def]
    here = {"REMOTE_ADDR": "198.51.100.7"}
    for name in ("carol", "dave", "erin", "frank"):
        assert _fail(client, 1, username=name, **here).status_code == 200
    assert _fail(client, 1, username="grace", **here).status_code == 429
    # The right password of a user who never failed is refused from that address...
    assert _log_in(client, "alice", PASSWORD, **here).status_code == 429
    assert _log_in(client, "alice", PASSWORD, ADMIN_LOGIN, **here).status_code == 429
    # ...and accepted from another one.
    assert _log_in(client, "alice", PASSWORD, REMOTE_ADDR="198.51.100.8").status_code == 302


def test_without_a_trusted_proxy_x_forwarded_for_does_not_change_the_address(client, alice):  # type: ignore[no-untyped-def]
    names = ("carol", "dave", "erin", "frank", "grace")
    for number, name in enumerate(names):
        _fail(client, 1, username=name, HTTP_X_FORWARDED_FOR=f"203.0.113.{number}")
    dodge = _log_in(client, "alice", PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.99")
    assert dodge.status_code == 429


@override_settings(TRUSTED_PROXY=True)
def test_behind_a_trusted_proxy_the_forwarded_address_is_counted(client, alice):  # type: ignore[no-untyped-def]
    # The proxy (REMOTE_ADDR) appends the address it saw; what a client sent comes first.
    proxy = {"REMOTE_ADDR": "10.0.0.2"}
    names = ("carol", "dave", "erin", "frank", "grace")
    for number, name in enumerate(names):
        forwarded = f"192.0.2.{number}, 203.0.113.5"  # a spoofed first address each time
        _fail(client, 1, username=name, HTTP_X_FORWARDED_FOR=forwarded, **proxy)
    locked = _log_in(client, "alice", PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.5", **proxy)
    assert locked.status_code == 429
    # Another client behind the same proxy is not locked out.
    other = _log_in(client, "alice", PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.6", **proxy)
    assert other.status_code == 302


def test_client_address(settings) -> None:  # type: ignore[no-untyped-def]
    from jobs.web.logins import client_address

    def address(**meta: str) -> str | None:
        return client_address(RequestFactory().get("/", **meta))

    proxied = {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "192.0.2.1, 203.0.113.5"}
    settings.TRUSTED_PROXY = False
    assert address(**proxied) == "10.0.0.2"
    assert address(REMOTE_ADDR="not-an-address") is None
    settings.TRUSTED_PROXY = True
    assert address(**proxied) == "203.0.113.5"
    # Not through the proxy (no header): the address that connected.
    assert address(REMOTE_ADDR="10.0.0.2") == "10.0.0.2"
    # Ports, brackets and zones are dropped; IPv6 is spelled the usual way.
    assert address(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="203.0.113.5:4711") == "203.0.113.5"
    bracketed = {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "[2001:DB8:0::1]:443"}
    assert address(**bracketed) == "2001:db8::1"
    assert address(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="fe80::1%eth0") == "fe80::1"
    # Nonsense in the header: unknown, not the proxy's address that all clients share.
    assert address(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="x, not-an-ip") is None


@override_settings(TRUSTED_PROXY=True)
def test_failures_from_an_unknown_address_count_for_the_user_name_only(client, alice, bob):  # type: ignore[no-untyped-def]
    unknown = {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "garbage"}
    for name in ("carol", "dave", "erin", "frank", "grace"):
        assert _fail(client, 1, username=name, **unknown).status_code == 200
    # No shared "unknown address" lock: bob still logs in from an unknown address...
    assert _log_in(client, "bob", PASSWORD, **unknown).status_code == 302
    # ...while alice is locked from unknown addresses by their failures for her name,
    assert _fail(client, 5, username="alice", **unknown).status_code == 429
    assert _log_in(client, "alice", PASSWORD, **unknown).status_code == 429
    # and from no known address.
    assert _log_in(Client(), "alice", PASSWORD).status_code == 302


# --- The API --------------------------------------------------------------------------


def test_wrong_passwords_never_refuse_a_good_token(client, alice, bob):  # type: ignore[no-untyped-def]
    here, elsewhere = {"REMOTE_ADDR": "198.51.100.1"}, {"REMOTE_ADDR": "198.51.100.2"}
    key = make_token(alice)
    # Wrong passwords for "alice" from one address, then for other names, lock the pair
    # and the address.
    assert _fail(client, 5, **here).status_code == 429
    for name in ("carol", "dave", "erin", "frank", "grace"):
        _fail(client, 1, username=name, **here)
    assert _log_in(Client(), "bob", PASSWORD, **here).status_code == 429
    for address in (here, elsewhere):
        api = APIClient(**address)
        api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        assert api.get("/api/v1/jobs/").status_code == 200, address
    assert token_client(bob).get("/api/v1/jobs/").status_code == 200
    # The passwords stay refused from there.
    assert _log_in(Client(), "alice", PASSWORD, **here).status_code == 429


def test_bad_tokens_from_one_address_lock_it(clock, alice) -> None:
    good = make_token(alice)
    here = APIClient(REMOTE_ADDR="198.51.100.4")
    here.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    for _ in range(4):
        response = here.get("/api/v1/jobs/")
        assert response.status_code == 401
    fifth = here.get("/api/v1/jobs/")
    assert fifth.status_code == 429
    assert fifth.json() == {"detail": LOCKED}

    # The good token too is refused from that address, but works from another.
    here.credentials(HTTP_AUTHORIZATION=f"Token {good}")
    assert here.get("/api/v1/jobs/").status_code == 429
    elsewhere = APIClient(REMOTE_ADDR="198.51.100.5")
    elsewhere.credentials(HTTP_AUTHORIZATION=f"Token {good}")
    assert elsewhere.get("/api/v1/jobs/").status_code == 200
    # Bad tokens count for their address only: the user name "alice" is not locked.
    assert Client().post(LOGIN, {"username": "alice", "password": PASSWORD}).status_code == 302

    clock.shift(COOL_OFF)
    assert here.get("/api/v1/jobs/").status_code == 200


def test_bad_tokens_lock_the_login_page_of_that_address_too(alice) -> None:
    api = APIClient(REMOTE_ADDR="198.51.100.6")
    api.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    for _ in range(5):
        api.get("/api/v1/jobs/")
    page = Client(REMOTE_ADDR="198.51.100.6")
    assert _log_in(page, "alice", PASSWORD).status_code == 429


@pytest.fixture
def tiny_rates(settings):  # type: ignore[no-untyped-def]
    # The API's throttles read their rates on every request (jobs/api/policy.py).
    settings.JOBS_API_THROTTLE_ANON = "3/minute"
    settings.JOBS_API_THROTTLE_USER = "3/minute"


def test_the_user_throttle_answers_429_with_retry_after(clock, alice, tiny_rates) -> None:  # type: ignore[no-untyped-def]
    api = token_client(alice)
    assert [api.get("/api/v1/jobs/").status_code for _ in range(3)] == [200, 200, 200]
    fourth = api.get("/api/v1/jobs/")
    assert fourth.status_code == 429
    assert fourth["Retry-After"] == "60"
    assert "throttled" in fourth.json()["detail"].lower()
    clock.shift(timedelta(seconds=61))
    assert api.get("/api/v1/jobs/").status_code == 200


def test_the_anonymous_throttle_counts_per_address(clock, tiny_rates) -> None:  # type: ignore[no-untyped-def]
    here = APIClient(REMOTE_ADDR="198.51.100.9")
    assert [here.get("/api/schema/").status_code for _ in range(3)] == [200, 200, 200]
    # A forged X-Forwarded-For does not make it another client.
    dodge = here.get("/api/schema/", HTTP_X_FORWARDED_FOR="203.0.113.1")
    assert dodge.status_code == 429
    assert int(dodge["Retry-After"]) > 0
    assert APIClient(REMOTE_ADDR="198.51.100.10").get("/api/schema/").status_code == 200


def test_default_throttle_rates(settings) -> None:
    assert settings.JOBS_API_THROTTLE_ANON == "60/minute"
    assert settings.JOBS_API_THROTTLE_USER == "1200/minute"
    assert settings.TRUSTED_PROXY is False


def test_the_settings_come_from_the_environment() -> None:
    env = {
        **os.environ,
        "SECRET_KEY": "k" * 50,
        "LOGIN_FAILURE_LIMIT": "3",
        "LOGIN_LOCKOUT_MINUTES": "2.5",
        "API_THROTTLE_USER": "10/s",
        "API_THROTTLE_ANON": "100/hour",
        "PASSWORD_RESET_ENABLED": "true",
        "PASSWORD_RESET_LIMIT": "2",
        "TRUSTED_PROXY": "true",
    }
    code = (
        "import json; from scheduler_site import settings as s; print(json.dumps(["
        "s.AXES_FAILURE_LIMIT, s.AXES_COOLOFF_TIME.total_seconds(), "
        "s.JOBS_API_THROTTLE_ANON, s.JOBS_API_THROTTLE_USER, s.TRUSTED_PROXY, "
        "s.PASSWORD_RESET_ENABLED, s.PASSWORD_RESET_LIMIT]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=Path(__file__).resolve().parents[3],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out) == [3, 150.0, "100/hour", "10/s", True, True, 2]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1200/minute", "1200/minute"), (" 10/s ", "10/s"), ("5/hour", "5/hour"), ("", "7/day")],
)
def test_env_rate_reads_drf_rates(monkeypatch, raw, expected) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("API_THROTTLE_USER", raw)
    assert env_rate("API_THROTTLE_USER", "7/day") == expected


@pytest.mark.parametrize("raw", ["1200", "fast", "0/minute", "-1/minute", "10/fortnight", "1.5/m"])
def test_env_rate_refuses_a_bad_rate(monkeypatch, raw) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("API_THROTTLE_USER", raw)
    with pytest.raises(ImproperlyConfigured, match="API_THROTTLE_USER must be a rate like"):
        env_rate("API_THROTTLE_USER", "1200/minute")


# --- Password reset -------------------------------------------------------------------

RESET = "/accounts/password_reset/"


def test_password_reset_is_off_by_default(client, alice) -> None:  # type: ignore[no-untyped-def]
    for url in (
        RESET,
        "/accounts/password_reset/done/",
        "/accounts/reset/MQ/set-password/",
        "/accounts/reset/done/",
    ):
        assert client.get(url).status_code == 404, url
    assert client.post(RESET, {"email": "alice@example.com"}).status_code == 404
    assert mail.outbox == []
    assert "password_reset" not in client.get(LOGIN).content.decode()


def test_password_reset_when_enabled_is_limited_per_address_and_per_email(
    client, clock, alice, bob, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.PASSWORD_RESET_ENABLED = True
    assert f'href="{RESET}"' in client.get(LOGIN).content.decode()
    assert client.get(RESET).status_code == 200

    for _ in range(5):
        response = client.post(RESET, {"email": "alice@example.com"})
        assert response.status_code == 302
    assert len(mail.outbox) == 5
    refused = client.post(RESET, {"email": "alice@example.com"})
    assert refused.status_code == 429
    assert refused["Retry-After"] == "3600"
    assert "Too many password reset requests" in refused.content.decode()
    assert len(mail.outbox) == 5

    # The address is spent, whatever the e-mail address...
    assert client.post(RESET, {"email": "bob@example.com"}).status_code == 429
    # ...and alice's e-mail address from any address.
    other = Client(REMOTE_ADDR="198.51.100.20")
    assert other.post(RESET, {"email": "alice@example.com"}).status_code == 429
    assert other.post(RESET, {"email": "bob@example.com"}).status_code == 302

    clock.shift(timedelta(hours=1, seconds=1))
    assert client.post(RESET, {"email": "alice@example.com"}).status_code == 302
    assert len(mail.outbox) == 7


# --- A lockout ends the user's sessions ------------------------------------------------


def test_a_lockout_ends_every_session_of_that_user(alice, bob) -> None:  # type: ignore[no-untyped-def]
    # Alice is logged in in two browsers (two real sessions, through the login page).
    laptop, phone = Client(REMOTE_ADDR="198.51.100.1"), Client(REMOTE_ADDR="198.51.100.2")
    for browser in (laptop, phone):
        assert _log_in(browser, "alice", PASSWORD).status_code == 302
        assert browser.get("/").status_code == 200
    bobs = Client(REMOTE_ADDR="198.51.100.1")
    assert _log_in(bobs, "bob", PASSWORD).status_code == 302

    # Someone guesses her password from elsewhere until her name is locked out there.
    guesser = Client(REMOTE_ADDR="203.0.113.66")
    assert _fail(guesser, 5).status_code == 429

    for browser in (laptop, phone):
        assert not _logged_in(browser)
        assert browser.get("/").status_code == 302  # to the login page
    # Other users keep their sessions; alice logs in again from her own address.
    assert bobs.get("/").status_code == 200
    assert _log_in(laptop, "alice", PASSWORD).status_code == 302
    assert laptop.get("/").status_code == 200
