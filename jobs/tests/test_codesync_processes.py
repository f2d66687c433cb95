"""Real processes: any number of `manage.py syncjobs` started at once leave one job per
declaration (the unique key in the database), on SQLite and on PostgreSQL alike (run
the suite with DATABASE_URL for the second)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from django.db.models import Count

from jobs.models import Job
from jobs.tests import code_tasks
from jobs.tests.processes import ManagedProcess

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]

PROCESSES = 4


def syncs_at_once(count: int) -> list[ManagedProcess]:
    """`count` syncjobs processes that begin syncing together (jobs.tests.code_tasks
    waits for the start file as it is imported), each run to its end."""
    with tempfile.TemporaryDirectory() as folder:
        start = Path(folder) / "go"
        procs = [
            ManagedProcess(
                "syncjobs",
                JOBS_TASK_MODULES="jobs.example_tasks,jobs.tests.code_tasks",
                CODE_TASKS_START_FILE=start,
            )
            for _ in range(count)
        ]
        try:
            start.touch()
            for proc in procs:
                proc.wait(timeout=120)
        except BaseException:
            for proc in procs:
                proc.cleanup()
            raise
    return procs


def test_syncs_started_at_once_make_one_job_per_key():
    procs = syncs_at_once(PROCESSES)
    try:
        for proc in procs:
            assert proc.popen.returncode == 0, proc.log()
            assert "Traceback" not in proc.log(), proc.log()
        per_key = dict(
            Job.objects.values_list("code_key").annotate(n=Count("id")).values_list("code_key", "n")
        )
        assert len(per_key) == code_tasks.DECLARED
        assert set(per_key.values()) == {1}
        created = sum(proc.log().count("created codetasks.tick") for proc in procs)
        assert created == code_tasks.DECLARED  # each job created once, by one of them
    finally:
        for proc in procs:
            proc.cleanup()

    # Synced already: started at once again, they all find nothing to do.
    procs = syncs_at_once(PROCESSES)
    try:
        for proc in procs:
            assert proc.popen.returncode == 0, proc.log()
            assert f"0 created, 0 updated, {code_tasks.DECLARED} unchanged" in proc.log()
        assert Job.objects.count() == code_tasks.DECLARED
    finally:
        for proc in procs:
            proc.cleanup()
