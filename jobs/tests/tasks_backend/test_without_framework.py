"""Without django.tasks or django_tasks the app still loads and runs its checks; only
making the backend says what is missing."""

from __future__ import annotations

import subprocess
import sys

from jobs.tests.processes import BASE_DIR, child_env

PROGRAM = """
import sys
sys.modules["django.tasks"] = None  # neither framework can be imported
sys.modules["django_tasks"] = None
import django
django.setup()
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from jobs.pytasks import framework
from jobs import tasks_backend
from jobs.executors import enqueued
assert not framework.available()
assert "no task framework" in enqueued.task_problem("app.tasks.anything")
try:
    tasks_backend.SchedulerBackend("default", {})
except ImproperlyConfigured as error:
    print("refused:", error)
call_command("check")
"""


def test_the_app_loads_without_a_task_framework():
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM],
        cwd=BASE_DIR,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "refused: jobs.tasks_backend needs django.tasks" in done.stdout
