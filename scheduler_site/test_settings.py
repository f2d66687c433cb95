"""Settings for the test suite: the real settings with test-friendly defaults.

Values come from the environment first, exactly as in production, so the suite runs
against PostgreSQL when DATABASE_URL says so.
"""

import os

# With DEBUG off the settings refuse a key shorter than 50 characters; the suite (and the
# processes it starts, which inherit this environment) may be given any key, even "x".
if len(os.environ.get("SECRET_KEY", "")) < 50:
    os.environ["SECRET_KEY"] = "test-only-secret-key-" + "0123456789abcdef" * 3
os.environ.setdefault("LOG_LEVEL", "WARNING")
# The suite (and the processes it starts) ignores the developer's .env: what it sets (DEBUG,
# a database) must not change what the tests see. A test that wants a file names one.
os.environ.setdefault("ENV_FILE", "")

from scheduler_site.caches import cache_settings
from scheduler_site.settings import *  # noqa: F403

# Hashing passwords slowly protects real users, not test fixtures.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# django-axes stays on, so the lockout tests are real; only client.login(), which has no
# request, skips its check (jobs/tests/backends.py).
AUTHENTICATION_BACKENDS = [
    "jobs.tests.backends.AxesBackendForTestClient",
    "django.contrib.auth.backends.ModelBackend",
]

# The tasks the tests run (jobs/tests/sample_tasks.py), beside the examples.
JOBS_TASK_MODULES = [*JOBS_TASK_MODULES, "jobs.tests.sample_tasks"]  # noqa: F405

# The Huey glue is exercised without Redis too: Huey in memory, tasks run at once. (The
# site itself installs Huey only with REDIS_URL.)
if not REDIS_URL:  # noqa: F405
    from jobs.huey.serializer import JSONSerializer

    INSTALLED_APPS = [*INSTALLED_APPS, "huey.contrib.djhuey"]  # noqa: F405
    HUEY = {
        "huey_class": "huey.MemoryHuey",
        "name": HUEY_QUEUE,  # noqa: F405
        "immediate": True,
        "serializer": JSONSerializer(),
    }

# The shared counts in the test database (its table made by migration 0027_cache_table),
# even with REDIS_URL: the fixture that empties them before each test (jobs/tests/conftest.py)
# must not flush the Redis database the Huey tests use.
CACHES = {**CACHES, "shared": cache_settings("")["shared"]}  # noqa: F405
