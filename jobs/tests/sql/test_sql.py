"""The vendor layer: every vendor's statement file and store answer to the same names."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from jobs.sql import loader, store
from jobs.sql.base import Operations
from jobs.sql.mysql.store import MysqlStore
from jobs.sql.postgresql.store import PostgresqlStore
from jobs.sql.sqlite.store import SqliteStore

STORES = [SqliteStore(), PostgresqlStore(), MysqlStore()]


def test_every_vendor_defines_the_same_statements():
    sqlite, postgresql, mysql = (set(s.queries) for s in STORES)
    assert sqlite == postgresql == mysql


def test_every_operation_names_a_statement_each_vendor_has():
    import inspect
    import re

    # Operations combines one class per area (jobs/sql/operations/): read them all.
    source = "".join(
        inspect.getsource(area)
        for area in Operations.__mro__
        if area.__module__.startswith("jobs.")
    )
    named = set(re.findall(r'"([a-z_]+)"', source)) & set(STORES[0].queries)
    assert named  # the operations call statements by name
    for s in STORES:
        assert named <= set(s.queries)


@pytest.mark.parametrize("s", STORES, ids=lambda s: s.vendor)
def test_status_words_and_tables_are_filled_in(s):
    for query in s.queries.values():
        assert "{" not in query.text.replace("{keys}", "").replace("{rows}", ""), query.name
        assert "{" not in query.row, query.name


def test_a_statement_defined_twice_is_refused(tmp_path: Path):
    path = tmp_path / "queries.sql"
    path.write_text("-- name: a\nSELECT 1\n-- name: a\nSELECT 2\n")
    with pytest.raises(ValueError, match="defined twice"):
        loader.load(path)


def test_batches_expand_to_as_many_placeholders_as_rows():
    query = STORES[1].queries["move_jobs"]
    assert query.expand(3).count("::uuid") == 3


@pytest.mark.django_db
def test_the_store_in_use_reads_back_the_datetimes_it_writes():
    s = store()
    moment = datetime(2026, 3, 29, 1, 30, 15, 123456, tzinfo=UTC)
    with s.reading() as ops:
        text = s.datetime_as_text("%s")
        ops.cursor.execute(f"SELECT {text}", [s.adapt_datetime(moment)])
        value = ops.cursor.fetchone()[0]
    if s.vendor in ("postgresql", "mysql"):  # a bound text parameter comes back as text
        value = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    assert s.read_datetime(value) == moment


@pytest.mark.django_db
def test_the_engines_statements_are_counted_and_logged_while_django_logs_queries(make_job, clock):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from jobs import engine
    from jobs.tests.factories import WORKER

    job = make_job()
    clock.move_to(job.next_run_at)
    with CaptureQueriesContext(connection) as claimed:
        tickets = engine.claim_due()
    statements = [q["sql"] for q in claimed.captured_queries]
    assert any(s.startswith("SELECT id, name, command") for s in statements)
    assert any(s.startswith("INSERT INTO jobs_jobhistory") for s in statements)
    # Values are written in, as Django's own log shows them.
    assert any(job.pk.hex in s for s in statements if s.startswith("INSERT INTO"))
    assert any(s.startswith("UPDATE jobs_job ") for s in statements)  # the job moved on
    with CaptureQueriesContext(connection) as started:
        engine.start(tickets, WORKER)
    # The test's transaction turns the store's into a savepoint around its one UPDATE.
    # On MySQL the runs are locked and read first (it has no RETURNING).
    expected = ["UPDATE jobs_jobhistory"]
    if connection.vendor == "mysql":
        expected.insert(0, "SELECT id FROM jobs_jobhistory FORCE INDEX (PRIMARY)")
    assert [
        q["sql"].split(" SET ")[0].split(" WHERE ")[0]
        for q in started.captured_queries
        if "SAVEPOINT" not in q["sql"]
    ] == expected


@pytest.mark.django_db
def test_nothing_is_logged_while_django_does_not_log_queries(make_job, clock, settings):
    from django.db import connection

    from jobs import engine

    settings.DEBUG = False
    job = make_job()
    clock.move_to(job.next_run_at)
    connection.queries_log.clear()
    assert not connection.queries_logged
    assert len(engine.claim_due()) == 1
    assert len(connection.queries_log) == 0
