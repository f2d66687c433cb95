"""Bounded history: what pruning deletes, what it never deletes, and how it deletes."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from jobs.models import (
    DeliveryChannel,
    JobHistory,
    NotificationAttempt,
    NotificationKind,
    NotificationStatus,
    RunStatus,
)
from jobs.runtime import retention
from jobs.runtime.retention import Policy, Pruner, prune_history
from jobs.runtime.scheduler import Scheduler
from jobs.tests.factories import NOW
from jobs.tests.processes import wait_until

pytestmark = pytest.mark.django_db


def add_runs(job, count, *, status=RunStatus.SUCCESS, first=NOW, every=timedelta(minutes=1)):
    """`count` runs of `job`, one per occurrence from `first`, created when scheduled."""
    runs = [
        JobHistory(
            job=job,
            scheduled_for=first + every * i,
            not_before=first + every * i,
            created_at=first + every * i,
            status=status,
        )
        for i in range(count)
    ]
    return JobHistory.objects.bulk_create(runs)


def occurrences(job):
    return sorted(
        JobHistory.objects.filter(job=job).values_list("scheduled_for", "attempt"),
    )


def deletes(queries) -> int:
    """The DELETEs of runs (each batch's alert attempts go in a DELETE of their own)."""
    runs = f"DELETE FROM {JobHistory._meta.db_table}"
    return sum(1 for q in queries.captured_queries if q["sql"].lstrip().startswith(runs))


def test_each_job_keeps_its_newest_runs(make_job):
    busy, quiet = make_job(name="busy"), make_job(name="quiet")
    add_runs(busy, 12)
    add_runs(quiet, 3)
    deleted = prune_history(NOW + timedelta(days=1), policy=Policy(keep_per_job=5))
    assert deleted == 7
    assert occurrences(busy) == [(NOW + timedelta(minutes=i), 1) for i in range(7, 12)]
    assert len(occurrences(quiet)) == 3


def test_the_highest_attempt_of_an_occurrence_is_its_newest_run(make_job):
    job = make_job()
    add_runs(job, 3)
    last = NOW + timedelta(minutes=2)
    JobHistory.objects.create(
        job=job, scheduled_for=last, not_before=last, attempt=2, status=RunStatus.SUCCESS
    )
    prune_history(NOW + timedelta(days=1), policy=Policy(keep_per_job=2))
    assert occurrences(job) == [(last, 1), (last, 2)]


def test_runs_older_than_the_age_limit_go_and_younger_ones_stay(make_job):
    job = make_job()
    add_runs(job, 10, first=NOW - timedelta(days=9), every=timedelta(days=1))
    deleted = prune_history(NOW, policy=Policy(max_age=timedelta(days=3, hours=12)))
    assert deleted == 6
    assert occurrences(job)[0][0] == NOW - timedelta(days=3)


def test_a_pending_or_running_run_is_never_deleted_but_counts_among_the_newest(make_job):
    job = make_job()
    old = NOW - timedelta(days=400)
    add_runs(job, 2, status=RunStatus.PENDING, first=old)
    add_runs(job, 2, status=RunStatus.RUNNING, first=old + timedelta(hours=1))
    add_runs(job, 5, status=RunStatus.FAILED, first=old + timedelta(hours=2))
    add_runs(job, 2, status=RunStatus.PENDING, first=NOW)
    prune_history(NOW, policy=Policy(keep_per_job=3, max_age=timedelta(days=1)))
    left = JobHistory.objects.filter(job=job)
    assert left.filter(status=RunStatus.PENDING).count() == 4
    assert left.filter(status=RunStatus.RUNNING).count() == 2
    assert not left.filter(status=RunStatus.FAILED).exists()


def test_a_limit_of_zero_turns_its_rule_off(make_job):
    job = make_job()
    add_runs(job, 5, first=NOW - timedelta(days=1000))
    assert prune_history(NOW, policy=Policy(keep_per_job=0, max_age=None)) == 0
    assert prune_history(NOW, policy=Policy(keep_per_job=0, max_age=timedelta(days=2000))) == 0
    assert prune_history(NOW, policy=Policy(keep_per_job=5, max_age=None)) == 0
    assert JobHistory.objects.count() == 5


def test_the_defaults_come_from_the_settings(settings):
    settings.JOBS_HISTORY_KEEP_PER_JOB = 7
    settings.JOBS_HISTORY_MAX_AGE_DAYS = 0
    settings.JOBS_AUDIT_KEEP_DAYS = 0
    assert Policy.from_settings() == Policy(keep_per_job=7, max_age=None)
    settings.JOBS_HISTORY_MAX_AGE_DAYS = 1.5
    assert Policy.from_settings().max_age == timedelta(hours=36)


def test_it_deletes_a_batch_per_statement(make_job):
    job = make_job()
    add_runs(job, 30)
    with CaptureQueriesContext(connection) as queries:
        deleted = prune_history(NOW + timedelta(days=1), batch=10, policy=Policy(keep_per_job=5))
    assert deleted == 25
    assert deletes(queries) == 3  # 10 + 10 + 5


def test_the_age_rule_deletes_a_batch_per_statement_too(make_job):
    job = make_job()
    add_runs(job, 20, first=NOW - timedelta(days=100))
    with CaptureQueriesContext(connection) as queries:
        deleted = prune_history(NOW, batch=7, policy=Policy(max_age=timedelta(days=1)))
    assert deleted == 20
    assert deletes(queries) == 3  # 7 + 7 + 6


def test_the_per_job_probe_walks_the_unique_index(make_job):
    if connection.vendor != "sqlite":
        pytest.skip("reads SQLite's query plan")
    add_runs(make_job(), 3)
    with CaptureQueriesContext(connection) as queries:
        prune_history(NOW, policy=Policy(keep_per_job=2))
    probe = next(q["sql"] for q in queries.captured_queries if "OFFSET" in q["sql"])
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {probe}")
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    # The unique (job, scheduled_for, attempt) constraint's index (SQLite names it
    # sqlite_autoindex_*), read alone and in its own order: no table rows, no sort.
    assert "USING COVERING INDEX" in plan and "(job_id=?)" in plan, plan
    assert "TEMP B-TREE" not in plan, plan


def test_a_dry_run_deletes_nothing_and_counts_each_run_once(make_job):
    job = make_job()
    # 10 old runs (all beyond the age limit, 7 of them also beyond the newest 3), 2 new.
    add_runs(job, 10, first=NOW - timedelta(days=100))
    add_runs(job, 2, first=NOW - timedelta(hours=1))
    policy = Policy(keep_per_job=3, max_age=timedelta(days=30))
    assert prune_history(NOW, policy=policy, dry_run=True) == 10
    assert JobHistory.objects.count() == 12
    assert prune_history(NOW, policy=policy) == 10
    assert JobHistory.objects.count() == 2


def test_prunehistory_dry_run_deletes_nothing(make_job, settings, capsys, clock):
    settings.JOBS_HISTORY_KEEP_PER_JOB = 2
    add_runs(make_job(), 5)
    call_command("prunehistory", "--dry-run")
    assert "would delete 3 runs" in capsys.readouterr().out
    assert JobHistory.objects.count() == 5


def test_prunehistory_deletes_what_the_settings_no_longer_keep(make_job, settings, capsys, clock):
    settings.JOBS_HISTORY_KEEP_PER_JOB = 2
    settings.JOBS_HISTORY_MAX_AGE_DAYS = 0
    add_runs(make_job(), 5)
    call_command("prunehistory", "--batch", "2")
    assert "deleted 3 runs (keeping the newest 2 runs per job)" in capsys.readouterr().out
    assert JobHistory.objects.count() == 2


def test_prunehistory_with_both_rules_off_says_so(settings, capsys):
    settings.JOBS_HISTORY_KEEP_PER_JOB = 0
    settings.JOBS_HISTORY_MAX_AGE_DAYS = 0
    call_command("prunehistory")
    assert "Retention is off" in capsys.readouterr().out


def test_slices_stop_within_their_budget_and_resume_where_they_stopped(make_job):
    jobs = [make_job(name=f"job {i}") for i in range(4)]
    for job in jobs:
        add_runs(job, 6)
    pruner = Pruner(Policy(keep_per_job=1), batch=2)
    slices = 0
    # No time at all: each slice does one unit of work (a probe or a statement).
    while not pruner.step(NOW + timedelta(days=1), budget=0):
        slices += 1
        assert slices < 100
    assert slices > 4
    assert JobHistory.objects.count() == 4
    assert pruner.stats.rounds == 1


def test_after_a_full_round_only_the_jobs_that_ran_since_are_probed(make_job):
    ran, idle = make_job(name="ran"), make_job(name="idle")
    add_runs(ran, 3)
    add_runs(idle, 3)
    pruner = Pruner(Policy(keep_per_job=10))
    pruner.step(NOW)
    assert pruner.stats.jobs_probed == 2
    ran.last_run_at = NOW + timedelta(minutes=5)
    ran.save(update_fields=["last_run_at"])
    pruner.step(NOW + timedelta(minutes=10))
    assert pruner.stats.jobs_probed == 3


@pytest.mark.django_db(transaction=True)
def test_the_scheduler_prunes_while_it_serves(make_job, settings, instant, monkeypatch):
    settings.JOBS_HISTORY_KEEP_PER_JOB = 0
    settings.JOBS_HISTORY_MAX_AGE_DAYS = 30
    settings.JOBS_PRUNE_INTERVAL_SECONDS = 0.05
    job = make_job(interval=1, interval_unit="day")
    add_runs(job, 450, first=timezone.now() - timedelta(days=400), every=timedelta(hours=1))
    background = retention.BackgroundPruning()  # a fresh process's state
    monkeypatch.setattr(retention, "prune_when_due", background)
    scheduler = Scheduler(workers=1, tick=0.05)
    thread = threading.Thread(target=scheduler.serve)
    thread.start()
    try:
        wait_until(lambda: not JobHistory.objects.exists(), timeout=30)
    finally:
        scheduler.request_stop()
        thread.join(timeout=30)
    # Deleted in the scheduler's small slices, not in one go.
    assert background.pruner.stats.statements >= 450 // retention.SLICE_BATCH


def test_a_failing_prune_never_reaches_the_scheduler_loop(settings, monkeypatch, caplog):
    settings.JOBS_PRUNE_INTERVAL_SECONDS = 60

    def explode(self, *args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(Pruner, "step", explode)
    background = retention.BackgroundPruning()
    assert background() == 0
    assert background() == 0  # it waits for the next round rather than retrying at once
    assert caplog.text.count("pruning the history failed") == 1


def test_pruning_in_the_scheduler_can_be_turned_off(make_job, settings):
    settings.JOBS_PRUNE_INTERVAL_SECONDS = 0
    settings.JOBS_HISTORY_KEEP_PER_JOB = 1
    add_runs(make_job(), 3)
    assert retention.BackgroundPruning()() == 0
    assert JobHistory.objects.count() == 3


def test_pruning_a_run_deletes_its_alert_attempts_with_it(make_job):
    """The pruning's deletes are raw SQL, which does not cascade as the ORM would: a run
    with alert attempts left them pointing at nothing (and the commit failed where the
    foreign key is checked). The test's teardown checks the foreign keys too."""
    job = make_job()
    old, kept = add_runs(job, 2)
    for run in (old, kept):
        NotificationAttempt.objects.create(
            run=run,
            kind=NotificationKind.FAILURE,
            channel=DeliveryChannel.WEBHOOK,
            status=NotificationStatus.SENT,
        )
    deleted = prune_history(NOW + timedelta(days=1), policy=Policy(keep_per_job=1))
    assert deleted == 1
    assert list(NotificationAttempt.objects.values_list("run_id", flat=True)) == [kept.pk]
    connection.check_constraints()
