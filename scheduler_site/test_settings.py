"""Settings for the test suite: the real settings with test-friendly defaults.

Values come from the environment first, exactly as in production, so the suite runs
against PostgreSQL when DATABASE_URL says so.
"""

import os

os.environ.setdefault("SECRET_KEY", "test-only-secret-key")
os.environ.setdefault("LOG_LEVEL", "WARNING")

from scheduler_site.settings import *  # noqa: F403

# Hashing passwords slowly protects real users, not test fixtures.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# django-axes stays on, so the lockout tests are real; only client.login(), which has no
# request, skips its check (jobs/tests/backends.py).
AUTHENTICATION_BACKENDS = [
    "jobs.tests.backends.AxesBackendForTestClient",
    "django.contrib.auth.backends.ModelBackend",
]
