"""The API's throttles and the password-reset counts are one count for every web process:
the "shared" cache (the database's, or Redis with REDIS_URL), never a process's memory."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.core.cache import caches
from django.core.cache.backends.db import DatabaseCache
from django.db import connection
from rest_framework.test import APIClient

from jobs.conf import CACHE_TABLE, shared_cache
from jobs.tests.processes import BASE_DIR, child_env
from scheduler_site.caches import cache_settings


def _in_another_process(code: str, **env: str) -> str:
    """Run `code` in `manage.py shell` of a new process on this test's database."""
    done = subprocess.run(
        [sys.executable, str(BASE_DIR / "manage.py"), "shell", "-c", code],
        cwd=BASE_DIR,
        env=child_env(LOG_LEVEL="WARNING", **env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # The last line: Django 5.2's shell first says what it imported.
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.django_db(transaction=True)
def test_another_process_sees_and_adds_to_the_same_counts() -> None:
    cache = shared_cache()
    assert isinstance(cache, DatabaseCache)
    cache.set("visits", 1)
    code = (
        "from jobs.conf import shared_cache; c = shared_cache(); "
        "print(c.get('visits')); c.incr('visits')"
    )
    assert _in_another_process(code) == "1"
    assert cache.get("visits") == 2


@pytest.mark.django_db(transaction=True)
def test_the_api_throttle_counts_requests_made_to_another_process(settings) -> None:
    settings.JOBS_API_THROTTLE_ANON = "3/minute"
    here = APIClient(REMOTE_ADDR="198.51.100.7")
    assert [here.get("/api/schema/").status_code for _ in range(2)] == [200, 200]
    # The third request goes to another web process, with the same rate...
    code = (
        "from django.test import Client; "
        "print(Client(REMOTE_ADDR='198.51.100.7', HTTP_HOST='localhost')"
        ".get('/api/schema/').status_code)"
    )
    assert _in_another_process(code, API_THROTTLE_ANON="3/minute") == "200"
    # ...and the fourth, here, is over the limit the three share.
    assert here.get("/api/schema/").status_code == 429
    # Two caches of their own (two connections' worth of objects) agree too.
    first, second = (DatabaseCache(CACHE_TABLE, {"KEY_PREFIX": "jobs-shared"}) for _ in "ab")
    assert first.get("visits") is None
    first.set("visits", 5)
    assert second.get("visits") == 5


@pytest.mark.django_db
def test_migrate_made_the_cache_table() -> None:
    assert CACHE_TABLE in connection.introspection.table_names()


def test_the_site_shares_counts_in_redis_with_redis_url_else_in_the_database() -> None:
    local = cache_settings("")
    assert local["shared"]["BACKEND"] == "django.core.cache.backends.db.DatabaseCache"
    assert local["shared"]["LOCATION"] == CACHE_TABLE
    redis = cache_settings("redis://127.0.0.1:6379/0")
    assert redis["shared"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
    assert redis["shared"]["LOCATION"] == "redis://127.0.0.1:6379/0"
    # The dashboard's short-lived counts stay in each process's memory.
    for chosen in (local, redis):
        assert chosen["default"]["BACKEND"] == "django.core.cache.backends.locmem.LocMemCache"
    assert caches["default"].__class__.__name__ == "LocMemCache"
