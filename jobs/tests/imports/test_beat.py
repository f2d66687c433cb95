"""`importschedules --from celery-beat`: a real django-celery-beat database (migrated and
filled by its own models in a child process, jobs/tests/imports/host_rows.py) read by SQL
from its URL, and by beat's models when the app is installed; re-imports in place, --check,
--dry-run, --disable-source and its rollback, and sources that cannot be read."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.models.signals import post_save
from django.test import override_settings

from jobs.imports import sources
from jobs.imports.beat import BeatSource
from jobs.imports.entries import SourceError
from jobs.imports.plan import run_import
from jobs.models import ChangeAction, Channel, Job, JobChange
from jobs.tests.imports.conftest import make_host_database, sql, url

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen")]


def importschedules(*args: str) -> str:
    out = StringIO()
    call_command("importschedules", "--from", "celery-beat", *args, stdout=out)
    return out.getvalue()


def jobs() -> dict[str, Job]:
    return {job.name: job for job in Job.objects.all()}


def enabled_rows(path: Path) -> dict[str, int]:
    return dict(sql(path, "SELECT name, enabled FROM django_celery_beat_periodictask"))


def beat_marker(path: Path) -> list[tuple]:
    return sql(path, "SELECT last_update FROM django_celery_beat_periodictasks WHERE ident = 1")


def test_it_imports_one_row_of_every_kind(source_db: Path) -> None:
    out = importschedules(url(source_db))

    imported = jobs()
    assert sorted(imported) == [
        "cache refresh",
        "invoices",
        "launch",
        "legacy sync",
        "morning report",
        "promotion",
    ]
    assert {job.executor for job in imported.values()} == {"celery"}
    assert {job.import_source for job in imported.values()} == {"celery-beat"}
    invoices = imported["invoices"]
    assert (invoices.schedule_type, invoices.cron_expression, invoices.timezone) == (
        "cron",
        "30 9 * * 1-5",
        "Asia/Tokyo",
    )
    assert invoices.command == "billing.send_invoices"
    assert invoices.arguments == {"args": [1, "a"], "kwargs": {"day": "today"}}
    assert (invoices.queue, invoices.priority, invoices.is_active) == ("billing", 5, True)
    assert invoices.description == "Send the day's invoices."
    cache = imported["cache refresh"]
    assert (cache.schedule_type, cache.interval, cache.interval_unit) == ("interval", 15, "minute")
    assert cache.scheduled_at == datetime(2027, 1, 1, tzinfo=UTC)
    assert cache.next_run_at == datetime(2027, 1, 1, tzinfo=UTC)
    launch = imported["launch"]
    assert (launch.schedule_type, launch.scheduled_at) == (
        "once",
        datetime(2027, 1, 5, 12, tzinfo=UTC),
    )
    report = imported["morning report"]  # one_off on a crontab: its next 06:00 UTC, once
    assert (report.schedule_type, report.scheduled_at) == (
        "once",
        datetime(2026, 12, 2, 6, tzinfo=UTC),
    )
    assert imported["legacy sync"].is_active is False
    assert imported["promotion"].is_active is False  # expired in 2020
    assert "skipped tides: a solar schedule (sunrise)" in out
    assert "skipped celery.backend_cleanup: Celery's own clean-up" in out
    assert "expired at 2020-01-01T00:00:00+00:00: imported disabled" in out
    assert "celery-beat: 6 created, 0 updated, 0 unchanged, 0 deactivated, 2 skipped" in out
    created = JobChange.objects.filter(action=ChangeAction.CREATE)
    assert set(created.values_list("channel", flat=True)) == {Channel.IMPORT}
    assert created.count() == 6


def test_a_second_import_updates_in_place(source_db: Path) -> None:
    importschedules(url(source_db))
    ids = {name: job.pk for name, job in jobs().items()}
    sql(source_db, "UPDATE django_celery_beat_crontabschedule SET hour = '10' WHERE hour = '9'")
    sql(
        source_db,
        'UPDATE django_celery_beat_periodictask SET kwargs = \'{"day": "monday"}\', '
        "priority = 7 WHERE name = 'invoices'",
    )

    out = importschedules(url(source_db))

    assert {name: job.pk for name, job in jobs().items()} == ids
    invoices = Job.objects.get(name="invoices")
    assert invoices.cron_expression == "30 10 * * 1-5"
    assert invoices.arguments["kwargs"] == {"day": "monday"}
    assert invoices.priority == 7
    assert "updated invoices: arguments, cron_expression, priority" in out
    assert "1 updated, 5 unchanged" in out
    edit = JobChange.objects.get(action=ChangeAction.EDIT)
    assert (edit.channel, edit.job_id) == (Channel.IMPORT, invoices.pk)


def test_a_celery_queue_with_a_dot_gets_a_queue_here_and_the_setting_to_add(
    source_db: Path, settings: object
) -> None:
    sql(source_db, "UPDATE django_celery_beat_periodictask SET queue = 'reports.high'")
    settings.JOBS_CELERY_QUEUES = {"fast": "billing"}  # type: ignore[attr-defined]

    out = importschedules(url(source_db))

    assert Job.objects.get(name="launch").queue == "reports-high"
    assert "add reports-high=reports.high to JOBS_CELERY_QUEUES" in out
    sql(source_db, "UPDATE django_celery_beat_periodictask SET queue = 'billing'")
    importschedules(url(source_db))
    assert Job.objects.get(name="launch").queue == "fast"  # JOBS_CELERY_QUEUES's name for it


def test_an_operators_change_stays_while_the_source_is_unchanged(source_db: Path) -> None:
    importschedules(url(source_db))
    job = Job.objects.get(name="invoices")
    job.set_active(False)

    importschedules(url(source_db))

    assert Job.objects.get(name="invoices").is_active is False
    sql(source_db, "UPDATE django_celery_beat_periodictask SET priority = 1 WHERE name='invoices'")
    importschedules(url(source_db))
    # The source changed, but not its enabled flag: the operator's pause stays.
    assert Job.objects.get(name="invoices").is_active is False
    assert Job.objects.get(name="invoices").priority == 1


def test_a_row_gone_from_beat_deactivates_its_job(source_db: Path) -> None:
    importschedules(url(source_db))
    sql(source_db, "DELETE FROM django_celery_beat_periodictask WHERE name = 'invoices'")

    out = importschedules(url(source_db))

    assert "deactivated invoices: gone from the source" in out
    assert Job.objects.get(name="invoices").is_active is False


def test_check_exits_1_when_the_source_differs_and_0_when_equal(source_db: Path) -> None:
    with pytest.raises(CommandError) as differs:
        importschedules(url(source_db), "--check")
    assert differs.value.returncode == 1
    assert not Job.objects.exists()

    importschedules(url(source_db))
    assert "0 created, 0 updated, 6 unchanged" in importschedules(url(source_db), "--check")

    sql(source_db, "UPDATE django_celery_beat_periodictask SET queue = 'b2' WHERE name='launch'")
    with pytest.raises(CommandError) as again:
        importschedules(url(source_db), "--check")
    assert again.value.returncode == 1
    assert Job.objects.get(name="launch").queue == "default"


def test_dry_run_prints_the_plan_and_changes_nothing(source_db: Path) -> None:
    before = source_db.read_bytes()

    out = importschedules(url(source_db), "--dry-run", "--disable-source")

    assert "would create invoices" in out
    assert "would skip tides" in out
    assert out.splitlines()[-1].startswith("dry run, nothing changed: celery-beat: 6 created")
    assert not Job.objects.exists()
    assert not JobChange.objects.exists()
    assert source_db.read_bytes() == before


def test_disable_source_switches_the_imported_rows_off_and_tells_beat(source_db: Path) -> None:
    marker = beat_marker(source_db)

    out = importschedules(url(source_db), "--disable-source")

    assert enabled_rows(source_db) == {
        "invoices": 0,
        "cache refresh": 0,
        "launch": 0,
        "morning report": 0,
        "legacy sync": 0,
        # Not run by beat either (expired), and left as it was.
        "promotion": 1,
        # Not imported: beat keeps running them.
        "tides": 1,
        "celery.backend_cleanup": 1,
    }
    assert beat_marker(source_db) != marker
    assert "4 entries switched off in the source" in out
    assert Job.objects.get(name="invoices").is_active is True
    # The next import sees the rows it switched off, not a change of the source.
    assert "0 created, 0 updated, 6 unchanged" in importschedules(url(source_db), "--check")
    assert Job.objects.get(name="invoices").is_active is True


def test_a_failure_rolls_back_the_jobs_and_the_source_together(source_db: Path) -> None:
    marker = beat_marker(source_db)

    def fail_on_the_last(sender: type, instance: Job, **kwargs: object) -> None:
        if instance.name == "promotion":
            raise RuntimeError("the disk is full")

    post_save.connect(fail_on_the_last, sender=Job)
    try:
        with pytest.raises(RuntimeError, match="the disk is full"):
            importschedules(url(source_db), "--disable-source")
    finally:
        post_save.disconnect(fail_on_the_last, sender=Job)

    assert not Job.objects.exists()
    assert not JobChange.objects.exists()
    assert enabled_rows(source_db)["invoices"] == 1
    assert beat_marker(source_db) == marker


def test_strict_refuses_a_source_with_skipped_rows_and_changes_nothing(source_db: Path) -> None:
    with pytest.raises(CommandError, match="tides: a solar schedule") as refused:
        importschedules(url(source_db), "--strict")

    assert refused.value.returncode == 2
    assert not Job.objects.exists()


def test_beats_models_read_what_its_tables_say(source_db: Path) -> None:
    alias = sources._url_alias(url(source_db))
    by_sql = BeatSource(alias, use_models=False).read()
    with override_settings(INSTALLED_APPS=["django_celery_beat"]):
        by_models = BeatSource(alias).read()
        assert by_models.entries == by_sql.entries
        assert by_models.skipped == by_sql.skipped

        run_import(BeatSource(alias), disable_source=True)
    assert enabled_rows(source_db)["invoices"] == 0
    assert Job.objects.filter(import_source="celery-beat").count() == 6


def test_a_missing_database_file_stops_with_a_message(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="does not exist; nothing was changed") as error:
        importschedules(url(tmp_path / "nowhere.sqlite3"))
    assert error.value.returncode == 2
    assert not (tmp_path / "nowhere.sqlite3").exists()


def test_a_database_without_beats_tables_stops_with_a_message(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite3"
    sql(empty, "CREATE TABLE other (id integer)")

    with pytest.raises(CommandError, match="django_celery_beat tables cannot be read"):
        importschedules(url(empty))


def test_an_unknown_alias_stops_with_a_message() -> None:
    with pytest.raises(CommandError, match="no database alias 'beat'"):
        importschedules("--database", "beat")


def test_a_source_error_names_the_reason() -> None:
    with pytest.raises(SourceError, match="not a database URL"):
        sources.open_source("celery-beat", "nosuchscheme://x")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="with the suite on PostgreSQL")
def test_a_beat_database_on_postgresql_is_read_and_switched_off_from_its_url() -> None:
    """Beat's schema migrated into a private PostgreSQL database beside the suite's."""
    import psycopg

    own = connection.settings_dict
    name = f"{own['NAME']}_beat_source"
    server = {"host": own["HOST"], "port": own["PORT"] or 5432, "user": own["USER"]}
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    location = f"postgres://{own['USER']}@{server['host']}:{server['port']}/{name}"
    try:
        make_host_database(location)

        out = importschedules(location, "--disable-source")

        assert "6 created, 0 updated, 0 unchanged, 0 deactivated, 2 skipped" in out
        with psycopg.connect(dbname=name, **server) as source:
            rows = dict(source.execute("SELECT name, enabled FROM django_celery_beat_periodictask"))
        assert rows["invoices"] is False and rows["tides"] is True
        assert "6 unchanged" in importschedules(location, "--check")
    finally:
        sources.close_url_connection()
        with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
