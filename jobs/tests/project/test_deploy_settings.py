"""The production switches: HTTPS, the trusted proxy, the secret key's length, the
deploy checks, the debug page's filter, and what invalid settings say."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client, RequestFactory
from django.views.debug import get_default_exception_reporter_filter, technical_500_response

from jobs.metrics.checks import metrics_token_set
from scheduler_site.env import redact_url, redis_url_parses
from scheduler_site.reporting import SecretHidingExceptionReporterFilter

ROOT = Path(__file__).resolve().parents[3]


def production_env(**extra: str) -> dict[str, str]:
    """The environment of `check --deploy` in CI: the real settings, nothing inherited
    but what a process needs to start."""
    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG", "TMPDIR") if key in os.environ}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "scheduler_site.settings",
            "DEBUG": "false",
            "HTTPS": "true",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "jobs.example.com",
            "METRICS_TOKEN": secrets.token_urlsafe(32),
        }
    )
    env.update(extra)
    return env


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def settings_in(env: dict[str, str], *names: str) -> dict[str, object]:
    """The values of some settings in a fresh process with `env`."""
    code = (
        "import json, django; django.setup(); from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n, None) for n in {list(names)!r}}}, "
        "default=repr))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# --- check --deploy and the secret key ----------------------------------------------------


def test_check_deploy_passes_with_the_production_environment():
    done = manage("check", "--deploy", "--fail-level", "WARNING", env=production_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout
    # Only the two HSTS choices the settings leave to the owner are silenced.
    assert "(2 silenced)" in done.stdout


def test_check_deploy_fails_when_metrics_are_open():
    done = manage(
        "check", "--deploy", "--fail-level", "WARNING", env=production_env(METRICS_TOKEN="")
    )
    assert done.returncode != 0
    assert "jobs.W001" in done.stderr


def test_check_deploy_names_the_hsts_warnings_once_they_are_chosen():
    # HSTS_PRELOAD on without includeSubDomains: W021 is no longer silenced, and W005
    # (includeSubDomains missing) still is.
    env = production_env(HSTS_PRELOAD="true")
    done = manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(1 silenced)" in done.stdout


def test_a_short_secret_key_is_refused_with_debug_off():
    done = manage("check", env=production_env(SECRET_KEY="x" * 49))
    assert done.returncode != 0
    assert "SECRET_KEY must be at least 50 characters" in done.stderr
    assert "secrets.token_urlsafe(50)" in done.stderr


def test_a_short_secret_key_is_accepted_with_debug_on():
    done = manage("check", env=production_env(SECRET_KEY="short", DEBUG="true"))
    assert done.returncode == 0, done.stderr


# --- HTTPS and the proxy -------------------------------------------------------------------


def test_https_turns_on_secure_cookies_the_redirect_and_hsts():
    values = settings_in(
        production_env(TRUSTED_PROXY="true"),
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SECURE_SSL_REDIRECT",
        "SECURE_HSTS_SECONDS",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS",
        "SECURE_HSTS_PRELOAD",
        "SECURE_PROXY_SSL_HEADER",
        "USE_X_FORWARDED_HOST",
    )
    assert values == {
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31536000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": False,
        "SECURE_HSTS_PRELOAD": False,
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
        "USE_X_FORWARDED_HOST": False,
    }


def test_without_https_or_a_proxy_nothing_changes():
    env = production_env()
    del env["HTTPS"]
    values = settings_in(
        env, "SESSION_COOKIE_SECURE", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS",
        "SECURE_PROXY_SSL_HEADER",
    )  # fmt: skip
    assert values == {
        "SESSION_COOKIE_SECURE": False,
        "SECURE_SSL_REDIRECT": False,
        "SECURE_HSTS_SECONDS": 0,
        "SECURE_PROXY_SSL_HEADER": None,
    }


@pytest.mark.django_db
def test_the_redirect_spares_healthz_and_metrics_and_trusts_the_proxy(settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 3600
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    client = Client()
    assert client.get("/healthz").status_code == 200
    assert client.get("/metrics").status_code == 200
    redirected = client.get("/accounts/login/")
    assert redirected.status_code == 301
    assert redirected["Location"] == "https://testserver/accounts/login/"
    behind_proxy = client.get("/accounts/login/", headers={"X-Forwarded-Proto": "https"})
    assert behind_proxy.status_code == 200
    assert behind_proxy["Strict-Transport-Security"] == "max-age=3600"


# --- the debug page -------------------------------------------------------------------------


def _fail() -> None:
    raise RuntimeError("boom")


def _exc_info():
    # Frames without the secrets in their locals: the page must not show them anyway.
    try:
        _fail()
    except RuntimeError:
        return sys.exc_info()


def test_the_debug_page_shows_no_database_or_redis_url_or_metrics_token(settings):
    settings.DEBUG = True
    settings.DATABASE_URL = "postgres://scheduler:db-pass-1234@db.internal:5432/jobs"
    settings.REDIS_URL = "redis://:redis-pass-5678@redis.internal:6379/0"
    settings.METRICS_TOKEN = "metrics-token-9012"
    settings.HUEY = {**settings.HUEY, "url": settings.REDIS_URL}
    assert isinstance(get_default_exception_reporter_filter(), SecretHidingExceptionReporterFilter)
    # runserver copies the environment into request.META.
    request = RequestFactory().get(
        "/boom",
        DATABASE_URL=settings.DATABASE_URL,
        REDIS_URL=settings.REDIS_URL,
        METRICS_TOKEN=settings.METRICS_TOKEN,
    )
    page = technical_500_response(request, *_exc_info()).content.decode()
    assert "RuntimeError" in page and "DATABASE_URL" in page
    for secret in ("db-pass-1234", "redis-pass-5678", "metrics-token-9012", "redis.internal"):
        assert secret not in page


# --- REDIS_URL ------------------------------------------------------------------------------


def test_redact_url_drops_the_user_and_password():
    assert redact_url("redis://:s3cret@host:6379/0") == "redis://***@host:6379/0"
    assert redact_url("rediss://user:p@ss@host/0") == "rediss://***@host/0"
    assert redact_url("redis//:s3cret@host") == "***@host"
    assert redact_url("redis://host:6379/0") == "redis://host:6379/0"


def test_redis_url_parses():
    assert redis_url_parses("redis://:pw@host:6379/0")
    assert redis_url_parses("unix:///run/redis.sock")
    assert not redis_url_parses("redis://:pw@host:port/0")
    assert not redis_url_parses("redis:///0")


@pytest.mark.parametrize(
    "url", ["redis//:s3cret-pw@host:6379/0", "redis://:s3cret-pw@host:not-a-port/0"]
)
def test_an_invalid_redis_url_is_reported_without_its_password(url):
    done = manage("check", env=production_env(REDIS_URL=url))
    assert done.returncode != 0
    assert "REDIS_URL must be a redis://" in done.stderr
    assert "s3cret-pw" not in done.stderr


# --- the metrics check ------------------------------------------------------------------------


def test_the_metrics_check_warns_only_with_debug_off_and_no_token(settings):
    settings.DEBUG, settings.METRICS_TOKEN = False, ""
    assert [warning.id for warning in metrics_token_set()] == ["jobs.W001"]
    settings.METRICS_TOKEN = "set"
    assert metrics_token_set() == []
    settings.DEBUG, settings.METRICS_TOKEN = True, ""
    assert metrics_token_set() == []
