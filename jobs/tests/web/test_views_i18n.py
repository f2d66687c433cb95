"""Languages (English, Japanese) and the user's time zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.humanize.templatetags.humanize import naturaltime
from django.test import Client
from django.utils import translation

from jobs.models import Job, ScheduleType
from jobs.templatetags.jobs_ui import duration
from jobs.tests.factories import NOW, make_job
from jobs.web.middleware import TIMEZONE_COOKIE

pytest_plugins = ["jobs.tests.ui_support"]
pytestmark = pytest.mark.django_db


def test_the_browsers_language_is_used(signed_in: Client) -> None:
    response = signed_in.get("/jobs/", headers={"Accept-Language": "ja,en;q=0.5"})
    assert '<html lang="ja">' in response.text
    assert "ジョブ" in response.text
    english = signed_in.get("/jobs/", headers={"Accept-Language": "en-GB"})
    assert '<html lang="en">' in english.text


def test_the_language_menu_switches_to_japanese_and_back(signed_in: Client) -> None:
    page = signed_in.get("/history/")
    assert 'action="/i18n/setlang/"' in page.text
    response = signed_in.post("/i18n/setlang/", {"language": "ja", "next": "/history/"})
    assert response["Location"] == "/history/"
    japanese = signed_in.get("/history/").text
    assert "履歴" in japanese and "ログアウト" in japanese
    signed_in.post("/i18n/setlang/", {"language": "en", "next": "/"})
    assert "Log out" in signed_in.get("/").text


def test_the_login_page_can_switch_language_too(client: Client) -> None:
    response = client.post("/i18n/setlang/", {"language": "ja", "next": "/accounts/login/"})
    assert response.status_code == 302
    assert "ログイン" in client.get("/accounts/login/").text


@time_machine.travel(NOW, tick=False)
def test_japanese_pages_say_the_schedule_and_form_errors_in_japanese(signed_in: Client) -> None:
    signed_in.post("/i18n/setlang/", {"language": "ja", "next": "/"})
    make_job(name="毎時", interval=10, interval_unit="minute")
    assert "10分ごと" in signed_in.get("/jobs/").text
    response = signed_in.post(
        "/jobs/new/",
        {"name": "", "command": "x", "schedule_type": ScheduleType.INTERVAL, "interval": "0"},
    )
    assert "このフィールドは必須です。" in response.text
    assert "間隔は1以上にしてください。" in response.text


def test_the_language_menu_names_each_language_in_its_own_language(signed_in: Client) -> None:
    signed_in.post("/i18n/setlang/", {"language": "ja", "next": "/"})
    menu = signed_in.get("/").text
    assert '<option value="en" lang="en">English</option>' in menu
    assert '<option value="ja" lang="ja" selected>日本語</option>' in menu
    assert "英語" not in menu


def test_the_site_zone_choice_is_worded_in_the_readers_language(signed_in: Client) -> None:
    assert "Site time zone (UTC)" in signed_in.get("/jobs/new/").text
    signed_in.post("/i18n/setlang/", {"language": "ja", "next": "/"})
    form = signed_in.get("/jobs/new/").text
    assert "サイトのタイムゾーン（UTC）" in form  # noqa: RUF001
    assert "Site time zone" not in form


@time_machine.travel(NOW, tick=False)
def test_japanese_relative_times_and_units_read_naturally(signed_in: Client) -> None:
    signed_in.post("/i18n/setlang/", {"language": "ja", "next": "/"})
    make_job(
        name="soon",
        schedule_type=ScheduleType.ONCE,
        scheduled_at=NOW + timedelta(seconds=38),
        interval=None,
        interval_unit="",
    )
    make_job(name="cron", schedule_type=ScheduleType.CRON, cron_expression="*/5 * * * *")
    page = signed_in.get("/jobs/").text
    assert "38秒後" in page and "今から" not in page
    form = signed_in.get("/jobs/new/").text
    assert "cron式" in form and "cron 式" not in form and "Cron 式" not in form
    with translation.override("ja"):
        assert naturaltime(NOW) == "たった今"
        assert duration(timedelta(seconds=3.2)) == "3.2秒"
        assert duration(timedelta(seconds=245)) == "4分05秒"


@time_machine.travel(NOW, tick=False)
def test_times_are_shown_in_the_zone_the_browser_reported(signed_in: Client) -> None:
    make_job(
        name="once",
        schedule_type=ScheduleType.ONCE,
        scheduled_at=datetime(2026, 12, 1, 0, 0, tzinfo=UTC),
        interval=None,
        interval_unit="",
    )
    signed_in.cookies[TIMEZONE_COOKIE] = "Asia/Tokyo"
    text = signed_in.get("/jobs/").text
    assert "Time zone: Asia/Tokyo" in text
    assert "2026-12-01 09:00" in text  # midnight UTC


@pytest.mark.parametrize("cookie", ["Mars/Olympus_Mons", "../../etc/passwd", "", "UTC; x"])
def test_an_unknown_zone_falls_back_to_the_sites_zone(signed_in: Client, cookie: str) -> None:
    signed_in.cookies[TIMEZONE_COOKIE] = cookie
    response = signed_in.get("/")
    assert response.status_code == 200
    assert "Time zone: UTC" in response.text


def test_pages_load_scripts_and_styles_only_from_this_site(signed_in: Client) -> None:
    text = signed_in.get("/").text
    assert "/static/jobs/vendor/bootstrap/bootstrap.min.css" in text
    assert "/static/jobs/vendor/bootstrap/bootstrap.bundle.min.js" in text
    assert "/static/django_htmx/htmx" in text
    assert "http://" not in text and "https://" not in text and 'src="//' not in text


@time_machine.travel(NOW, tick=False)
def test_the_japanese_strings_read_as_a_native_reader_writes_them(signed_in: Client) -> None:
    """The wording of the newcomer review's table: one style for numbers and units (no
    space between them), full-width punctuation, and one word for one thing."""
    from jobs import engine

    signed_in.post("/i18n/setlang/", {"language": "ja", "next": "/"})
    make_job(name="later", interval=30, interval_unit="day")
    engine.pause(until=NOW + timedelta(hours=1), note="upgrade")
    dashboard = signed_in.get("/").text
    assert "から" in dashboard and "まで一時停止しています。" in dashboard
    assert "メモ：「upgrade」" in dashboard and "“upgrade”" not in dashboard  # noqa: RUF001
    assert "一時停止中です：</strong>再開されるまで" in dashboard  # noqa: RUF001
    assert "終了した実行に占める割合" in dashboard
    assert "実行待ち0件" in dashboard and "キャンセル<span" in dashboard
    jobs = signed_in.get("/jobs/").text
    assert "4週間2日後" in jobs and "週間, " not in jobs
    assert "選択したジョブ：" in jobs and "選択を有効化" not in jobs  # noqa: RUF001
    history = signed_in.get("/history/").text
    assert "期間（から）" in history and "期間（まで）" in history  # noqa: RUF001
    upcoming = signed_in.get("/upcoming/").text
    assert "今後24時間に" in upcoming
    assert "（まとめて1回実行、または実行しない）" in upcoming  # noqa: RUF001
    form = signed_in.get("/jobs/new/").text
    assert "停止中に逃した回の扱い" in form and "停止後の扱い" not in form
    assert "失敗した実行をやり直す回数です。" in form
    assert "20%が失敗（既定）" in signed_in.get(f"/jobs/{Job.objects.get().pk}/").text  # noqa: RUF001
