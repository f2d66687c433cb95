"""The scheduler's own checkpoints of SQLite's log (jobs/sql/sqlite/wal.py), on a real file."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from jobs.models import JobHistory, RunStatus
from jobs.runtime import retention
from jobs.runtime.scheduler import Scheduler
from jobs.sql.sqlite.wal import Checkpointer
from jobs.tests.factories import NOW

pytestmark = pytest.mark.django_db(transaction=True)

sqlite_only = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="checkpoints are SQLite's (PostgreSQL has none)"
)


def autocheckpoint_here() -> int:
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_autocheckpoint")
        return int(cursor.fetchone()[0])


def autocheckpoint_in_a_new_thread() -> int:
    seen: list[int] = []

    def look() -> None:
        try:
            seen.append(autocheckpoint_here())
        finally:
            connection.close()

    thread = threading.Thread(target=look)
    thread.start()
    thread.join()
    return seen[0]


def add_runs(job, count: int) -> None:
    JobHistory.objects.bulk_create(
        JobHistory(
            job=job, scheduled_for=NOW, not_before=NOW, attempt=i + 1, status=RunStatus.SUCCESS
        )
        for i in range(count)
    )


@sqlite_only
def test_while_it_runs_no_connection_of_the_process_checkpoints_inside_a_commit():
    configured = autocheckpoint_here()
    assert configured > 0
    checkpointer = Checkpointer(every=3600)
    assert checkpointer.start()
    try:
        assert autocheckpoint_here() == 0
        assert autocheckpoint_in_a_new_thread() == 0
    finally:
        checkpointer.stop()
    assert autocheckpoint_here() == configured
    assert autocheckpoint_in_a_new_thread() == configured


@sqlite_only
def test_a_checkpoint_copies_the_whole_log_when_no_reader_holds_it(make_job):
    checkpointer = Checkpointer(every=3600)
    checkpointer.start()
    try:
        checkpointer.checkpoint()  # start from an empty log
        add_runs(make_job(), 500)
        busy, log, copied = checkpointer.checkpoint()
    finally:
        checkpointer.stop()
    assert busy == 0
    assert log > 0
    assert copied == log


@sqlite_only
def test_the_thread_checkpoints_on_its_own_and_once_more_when_stopped(make_job):
    checkpointer = Checkpointer(every=0.05)
    checkpointer.start()
    job = make_job()
    add_runs(job, 50)
    checkpointer.stop()
    assert checkpointer.checkpoints >= 1
    _busy, log, copied = checkpointer.last
    assert copied == log
    assert not checkpointer.running


@sqlite_only
def test_the_scheduler_checkpoints_while_its_workers_run_and_hands_back_after():
    configured = autocheckpoint_here()
    scheduler = Scheduler(workers=1)
    scheduler.start_workers()
    try:
        assert scheduler.checkpointer.running
        assert autocheckpoint_here() == 0
    finally:
        scheduler.shutdown()
    assert not scheduler.checkpointer.running
    assert autocheckpoint_here() == configured


@pytest.mark.skipif(connection.vendor == "sqlite", reason="PostgreSQL only")
def test_on_postgresql_there_is_nothing_to_take_over():
    checkpointer = Checkpointer()
    assert checkpointer.start() is False
    assert not checkpointer.running
    checkpointer.stop()  # harmless


@sqlite_only
def test_prunehistory_checkpoints_beside_its_deletes_not_inside_them(make_job, monkeypatch):
    configured = autocheckpoint_here()
    add_runs(make_job(), 20)
    seen: list[int] = []
    step = retention.Pruner.step

    def watched_step(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(autocheckpoint_here())
        return step(self, *args, **kwargs)

    monkeypatch.setattr(retention.Pruner, "step", watched_step)
    deleted = retention.prune_history(policy=retention.Policy(keep_per_job=5))
    assert deleted == 15
    assert seen == [0]
    assert autocheckpoint_here() == configured
