"""What a task may ask of the backend (Django's tests/tasks/ cases for priorities, queues
and run_after, here with the scheduler's own meaning of each): a priority is the run's
priority, a queue the run's queue (a scheduler serves it with --queues), run_after the
run's earliest start."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import time_machine
from asgiref.sync import async_to_sync
from django.test import override_settings
from django.utils import timezone

from jobs.models import JobHistory
from jobs.tests import enqueued_tasks as tasks
from jobs.tests.tasks_backend.helpers import READY, SUCCESSFUL, InvalidTask, run_enqueued

pytestmark = pytest.mark.django_db(transaction=True)

ONE_QUEUE = {"default": {"BACKEND": "jobs.tasks_backend.SchedulerBackend", "QUEUES": ["queue-1"]}}


def _run(result):
    return JobHistory.objects.get(pk=result.id)


def test_priorities_from_minus_100_to_100_are_the_runs_priorities():
    low = tasks.noop_task.using(priority=-100).enqueue()
    high = tasks.noop_task.using(priority=100).enqueue()

    assert (_run(low).priority, _run(high).priority) == (-100, 100)
    assert tasks.noop_task.get_result(high.id).task.priority == 100


@pytest.mark.parametrize("priority", [101, -101, 1.5])
def test_a_priority_out_of_range_or_not_whole_is_refused(priority):
    with pytest.raises(InvalidTask, match="priority must be a whole number"):
        tasks.noop_task.using(priority=priority)


def test_of_the_waiting_runs_the_higher_priority_starts_first(tmp_path):
    out = tmp_path / "order"
    tasks.append_pid.using(priority=-5).enqueue(str(out), "low")
    tasks.append_pid.using(priority=50).enqueue(str(out), "high")
    tasks.append_pid.enqueue(str(out), "middle")

    run_enqueued(workers=1)

    assert [line.split()[0] for line in out.read_text().splitlines()] == ["high", "middle", "low"]


def test_the_queue_is_the_runs_queue_and_only_its_scheduler_runs_it():
    result = tasks.report_task.enqueue()
    assert _run(result).queue == "reports"

    run_enqueued(queues=frozenset({"default"}))
    assert tasks.report_task.get_result(result.id).status == READY
    run_enqueued(queues=frozenset({"reports"}))
    assert tasks.report_task.get_result(result.id).return_value == "report"


@pytest.mark.parametrize("name", ["no spaces", "", "x" * 51, "ä"])
def test_a_queue_name_no_scheduler_can_serve_is_refused(name):
    with pytest.raises(InvalidTask):
        tasks.noop_task.using(queue_name=name)


def test_a_queue_not_in_queues_is_refused_on_enqueue_and_aenqueue():
    unknown = tasks.noop_task.using(queue_name="unknown_queue")
    with override_settings(TASKS=ONE_QUEUE):
        with pytest.raises(InvalidTask, match="Queue 'unknown_queue' is not valid for backend"):
            unknown.enqueue()
        with pytest.raises(InvalidTask, match="Queue 'unknown_queue' is not valid for backend"):
            async_to_sync(unknown.aenqueue)()
    assert not JobHistory.objects.exists()


def test_run_after_is_the_earliest_start():
    start = timezone.now() + timedelta(hours=1)
    result = tasks.calculate_meaning_of_life.using(run_after=start).enqueue()

    assert _run(result).not_before == start
    assert tasks.calculate_meaning_of_life.get_result(result.id).task.run_after == start
    run_enqueued()
    assert tasks.calculate_meaning_of_life.get_result(result.id).status == READY
    with time_machine.travel(start + timedelta(seconds=1), tick=True):
        run_enqueued()
    assert tasks.calculate_meaning_of_life.get_result(result.id).status == SUCCESSFUL


def test_run_after_in_the_past_runs_at_once():
    result = tasks.noop_task.using(run_after=timezone.now() - timedelta(days=1)).enqueue()
    run_enqueued()
    assert tasks.noop_task.get_result(result.id).status == SUCCESSFUL


def test_a_naive_run_after_is_refused():
    with pytest.raises(InvalidTask, match="run_after must be an aware datetime"):
        tasks.noop_task.using(run_after=datetime(2030, 1, 1))
