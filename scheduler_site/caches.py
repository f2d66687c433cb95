"""The standalone site's CACHES: a per-process cache, and one every process shares.

"default" stays in each process's memory (the dashboard's short-lived counts, which
any process may recount). "shared" (jobs.conf.SHARED_CACHE) holds the counts that must be
one count however many web processes there are: the API's throttles and password-reset
requests. It is Redis when REDIS_URL is set, else the database (the table migration
0027_cache_table makes).
"""

from __future__ import annotations

from jobs.conf import CACHE_TABLE, SHARED_CACHE


def cache_settings(redis_url: str) -> dict[str, dict[str, str]]:
    if redis_url:
        shared = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url}
    else:
        shared = {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": CACHE_TABLE}
    return {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        # Beside Huey's keys in the same Redis database, under a prefix of their own.
        SHARED_CACHE: {**shared, "KEY_PREFIX": "jobs-shared"},
    }
