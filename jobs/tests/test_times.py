"""One way of writing a moment (jobs/formats, jobs.times): to the second, with its
zone named, per language, the same on the screens and in the admin, in the viewer's zone;
a cron job's times in its own zone too."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.template import Context, Template
from django.test import Client
from django.utils import timezone, translation

from jobs import times
from jobs.models import ScheduleType
from jobs.templatetags.jobs_ui import moment, moment_in, when
from jobs.tests.factories import make_job
from jobs.web.middleware import TIMEZONE_COOKIE
from jobs.web.screens import ZONE_HEADER

pytest_plugins = ["jobs.tests.ui_support"]

TOKYO = ZoneInfo("Asia/Tokyo")
# 08:30:05 in Tokyo.
MOMENT = datetime(2026, 11, 30, 23, 30, 5, tzinfo=UTC)


def test_a_moment_has_its_seconds_and_its_zone_in_each_language() -> None:
    with timezone.override(TOKYO):
        with translation.override("en"):
            assert times.moment_text(MOMENT) == "2026-12-01 08:30:05 JST"
            assert times.full_moment_text(MOMENT) == "2026-12-01 08:30:05 JST (Asia/Tokyo)"
            assert moment(MOMENT) == "2026-12-01 08:30:05 JST"
        with translation.override("ja"):
            assert times.moment_text(MOMENT) == "2026/12/01 08:30:05 JST"
        # A language without a module of its own writes English's.
        with translation.override("de"):
            assert times.moment_text(MOMENT) == "2026-12-01 08:30:05 JST"
    with timezone.override(UTC), translation.override("en"):
        assert times.full_moment_text(MOMENT) == "2026-11-30 23:30:05 UTC"
        assert times.zone_label() == "UTC"


def test_the_zone_label_names_the_zone_and_its_abbreviation_of_the_season() -> None:
    london = ZoneInfo("Europe/London")
    assert times.zone_label(TOKYO) == "Asia/Tokyo (JST)"
    assert times.zone_label(london, datetime(2026, 7, 1, tzinfo=UTC)) == "Europe/London (BST)"
    assert times.zone_label(london, datetime(2026, 1, 1, tzinfo=UTC)) == "Europe/London (GMT)"


@time_machine.travel(datetime(2026, 11, 30, 23, 0, tzinfo=UTC), tick=False)
def test_when_shows_seconds_the_full_time_in_its_title_and_the_jobs_own_zone() -> None:
    with timezone.override(ZoneInfo("Europe/Paris")), translation.override("en"):
        html = when(MOMENT, job_zone="Asia/Tokyo")
        assert 'title="2026-12-01 00:30:05 CET (Europe/Paris)"' in html
        assert ">2026-12-01 00:30:05 CET</small>" in html
        assert "data-job-zone>2026-12-01 08:30:05 JST (Asia/Tokyo)</small>" in html
        # The job's zone is the viewer's, or unknown: said once.
        assert "data-job-zone" not in when(MOMENT, job_zone="Europe/Paris")
        assert "data-job-zone" not in when(MOMENT, job_zone="Mars/Base")
        assert "data-job-zone" not in when(MOMENT)
        assert moment_in(MOMENT, "Asia/Tokyo") == "2026-12-01 08:30:05 JST (Asia/Tokyo)"


def test_templates_reach_it_by_the_tag_and_the_filters() -> None:
    template = Template(
        "{% load jobs_ui %}{{ at|moment }}|{{ at|moment_in:'Asia/Tokyo' }}|"
        "{% when at job_zone='Asia/Tokyo' %}"
    )
    with timezone.override(UTC), translation.override("en"):
        text = template.render(Context({"at": MOMENT}))
    assert text.startswith("2026-11-30 23:30:05 UTC|2026-12-01 08:30:05 JST (Asia/Tokyo)|")
    assert "data-job-zone>2026-12-01 08:30:05 JST (Asia/Tokyo)" in text


@pytest.mark.django_db
def test_the_job_list_and_its_refresh_write_seconds_and_name_the_zone(signed_in: Client) -> None:
    make_job(
        name="once",
        schedule_type=ScheduleType.ONCE,
        scheduled_at=datetime(2099, 12, 1, 0, 0, 5, tzinfo=UTC),
        interval=None,
        interval_unit="",
    )
    signed_in.cookies[TIMEZONE_COOKIE] = "Asia/Tokyo"
    page = signed_in.get("/jobs/")
    assert "2099-12-01 09:00:05 JST" in page.text
    assert 'data-zone-label="Asia/Tokyo (JST)"' in page.text
    assert "Time zone: Asia/Tokyo (JST)" in page.text
    assert ZONE_HEADER not in page.headers  # a whole page names it in its header
    # The live part's answer names the zone of its times (app.js puts it in the header).
    fragment = signed_in.get("/jobs/", headers={"HX-Request": "true"})
    assert fragment.headers[ZONE_HEADER] == "Asia/Tokyo (JST)"
    assert "2099-12-01 09:00:05 JST" in fragment.text
    del signed_in.cookies[TIMEZONE_COOKIE]
    assert signed_in.get("/", headers={"HX-Request": "true"}).headers[ZONE_HEADER] == "UTC"


@time_machine.travel(MOMENT, tick=False)
def test_a_cron_jobs_page_gives_its_next_run_in_its_own_zone_too(signed_in: Client) -> None:
    job = make_job(
        name="tokyo mornings",
        schedule_type=ScheduleType.CRON,
        cron_expression="0 9 * * *",
        timezone="Asia/Tokyo",
        interval=None,
        interval_unit="",
    )
    signed_in.cookies[TIMEZONE_COOKIE] = "Europe/London"
    page = signed_in.get(f"/jobs/{job.pk}/").text
    assert "2026-12-01 00:00:00 GMT" in page  # the viewer's zone
    assert "2026-12-01 09:00:00 JST (Asia/Tokyo)" in page  # and the job's own
    # The list keeps one time per job.
    assert "09:00:00 JST (Asia/Tokyo)" not in signed_in.get("/jobs/").text


@pytest.mark.django_db
def test_the_admin_writes_times_as_the_screens_do_in_the_viewers_zone(signed_in: Client) -> None:
    job = make_job(
        name="once",
        schedule_type=ScheduleType.ONCE,
        scheduled_at=datetime(2099, 12, 1, 0, 0, 5, tzinfo=UTC),
        interval=None,
        interval_unit="",
    )
    with time_machine.travel(datetime(2026, 12, 1, 0, 2, 7, tzinfo=UTC), tick=False):
        job.save()  # updated_at: a known second
    signed_in.cookies[TIMEZONE_COOKIE] = "Asia/Tokyo"
    listed = signed_in.get("/admin/jobs/job/").text
    assert "2099-12-01 09:00:05 JST" in listed
    # Django's own display of a read-only time (FORMAT_MODULE_PATH = jobs.formats).
    page = signed_in.get(f"/admin/jobs/job/{job.pk}/change/").text
    assert "2026-12-01 09:02:07 JST" in page
    assert "a.m." not in page
    japanese = signed_in.get(
        f"/admin/jobs/job/{job.pk}/change/", headers={"Accept-Language": "ja"}
    ).text
    assert "2026/12/01 09:02:07 JST" in japanese


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_quick_way_writes_what_djangos_date_format_writes(language: str) -> None:
    from django.utils import dateformat

    with timezone.override(TOKYO), translation.override(language):
        expected = dateformat.format(timezone.localtime(MOMENT), times.moment_format())
        assert times.moment_text(MOMENT) == expected
    # A format with a letter strftime writes otherwise goes the slow way.
    assert times._strftime_of("j M Y, H:i") is None
    assert times._strftime_of("Y年m月d日") is None


@pytest.mark.django_db
def test_the_admins_pages_of_jobs_and_runs_tell_the_server_the_browsers_zone(
    signed_in: Client,
) -> None:
    for url in ("/admin/jobs/job/", "/admin/jobs/jobhistory/", "/admin/jobs/job/add/"):
        assert "/static/jobs/app.js" in signed_in.get(url).text, url
    assert "/static/jobs/job_form.js" in signed_in.get("/admin/jobs/job/add/").text
