"""An enqueued task that declares `scheduled_for` gets the run's occurrence, an aware
datetime, unless its caller passed one (by keyword or by position)."""

from __future__ import annotations

import uuid

import pytest

from jobs.models import JobHistory
from jobs.tests import enqueued_tasks as tasks
from jobs.tests.tasks_backend.helpers import SUCCESSFUL, run_enqueued

pytestmark = pytest.mark.django_db(transaction=True)


def _returned(result) -> dict:
    run_enqueued()
    result.refresh()
    assert result.status == SUCCESSFUL, result.errors
    return result.return_value


def test_a_task_declaring_scheduled_for_gets_the_runs_occurrence_aware():
    result = tasks.when_meant.enqueue("x")
    run = JobHistory.objects.get(pk=uuid.UUID(result.id))
    got = _returned(result)
    assert got["type"] == "datetime" and got["aware"] is True
    assert got["text"] == str(run.scheduled_for)
    assert got["label"] == "x"


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [([], {"scheduled_for": "mine"}), (["x", "mine"], {})],
    ids=["by keyword", "by position"],
)
def test_a_scheduled_for_the_caller_passed_is_kept(args, kwargs):
    got = _returned(tasks.when_meant.enqueue(*args, **kwargs))
    assert got["type"] == "str" and got["text"] == "mine"


def test_a_task_taking_only_var_keywords_gets_no_scheduled_for():
    got = _returned(tasks.echo.enqueue(1))
    assert got == {"args": [1], "kwargs": {}}
