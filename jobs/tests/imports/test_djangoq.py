"""`importschedules --from django-q2`: a real django-q2 database (migrated and filled by
its own model in a child process, host_rows.py) read by SQL and by its model; its Python
literal text parsed, never evaluated; functions not registered here skipped with the fix;
--disable-source setting repeats to 0."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from jobs.imports import sources
from jobs.imports.djangoq import DjangoQSource, _wall_cron
from jobs.imports.plan import run_import
from jobs.models import Channel, Job, JobChange
from jobs.tests import sample_tasks
from jobs.tests.imports.conftest import sql, url

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen")]

TASKS = "jobs.tests.sample_tasks"


def importschedules(*args: str) -> str:
    out = StringIO()
    call_command("importschedules", "--from", "django-q2", *args, stdout=out)
    return out.getvalue()


def repeats(path: Path) -> dict[str, int]:
    return dict(sql(path, "SELECT name, repeats FROM django_q_schedule"))


@override_settings(TIME_ZONE="Europe/Paris")
def test_it_imports_every_kind_of_schedule_into_python_jobs(source_db: Path) -> None:
    out = importschedules(url(source_db))

    jobs = {job.name: job for job in Job.objects.all()}
    assert sorted(jobs) == ["daily invoices", "every ten", "mondays", "monthly, done", "once"]
    assert {job.executor for job in jobs.values()} == {"python"}
    daily = jobs["daily invoices"]
    # Daily at next_run's wall time in the site's zone (07:30 UTC is 08:30 in Paris).
    assert (daily.command, daily.cron_expression, daily.timezone) == (
        f"{TASKS}.send_invoices",
        "30 8 * * *",
        "Europe/Paris",
    )
    assert daily.arguments == {"day": "yesterday"}
    assert daily.queue == "billing"
    every = jobs["every ten"]
    assert (every.interval, every.interval_unit) == (10, "minute")
    assert every.scheduled_at == datetime(2027, 1, 1, tzinfo=UTC)
    # Positional args bound to the task's parameters, in order.
    assert every.arguments == {"key": "k", "value": 3}
    mondays = jobs["mondays"]
    assert (mondays.cron_expression, mondays.arguments) == ("0 8 * * 1", {"day": "monday"})
    once = jobs["once"]
    assert (once.schedule_type, once.scheduled_at) == ("once", datetime(2027, 2, 1, tzinfo=UTC))
    monthly = jobs["monthly, done"]
    assert (monthly.cron_expression, monthly.is_active) == ("0 10 15 * *", False)
    assert "skipped shell out: os.system is not a task registered with this app" in out
    assert "@register" in out
    assert "skipped not literals: its args are not Python literals" in out
    assert set(JobChange.objects.values_list("channel", flat=True)) == {Channel.IMPORT}


@pytest.mark.parametrize(
    ("kind", "expression"),
    [
        ("D", "30 8 * * *"),
        ("W", "30 8 * * 3"),  # 2027-02-17 is a Wednesday
        ("M", "30 8 17 * *"),
        ("BM", "30 8 17 2,4,6,8,10,12 *"),
        ("Q", "30 8 17 2,5,8,11 *"),
        ("Y", "30 8 17 2 *"),
    ],
)
def test_wall_clock_schedules_become_cron_at_next_runs_wall_time(
    kind: str, expression: str
) -> None:
    assert _wall_cron(kind, datetime(2027, 2, 17, 8, 30)) == expression


def test_literal_text_is_never_evaluated(source_db: Path, tmp_path: Path) -> None:
    marker = tmp_path / "evaluated"
    sql(
        source_db,
        "UPDATE django_q_schedule SET kwargs = ? WHERE name = 'every ten'",
        (f"{{'key': open({str(marker)!r}, 'w').write('x')}}",),
    )

    out = importschedules(url(source_db))

    assert "skipped every ten: its kwargs are not Python literals" in out
    assert not marker.exists()
    assert not sample_tasks.calls


def test_a_changed_schedule_updates_its_job_and_check_says_so(source_db: Path) -> None:
    importschedules(url(source_db))
    assert "5 unchanged" in importschedules(url(source_db), "--check")
    sql(source_db, "UPDATE django_q_schedule SET minutes = 20 WHERE name = 'every ten'")

    with pytest.raises(CommandError) as differs:
        importschedules(url(source_db), "--check")
    assert differs.value.returncode == 1
    out = importschedules(url(source_db))

    assert "updated every ten: interval" in out
    assert Job.objects.filter(name="every ten").get().interval == 20
    assert Job.objects.filter(import_source="django-q2").count() == 5


def test_the_next_run_django_q2_moves_at_every_run_is_no_change(source_db: Path) -> None:
    importschedules(url(source_db))
    sql(
        source_db,
        "UPDATE django_q_schedule SET next_run = '2027-01-02 07:30:00' WHERE schedule_type != 'O'",
    )

    assert "0 created, 0 updated, 5 unchanged" in importschedules(url(source_db), "--check")


def test_disable_source_sets_repeats_to_0_in_the_same_transaction(source_db: Path) -> None:
    out = importschedules(url(source_db), "--disable-source")

    assert repeats(source_db) == {
        "daily invoices": 0,
        "every ten": 0,
        "mondays": 0,
        "once": 0,
        "monthly, done": 0,
        # Not imported: django-q2 keeps running them.
        "shell out": -1,
        "not literals": -1,
    }
    assert "4 entries switched off in the source" in out
    assert Job.objects.get(name="mondays").is_active is True
    assert "5 unchanged" in importschedules(url(source_db), "--check")


# django-q2 warns on import about its cluster's settings; no cluster runs here.
@pytest.mark.filterwarnings("ignore:Retry and timeout are misconfigured")
def test_django_q2s_model_reads_what_its_table_says(source_db: Path) -> None:
    alias = sources._url_alias(url(source_db))
    by_sql = DjangoQSource(alias, use_models=False).read()
    with override_settings(INSTALLED_APPS=["django_q"]):
        by_model = DjangoQSource(alias).read()
        assert by_model == by_sql
        run_import(DjangoQSource(alias), disable_source=True)
    assert repeats(source_db)["mondays"] == 0


def test_a_missing_database_stops_with_a_message(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="does not exist; nothing was changed"):
        importschedules(url(tmp_path / "gone.sqlite3"))
