"""What MySQL and MariaDB lack, done by the vendor layer: the status-led indexes the hot
statements use (EXPLAIN), four-byte UTF-8 in logs, the server checks, the migrations."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from jobs import engine
from jobs.models import JobHistory, RunStatus
from jobs.runs import RunResult
from jobs.sql import store
from jobs.sql.cursor import _with_values
from jobs.sql.mysql import checks
from jobs.tests.factories import NOW, WORKER, make_job, make_run

on_mysql = pytest.mark.skipif(connection.vendor != "mysql", reason="MySQL/MariaDB only")


@pytest.mark.parametrize(
    ("version", "too_old"),
    [
        ("10.5.22-MariaDB", True),
        ("10.6.0-MariaDB-1", False),
        ("10.11.19-MariaDB-0+deb12u1", False),
        ("5.7.44", True),
        ("8.0.0", True),
        ("8.0.1", False),
        ("8.4.3", False),
    ],
)
def test_a_server_without_skip_locked_is_refused_with_what_to_change(version, too_old):
    errors = checks.problems(checks.Server(version, "utf8mb4", "utf8mb4"))
    assert [e.id for e in errors] == (["jobs.E020"] if too_old else [])
    if too_old:
        assert "SKIP LOCKED" in errors[0].msg
        assert "MariaDB 10.6" in errors[0].hint


def test_a_database_not_in_utf8mb4_is_refused_with_what_to_change():
    errors = checks.problems(checks.Server("10.11.6-MariaDB", "utf8mb3", "utf8mb4"))
    assert [e.id for e in errors] == ["jobs.E021"]
    assert "utf8mb3" in errors[0].msg and "utf8mb4" in errors[0].hint


@on_mysql
@pytest.mark.django_db
def test_runscheduler_does_not_start_on_a_server_the_checks_refuse(monkeypatch, clock):
    job = make_job()
    clock.move_to(job.next_run_at)
    monkeypatch.setattr(
        checks, "read_server", lambda: checks.Server("10.5.9-MariaDB", "utf8mb4", "utf8mb4")
    )
    with pytest.raises(SystemCheckError, match=r"jobs\.E020"):
        call_command("runscheduler", "--once", skip_checks=False)
    assert not JobHistory.objects.exists()  # nothing claimed, nothing ran


@on_mysql
@pytest.mark.django_db
def test_the_server_in_use_passes_the_checks():
    assert checks.mysql_server() == []


@on_mysql
@pytest.mark.django_db
def test_a_log_with_four_byte_characters_and_bad_text_is_stored_cleaned(clock):
    job = make_job()
    clock.move_to(job.next_run_at)
    (ticket,) = engine.claim_due()
    (started,) = engine.start([ticket], WORKER)
    log = "done 🎉 naïve 日本\x00 broken \udcff end"
    now = timezone.now()
    assert engine.finish([RunResult(started, True, log, now, now)], WORKER) == 1
    stored = JobHistory.objects.get(pk=ticket.run_key).log
    assert "🎉 naïve 日本" in stored and stored.endswith(" end")
    assert "\x00" not in stored and "\udcff" not in stored


def _explain(sql: str) -> list[dict]:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql)
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


@on_mysql
# ANALYZE TABLE commits the transaction it runs in: the rows are flushed after the test
# instead of rolled back.
@pytest.mark.django_db(transaction=True)
def test_the_hot_statements_use_the_status_led_indexes():
    jobs = [make_job(name=f"j{i}") for i in range(20)]
    finished = [
        JobHistory(
            job=job,
            scheduled_for=NOW - timedelta(minutes=n),
            not_before=NOW - timedelta(minutes=n),
            created_at=NOW - timedelta(minutes=n),
            status=RunStatus.SUCCESS,
        )
        for job in jobs
        for n in range(1, 100)
    ]
    JobHistory.objects.bulk_create(finished)
    for job in jobs[:3]:
        make_run(job, at=NOW, status=RunStatus.PENDING)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE TABLE jobs_job, jobs_jobhistory")
        cursor.fetchall()
    s, now = store(), store().adapt_datetime(NOW)

    def key(job):
        return job.pk.hex

    statements = {
        "due_jobs": ([now, 100], "jobs_job_due"),
        "ready_runs": (["default", now, 100], "jobs_run_pending_queue"),
        "lost_runs": ([now, 100], "jobs_run_running_heartbeat"),
        "pending_queues": ([], "jobs_run_pending_queue"),
        "queue_room": (["default", "default", now, 10], "jobs_run_pending_queue"),
        "next_wake_at": ([now], "jobs_run_pending_ready"),
        "active_runs": ([key(j) for j in jobs[:2]] * 2, "jobs_run_pending_ready"),
    }
    for name, (params, index) in statements.items():
        query = s.queries[name]
        text = query.expand(2) if "{keys}" in query.text else query.text
        plan = _explain(_with_values(text.split(";")[0], params))
        used = {row["key"] for row in plan}
        assert index in used, (name, plan)
        assert all(
            row["type"] != "ALL" for row in plan if row["table"] in ("r", "jobs_jobhistory")
        ), (name, plan)


@on_mysql
@pytest.mark.django_db(transaction=True)
def test_migrations_run_back_to_0018_and_forward_again():
    executor = MigrationExecutor(connection)
    executor.migrate([("jobs", "0018_unused_schedule_fields")])
    with connection.cursor() as cursor:
        cursor.execute("SHOW INDEX FROM jobs_job WHERE Key_name = 'jobs_job_code_key_unique'")
        assert cursor.fetchall() == ()
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes("jobs"))
    with connection.cursor() as cursor:
        cursor.execute("SHOW INDEX FROM jobs_jobhistory WHERE Key_name = 'jobs_run_pending_queue'")
        columns = [row[4] for row in cursor.fetchall()]
    assert columns == ["status", "queue", "priority", "not_before"]
