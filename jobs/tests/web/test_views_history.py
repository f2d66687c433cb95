"""The run history: newest first, filters, duration, newer/older pages without counting."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from jobs.models import JOB_NAME_LOOKUP_LIMIT, JobHistory, RunStatus
from jobs.tests.factories import make_job, make_run
from jobs.web.pagination import Cursor

pytest_plugins = ["jobs.tests.ui_support"]

# Noon UTC on 30 November 2026, the day the date filters' tests ask for by name.
NOVEMBER_30 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _ids(response) -> list:  # type: ignore[no-untyped-def]
    return [run.pk for run in response.context["runs"].runs]


@pytest.mark.django_db
def test_it_lists_runs_newest_first_with_job_status_and_duration(signed_in: Client) -> None:
    job = make_job(name="mailer")
    older = make_run(job, ago=timedelta(minutes=5), took=timedelta(seconds=12.3))
    newer = make_run(job, status=RunStatus.FAILED, ago=timedelta(minutes=1))
    response = signed_in.get("/history/")
    assert _ids(response) == [newer.pk, older.pk]
    row = response.text.split(f'id="run-{older.pk}"')[1].split("</tr>")[0]
    assert "mailer" in row and 'data-status="success"' in row and "12.3 s" in row


@pytest.mark.django_db
def test_it_filters_by_job_status_and_name(signed_in: Client) -> None:
    mail = make_job(name="mailer")
    report = make_job(name="reporter")
    mail_ok = make_run(mail)
    mail_failed = make_run(mail, status=RunStatus.FAILED)
    report_failed = make_run(report, status=RunStatus.FAILED)
    assert set(_ids(signed_in.get(f"/history/?job={mail.pk}"))) == {mail_ok.pk, mail_failed.pk}
    assert set(_ids(signed_in.get("/history/?status=failed"))) == {
        mail_failed.pk,
        report_failed.pk,
    }
    assert _ids(signed_in.get("/history/?job_name=PORT&status=failed")) == [report_failed.pk]
    response = signed_in.get(f"/history/?job={mail.pk}")
    assert "Job: mailer" in response.text


@pytest.mark.django_db
def test_a_name_matching_many_jobs_is_filtered_by_a_join(signed_in: Client) -> None:
    jobs = [make_job(name=f"shard {index}") for index in range(JOB_NAME_LOOKUP_LIMIT + 1)]
    runs = [make_run(job) for job in jobs[:3]]
    other = make_run(make_job(name="unrelated"))
    shown = set(_ids(signed_in.get("/history/?job_name=shard")))
    assert shown == {run.pk for run in runs}
    assert other.pk not in shown


@pytest.mark.django_db
@time_machine.travel(NOVEMBER_30, tick=False)
def test_the_date_range_is_whole_days_in_the_users_zone(signed_in: Client) -> None:
    signed_in.cookies["tz"] = "Asia/Tokyo"
    job = make_job()
    # 29 Nov 23:30 in Tokyo is 14:30 UTC on 29 Nov; 30 Nov 00:30 in Tokyo is 15:30 UTC.
    before = make_run(job, ago=NOVEMBER_30 - datetime(2026, 11, 29, 14, 30, tzinfo=UTC))
    inside = make_run(job, ago=NOVEMBER_30 - datetime(2026, 11, 29, 15, 30, tzinfo=UTC))
    assert _ids(signed_in.get("/history/?date_from=2026-11-30&date_to=2026-11-30")) == [inside.pk]
    assert _ids(signed_in.get("/history/?date_to=2026-11-29")) == [before.pk]


@pytest.mark.django_db
@time_machine.travel(NOVEMBER_30, tick=False)
def test_the_apis_filter_names_work_here_too(signed_in: Client) -> None:
    job = make_job()
    old = make_run(job, ago=timedelta(hours=2))
    new = make_run(job, ago=timedelta(minutes=1))
    hour_ago = "2026-11-30T11:00:00Z"
    assert _ids(signed_in.get(f"/history/?created_after={hour_ago}")) == [new.pk]
    assert _ids(signed_in.get(f"/history/?created_before={hour_ago}")) == [old.pk]
    assert _ids(signed_in.get(f"/history/?scheduled_after={hour_ago}")) == [new.pk]
    # With the page's own date range, both apply.
    both = signed_in.get(f"/history/?date_from=2026-11-30&created_before={hour_ago}")
    assert _ids(both) == [old.pk]
    assert f'name="created_before" value="{hour_ago}"' in both.text


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    [
        "status=exploded",
        "date_from=yesterday",
        "date_from=2026-02-30",
        "date_from=0001-01-01",
        "date_to=9999-12-31",
        "date_from=2026-12-02&date_to=2026-12-01",
        "job=not-a-uuid",
        "before=garbage",
        "after=99999999999999999999_zz",
        f"job_name={'x' * 500}",
    ],
)
def test_bad_filters_are_reported_not_crashed_on(signed_in: Client, query: str) -> None:
    make_run(make_job())
    response = signed_in.get(f"/history/?{query}")
    assert response.status_code == 200


@pytest.mark.django_db
def test_an_end_before_the_start_is_reported_at_the_end(signed_in: Client) -> None:
    response = signed_in.get("/history/?date_from=2026-12-02&date_to=2026-12-01")
    assert "The end date is before the start date." in response.text


@pytest.mark.django_db
def test_pages_go_older_and_newer_by_cursor_without_counting(signed_in: Client) -> None:
    job = make_job()
    # One moment for all: under load, making 120 runs takes longer than their spacing.
    newest = timezone.now()
    runs = [make_run(job, at=newest - timedelta(seconds=index)) for index in range(120)]
    with CaptureQueriesContext(connection) as queries:
        first = signed_in.get("/history/")
    assert not any("COUNT(" in query["sql"] for query in queries.captured_queries)
    assert _ids(first) == [run.pk for run in runs[:50]]
    assert "Older" in first.text and "Newer" not in first.text
    older = first.context["runs"].older
    second = signed_in.get(f"/history/?before={older}")
    assert _ids(second) == [run.pk for run in runs[50:100]]
    third = signed_in.get(f"/history/?before={second.context['runs'].older}")
    assert _ids(third) == [run.pk for run in runs[100:]]
    assert third.context["runs"].older is None
    newer = signed_in.get(f"/history/?after={third.context['runs'].newer}")
    assert _ids(newer) == [run.pk for run in runs[50:100]]


@pytest.mark.django_db
def test_runs_created_at_the_same_instant_are_each_shown_once(signed_in: Client) -> None:
    job = make_job()
    runs = [make_run(job) for _ in range(60)]
    same = runs[0].created_at
    for run in runs:
        type(run).objects.filter(pk=run.pk).update(created_at=same)
    first = signed_in.get("/history/")
    second = signed_in.get(f"/history/?before={first.context['runs'].older}")
    shown = _ids(first) + _ids(second)
    assert len(shown) == 60 and set(shown) == {run.pk for run in runs}


def test_a_cursor_reads_back_exactly_and_a_bad_one_reads_as_none() -> None:
    cursor = Cursor(
        created_at=datetime(2026, 11, 30, 12, 0, 0, 123457, tzinfo=UTC),
        id=uuid.UUID("5f2b7c4e-0d8a-4b1e-9a3c-1f2e3d4c5b6a"),
    )
    assert str(cursor) == "1796040000123457_5f2b7c4e0d8a4b1e9a3c1f2e3d4c5b6a"
    assert Cursor.parse(str(cursor)) == cursor
    for bad in ("", "garbage", "12_notahex", "1" * 40 + "_" + "0" * 32, "_"):
        assert Cursor.parse(bad) is None


@pytest.mark.django_db
def test_only_the_first_page_follows_new_runs(signed_in: Client) -> None:
    job = make_job()
    for index in range(60):
        make_run(job, ago=timedelta(seconds=index))
    first = signed_in.get("/history/")
    assert 'hx-get="/history/"' in first.text
    second = signed_in.get(f"/history/?before={first.context['runs'].older}")
    assert "hx-get" not in second.text.split('id="history-table"')[1][:200]


# --- what an empty page says, the filter errors, the run's times ------------------------


@pytest.mark.django_db
def test_a_filter_matching_nothing_says_so_with_a_link_to_clear_it(signed_in: Client) -> None:
    make_run(make_job(name="mailer"))
    response = signed_in.get("/history/?job_name=nothing-like-it")
    assert "No run matches these filters." in response.text
    assert '<a href="/history/" id="clear-filters">Clear the filters</a>' in response.text
    assert "No runs yet." not in response.text
    # Without a filter and without runs: "No runs yet."
    JobHistory.objects.all().delete()
    empty = signed_in.get("/history/").text
    assert "No runs yet." in empty and "Clear the filters" not in empty


@pytest.mark.django_db
def test_a_reversed_date_range_is_reported_below_the_filter_row(signed_in: Client) -> None:
    text = signed_in.get("/history/?date_from=2026-11-30&date_to=2026-11-01").text
    form = text.split('id="history-filters"')[1].split("</form>")[0]
    errors = form.split('id="history-filter-errors"')[1]
    assert "To: The end date is before the start date." in errors
    # After the row's fields and buttons, not inside the date's column.
    assert form.index('id="history-filter-errors"') > form.index(">Filter</button>")
    assert "invalid-feedback" not in form
    assert 'aria-describedby="history-filter-errors"' in form


@pytest.mark.django_db
def test_each_run_shows_when_it_was_scheduled_and_when_it_started(signed_in: Client) -> None:
    job = make_job(name="late")
    scheduled = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    run = make_run(job, at=scheduled)
    JobHistory.objects.filter(pk=run.pk).update(started_at=scheduled + timedelta(minutes=7))
    waiting = make_run(job, status=RunStatus.PENDING, at=scheduled + timedelta(hours=1))
    text = signed_in.get("/history/").text
    assert '<th scope="col">Scheduled for</th>' in text and '<th scope="col">Started</th>' in text
    row = text.split(f'id="run-{run.pk}"')[1].split("</tr>")[0]
    assert 'data-cell="scheduled"' in row and "2026-11-30 09:00" in row
    started = row.split('data-cell="started"')[1].split("</td>")[0]
    assert "2026-11-30 09:07" in started
    pending = text.split(f'id="run-{waiting.pk}"')[1].split("</tr>")[0]
    assert "—" in pending.split('data-cell="started"')[1].split("</td>")[0]
