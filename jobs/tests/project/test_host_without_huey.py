"""A project that does not configure Huey never imports huey, redis-py or psycopg: not at
start-up, not when its URLs load, not in `runscheduler --once`. Installed without the
`celery` extra, it imports nothing of Celery and offers no celery jobs.

A real process: a minimal host project written to a temporary folder (the settings and
URLconf that docs/host-project.md lists, SQLite, no HUEY, no REDIS_URL), which reports
the modules loaded after each step. In this test process they are all loaded already.

huey and redis-py are installed here and must simply not be imported. psycopg is hidden
from the host, as in a project installed without the `postgres` extra: Django REST
framework tries it (rest_framework/compat.py imports django.contrib.postgres when it
can), so being installed it would load whatever the app does; hidden, an import of it by
the app would stop the process. Celery (and its kombu and billiard) is hidden the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.processes, pytest.mark.once]

ROOT = Path(__file__).resolve().parents[3]
UNWANTED = ("huey", "redis", "psycopg", "psycopg2", "psycopg_binary", "celery", "kombu", "billiard")

SETTINGS = """
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent
SECRET_KEY = "host-without-huey-" + "x" * 40
DEBUG = False
ALLOWED_HOSTS = ["testserver"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": BASE_DIR / "db.sqlite3"}}
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "crispy_forms",
    "crispy_bootstrap5",
    "jobs",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "hosturls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
STATIC_URL = "static/"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
"""

URLS = """
from django.contrib import admin
from django.http import HttpResponse
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("scheduler/", include("jobs.urls")),
    path("", lambda request: HttpResponse("the project's own"), name="dashboard"),
]
"""

# Prints, after each step, the unwanted top-level packages loaded so far.
REPORT = """
import json, sys

UNWANTED = set(sys.argv[1].split(","))
HIDDEN = {"psycopg", "psycopg2", "psycopg_binary", "celery", "kombu", "billiard"}


class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NotInstalled())

import django

seen = {}


def note(step):
    seen[step] = sorted({name.split(".")[0] for name in sys.modules} & UNWANTED)


django.setup()
note("django.setup()")

from django.core.management import call_command
from django.test import Client
from django.urls import get_resolver, reverse

call_command("migrate", verbosity=0)
get_resolver().url_patterns  # the project's URLconf, and through it the app's all
assert reverse("jobs:api-job-list") == "/scheduler/api/v1/jobs/"
assert Client().get("/scheduler/healthz").status_code == 200
note("URLs")

call_command("runscheduler", "--once")
note("runscheduler --once")

from jobs import kinds

assert "celery" not in [kind.value for kind in kinds.offered_to(True)]
print(json.dumps(seen))
"""


def test_a_host_without_huey_imports_neither_huey_nor_redis_nor_psycopg(tmp_path):
    (tmp_path / "hostsettings.py").write_text(SETTINGS)
    (tmp_path / "hosturls.py").write_text(URLS)
    (tmp_path / "report.py").write_text(REPORT)
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("DJANGO_", "REDIS_", "DATABASE_", "JOBS_", "HUEY"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="hostsettings",
        PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]),
    )
    done = subprocess.run(
        [sys.executable, "report.py", ",".join(UNWANTED)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"django.setup()": [], "URLs": [], "runscheduler --once": []}
