"""What `runscheduler` costs as it starts and as it exits: the checks it runs, what it
imports, what the collector walks (benchmark `--scenario once` times the whole process)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from io import StringIO

import pytest
from django.core import checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from jobs.management.commands.runscheduler import Command
from jobs.tests.processes import BASE_DIR, child_env


@pytest.fixture
def failing_site_check():
    """A check of the site (no tag) that always fails, registered for one test."""

    def site_check(app_configs=None, **kwargs):
        return [checks.Error("the site is broken", id="site.E001")]

    checks.register(site_check)
    yield
    checks.registry.registry.registered_checks.discard(site_check)


@pytest.mark.django_db(transaction=True)
def test_runscheduler_runs_the_checks_of_its_settings_and_not_the_sites(
    settings, failing_site_check
):
    # The site's failing check stops `manage.py check`, not the scheduler.
    with pytest.raises(SystemCheckError, match=r"site\.E001"):
        call_command("check")
    call_command("runscheduler", "--once", "--workers", "1", skip_checks=False, stdout=StringIO())
    # A setting the scheduler runs by still stops it, with the check's message.
    settings.JOBS_QUEUE_LIMITS = "reports=0"
    with pytest.raises(SystemCheckError, match=r"jobs\.E012"):
        call_command("runscheduler", "--once", skip_checks=False, stdout=StringIO())


@pytest.mark.django_db(transaction=True)
def test_runscheduler_started_from_the_command_line_freezes_what_start_up_loaded():
    gc.unfreeze()
    try:
        Command().run_from_argv(["manage.py", "runscheduler", "--once", "--workers", "1"])
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_call_command_freezes_nothing(db):
    gc.unfreeze()
    call_command("runscheduler", "--once", "--workers", "1", stdout=StringIO())
    assert gc.get_freeze_count() == 0


# What a scheduler process must not load: the screens' URLconf, the API's DRF and its
# schema, the template tag libraries (loaded by the checks it no longer runs).
NOT_LOADED = (
    "scheduler_site.urls",
    "jobs.urls",
    "jobs.api.docs",
    "rest_framework.serializers",
    "drf_spectacular.views",
    "jobs.templatetags.jobs_admin",
    "django.test",
)
LIST_MODULES = """
import json, sys
from django.core.management import execute_from_command_line
try:
    execute_from_command_line(["manage.py", "runscheduler", "--once", "--workers", "1"])
finally:
    print("MODULES " + json.dumps(sorted(sys.modules)))
"""


@pytest.mark.processes
@pytest.mark.django_db(transaction=True)
def test_a_runscheduler_process_loads_no_screen_no_api_and_no_template_tags():
    done = subprocess.run(
        [sys.executable, "-c", LIST_MODULES],
        cwd=BASE_DIR,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("MODULES "))
    modules = set(json.loads(line.removeprefix("MODULES ")))
    assert "jobs.runtime.scheduler" in modules
    assert not modules & set(NOT_LOADED), modules & set(NOT_LOADED)
