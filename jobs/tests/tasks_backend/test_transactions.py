"""enqueue() in the caller's transaction: a run exists only if that transaction commits,
as Django documents for database backends; outside any transaction each enqueue
commits by itself. And 10,000 enqueues from requests make 10,000 runs, once each."""

from __future__ import annotations

import uuid

import pytest
from django.db import transaction
from django.utils import timezone

from jobs.models import Job, JobHistory, RunStatus
from jobs.tests import enqueued_tasks as tasks
from jobs.tests.tasks_backend.helpers import FAILED, READY, run_enqueued

pytestmark = pytest.mark.django_db(transaction=True)


class Rollback(Exception):
    pass


def test_an_enqueue_in_a_rolled_back_transaction_leaves_no_run():
    with pytest.raises(Rollback), transaction.atomic():
        result = tasks.noop_task.enqueue(1)
        assert JobHistory.objects.filter(pk=result.id).exists()  # this transaction sees it
        raise Rollback

    assert not JobHistory.objects.exists()
    assert not Job.objects.filter(enqueued_task=True).exists()  # made in it, gone with it
    run_enqueued()
    assert not JobHistory.objects.exists()


def test_an_enqueue_in_a_committed_transaction_runs():
    with transaction.atomic():
        result = tasks.calculate_meaning_of_life.enqueue()
    run_enqueued()
    assert tasks.calculate_meaning_of_life.get_result(result.id).return_value == 42


def test_a_refused_enqueue_leaves_the_transaction_usable():
    with transaction.atomic():
        with pytest.raises(TypeError):
            tasks.noop_task.enqueue(object())
        kept = tasks.noop_task.enqueue(2)
    assert list(JobHistory.objects.values_list("pk", flat=True)) == [uuid.UUID(kept.id)]


def test_only_the_enqueues_of_the_committed_savepoint_remain():
    with transaction.atomic():
        kept = tasks.noop_task.enqueue("kept")
        with pytest.raises(Rollback), transaction.atomic():
            tasks.noop_task.enqueue("dropped")
            raise Rollback
    runs = JobHistory.objects.all()
    assert [run.arguments["args"] for run in runs] == [["kept"]]
    assert str(runs[0].pk) == kept.id


@pytest.mark.urls("jobs.tests.tasks_backend.urls")
def test_ten_thousand_enqueues_from_requests_make_ten_thousand_runs_once_each(client):
    ids: list[str] = []
    for start in range(0, 10_000, 500):
        response = client.post("/enqueue/", {"start": start, "count": 500})
        assert response.status_code == 200
        ids.extend(response.json()["ids"])

    assert len(ids) == len(set(ids)) == 10_000
    runs = JobHistory.objects.filter(status=RunStatus.PENDING, attempt=1)
    assert runs.count() == 10_000
    assert set(runs.values_list("pk", flat=True)) == {uuid.UUID(i) for i in ids}
    numbers = sorted(arguments["args"][0] for arguments in runs.values_list("arguments", flat=True))
    assert numbers == list(range(10_000))
    assert Job.objects.filter(enqueued_task=True).count() == 1


def test_a_result_follows_its_retries():
    # A failure with a retry left is READY again while the retry waits, then FAILED with
    # one error per attempt once the retries are spent.
    result = tasks.failing_task_value_error.enqueue()
    Job.objects.filter(enqueued_task=True).update(max_retries=1, retry_backoff_seconds=3600)
    run_enqueued()
    result.refresh()
    assert (result.status, result.attempts, len(result.errors)) == (READY, 1, 1)

    JobHistory.objects.filter(attempt=2).update(not_before=timezone.now())
    run_enqueued()
    result.refresh()
    assert (result.status, result.attempts) == (FAILED, 2)
    assert [error.exception_class for error in result.errors] == [ValueError, ValueError]
